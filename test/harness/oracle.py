"""
Pinocchio as a test oracle: load the same URDF and map our q/v/tau layout onto Pinocchio's.

Differences handled here: Pinocchio orders joints its own way, stores continuous joints as
(cos, sin) and has a 'universe' joint; we store continuous joints as one angle.

Mimic joints: with ``mimic=True`` Pinocchio couples them itself (they have no v entry). Some URDFs
(a mimic joint listed before its master's subtree, e.g. romeo, talos_full_v2) only load with
``mimic=False``, where every mimic joint is an independent Pinocchio joint; the oracle then
imposes the coupling: v_pin = G v (G holds the mimic multipliers), tau = G^T tau_pin,
M = G^T M_pin G, which is exactly the dynamics of the coupled system.
"""
from __future__ import annotations

from pathlib import Path
import sysconfig
import xml.etree.ElementTree as ET

import numpy as np

ROBOTS_DIR = (Path(sysconfig.get_paths()['purelib'])
              / 'cmeel.prefix/share/example-robot-data/robots')

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
    'tiago_pro': 'tiago_pro_description/robots/tiago_pro.urdf',
    'g1': 'g1_description/urdf/g1_29dof_rev_1_0.urdf',
    'double_pendulum_continuous':
        'double_pendulum_description/urdf/double_pendulum_continuous.urdf',
    'xarm7': 'xarm_description/urdf/xarm7.urdf',
    'kinova': 'kinova_description/robots/kinova.urdf',
    'icub': 'icub_description/robots/icub.urdf',
    'allegro': 'allegro_hand_description/urdf/allegro_right_hand.urdf',
}


def robot_params(pairs) -> list:
    """Return ``pytest.param(name, floating_base)`` per pair, its id name-fixed or name-free."""
    import pytest  # not at the top: the benchmarks import this module without pytest
    return [pytest.param(name, base, id=f'{name}-{"free" if base else "fixed"}')
            for name, base in pairs]


def robot_path(name: str) -> Path:
    return ROBOTS_DIR / ROBOTS[name]


def load_pinocchio(path: Path | str | None, floating_base: bool, mimic: bool = True,
                   xml: str | None = None):
    """Pinocchio model of a URDF file (or of URDF text ``xml``, then ``path`` is ignored)."""
    import pinocchio as pin
    root = [pin.JointModelFreeFlyer()] if floating_base else []
    if xml is not None:
        return pin.buildModelFromXML(xml, *root, mimic=mimic)
    return pin.buildModelFromUrdf(str(path), *root, mimic=mimic)


def urdf_mimics(xml: str, independent: dict) -> dict:
    """
    Mimic joint name -> (independent master Joint, multiplier, offset), read from the URDF.

    Read from the text, not from our model, so that the oracle does not inherit its mistakes.
    Chains (a mimic of a mimic) are composed down to the independent joint.
    """
    direct = {}
    for joint in ET.fromstring(xml).findall('joint'):
        mimic = joint.find('mimic')
        if mimic is not None and joint.get('type') in ('revolute', 'continuous', 'prismatic'):
            direct[joint.get('name')] = (mimic.get('joint'),
                                         float(mimic.get('multiplier', '1')),
                                         float(mimic.get('offset', '0')))
    resolved = {}
    for name, (master, multiplier, offset) in direct.items():
        while master not in independent:
            master, factor, shift = direct[master]
            multiplier, offset = multiplier * factor, offset * factor + shift
        resolved[name] = (independent[master], multiplier, offset)
    return resolved


