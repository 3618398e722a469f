"""
Bringing the arm to rest and holding it there on the model, within the effort limits; no ROS.

One brake serves the ``stop`` reaction (``collision_reaction.StopReaction``: a collision, an
unstable loop) and a stall of joint_states carried through on the prediction
(``cycle_torques.CycleTorques.fault_output``). With T the time constant (``collision_stop_time``)
it commands the acceleration

    braking:  a = -2 v / T
    holding:  a = -2 v / T + (q_rest - q) / T^2

as the torque tau = ID(q, v, a) + armature a (``RobotModel.rnea``: M(q) a + C(q, v) v + g(q)),
with M(q) taken at the state of every cycle. Every joint then decelerates as a first-order lag of
time constant T / 2, coupling included, and covers about v T / 2 before rest; the hold is a
critically damped spring about ``q_rest``. A matrix taken once, at the pose where the braking
began, brakes some joints the wrong way once the pose has moved near a singular M; the matrix of
each cycle does not. At rest the torque is g(q), which holds.

**Within the effort limits.** The part beyond the bias b = g(q) + C(q, v) v is scaled down as a
whole, by the largest factor in [0, 1] that keeps every joint within its limit ``upper``
(clipping joint by joint would change the direction of the coupled acceleration and could speed
other joints up): the braking is as hard as the weakest joint allows. A joint whose bias alone
exceeds its limit leaves no room: the torque is the bias, which the caller clips.
"""
from __future__ import annotations

import numpy as np

from rnea_ros.control.safety import all_finite
from rnea_ros.errors import InputError


class Brake:
    """The braking and holding torques of one model (module docstring); no allocation."""

    def __init__(self, model, armature):
        self.model = model
        self.armature = np.asarray(armature, dtype=np.float64)
        nv = model.nv
        self._a, self._bias = np.zeros(nv), np.zeros(nv)
        self._pose, self._zeros = np.zeros(nv), np.zeros(nv)

    def torques(self, q: np.ndarray, v: np.ndarray, stop_time: float, upper: np.ndarray,
                tau: np.ndarray, q_rest: np.ndarray | None = None) -> bool:
        """
        Write the torque that brakes (or, with ``q_rest``, holds) at (q, v) into ``tau``.

        ``stop_time``: T [s]; ``upper``: the effort limit of each joint (inf: none). Return
        False if it could not be computed or is not finite (``tau`` is then unspecified).
        """
        a, bias = self._a, self._bias
        np.multiply(v, -2.0 / stop_time, out=a)
        if q_rest is not None:
            np.subtract(q_rest, q, out=self._pose)
            self._pose *= 1.0 / (stop_time * stop_time)
            a += self._pose
        try:
            self.model.rnea(q, v, self._zeros, out=bias)
            self.model.rnea(q, v, a, out=tau)
        except InputError:
            return False
        a *= self.armature
        tau += a
        tau -= bias
        tau *= _room(tau, bias, upper)
        tau += bias
        return all_finite(tau)


def _room(beyond: np.ndarray, bias: np.ndarray, upper: np.ndarray) -> float:
    """Return the largest scale in [0, 1] that keeps |bias + scale beyond| within ``upper``."""
    scale = 1.0
    for k in range(beyond.shape[0]):
        if beyond[k] > 0.0:  # towards +upper
            room = upper[k] - bias[k]
        elif beyond[k] < 0.0:  # towards -upper
            room = upper[k] + bias[k]
        else:
            continue
        if abs(beyond[k]) > room:
            scale = min(scale, max(room, 0.0) / abs(beyond[k]))
    return scale
