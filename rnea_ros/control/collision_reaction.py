"""
The ``stop`` collision reaction without ROS: bring the arm to rest, damped, and hold it there.

With T = ``collision_stop_time``, the brake of ``braking.Brake`` (M(q) + diag(armature) taken at
every cycle, within the effort limits):

    braking:  a = -2 v / T
    holding:  a = -2 v / T + (q_rest - q) / T^2,       tau = ID(q, v, a) + armature a

Braking lasts until every joint speed is below ``REST_SPEED``; the q of that cycle is ``q_rest``,
held from then on by a critically damped spring. The spring is about the pose where the arm came
to rest, never the pose at detection: pulling back there would drive the arm into the obstacle
again. Gravity is compensated all along, so an arm that was held up stays up; no trajectory is
followed. Every joint decelerates as a first-order lag of time constant T/2, coupling included
(with the diagonal of M alone the coupled modes of the shoulder and elbow are slower: the
simulated panda pushed on its flange in test/closedloop/test_collision_stop_in_the_loop.py came
to rest 0.58-0.69 s after the detection with it); from a speed v0 a joint covers about v0 T / 2
before rest. The commanded acceleration only takes energy out (and, holding, stores it in the
spring). ISO 10218's stop category 2 (a controlled stop, power kept to hold the standstill); a
drive's own PD (path b) adds to it.
"""
from __future__ import annotations

import numpy as np

from rnea_ros.control.braking import Brake
from rnea_ros.control.cycle_kernels import largest_magnitude
from rnea_ros.control.declaration import REST_SPEED


class StopReaction:
    """The torques of ``collision_reaction: stop`` for one model (module docstring)."""

    def __init__(self, model, brake: Brake):
        self.brake = brake
        self.latch = 0  # the observer's latch (its count) the stop began for; 0: none
        self.resting = False  # the hold phase: q_rest holds the pose where the arm came to rest
        self._q_rest = np.zeros(model.nq)
        # A pose difference q_rest - q needs q and v of one size (1-DoF joints, fixed base).
        self._hold = model.nq == model.nv
        largest_magnitude(np.zeros(model.nv))  # compiled (or loaded) now, not in a stop

    @property
    def q_rest(self) -> np.ndarray | None:
        """Return the pose held (None while braking)."""
        return self._q_rest if self.resting else None

    def output(self, latch: int, q: np.ndarray, v: np.ndarray, tau: np.ndarray,
               stop_time: float, upper: np.ndarray) -> str:
        """
        Write the torques of the latched collision ``latch`` into ``tau``; 'stop'.

        Begun (braking) at the first call for each latch (``ObserverOutput.latches``);
        ``upper``: the effort limits. Should they not be finite, 'hold_gravity': the fault
        output the caller is to write instead.
        """
        if latch != self.latch:
            self.latch, self.resting = latch, False
        if not self.resting and self._hold and largest_magnitude(v) < REST_SPEED:
            self._q_rest[:] = q
            self.resting = True
        held = self._q_rest if self.resting else None
        return 'stop' if self.brake.torques(q, v, stop_time, upper, tau, held) \
            else 'hold_gravity'

    def hold_at(self, latch: int, q: np.ndarray) -> None:
        """Begin ``latch`` holding ``q`` at once, without braking first (the pose to keep)."""
        self.latch = latch
        if self._hold:
            self._q_rest[:] = q
            self.resting = True

    def take_state_from(self, other: StopReaction) -> None:
        """Go on with the stop under way of ``other`` (a new model with the same joints)."""
        if other.q_rest is not None:
            self._q_rest[:] = other.q_rest
        self.latch, self.resting = other.latch, other.resting
