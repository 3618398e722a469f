"""
What a real-time loop needs, without ROS: sleeps, step schedules, priority, the collector.

``clock`` sleeps to absolute deadlines on ``CLOCK_MONOTONIC`` (``clock_nanosleep`` with
``TIMER_ABSTIME``, the clock of ``time.monotonic``), lowers a thread's timer slack, and keeps the
schedule of a loop that must run every step (``StepSchedule``); ``scheduling`` raises a thread
to SCHED_FIFO; ``collector`` keeps the garbage collector out of the steps (``GcMonitor``).
Nothing here imports ROS: the
node (``rnea_ros.timing.realtime``, its control threads) and the simulated robot
(``rnea_ros.sim``, its real-time clock) both build on it.
"""
from rnea_ros.timing.clock import (new_timespec, set_timer_slack, sleep_until,
                                   StepSchedule)
from rnea_ros.timing.collector import GcMonitor
from rnea_ros.timing.scheduling import set_fifo_priority

__all__ = ['GcMonitor', 'new_timespec', 'set_fifo_priority', 'set_timer_slack', 'sleep_until',
           'StepSchedule']
