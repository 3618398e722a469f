"""
What the node publishes when something is wrong: fault states, fault output, effort limits.

ros2_control effort controllers hold their last command forever when nothing new arrives, and
pass NaN through, so silence is not safe. The node's behaviour per case (see also the README):

============================  ====================================  ======================
case                          published                             diagnostics
============================  ====================================  ======================
no model yet / model invalid  nothing (no command layout exists)    ERROR
joint_states missing or
older than its joint's
timeout (a commanded joint;
``joint_input``), or its
velocity when needed;         the ``fault_output`` (below)          ERROR, recovers alone;
odometry older than                                                 fault cycles counted
input_timeout                                                       per code (WARN after)
new model, other joints       the ``fault_output``, old model kept  ERROR until restart
non-finite torque computed    the ``fault_output`` for that cycle   counted; ERROR then
collision (observer, with a
``collision_reaction``)       that reaction (``stop``,              ERROR until
                              ``hold_gravity`` or ``zero``)         ~/reset_collision
                                                                    (or the auto reset)
the loop oscillates (a        the stop (``unstable_reaction``       ERROR until
feedback law, loop_watch)     ``stop``), then the hold at rest      ~/reset_collision, WARN
                              until a newer desired motion          while held after it
desired input silent          torques with zero desired accel       WARN
measured wrench (a
``wrench_topics`` entry)
older than input_timeout      torques with that wrench taken as 0   WARN
contact motion infeasible     the least-violating wrenches, their   WARN, with the base
within the friction cones     torques (``ContactSolver``)           residual
============================  ====================================  ======================

Contact wrenches (``contact_wrenches/<link>``) and joint reaction wrenches pass the same output
checks as the torques: under every fault above that publishes the ``fault_output`` (including a
non-finite wrench, which counts as a non-finite output), every wrench is published as zero,
with the stamp of the fault output; with ``fault_output`` ``none`` nothing is published.

``fault_output``:
- ``hold_gravity`` (default): gravity torques at the last measured positions (keeps an arm up
  whose controller relies on the feed-forward for gravity: its low-gain PD alone lets it fall);
  on a floating base with contacts, the contact solution at rest at the last measured pose;
  zero while a commanded joint was never measured (no position to hold);
- ``zero``: zero effort on every joint (a feed-forward term that stops contributing);
- ``none``: publish nothing; the controller keeps the last command. Only for set-ups whose
  controller has its own command timeout.

Under a feedback ``control_law`` (``pd_feedforward``, ``computed_torque``) the node's torque is
the robot's only one: every fault publishes the damped rest g(q) - D v instead
(``control_law.rest_torques``; g(q) alone when the velocity is stale, zero before any position).

Every published effort is finite and, when ``effort_limit_scale`` > 0, within the URDF
``<limit effort>`` times that scale (joints without a limit are not clipped).
"""
from __future__ import annotations

import math

from numba import njit
import numpy as np

# Diagnostic levels, as diagnostic_msgs/DiagnosticStatus numbers them.
OK, WARN, ERROR = 0, 1, 2

# Fault codes: the state of the output, most severe first when several hold at once.
NO_MODEL = 'no_model'
MODEL_MISMATCH = 'model_mismatch'
JOINT_STATES_MISSING = 'joint_states_missing'
JOINT_STATES_STALE = 'joint_states_stale'
VELOCITY_MISSING = 'velocity_missing'
ODOMETRY_STALE = 'odometry_stale'
NON_FINITE_OUTPUT = 'non_finite_output'
COLLISION = 'collision'
LOOP_UNSTABLE = 'loop_unstable'
LOOP_HOLD = 'loop_hold'
# Fault codes reported as WARN: a chosen state, not a fault (the others are ERROR).
WARN_CODES = (LOOP_HOLD,)

FAULT_TEXT = {
    NO_MODEL: 'no valid robot model: publishing nothing',
    MODEL_MISMATCH: 'a new robot_description has other joints: publishing the fault output; '
                    'restart the node to use it',
    JOINT_STATES_MISSING: 'joint_states never received for a commanded joint',
    JOINT_STATES_STALE: 'joint_states older than input_timeout for a commanded joint',
    VELOCITY_MISSING: 'joint velocities missing or older than input_timeout',
    ODOMETRY_STALE: 'odometry missing or older than input_timeout',
    NON_FINITE_OUTPUT: 'the computed torque is not finite',
    COLLISION: 'collision detected: publishing the collision_reaction output until '
               '~/reset_collision (or collision_auto_reset)',
    LOOP_UNSTABLE: 'the loop is not holding: publishing the stop (unstable_reaction) until '
                   '~/reset_collision',
    LOOP_HOLD: 'holding the pose where the stop ended until a desired motion newer than the '
               'reset',
}


