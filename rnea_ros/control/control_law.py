"""
The control law of the published torque, and the damped rest of a robot the node alone drives.

``control_law`` (a node parameter, read-only) says what the torque is:

- ``feedforward``: tau = ID(q, v, a_d), the inverse dynamics at the measured state and the
  desired acceleration: a term a controller adds to its own feedback (its PD);
- ``pd_feedforward``: tau = ID(q, v, a_d) + Kp (q_d - q) + Kd (v_d - v), the whole torque of a
  joint (a ``forward_command_controller`` on ``effort``, whose command is the torque);
- ``computed_torque``: tau = M(q) (a_d + Kp e + Kd e_dot) + C(q, v) v + g(q), e = q_d - q,
  e_dot = v_d - v: the inverse dynamics at the corrected acceleration (one RNEA call).

Kp, Kd are per joint (``kp.<joint>``, ``kd.<joint>``, live): N m/rad and N m s/rad (N/m, N s/m)
under ``pd_feedforward``; 1/s² and 1/s under ``computed_torque``, where they multiply M(q).
The desired motion (q_d, v_d, a_d) is the active ``desired_accelerations`` message, its single
point or its trajectory sampled at the ROS time: a joint it does not name has e = 0 and
v_d = 0 (damped), a message without velocities v_d = 0.

The two feedback laws command a robot whose only torque is the node's, so every case without a
usable desired motion (none received, older than ``acceleration_timeout``, no positions, held
back after a rest or a step back of the ROS clock: ``reference``) and
every fault but a collision under ``collision_reaction: stop`` (which brakes with its own,
stronger damping) brings the arm to rest, damped: tau = g(q) - D v, D per joint the law's
derivative gain as a torque: D = Kd (``pd_feedforward``), D = Kd M_jj(q) (``computed_torque``,
the diagonal of the mass matrix), so that the rest is as damped as the tracking was. Under a
fault on the inputs (joint_states stale or missing) the velocity is not known and D v is left
out: g(q) at the last measured positions, which is what a measured-state law can give; the
robot's own command timeout must cover a node that stops. When joint_states come back after a
stall that interrupted a followed motion the rest is the stop's hold of the first pose known
again instead
(``cycle_torques.CycleTorques.compute``), until a desired motion is followed.

ROS-free; numpy only (the model's kernels compute M and g).
"""
from __future__ import annotations

import numpy as np

from rnea_ros.control.safety import all_finite
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import InputError

FEEDFORWARD, PD_FEEDFORWARD, COMPUTED_TORQUE = 'feedforward', 'pd_feedforward', 'computed_torque'
CONTROL_LAWS = (FEEDFORWARD, PD_FEEDFORWARD, COMPUTED_TORQUE)
# Bounds of the gains: above them a value is a typo (an extra zero, N m/deg for N m/rad), far
# beyond what a loop closed over DDS can hold (docs/benchmarks.md, the latency margin).
MAX_KP = 1e5  # N m/rad (pd_feedforward), 1/s^2 (computed_torque)
MAX_KD = 1e4  # N m s/rad (pd_feedforward), 1/s (computed_torque)


