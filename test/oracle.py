"""Pinocchio as a test oracle: load the same URDF and map our q/v/tau layout onto Pinocchio's.

Differences handled here: Pinocchio orders joints its own way, stores continuous joints as
(cos, sin) and has a 'universe' joint; we store continuous joints as one angle.
"""
from __future__ import annotations

import sysconfig
from pathlib import Path

import numpy as np

ROBOTS_DIR = Path(sysconfig.get_paths()['purelib']) / 'cmeel.prefix/share/example-robot-data/robots'

# Short names for the robots the tests and benchmarks use most.
ROBOTS = {
    'ur5': 'ur_description/urdf/ur5_robot.urdf',
    'panda': 'panda_description/urdf/panda.urdf',
    'solo12': 'solo_description/robots/solo12.urdf',
    'talos_reduced': 'talos_data/robots/talos_reduced.urdf',
    'talos_full': 'talos_data/robots/talos_full_v2.urdf',
    'anymal': 'anymal_b_simple_description/robots/anymal.urdf',
    'baxter': 'baxter_description/urdf/baxter.urdf',
    'pr2': 'pr2_description/urdf/pr2.urdf',
    'romeo': 'romeo_description/urdf/romeo.urdf',
    'tiago': 'tiago_description/robots/tiago.urdf',
    'g1': 'g1_description/urdf/g1_29dof_rev_1_0.urdf',
    'double_pendulum_continuous':
        'double_pendulum_description/urdf/double_pendulum_continuous.urdf',
    'xarm7': 'xarm_description/urdf/xarm7.urdf',
    'kinova': 'kinova_description/robots/kinova.urdf',
}


def robot_path(name: str) -> Path:
    return ROBOTS_DIR / ROBOTS[name]


def load_pinocchio(path: Path | str, floating_base: bool):
    import pinocchio as pin
    if floating_base:
        return pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer(), mimic=True)
    return pin.buildModelFromUrdf(str(path), mimic=True)


class Oracle:
    """Pinocchio model of the same URDF, with maps between our layout and Pinocchio's."""

    def __init__(self, model, path, floating_base: bool):
        import pinocchio as pin
        self.pin = pin
        self.model = model
        self.pm = load_pinocchio(path, floating_base)
        self.pd = self.pm.createData()
        self.v_perm = []  # our v index k <-> Pinocchio v index v_perm[k]
        self.joints = []
        for joint in model.joints:
            pin_joint = self.pm.joints[self.pm.getJointId(joint.name)]
            self.joints.append((joint, pin_joint))
            self.v_perm += range(pin_joint.idx_v, pin_joint.idx_v + joint.nv)
        self.v_perm = np.array(self.v_perm, dtype=np.int64)
        assert sorted(self.v_perm) == list(range(self.pm.nv)), 'joint sets differ'

    def random_state(self, rng: np.random.Generator, scale: float = 1.0):
        """(q, v, a) in our layout, q within the joint limits where they are finite."""
        pm = self.pm
        lower = np.where(np.isfinite(pm.lowerPositionLimit), pm.lowerPositionLimit, -np.pi)
        upper = np.where(np.isfinite(pm.upperPositionLimit), pm.upperPositionLimit, np.pi)
        q_pin = self.pin.randomConfiguration(pm, np.maximum(lower, -np.pi),
                                             np.minimum(upper, np.pi))
        q = self.q_from_pin(q_pin)
        v = scale * rng.standard_normal(self.model.nv)
        a = scale * rng.standard_normal(self.model.nv)
        return q, v, a

    def q_from_pin(self, q_pin: np.ndarray) -> np.ndarray:
        q = np.zeros(self.model.nq)
        for joint, pin_joint in self.joints:
            src = q_pin[pin_joint.idx_q:pin_joint.idx_q + pin_joint.nq]
            if joint.nq == 1 and pin_joint.nq == 2:  # continuous: (cos, sin) -> angle
                q[joint.idx_q] = np.arctan2(src[1], src[0])
            else:
                q[joint.idx_q:joint.idx_q + joint.nq] = src
        return q

    def q_to_pin(self, q: np.ndarray) -> np.ndarray:
        q_pin = self.pin.neutral(self.pm)
        for joint, pin_joint in self.joints:
            src = q[joint.idx_q:joint.idx_q + joint.nq]
            if joint.nq == 1 and pin_joint.nq == 2:
                q_pin[pin_joint.idx_q:pin_joint.idx_q + 2] = np.cos(src[0]), np.sin(src[0])
            else:
                q_pin[pin_joint.idx_q:pin_joint.idx_q + pin_joint.nq] = src
        return q_pin

    def v_to_pin(self, v: np.ndarray) -> np.ndarray:
        v_pin = np.zeros(self.pm.nv)
        v_pin[self.v_perm] = v
        return v_pin

    def rnea(self, q, v, a, f_ext=None, gravity=None) -> np.ndarray:
        """pin.rnea on our layout; f_ext: link name -> [f; tau] in the link frame."""
        pin = self.pin
        pm, pd = self.pm, self.pd
        saved = pm.gravity.linear.copy()
        if gravity is not None:
            pm.gravity.linear = np.asarray(gravity, dtype=float)
        try:
            args = [pm, pd, self.q_to_pin(q), self.v_to_pin(v), self.v_to_pin(a)]
            if f_ext:
                args.append(self.pin_forces(q, f_ext))
            tau = pin.rnea(*args)
        finally:
            pm.gravity.linear = saved
        return np.asarray(tau)[self.v_perm]

    def pin_forces(self, q, f_ext):
        """Link wrenches -> Pinocchio's per-joint forces (in each joint frame)."""
        pin = self.pin
        pm = self.pm
        forces = pin.StdVec_Force()
        for _ in range(pm.njoints):
            forces.append(pin.Force.Zero())
        for link, wrench in f_ext.items():
            frame = pm.frames[pm.getFrameId(link, pin.FrameType.BODY)]
            force = pin.Force(np.asarray(wrench[:3], float), np.asarray(wrench[3:], float))
            forces[frame.parentJoint] += frame.placement.act(force)
        return forces
