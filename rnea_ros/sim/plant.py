"""
``Plant``: the simulated robot without ROS. MuJoCo physics behind the project's conventions.

Layout and conventions (those of ``RobotModel``, see its docstring):

- ``joint_names``: the actuated joints, the independent one-DoF joints of the URDF in
  ``RobotModel.joint_names`` order (mimic joints follow their master through MuJoCo equality
  constraints and take no command). ``step(effort)`` takes one torque [N m or N] per entry.
- ``q()``, ``v()``: the state in ``RobotModel``'s layout for the same URDF and
  ``floating_base``: q[:7] = [x y z qx qy qz qw] of the root link in the world, v[:6] =
  [linear; angular] velocity of the root link in its own frame. MuJoCo's free joint differs:
  qpos [x y z qw qx qy qz], qvel linear in the world frame, angular in the body frame; the
  conversions are here and only here.
- Wrenches (applied pushes, contact truth): [fx fy fz tx ty tz] on a link, in the link frame
  about the link origin, like ``RobotModel``'s ``f_ext``.

A step is ``substeps`` physics steps of timestep / substeps, the commanded torques held over
them (a zero-order hold, as a drive holds its current command): each MuJoCo's ``mj_step1``
(kinematics and contacts at the current state), then the commanded torques and pushes, then
``mj_step2`` (forces, acceleration, implicit-fast integration). One physics step per timestep
is MuJoCo's usual semi-implicit Euler at the control rate: the torque of a step balances the
motion at the state it starts from, an artefact no continuous robot has (identification,
pairing a torque with the motion of its step, is biased by it: test/harness/sim_identification.py);
more substeps bring the plant nearer that continuous robot. A step whose acceleration is not
finite (the physics diverged: gains too high for the timestep) raises ``UnstableError``;
MuJoCo has then reset the state. After ``step`` the state is that of the next instant;
``acceleration()``, ``applied_effort`` and ``contact_wrenches()`` describe the step just taken
(at the state it started from; with substeps, the last physics step). Effort commands are
clipped to the URDF ``<limit effort>`` (an MJCF's: ``mjcf_robot``); a non-finite command
raises ``InputError`` and is never applied.

The sensors (``measured_position``, ``measured_effort``) read through the gap: encoder
quantisation, and the applied actuator torque plus a constant per-joint offset and white noise,
as a torque read from the motor currents (it includes the friction and the rotor inertia the
actuator overcomes, the terms ``Actuation`` identifies).
"""
from __future__ import annotations

from collections.abc import Mapping
import warnings

import mujoco
import numpy as np

from rnea_ros.description.mjcf import route_mujoco_warnings
from rnea_ros.dynamics.model import DEFAULT_GRAVITY, RobotModel
from rnea_ros.errors import InputError, ModelWarning, RneaError
from rnea_ros.sim.gap import Gap
from rnea_ros.sim.mjmodel import build_model
from rnea_ros.sim.true_urdf import apply_gap

ROOT_JOINT = 'root_joint'


class UnstableError(RneaError):
    """The physics diverged (MuJoCo met a non-finite or huge acceleration)."""


# MuJoCo's default handler appends to MUJOCO_LOG.TXT in the working directory: a write
# outside any output directory. Its warnings become Python warnings instead.
route_mujoco_warnings()


