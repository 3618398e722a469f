"""
The desired motion a cycle follows: chosen, held back after a rest, and sampled once.

Each cycle asks ``Reference.follow`` for the desired motion it follows: the latest one taken
(``CycleState.desired``) while it is active, its trajectory sampled once at the ROS time (a
one-point motion was sampled on receipt), or None. Whatever the cycle computes from it (the
accelerations, the feedback laws' targets, the friction's velocities, the desired state) reads
the same sample.

Under a feedback law the node's torque is the robot's only one, and a desired motion taken
before the arm was last brought to rest no longer says where the arm should be:

- **after a rest** (the damped rest, a fault output, a collision reaction, until its reset):
  the reference moved on meanwhile, and following it again would throw the arm towards it
  (on the simulated panda, 3.1 rad/s after a collision reset, detected as a new collision);
- **after a step back of the ROS clock** (a simulation reset, ``use_sim_time``): a trajectory's
  age ``ros_time - start`` goes negative, so a finished trajectory is active again and its first
  point comes back as the reference (``pd_feedforward`` published the effort limits for the
  whole step).

So ``rested`` (called by each cycle that rests with a measured pose) and a step back of the ROS
time seen by ``follow`` both hold back every desired motion taken so far: the law keeps the
damped rest until a desired motion numbered above them (``Desired.number``, one a message)
arrives. A motion held back is reported (``held_back``), clock steps counted. Without a feedback
law nothing is held back: the torque is a term the robot's own controller adds. ROS-free.
"""
from __future__ import annotations

import math

from rnea_ros.control.desired import Desired

__all__ = ['Reference']


class Reference:
    """Which desired motion a cycle follows (module docstring)."""

    def __init__(self):
        self.rest_number = 0  # desired motions numbered up to this one are held back
        self.held_back = False  # the last cycle held an active desired motion back
        self.clock_steps = 0  # steps back of the ROS time seen under a trajectory
        self.last_clock_step = ''  # the last one: 'from T1 s to T2 s'
        self._watched: Desired | None = None  # the trajectory whose ROS time is watched
        self._ros_time = -math.inf  # the ROS time it was last evaluated at

    def follow(self, desired: Desired | None, now: float, ros_time: float, timeout: float,
               feedback: bool) -> Desired | None:
        """
        Return the desired motion this cycle follows, sampled; None: none.

        ``now``: steady-clock seconds (a one-point motion's age); ``ros_time``: ROS time in
        seconds (a trajectory's; not read for a one-point motion); ``timeout``:
        ``acceleration_timeout``; ``feedback``: a feedback law (motions may be held back).
        """
        self.held_back = False
        if desired is None:
            return None
        if not desired.constant:
            self.watch_clock(desired, ros_time)
        if not desired.active(now, ros_time, timeout):
            return None
        if feedback and desired.number <= self.rest_number:
            self.held_back = True
            return None
        if not desired.constant:
            desired.sampler.sample(ros_time - desired.start, desired.q, desired.v, desired.a)
        return desired

    def watch_clock(self, desired: Desired | None, ros_time: float) -> None:
        """Hold every desired motion back at a step back of the ROS time under a trajectory."""
        if desired is None or desired.constant:
            return
        if desired is self._watched and ros_time < self._ros_time:
            self.clock_steps += 1
            self.last_clock_step = f'from {self._ros_time:.6f} s to {ros_time:.6f} s'
            self.rest_number = max(self.rest_number, desired.number)
        self._watched, self._ros_time = desired, ros_time

    def rested(self, desired: Desired | None) -> None:
        """Hold back every desired motion taken so far: a cycle rested with a measured pose."""
        if desired is not None:
            self.rest_number = max(self.rest_number, desired.number)

    def take_state_from(self, other: Reference) -> None:
        """Go on from another model's reference (a new model: the numbers carry over)."""
        self.rest_number = other.rest_number
        self.clock_steps, self.last_clock_step = other.clock_steps, other.last_clock_step
