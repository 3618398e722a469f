"""
The ``stop`` collision reaction without ROS: bring the arm to rest, damped, and hold it there.

At detection (``begin``) the mass matrix at the measured q, armature included,
M = M(q) + diag(armature), gives with T = ``collision_stop_time``:

    braking:  tau = g(q) - D qdot,                         D = 2 M / T
    holding:  tau = g(q) - D qdot + K (q_rest - q),        K = M / T^2

Braking lasts until every joint speed is below ``REST_SPEED``; the measured q of that cycle is
``q_rest``, held from then on by a critically damped spring. The spring is about the pose where
the arm came to rest, never the pose at detection: pulling back there would drive the arm into
the obstacle again. Gravity is compensated all along, so an arm that was held up stays up; no
trajectory is followed. With the whole matrix, M qddot = -D qdot gives qddot = -(2 / T) qdot:
at the pose of detection every joint decelerates as a first-order lag of time constant T/2,
coupling included (with the diagonal alone the coupled modes of the shoulder and elbow are
slower: the simulated panda pushed on its flange in test/closedloop/
test_collision_stop_in_the_loop.py came to rest 0.58-0.69 s after the detection with it,
0.34-0.41 s with the whole matrix); from a speed v0 a joint covers about v0 T / 2 before
rest. D and K are symmetric positive definite, so the reaction only dissipates. ISO 10218's
stop category 2 (a controlled stop, power kept to hold the standstill); a drive's own PD
(path b) adds to it.
"""
from __future__ import annotations

import numpy as np

from rnea_ros.control.declaration import REST_SPEED
from rnea_ros.control.safety import all_finite
from rnea_ros.errors import InputError


class StopReaction:
    """The torques of ``collision_reaction: stop`` for one model (module docstring)."""

    def __init__(self, model, armature: np.ndarray):
        self.model = model
        self.armature = np.asarray(armature, dtype=np.float64)
        self.damping = np.zeros((model.nv, model.nv))  # D [N m s/rad or N s/m]
        self.stiffness = np.zeros((model.nv, model.nv))  # K [N m/rad or N/m]
        self.q_rest: np.ndarray | None = None  # None: braking
        self.latch = 0  # the observer's latch (its count) the stop began for; 0: none
        # A pose difference q_rest - q needs q and v of one size (1-DoF joints, fixed base).
        self._hold = model.nq == model.nv

    def output(self, latch: int, q: np.ndarray, v: np.ndarray, tau: np.ndarray,
               stop_time: float) -> str:
        """
        Write the torques of the latched collision ``latch`` into ``tau``; 'stop'.

        Begun at the first call for each latch (``ObserverOutput.latches``). Should they not be
        finite, 'hold_gravity': the fault output the caller is to write instead.
        """
        try:
            if latch != self.latch:
                self.latch = latch
                self.begin(q, stop_time)
            self.torques(q, v, tau)
        except InputError:
            return 'hold_gravity'
        return 'stop' if all_finite(tau) else 'hold_gravity'

    def take_state_from(self, other: StopReaction) -> None:
        """Go on with the stop under way of ``other`` (a new model with the same joints)."""
        self.damping[:], self.stiffness[:] = other.damping, other.stiffness
        self.q_rest, self.latch = other.q_rest, other.latch

    def begin(self, q: np.ndarray, stop_time: float) -> None:
        """Start braking at the measured ``q`` with time constant ``stop_time`` [s]."""
        inertia = self.model.mass_matrix(q) + np.diag(self.armature)
        self.damping[:] = 2.0 * inertia / stop_time
        self.stiffness[:] = inertia / stop_time ** 2
        self.q_rest = None

    @property
    def resting(self) -> bool:
        """Tell whether the arm came to rest (the hold phase)."""
        return self.q_rest is not None

    def torques(self, q: np.ndarray, v: np.ndarray, tau: np.ndarray) -> None:
        """Write the stop torques at the measured ``q``, ``v`` into ``tau``."""
        if self.q_rest is None and self._hold and np.max(np.abs(v), initial=0.0) < REST_SPEED:
            self.q_rest = q.copy()
        tau[:] = self.model.gravity_torques(q)
        tau -= self.damping @ v
        if self.q_rest is not None:
            tau += self.stiffness @ (self.q_rest - q)