class Plant:
    """The simulated robot (see the module docstring)."""

    def __init__(self, urdf: str, *, floating_base: bool = False, gap: Gap | None = None,
                 rate: float = 1000.0, gravity=DEFAULT_GRAVITY, substeps: int = 1):
        """
        Build the plant from URDF text; ``gap`` defaults to ``Gap.none()``.

        ``substeps``: physics steps per timestep 1 / ``rate`` (module docstring).

        Raises ``URDFError`` (a URDF that neither RobotModel nor MuJoCo can take) or
        ``InputError`` (a gap naming a link or joint the robot does not have).
        """
        gap = Gap.none() if gap is None else gap
        with warnings.catch_warnings():  # MuJoCo judges the inertias (it refuses bad ones)
            warnings.simplefilter('ignore', ModelWarning)
            nominal = RobotModel.from_urdf_string(urdf, floating_base=floating_base,
                                                  gravity=gravity, inertia_check='warn')
        gap.check_names(nominal.link_names, _actuated(nominal))
        self.true_urdf = apply_gap(urdf, gap)
        substeps = _checked_substeps(substeps)
        model = build_model(self.true_urdf, gap, floating_base=floating_base,
                            timestep=1.0 / rate / substeps, gravity=gravity)
        limits = np.array([nominal.joint(n).effort_limit for n in _actuated(nominal)])
        self._start(nominal, model, gap, rate, substeps, limits)

    @classmethod
    def from_mjcf(cls, path, *, rate: float = 1000.0, gravity=DEFAULT_GRAVITY,
                  substeps: int = 1) -> Plant:
        """
        Build the plant of an MJCF file, the robot as it is (``rnea_ros.sim.mjcf_robot``).

        Fixed base, no gap (``Gap.none()``), no ``true_urdf`` (None). Raises ``MJCFError``
        naming the file and what the plant cannot take.
        """
        from rnea_ros.sim.mjcf_robot import compile_mjcf, effort_limits
        substeps = _checked_substeps(substeps)
        model, nominal = compile_mjcf(path, timestep=1.0 / rate / substeps, gravity=gravity)
        plant = cls.__new__(cls)
        plant.true_urdf = None
        plant._start(nominal, model, Gap.none(), rate, substeps,
                     effort_limits(model, _actuated(nominal)))
        return plant

    def _start(self, nominal: RobotModel, model: mujoco.MjModel, gap: Gap, rate: float,
               substeps: int, effort_limits: np.ndarray) -> None:
        """Set the plant up on its nominal model and compiled MuJoCo model, at rest."""
        self.gap, self.nominal, self.model = gap, nominal, model
        self.joint_names = _actuated(nominal)
        self.timestep = 1.0 / rate
        self.substeps = substeps
        self.data = mujoco.MjData(self.model)
        self.floating_base = nominal.floating_base
        self.nq, self.nv = self.nominal.nq, self.nominal.nv
        self._layout(nominal.tree)
        self.effort_limits = effort_limits
        rng = np.random.default_rng(self.gap.seed + 1)
        self.torque_offset = self.gap.torque_offset * rng.standard_normal(len(self.joint_names))
        # The reading's unit: torque per unit of it (a motor current's torque constant x ratio).
        self.effort_gain = np.array([self.gap.torque_gains.get(name, self.gap.torque_gain)
                                     for name in self.joint_names])
        self._noise = np.random.default_rng(self.gap.seed + 2)
        self.applied_effort = np.zeros(len(self.joint_names))
        self._wrenches: dict[str, np.ndarray] = {}
        self._wrench_bodies: dict[str, int] = {}
        self._inverse_data = None
        self._qvel_start = np.zeros(self.model.nv)
        self.reset()

    # ------------------------------------------------------------------ layout
    def _layout(self, tree) -> None:
        """Index maps between RobotModel's q/v and MuJoCo's qpos/qvel."""
        m = self.model
        by_joint = {name: k for k, name in enumerate(tree.body_names)}
        qadr, vadr, master_q, master_v, multiplier, offset = [], [], [], [], [], []
        independent = []  # not a mimic joint (a mimic of multiplier 1 is one all the same)
        self._free = None
        for j in range(m.njnt):
            name = m.joint(j).name
            if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                self._free = (int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j]))
                continue
            k = by_joint[name]
            independent.append(name in self.joint_names)
            qadr.append(m.jnt_qposadr[j])
            vadr.append(m.jnt_dofadr[j])
            master_q.append(tree.q_index[k])
            master_v.append(tree.v_index[k])
            multiplier.append(tree.multiplier[k])
            # qpos is the angle from the pose in the file plus the joint's ref (qpos0): 0 in
            # a URDF, an MJCF's own otherwise.
            offset.append(tree.offset[k] + m.qpos0[m.jnt_qposadr[j]])
        self._qadr, self._vadr = np.array(qadr, int), np.array(vadr, int)
        self._master_q, self._master_v = np.array(master_q, int), np.array(master_v, int)
        self._mult, self._offset = np.array(multiplier), np.array(offset)
        self._independent = np.array(independent, dtype=bool)
        # The actuated joints' MuJoCo dofs and their v rows, in joint_names order.
        self.actuated_dofs = np.array([m.joint(n).dofadr[0] for n in self.joint_names], int)
        self.actuated_v = np.array([self.nominal.joint(n).idx_v for n in self.joint_names], int)
        self.actuated_q = np.array([self.nominal.joint(n).idx_q for n in self.joint_names], int)
        # coupling: qvel (hinge and slide rows) = coupling @ v; torques map back with its T.
        self.coupling = np.zeros((m.nv, self.nv))
        self.coupling[self._vadr, self._master_v] = self._mult
        if self._free is not None:
            self.coupling[self._free[1]:self._free[1] + 6, :6] = np.eye(6)

    # ------------------------------------------------------------------ state
    def reset(self, q=None, v=None) -> None:
        """Set the state (RobotModel layout; default: neutral, at rest) and recompute."""
        q = self.nominal.neutral_configuration() if q is None else q
        v = np.zeros(self.nv) if v is None else v
        mujoco.mj_resetData(self.model, self.data)
        self.set_state(q, v)
        mujoco.mj_forward(self.model, self.data)
        self._qvel_start[:] = self.data.qvel

    def set_state(self, q, v) -> None:
        """Write q, v (RobotModel layout) into MuJoCo's qpos, qvel (mimic joints coupled)."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        if q.shape != (self.nq,) or v.shape != (self.nv,):
            raise InputError(f'Plant.set_state: expected q of {self.nq} and v of {self.nv} '
                             f'values, got {q.shape} and {v.shape}')
        d = self.data
        d.qpos[self._qadr] = self._mult * q[self._master_q] + self._offset
        d.qvel[self._vadr] = self._mult * v[self._master_v]
        if self._free is not None:
            qa, va = self._free
            rotation = _rotation(q[3:7])
            d.qpos[qa:qa + 3] = q[:3]
            d.qpos[qa + 3:qa + 7] = q[6], q[3], q[4], q[5]
            d.qvel[va:va + 3] = rotation @ v[:3]
            d.qvel[va + 3:va + 6] = v[3:6]

    def q(self) -> np.ndarray:
        """Return the exact joint positions (RobotModel layout)."""
        d = self.data
        q = np.zeros(self.nq)
        independent = self._independent
        q[self._master_q[independent]] = d.qpos[self._qadr[independent]]
        if self._free is not None:
            qa = self._free[0]
            w, x, y, z = d.qpos[qa + 3:qa + 7]
            norm = np.sqrt(w * w + x * x + y * y + z * z)
            q[:3] = d.qpos[qa:qa + 3]
            q[3:7] = np.array([x, y, z, w]) / norm
        return q

    def v(self) -> np.ndarray:
        """Return the exact velocities (RobotModel layout; base twist in the base frame)."""
        rotation = None
        if self._free is not None:
            qa = self._free[0]
            w, x, y, z = self.data.qpos[qa + 3:qa + 7]
            rotation = _rotation(np.array([x, y, z, w]))
        return self._to_layout(self.data.qvel, rotation)

    def acceleration(self) -> np.ndarray:
        """
        Return the acceleration of the last step (RobotModel layout, ``a`` of ``rnea``).

        For a free base ``a[:6]`` is the derivative of the base-frame twist (spatial
        acceleration), as ``RobotModel.rnea`` takes it; ``base_acceleration`` gives the
        classical one.
        """
        rotation = self._root_rotation()
        a = self._to_layout(self.data.qacc, rotation)
        if self._free is not None:
            v = self._to_layout(self._qvel_start, rotation)
            a[:3] -= np.cross(v[3:6], v[:3])
        return a

    def base_acceleration(self) -> np.ndarray:
        """Return [classical linear; angular] acceleration of the base origin in its frame."""
        if self._free is None:
            raise InputError('Plant.base_acceleration: the plant has no floating base')
        va = self._free[1]
        return np.concatenate([self._root_rotation().T @ self.data.qacc[va:va + 3],
                               self.data.qacc[va + 3:va + 6]])

    def _root_rotation(self) -> np.ndarray | None:
        """Root link orientation at the last step's start (MuJoCo's kinematics of that state)."""
        if self._free is None:
            return None
        body = self.model.jnt_bodyid[self.model.joint(ROOT_JOINT).id]
        return self.data.xmat[body].reshape(3, 3)

    def _to_layout(self, values, rotation) -> np.ndarray:
        """Map MuJoCo qvel-like values to RobotModel's v layout (free-base linear part rotated)."""
        out = np.zeros(self.nv)
        independent = self._independent
        out[self._master_v[independent]] = values[self._vadr[independent]]
        if self._free is not None:
            va = self._free[1]
            out[:3] = rotation.T @ values[va:va + 3]
            out[3:6] = values[va + 3:va + 6]
        return out

    @property
    def base_link(self) -> str:
        """Return the URDF root link (the body of the free joint on a floating base)."""
        first_child_of_world = int(np.flatnonzero(self.model.body_parentid[1:] == 0)[0]) + 1
        return self.model.body(first_child_of_world).name

    @property
    def time(self) -> float:
        return float(self.data.time)

    def inverse_dynamics(self, q, v, a) -> np.ndarray:
        """
        Return MuJoCo's own inverse dynamics of the plant (``mj_inverse``), in RobotModel's layout.

        The generalized force giving acceleration ``a`` at (q, v) with constraints switched off
        (no contacts, limits, dry friction; mimic joints coupled by ``coupling``, their torques
        folded into the master): the true rigid bodies (gap included), plus armature * a and
        viscous * v of the gap. With ``Gap.none()`` it is ``RobotModel.rnea`` of the URDF.
        Runs on its own ``MjData``: the simulation's state is untouched.
        """
        m = self.model
        if self._inverse_data is None:
            self._inverse_data = mujoco.MjData(m)
        d, simulated = self._inverse_data, self.data
        self.data = d
        try:
            self.set_state(q, v)
        finally:
            self.data = simulated
        a = np.asarray(a, dtype=float)
        if a.shape != (self.nv,):
            raise InputError(f'Plant.inverse_dynamics: expected a of {self.nv} values, got '
                             f'{a.shape}')
        d.qacc[:] = self.coupling @ a
        if self._free is not None:
            va = self._free[1]
            rotation = _rotation(q[3:7])
            d.qacc[va:va + 3] = rotation @ (a[:3] + np.cross(v[3:6], v[:3]))
        saved = m.opt.disableflags
        m.opt.disableflags = saved | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
        try:
            mujoco.mj_inverse(m, d)
        finally:
            m.opt.disableflags = saved
        force = d.qfrc_inverse.copy()
        if self._free is not None:
            force[va:va + 3] = rotation.T @ force[va:va + 3]
        return self.coupling.T @ force

    def gravity_torques(self, position) -> np.ndarray:
        """
        Return g(q) of the plant at the actuated joints' ``position`` (fixed base only).

        The torques that hold the true rigid bodies (gap included) at rest there, one per
        ``joint_names``: what a robot that compensates gravity itself adds to each command.
        """
        if self.floating_base:
            raise InputError('Plant.gravity_torques: a fixed base only (a floating base is '
                             'held by its contacts)')
        q = self.nominal.neutral_configuration()
        q[self.actuated_q] = position
        rest = np.zeros(self.nv)
        return self.inverse_dynamics(q, rest, rest)[self.actuated_v]

    # ------------------------------------------------------------------ sensors
    def measured_position(self) -> np.ndarray:
        """Return the actuated joints' positions as the encoders read them (quantised)."""
        position = self.data.qpos[self.model.jnt_qposadr[self._actuated_joints]]
        resolution = self.gap.encoder_resolution
        return np.round(position / resolution) * resolution if resolution > 0 else position.copy()

    def measured_velocity(self) -> np.ndarray:
        """Return the actuated joints' velocities (exact, as a drive's smooth estimate)."""
        return self.data.qvel[self.actuated_dofs].copy()

    def measured_effort(self) -> np.ndarray:
        """
        Return the reading of the last step's applied actuator torque.

        (torque + the sensor's offset + noise) / the sensor's gain (1: a torque sensor).
        """
        noise = self.gap.torque_noise
        reading = self.applied_effort + self.torque_offset
        if noise > 0:
            reading = reading + noise * self._noise.standard_normal(reading.size)
        return reading / self.effort_gain

    @property
    def _actuated_joints(self) -> np.ndarray:
        return self.model.dof_jntid[self.actuated_dofs]

    # ------------------------------------------------------------------ stepping
    def step(self, effort) -> None:
        """Advance one timestep with ``effort`` on ``joint_names`` (clipped to the limits)."""
        effort = np.asarray(effort, dtype=float)
        if effort.shape != (len(self.joint_names),) or not np.all(np.isfinite(effort)):
            raise InputError(f'Plant.step: expected {len(self.joint_names)} finite efforts '
                             f'({", ".join(self.joint_names)}), got {effort.tolist()}')
        self.applied_effort = np.clip(effort, -self.effort_limits, self.effort_limits)
        for _ in range(self.substeps):
            self._substep()

    def _substep(self) -> None:
        """One MuJoCo step of timestep / substeps with the held ``applied_effort`` and pushes."""
        m, d = self.model, self.data
        mujoco.mj_step1(m, d)
        self._qvel_start[:] = d.qvel
        d.qfrc_applied[:] = 0.0
        d.qfrc_applied[self.actuated_dofs] = self.applied_effort
        d.xfrc_applied[:] = 0.0
        for link, wrench in self._wrenches.items():
            body = self._wrench_bodies[link]
            rotation = d.xmat[body].reshape(3, 3)
            force = rotation @ wrench[:3]
            # xfrc_applied acts at the body's centre of mass, in world axes.
            lever = d.xpos[body] - d.xipos[body]
            d.xfrc_applied[body, :3] += force
            d.xfrc_applied[body, 3:] += rotation @ wrench[3:] + np.cross(lever, force)
        mujoco.mj_step2(m, d)
        diverged = d.warning[mujoco.mjtWarning.mjWARN_BADQACC]
        if diverged.number:  # MuJoCo reset the state: the run is over, say why
            raise UnstableError(
                f'the simulation went unstable at t = {d.time:.4f} s (non-finite or huge '
                f'acceleration of MuJoCo dof {diverged.lastinfo}): lower the PD gains, raise '
                'the rate, or give the joints armature in the gap')

    def apply_wrench(self, link: str, wrench) -> None:
        """Push ``link`` with ``wrench`` ([f; tau], link frame, about its origin) until cleared."""
        wrench = np.asarray(wrench, dtype=float)
        if wrench.shape != (6,) or not np.all(np.isfinite(wrench)):
            raise InputError(f'Plant.apply_wrench: expected 6 finite numbers, got {wrench}')
        try:
            body = self.model.body(link).id
        except KeyError:
            raise InputError(f'Plant.apply_wrench: no link {link!r}') from None
        self._wrench_bodies[link] = body
        self._wrenches[link] = wrench

    def clear_wrench(self, link: str | None = None) -> None:
        """Stop pushing ``link`` (every link when None)."""
        if link is None:
            self._wrenches.clear()
        else:
            self._wrenches.pop(link, None)

    @property
    def applied_wrenches(self) -> Mapping[str, np.ndarray]:
        """Return the pushes of the last step: link -> [f; tau] (link frame, about origin)."""
        return dict(self._wrenches)

    def contact_wrenches(self) -> dict[str, np.ndarray]:
        """
        Wrench the floor applied on each link in contact during the last step.

        [f; tau] in the link frame about its origin, like the node's contact wrenches; links
        out of contact are absent.
        """
        m, d = self.model, self.data
        wrenches: dict[str, np.ndarray] = {}
        force = np.zeros(6)
        for i in range(d.ncon):
            contact = d.contact[i]
            mujoco.mj_contactForce(m, d, i, force)
            frame = contact.frame.reshape(3, 3)
            world_force = frame.T @ force[:3]
            world_torque = frame.T @ force[3:]
            # The normal points from geom1 to geom2: the force acts on geom2, its opposite on 1.
            for geom, sign in ((contact.geom2, 1.0), (contact.geom1, -1.0)):
                body = int(m.geom_bodyid[geom])
                if body == 0:
                    continue
                rotation = d.xmat[body].reshape(3, 3)
                lever = contact.pos - d.xpos[body]
                f = sign * world_force
                tau = sign * world_torque + np.cross(lever, f)
                name = m.body(body).name
                wrench = np.concatenate([rotation.T @ f, rotation.T @ tau])
                wrenches[name] = wrenches.get(name, 0.0) + wrench
        return wrenches


def _actuated(nominal: RobotModel) -> tuple[str, ...]:
    """Return the actuated joints: the independent one-DoF joints, in the model's order."""
    return tuple(j.name for j in nominal.joints if j.nv == 1)


def _checked_substeps(substeps) -> int:
    if isinstance(substeps, bool) or not isinstance(substeps, int) or substeps < 1:
        raise InputError(f'Plant: substeps must be an integer >= 1, got {substeps!r}')
    return substeps


def _rotation(quaternion_xyzw) -> np.ndarray:
    """Rotation matrix of a unit quaternion [x y z w]."""
    x, y, z, w = np.asarray(quaternion_xyzw, dtype=float) / np.linalg.norm(quaternion_xyzw)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def pd_effort(kp, kd, q_desired, v_desired, q, v, feedforward=0.0) -> np.ndarray:
    """Joint PD + feed-forward: kp (q_d - q) + kd (v_d - v) + feedforward, per joint."""
    return (np.asarray(kp) * (np.asarray(q_desired) - q)
            + np.asarray(kd) * (np.asarray(v_desired) - v) + feedforward)
