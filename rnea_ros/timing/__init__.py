"""
Steady-clock timing without ROS: absolute sleeps and step schedules, for the node and the sim.

``clock`` sleeps to absolute deadlines on ``CLOCK_MONOTONIC`` (``clock_nanosleep`` with
``TIMER_ABSTIME``, the clock of ``time.monotonic``), lowers a thread's timer slack, and keeps the
schedule of a loop that must run every step (``StepSchedule``). Nothing here imports ROS: the
node (``rnea_ros.node.realtime``, its control threads) and the simulated robot
(``rnea_ros.sim``, its real-time clock) both build on it.
"""
from rnea_ros.timing.clock import (new_timespec, set_timer_slack, sleep_until,
                                   StepSchedule)

__all__ = ['new_timespec', 'set_timer_slack', 'sleep_until', 'StepSchedule']
