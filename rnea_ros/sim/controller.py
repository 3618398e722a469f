"""
The simulated robot's joint controller: a PD on the tracked reference plus feed-forward terms.

    effort = kp (q_d - q) + kd (v_d - v) + trajectory effort + effort command

per actuated joint, like ros2_control's joint_trajectory_controller with an effort interface
(the points' ``effort`` as feed-forward) beside a JointGroupEffortController whose command adds
to it. ``q_d, v_d`` come from the trajectory being tracked (``set_trajectory``), or hold the
last reference (at start: the initial position) when there is none.

Effort commands (``set_command``) come in ``command_joints`` order. A command of the wrong
length or with a non-finite value raises ``CommandError`` (the caller drops and counts it); the
previous command stays. A command older than ``command_timeout`` (sim time) is **stale**: like
joint_trajectory_controller's ``cmd_timeout``, the robot stops using it, and its feed-forward
goes to zero, leaving the PD alone (a JointGroupEffortController would hold it forever, which is
not safe for a feed-forward whose source died); each stale tick is counted. ``command_timeout``
0 holds the last command forever, as JointGroupEffortController does.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rnea_ros.errors import InputError
from rnea_ros.sim.trajectory import build_trajectory, Reference, TrackedTrajectory


class CommandError(InputError):
    """An effort command the robot drops; ``reason`` keys the counters."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


class JointController:
    """PD + feed-forward over ``joint_names`` (see the module docstring); not thread-safe."""

    def __init__(self, joint_names: Sequence[str], kp, kd, lower, upper, initial_position,
                 command_joints: Sequence[str] | None = None, command_timeout: float = 0.1):
        n = len(joint_names)
        self.joint_names = tuple(joint_names)
        self.index = {name: k for k, name in enumerate(self.joint_names)}
        self.kp = np.broadcast_to(np.asarray(kp, dtype=float), (n,)).copy()
        self.kd = np.broadcast_to(np.asarray(kd, dtype=float), (n,)).copy()
        self.lower, self.upper = np.asarray(lower, float), np.asarray(upper, float)
        self.reference = Reference(np.array(initial_position, dtype=float), np.zeros(n),
                                   np.zeros(n), np.zeros(n))
        command_joints = self.joint_names if command_joints is None else tuple(command_joints)
        self.command_columns = np.array([self.index[name] for name in command_joints], int)
        self.command_timeout = command_timeout
        self.command = np.zeros(n)
        self.command_time: float | None = None
        self.trajectory: TrackedTrajectory | None = None
        self._sampled: float | None = None
        self.stale_ticks = 0
        self.commands_used = 0

    def set_trajectory(self, names, times, positions, velocities=None, accelerations=None,
                       efforts=None, *, start: float) -> None:
        """Track a new trajectory from sim time ``start`` (``TrajectoryError`` if refused)."""
        held = Reference(self.reference.position.copy(), self.reference.velocity.copy(),
                         self.reference.acceleration.copy(), self.reference.effort.copy())
        self.trajectory = build_trajectory(
            list(names), np.asarray(times, float), positions, velocities, accelerations,
            efforts, joint_index=self.index, lower=self.lower, upper=self.upper, start=start,
            held=held)
        if efforts is None:  # a trajectory without efforts carries no feed-forward
            self.reference.effort[self.trajectory.columns] = 0.0
        self._sampled = None

    def set_command(self, values, t: float) -> None:
        """Take an effort command in ``command_joints`` order at sim time ``t``."""
        values = np.asarray(values, dtype=float)
        if values.shape != self.command_columns.shape:
            raise CommandError('wrong_length', f'{values.size} values: expected '
                               f'{self.command_columns.size}, one per joint of joints')
        if not np.all(np.isfinite(values)):
            raise CommandError('non_finite', 'a value is not finite')
        self.command[:] = 0.0
        self.command[self.command_columns] = values
        self.command_time = t

    def sample(self, t: float) -> Reference:
        """Bring the reference to sim time ``t`` (trajectory sample, or held); return it."""
        if self.trajectory is not None and t != self._sampled:
            self.trajectory.sample(t, self.reference)
        self._sampled = t
        return self.reference

    def effort(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Return the effort of sim time ``t`` at measured ``q``, ``v`` (actuated joints)."""
        reference = self.sample(t)
        effort = (self.kp * (reference.position - q) + self.kd * (reference.velocity - v)
                  + reference.effort)
        if self.command_time is not None:
            if self.command_timeout > 0 and t - self.command_time > self.command_timeout:
                self.stale_ticks += 1
            else:
                effort += self.command
                self.commands_used += 1
        return effort
