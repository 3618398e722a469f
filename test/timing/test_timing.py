"""Steady-clock timing without ROS (``rnea_ros.timing``): absolute sleeps, the step schedule."""
from __future__ import annotations

import time

import pytest

from rnea_ros.timing import sleep_until, StepSchedule
from rnea_ros.timing.clock import set_timer_slack

MS = 1_000_000


class FakeClock:
    """A steady clock that sleeps wake ``overshoot`` ns after the deadline asked for."""

    def __init__(self, now: int = 0, overshoot: int = 0):
        self.now = now
        self.overshoot = overshoot
        self.sleeps: list[int] = []

    def __call__(self) -> int:
        return self.now

    def sleep(self, deadline: int, _timespec=None) -> None:
        self.sleeps.append(deadline)
        self.now = max(self.now, deadline + self.overshoot)


def test_deadlines_are_absolute_so_late_wake_ups_do_not_accumulate():
    clock = FakeClock(now=5 * MS, overshoot=300_000)  # every sleep wakes 0.3 ms late
    schedule = StepSchedule(MS, start_ns=5 * MS, sleep=clock.sleep, clock=clock)
    lateness = [schedule.wait(k) for k in range(1, 1001)]
    # Each step asked for start + k ms exactly: 1000 overshoots did not shift the grid.
    assert clock.sleeps == [5 * MS + k * MS for k in range(1, 1001)]
    assert lateness == [300_000] * 1000
    assert (schedule.steps, schedule.late_steps, schedule.max_lateness_ns) == (1000, 0, 300_000)


def test_a_step_a_period_late_is_counted_and_the_loop_catches_up_on_the_same_grid():
    clock = FakeClock()
    schedule = StepSchedule(MS, start_ns=0, sleep=clock.sleep, clock=clock)
    for k in range(5):
        assert schedule.wait(k) == 0
    clock.now = 4 * MS + 3_500_000  # step 4 took 3.5 ms: steps 5, 6, 7 are due already
    assert [schedule.wait(k) for k in (5, 6, 7, 8)] == [2_500_000, 1_500_000, 500_000, 0]
    # Steps 5 and 6 started a period or more late; 7 ran at once (0.5 ms late), 8 slept.
    assert schedule.late_steps == 2 and schedule.max_lateness_ns == 2_500_000
    assert clock.sleeps == [MS, 2 * MS, 3 * MS, 4 * MS, 8 * MS]  # step 0 was due at once
    assert schedule.deadline_ns(9) == 9 * MS


def test_an_offset_moves_one_step_only():
    clock = FakeClock()
    schedule = StepSchedule(MS, start_ns=0, sleep=clock.sleep, clock=clock)
    schedule.wait(1, offset_ns=400_000)  # a jittered step
    schedule.wait(2)
    assert clock.sleeps == [1_400_000, 2 * MS]


def test_a_period_must_be_positive():
    with pytest.raises(ValueError) as raised:
        StepSchedule(0, start_ns=0)
    assert str(raised.value) == 'period must be > 0 ns, got 0'


def test_sleep_until_returns_at_or_after_its_deadline():
    assert set_timer_slack() is None  # Linux: the slack can always be lowered
    deadline = time.monotonic_ns() + 2 * MS
    sleep_until(deadline)
    assert time.monotonic_ns() >= deadline
    sleep_until(deadline - MS)  # a deadline already passed returns at once
    assert time.monotonic_ns() >= deadline
