"""
The simulated robot's joint controller: what the effort on each joint is, per command interface.

``command_interface`` names the real controller (or drive) whose semantics the robot has:

- ``drive_pd`` (a drive with its own PD, "MIT mode"): position, velocity and torque feed-forward
  per joint, the drive adding the PD::

      effort = kp (q_d - q) + kd (v_d - v) + trajectory effort + effort command

  ``q_d, v_d`` and the trajectory effort come from the trajectory being tracked; the effort
  command adds to them. A command older than ``command_timeout`` (sim time) is **stale**: the
  robot stops adding it, leaving the PD alone (a drive's watchdog on its feed-forward); each
  stale tick is counted. ``command_timeout`` 0 holds the last command forever.
- ``effort`` (ros2_controllers' forward_command_controller with ``interface_name: effort``):
  the command *is* the joint torque; no PD. Until a command comes
  the torque is zero; the last command is held however old it is, as that controller's
  ``update()`` writes its last command at every cycle (it has no timeout: ros2_controllers
  94e74de, ``forward_command_controller/src/forward_controllers_base.cpp``, lines
  135-176); stale ticks are counted all the same, for the diagnostics. Trajectories are
  references only: they are published on ``desired_accelerations`` and the tracking error is
  measured against them.
- ``trajectory_effort`` (joint_trajectory_controller with the ``effort`` command interface
  alone, Jazzy and newer): a PID on the sampled trajectory plus the point's ``effort`` as
  feed-forward (``JointController.effort`` gives the law and where it is from). Effort commands
  are refused (reason ``not_this_interface``): a second controller cannot claim the joints'
  effort interfaces.

With ``gravity`` (``gravity_compensated_by_robot``) the robot adds g(q) of the plant at the
measured positions to the torque of every interface, as Franka's (franka_ros2: the commanded
torque excludes gravity) and UR's (direct torque control) robots do.

Effort commands (``set_command``) come in ``command_joints`` order. A command of the wrong
length or with a non-finite value raises ``CommandError`` (the caller drops and counts it); the
previous command stays.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rnea_ros.errors import InputError
from rnea_ros.sim.settings import COMMAND_INTERFACES
from rnea_ros.sim.trajectory import (build_trajectory, load_scipy, Reference,
                                     TrackedTrajectory)


class CommandError(InputError):
    """An effort command the robot drops; ``reason`` keys the counters."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


