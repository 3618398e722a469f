"""The control thread's timing without ROS: the deadline account, sleeping, the periodic thread."""
from __future__ import annotations

import threading
import time

import pytest

from rnea_ros.node import realtime
from rnea_ros.node.diagnostics import CycleStats
from rnea_ros.node.realtime import Deadlines, PeriodicThread

MS = 1_000_000


def test_on_time_cycles_run_once_per_deadline():
    deadlines = Deadlines(MS, start_ns=0)
    assert deadlines.next_ns == MS
    assert not deadlines.due(MS - 1)  # woke early: sleep again
    for k in range(1, 6):
        assert deadlines.due(k * MS + 20_000)  # 20 us late
    assert (deadlines.cycles, deadlines.missed) == (5, 0)
    assert deadlines.next_ns == 6 * MS and deadlines.max_lateness_ns == 20_000


def test_a_late_wake_up_skips_the_deadlines_it_slept_through():
    deadlines = Deadlines(MS, start_ns=0)
    assert deadlines.due(MS + 999_999)  # 0.999 ms late: still this deadline's cycle
    assert deadlines.missed == 0 and deadlines.next_ns == 2 * MS
    # Woken 3.5 periods after the deadline 2 ms: 2, 3, 4 ms are skipped, 5 ms runs (0.5 late).
    assert deadlines.due(5 * MS + MS // 2)
    assert (deadlines.cycles, deadlines.missed) == (2, 3)
    assert deadlines.lateness_ns == MS // 2
    assert deadlines.next_ns == 6 * MS  # back on the original grid, no burst
    assert not deadlines.due(6 * MS - 1)
    assert deadlines.cycles + deadlines.missed == 5  # deadlines 1..5 ms passed


def test_exactly_one_period_late_is_a_missed_cycle():
    deadlines = Deadlines(MS, start_ns=0)
    assert deadlines.due(2 * MS)  # the 1 ms deadline is skipped, the 2 ms one runs on time
    assert (deadlines.cycles, deadlines.missed, deadlines.lateness_ns) == (1, 1, 0)


def test_period_must_be_positive():
    with pytest.raises(ValueError, match='period'):
        Deadlines(0, 0)


def test_sleep_until_is_absolute_and_not_early():
    timespec = realtime.new_timespec()
    for _ in range(20):
        deadline = time.monotonic_ns() + 200_000
        realtime.sleep_until(deadline, timespec)
        assert time.monotonic_ns() >= deadline
    realtime.sleep_until(time.monotonic_ns() - MS)  # in the past: returns at once


def test_priority_zero_changes_nothing_and_refusals_are_reported():
    assert realtime.set_fifo_priority(0) is None
    problem = realtime.set_timer_slack()
    assert problem is None or 'timer slack' in problem


def test_periodic_thread_keeps_the_rate_and_stops():
    done = threading.Event()
    stamps = []

    def cycle():
        stamps.append(time.monotonic_ns())
        if len(stamps) == 50:
            done.set()
    loop = PeriodicThread(500.0, cycle, 'test_periodic', priority=0)
    loop.start()
    assert done.wait(10.0)
    loop.stop()
    count = len(stamps)
    assert loop.deadlines.cycles == count and loop.failure is None
    # Deadline-driven: the run spans its cycles (+ missed ones) at 2 ms each, not more.
    span = (stamps[49] - stamps[0]) / MS
    assert span >= 49 * 2 - 1.0
    assert span <= (49 + loop.deadlines.missed) * 2 + 2.0


def test_periodic_thread_reports_a_failing_cycle():
    failed = threading.Event()
    errors = []

    def cycle():
        raise RuntimeError('boom')
    loop = PeriodicThread(1000.0, cycle, 'test_failing', on_failure=lambda exc: (
        errors.append(exc), failed.set()))
    loop.start()
    assert failed.wait(5.0)
    loop.stop()
    assert isinstance(loop.failure, RuntimeError) and errors == [loop.failure]


def test_cycle_stats_percentiles_and_window_rate():
    stats = CycleStats(rate=100.0, window=8)
    for k in range(20):
        stats.record(1e-6 * (k % 8 + 1))  # the buffer keeps the last 8: 1..8 us
    summary = stats.summary(stats._window_start + 2.0)
    assert stats.cycles == 20 and summary['rate'] == pytest.approx(10.0)
    assert summary['max'] == pytest.approx(8.0) and 4.0 <= summary['p50'] <= 5.0
    later = stats.summary(stats._window_start + 1.0)  # a new window: no cycles since
    assert later['rate'] == 0.0