class ControlLaw:
    """
    The gains of one model (per v entry) and the law's terms, preallocated.

    ``joint_names``: the model's one-DoF joints in v order, from ``v_offset`` on.
    ``gains``: ``kp.<joint>`` / ``kd.<joint>`` -> value (None or missing: 0).
    """

    def __init__(self, model: RobotModel, law: str, joint_names, gains: dict,
                 v_offset: int = 0):
        if law not in CONTROL_LAWS:
            raise ValueError(f'control_law {law!r}: expected one of {", ".join(CONTROL_LAWS)}')
        self.model = model
        self.law = law
        self.feedback = law != FEEDFORWARD
        self._index = {name: v_offset + k for k, name in enumerate(joint_names)}
        nv = model.nv
        self.kp, self.kd = np.zeros(nv), np.zeros(nv)
        self.q_desired, self.v_desired = np.zeros(nv), np.zeros(nv)
        self.error, self.error_rate = np.zeros(nv), np.zeros(nv)
        self._zeros, self._damped = np.zeros(nv), np.zeros(nv)  # the rest's, per cycle
        self.resting = False  # the last cycle published the damped rest
        self.use(gains)

    def use(self, gains) -> None:
        """Take the gains of a settings snapshot (``kp.<joint>`` / ``kd.<joint>`` -> value)."""
        self.kp.fill(0.0)
        self.kd.fill(0.0)
        for name, value in gains.items():
            self.set_gain(name, value)

    def set_gain(self, name: str, value: float | None) -> None:
        """Set ``kp.<joint>`` or ``kd.<joint>`` (a joint of another model is ignored)."""
        prefix, joint = name.split('.', 1)
        k = self._index.get(joint)
        if k is not None:
            (self.kp if prefix == 'kp' else self.kd)[k] = 0.0 if value is None else value

    def gains(self) -> dict[str, tuple[float, float]]:
        """Return joint -> (Kp, Kd) of the joints with a gain set."""
        return {name: (self.kp[k], self.kd[k]) for name, k in self._index.items()
                if self.kp[k] or self.kd[k]}

    def targets(self, desired, q: np.ndarray, v: np.ndarray) -> None:
        """
        Take q_d, v_d from ``desired`` (sampled: its ``q``, ``v``) and the errors at (q, v).

        Joints the message does not name: q_d = q (e = 0) and v_d = 0.
        """
        self.q_desired[:] = q
        self.v_desired.fill(0.0)
        desired.scatter(desired.q, self.q_desired)
        if desired.has_velocities:
            desired.scatter(desired.v, self.v_desired)
        self.resting = False
        np.subtract(self.q_desired, q, out=self.error)
        np.subtract(self.v_desired, v, out=self.error_rate)

    def correct_acceleration(self, a: np.ndarray) -> None:
        """``computed_torque``: a += Kp e + Kd e_dot (before the inverse dynamics)."""
        if self.law == COMPUTED_TORQUE:
            a += self.kp * self.error + self.kd * self.error_rate

    def add_feedback(self, tau: np.ndarray) -> None:
        """``pd_feedforward``: tau += Kp e + Kd e_dot (after the inverse dynamics)."""
        if self.law == PD_FEEDFORWARD:
            tau += self.kp * self.error + self.kd * self.error_rate

    def damping(self, q: np.ndarray) -> np.ndarray:
        """D per v entry: Kd (``pd_feedforward``), Kd M_jj(q) (``computed_torque``)."""
        if self.law == COMPUTED_TORQUE:
            return self.kd * np.diag(self.model.mass_matrix(q))
        return self.kd.copy()

    def rest(self, q: np.ndarray, v: np.ndarray | None, tau: np.ndarray) -> None:
        """
        Write the damped rest g(q) - D v into ``tau`` (``v`` None: unknown, g(q) alone).

        In place: a cycle under ``pd_feedforward`` allocates nothing here (``computed_torque``
        takes M(q) for its D).
        """
        self.model.rnea(q, self._zeros, self._zeros, out=tau)  # g(q)
        if v is None:
            return
        if self.law == COMPUTED_TORQUE:
            tau -= self.damping(q) * v
        else:
            np.multiply(self.kd, v, out=self._damped)
            tau -= self._damped


def rest_torques(law: ControlLaw, q: np.ndarray, v: np.ndarray | None, tau: np.ndarray,
                 held: bool = True) -> bool:
    """
    Write the damped rest into ``tau``; True if it holds g(q).

    False: zero written, for want of a position to hold (``held`` False) or of a finite g(q).
    """
    law.resting = True
    if held:
        try:
            law.rest(q, v, tau)
        except InputError:
            pass
        else:
            if all_finite(tau):
                return True
    tau.fill(0.0)
    return False


def leave_gravity_out(model: RobotModel, q: np.ndarray, zeros: np.ndarray, tau: np.ndarray,
                      gravity: np.ndarray) -> bool:
    """
    Take g(q) out of ``tau`` (``gravity_compensated_by_robot``); False if g(q) is not finite.

    ``zeros``: an (nv,) array of zeros; ``gravity``: (nv,), receives g(q). No allocation.
    """
    try:
        model.rnea(q, zeros, zeros, out=gravity)
    except InputError:
        return False
    if not all_finite(gravity):
        return False
    tau -= gravity
    return True


__all__ = ['COMPUTED_TORQUE', 'CONTROL_LAWS', 'ControlLaw', 'FEEDFORWARD',
           'leave_gravity_out', 'MAX_KD', 'MAX_KP', 'PD_FEEDFORWARD', 'rest_torques']