class JointController:
    """The effort over ``joint_names`` (see the module docstring); not thread-safe."""

    def __init__(self, joint_names: Sequence[str], kp, kd, lower, upper, initial_position,
                 command_joints: Sequence[str] | None = None, command_timeout: float = 0.1,
                 *, command_interface: str = 'drive_pd', ki=0.0, period: float = 1e-3,
                 gravity: Callable[[np.ndarray], np.ndarray] | None = None):
        if command_interface not in COMMAND_INTERFACES:
            raise InputError(f'command_interface {command_interface!r}: expected one of '
                             + ', '.join(COMMAND_INTERFACES))
        self.command_interface = command_interface
        self.gravity = gravity  # measured positions -> g(q), added by the robot itself
        n = len(joint_names)
        self.joint_names = tuple(joint_names)
        self.index = {name: k for k, name in enumerate(self.joint_names)}
        self.kp = np.broadcast_to(np.asarray(kp, dtype=float), (n,)).copy()
        self.kd = np.broadcast_to(np.asarray(kd, dtype=float), (n,)).copy()
        self.ki = np.broadcast_to(np.asarray(ki, dtype=float), (n,)).copy()
        self.period = period  # [s] of a control cycle: the PID's dt, the feed-forward's lead
        self.integral = np.zeros(n)  # trajectory_effort: the PID's i_term, ki included
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
        self._ahead = Reference(*(np.zeros(n) for _ in range(4)))  # the next cycle's point
        self.stale_ticks = 0
        self.commands_used = 0
        load_scipy()  # before the first step, not at the first trajectory

    @classmethod
    def from_settings(cls, settings, joint_names: Sequence[str], lower, upper, initial_position,
                      gravity: Callable[[np.ndarray], np.ndarray] | None = None):
        """
        Return the controller ``SimSettings`` describe (``ValueError`` for gains of a bad size).

        ``gravity``: g(q) at the measured positions when the robot compensates gravity.
        """
        n = len(joint_names)
        for name in ('kp', 'kd', 'ki'):
            gains = getattr(settings, name)
            if len(gains) not in (1, n):
                raise ValueError(f"parameter '{name}' has {len(gains)} values: expected 1 or "
                                 f'{n} (one per actuated joint)')
        return cls(joint_names, settings.kp, settings.kd, lower, upper, initial_position,
                   settings.joints or joint_names, settings.command_timeout,
                   command_interface=settings.command_interface, ki=settings.ki,
                   period=1.0 / settings.rate, gravity=gravity)

    def set_trajectory(self, names, times, positions, velocities=None, accelerations=None,
                       efforts=None, *, start: float, arrival: float | None = None) -> None:
        """
        Track a new trajectory from sim time ``start`` (``TrajectoryError`` if refused).

        ``arrival``: the sim time it arrived (default ``start``), from which it moves off.
        """
        held = Reference(self.reference.position.copy(), self.reference.velocity.copy(),
                         self.reference.acceleration.copy(), self.reference.effort.copy())
        self.trajectory = build_trajectory(
            list(names), np.asarray(times, float), positions, velocities, accelerations,
            efforts, joint_index=self.index, lower=self.lower, upper=self.upper, start=start,
            held=held, arrival=arrival)
        if efforts is None:  # a trajectory without efforts carries no feed-forward
            self.reference.effort[self.trajectory.columns] = 0.0
        self._sampled = None

    def set_command(self, values, t: float) -> None:
        """Take an effort command in ``command_joints`` order at sim time ``t``."""
        if self.command_interface == 'trajectory_effort':
            raise CommandError('not_this_interface', 'the command interface is '
                               'trajectory_effort: its PID and joint_trajectory give the torque')
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
        """
        Return the effort of sim time ``t`` at measured ``q``, ``v`` (actuated joints).

        ``trajectory_effort`` is joint_trajectory_controller's law (ros2_controllers, branch
        jazzy, ed360c97d6e9: ``joint_trajectory_controller/src/joint_trajectory_controller.cpp``
        ``update()``, lines 321-329 and 414-425), one PID per joint from control_toolbox
        (``Pid::compute_command``: ``i_term += ki dt error``, no clamp by default)::

            e = q_d(t) - q,  ė = v_d(t) - v,  i += ki period e
            effort = kp e + i + kd ė + effort_d(t + period)

        the error against the point sampled at this cycle (``state_desired_``), the
        feed-forward the point of the next cycle (``command_next_``, sampled one period ahead).
        JTC's ``ff_velocity_scale`` (0 by default) and integral clamps (infinite by default)
        are not modelled; the integral is never reset (JTC resets it only on activation).
        """
        reference = self.sample(t)
        fresh = self._command_fresh(t)
        if self.command_interface == 'effort':  # the command is the torque, held however old
            effort = self.command.copy()
            self.commands_used += self.command_time is not None
        elif self.command_interface == 'trajectory_effort':
            error = reference.position - q
            self.integral += self.ki * self.period * error
            effort = (self.kp * error + self.integral + self.kd * (reference.velocity - v)
                      + self._sample_ahead(t + self.period).effort)
        else:
            effort = (self.kp * (reference.position - q) + self.kd * (reference.velocity - v)
                      + reference.effort)
            if fresh:
                effort += self.command
                self.commands_used += 1
        if self.gravity is not None:
            effort += self.gravity(q)
        return effort

    def _sample_ahead(self, t: float) -> Reference:
        """Return the reference at ``t`` without moving ``reference`` (held columns kept)."""
        ahead, reference = self._ahead, self.reference
        for field in ('position', 'velocity', 'acceleration', 'effort'):
            getattr(ahead, field)[:] = getattr(reference, field)
        if self.trajectory is not None:
            self.trajectory.sample(t, ahead)
        return ahead

    def _command_fresh(self, t: float) -> bool:
        """Whether there is a command not older than ``command_timeout``; count a stale tick."""
        if self.command_time is None:
            return False
        if self.command_timeout > 0 and t - self.command_time > self.command_timeout:
            self.stale_ticks += 1
            return False
        return True