class Oracle:
    """
    Pinocchio model of the same URDF, with maps between our layout and Pinocchio's.

    ``mimic=False`` loads Pinocchio without mimic coupling and imposes it here (see the module
    docstring); ``xml`` gives the URDF text when there is no file.
    """

    def __init__(self, model, path, floating_base: bool, mimic: bool = True,
                 xml: str | None = None):
        import pinocchio as pin
        self.pin = pin
        self.model = model
        self.pm = load_pinocchio(path, floating_base, mimic, xml)
        self.pd = self.pm.createData()
        self.v_perm = []  # our v index k <-> Pinocchio v index v_perm[k] (independent joints)
        self.joints = []
        for joint in model.joints:
            pin_joint = self.pm.joints[self.pm.getJointId(joint.name)]
            self.joints.append((joint, pin_joint))
            self.v_perm += range(pin_joint.idx_v, pin_joint.idx_v + joint.nv)
        self.v_perm = np.array(self.v_perm, dtype=np.int64)
        # v_pin = coupling @ v; without mimic joints in Pinocchio's v it is a permutation.
        self.coupling = np.zeros((self.pm.nv, model.nv))
        self.coupling[self.v_perm, np.arange(model.nv)] = 1.0
        self.mimics = []  # (Pinocchio joint, our q index of the master, multiplier, offset)
        independent = {joint.name: joint for joint in model.joints}
        for name, (master, multiplier, offset) in urdf_mimics(
                Path(path).read_text() if xml is None else xml, independent).items():
            if not self.pm.existJointName(name):
                continue
            pin_joint = self.pm.joints[self.pm.getJointId(name)]
            if pin_joint.nv != 1:
                continue  # a mimic joint coupled by Pinocchio itself (nv 0 or a mimic model)
            self.mimics.append((pin_joint, master.idx_q, multiplier, offset))
            self.coupling[pin_joint.idx_v, master.idx_v] = multiplier
        covered = np.flatnonzero(np.any(self.coupling != 0.0, axis=1))
        assert covered.tolist() == list(range(self.pm.nv)), 'joint sets differ'

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

    def random_states(self, rng: np.random.Generator, count: int):
        """(Q, V, A), (count, nq/nv/nv) each: ``count`` random_state samples stacked."""
        samples = [self.random_state(rng) for _ in range(count)]
        return tuple(np.array(column) for column in zip(*samples))

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
            self._set_q(q_pin, pin_joint, src)
        for pin_joint, master, multiplier, offset in self.mimics:
            self._set_q(q_pin, pin_joint, [multiplier * q[master] + offset])
        return q_pin

    @staticmethod
    def _set_q(q_pin, pin_joint, src):
        if len(src) == 1 and pin_joint.nq == 2:  # continuous: angle -> (cos, sin)
            q_pin[pin_joint.idx_q:pin_joint.idx_q + 2] = np.cos(src[0]), np.sin(src[0])
        else:
            q_pin[pin_joint.idx_q:pin_joint.idx_q + pin_joint.nq] = src

    def v_to_pin(self, v: np.ndarray) -> np.ndarray:
        return self.coupling @ np.asarray(v, dtype=float)

    def rnea(self, q, v, a, f_ext=None, gravity=None) -> np.ndarray:
        """pin.rnea on our layout; f_ext: link name -> [f; tau] in the link frame."""
        return self.coupling.T @ self._call(self.pin.rnea, q, v, a, f_ext, gravity)

    def _call(self, algorithm, q, v, x, f_ext, gravity) -> np.ndarray:
        """Return algorithm(model, data, q, v, x[, forces]) in Pinocchio's layout, at gravity."""
        pm = self.pm
        saved = pm.gravity.linear.copy()
        if gravity is not None:
            pm.gravity.linear = np.asarray(gravity, dtype=float)
        try:
            args = [pm, self.pd, self.q_to_pin(q), self.v_to_pin(v), self.v_to_pin(x)]
            if f_ext:
                args.append(self.pin_forces(q, f_ext))
            return np.asarray(algorithm(*args))
        finally:
            pm.gravity.linear = saved

    def forward_dynamics(self, q, v, tau, f_ext=None, gravity=None) -> np.ndarray:
        """
        Return a with rnea(q, v, a, f_ext, gravity) = tau, on our layout.

        ``pin.aba`` where Pinocchio's model is ours up to the joint order; with mimic joints
        (which ``pin.aba`` refuses, and which the oracle may couple itself) the coupled system
        solved densely from Pinocchio's own terms: (G^T M G) a = tau - G^T h.
        """
        permutation = np.count_nonzero(self.coupling) == self.model.nv == self.pm.nv
        if not permutation or any('Mimic' in joint.shortname() for joint in self.pm.joints):
            zero = np.zeros(self.model.nv)
            bias = self.rnea(q, v, zero, f_ext=f_ext, gravity=gravity)
            return np.linalg.solve(self.mass_matrix(q), np.asarray(tau, float) - bias)
        return self._call(self.pin.aba, q, v, tau, f_ext, gravity)[self.v_perm]

    def mass_matrix(self, q) -> np.ndarray:
        """pin.crba on our layout (Pinocchio fills the upper triangle only)."""
        upper = np.triu(np.asarray(self.pin.crba(self.pm, self.pd, self.q_to_pin(q))))
        full = upper + np.triu(upper, 1).T
        return self.coupling.T @ full @ self.coupling

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