@njit(cache=True, nogil=True)
def all_finite(values: np.ndarray) -> bool:
    """Tell whether every entry of a 1-D float array is finite (no temporary array, no warning)."""
    for x in values:
        if not np.isfinite(x):
            return False
    return True


class EffortLimiter:
    """Clips efforts to +-(URDF effort limit x scale); scale 0 disables, inf limits never clip."""

    def __init__(self, limits: np.ndarray, scale: float):
        self._limits = np.asarray(limits, dtype=np.float64).copy()
        self.upper = np.empty_like(self._limits)
        self.lower = np.empty_like(self._limits)
        self.scale = scale

    @property
    def scale(self) -> float:
        return self._scale

    @scale.setter
    def scale(self, scale: float) -> None:
        if not (scale >= 0 and math.isfinite(scale)):
            raise ValueError(f'effort_limit_scale must be finite and >= 0, got {scale}')
        self._scale = float(scale)
        np.multiply(self._limits, scale if scale > 0 else math.inf, out=self.upper)
        self.upper[np.isnan(self.upper)] = math.inf  # inf * 0 does not occur, but be explicit
        np.negative(self.upper, out=self.lower)

    def clip(self, tau: np.ndarray) -> bool:
        """Clip ``tau`` in place; True if an entry was at or beyond its limit."""
        if self._scale == 0:
            return False
        return clip_in_place(tau, self.lower, self.upper)


@njit(cache=True, nogil=True)
def clip_in_place(values, lower, upper) -> bool:
    """Clip values to [lower, upper] in place, without temporaries (np.clip costs ~10 us here)."""
    clipped = False
    for k in range(values.shape[0]):
        if values[k] >= upper[k]:
            values[k] = upper[k]
            clipped = True
        elif values[k] <= lower[k]:
            values[k] = lower[k]
            clipped = True
    return clipped


class FaultState:
    """
    The current fault code (None: healthy) with transition counting and logging hooks.

    ``update`` is called every cycle with the code that holds (None if none); it returns True on a
    transition so the caller can log once per change instead of once per cycle. Every fault cycle
    is counted, in total and per code (``counts``), so a report can tell what happened between
    two reports, not only the state at that instant (``since_report``).
    """

    def __init__(self):
        self.code: str | None = NO_MODEL
        self.since: float = 0.0
        self.transitions = 0
        self.fault_cycles = 0
        self.counts: dict[str, int] = dict.fromkeys(FAULT_TEXT, 0)
        self._reported: dict[str, int] = dict.fromkeys(FAULT_TEXT, 0)

    def since_report(self) -> dict[str, int]:
        """Fault cycles per code since the previous call (codes with none left out)."""
        counts = dict(self.counts)  # the cycles keep counting meanwhile: read once
        delta = {code: n - self._reported[code] for code, n in counts.items()
                 if n != self._reported[code]}
        self._reported = counts
        return delta

    def update(self, code: str | None, now: float) -> bool:
        if code is not None:
            self.fault_cycles += 1
            self.counts[code] += 1
        if code == self.code:
            return False
        self.code = code
        self.since = now
        self.transitions += 1
        return True

    @property
    def level(self) -> int:
        return OK if self.code is None else WARN if self.code in WARN_CODES else ERROR

    @property
    def text(self) -> str:
        return 'ok' if self.code is None else FAULT_TEXT[self.code]


def fault_torques(mode: str, tau: np.ndarray, gravity_torques) -> bool:
    """
    Write the fault output of ``mode`` into ``tau``; False if nothing is to be published.

    ``gravity_torques``: a callable returning g(q) at the last measured state (hold_gravity). A
    non-finite or failing gravity computation falls back to zero: output is always finite.
    """
    if mode == 'none':
        return False
    if mode == 'stop':  # written by the caller (``collision_reaction.StopReaction``)
        return True
    if mode == 'hold_gravity':
        try:
            gravity = gravity_torques()
        except (ValueError, ArithmeticError):
            gravity = None
        if gravity is not None and all_finite(gravity):
            tau[:] = gravity
            return True
    tau.fill(0.0)
    return True
