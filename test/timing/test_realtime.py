"""The control thread's timing without ROS: the deadline account, sleeping, the periodic thread."""
from __future__ import annotations

import threading
import time

import pytest

from rnea_ros.control.diagnostics import ArrivalGaps, CycleStats
from rnea_ros.timing import realtime
from rnea_ros.timing.realtime import ArrivalClock, Deadlines, PeriodicThread

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


def test_longest_missed_run_tells_one_stall_from_scattered_misses():
    scattered = Deadlines(MS, start_ns=0)
    for k in range(1, 6):  # every other deadline slept through: 5 misses, one at a time
        assert scattered.due(2 * k * MS)
    one_stall = Deadlines(MS, start_ns=0)
    assert one_stall.due(6 * MS)  # 1..5 ms slept through at once
    assert scattered.missed == one_stall.missed == 5
    assert (scattered.longest_missed_run, one_stall.longest_missed_run) == (1, 5)


def test_arrival_clock_runs_only_when_arrivals_stop():
    clock = ArrivalClock(MS, start_ns=0)
    assert clock.next_ns == 1_500_000 and clock.wait_s(0) == pytest.approx(1.5e-3)
    for k in range(1, 20):  # arrivals every period: the fallback never comes due
        clock.arrived(k * MS)
        assert not clock.due(k * MS + 1_499_999)
    assert clock.cycles == 0 and clock.next_ns == 19 * MS + 1_500_000
    # The arrivals stop after 19 ms: cycles at 20.5, 21.5, ... ms, on time, none missed.
    for k in range(5):
        assert clock.due(20 * MS + MS // 2 + k * MS)
    assert (clock.cycles, clock.missed) == (5, 0)
    assert clock.wait_s(25 * MS) == pytest.approx(0.5e-3) and clock.wait_s(30 * MS) == 0
    # Woken 3 periods late: 3 deadlines skipped in one run; an arrival restarts the grid.
    assert clock.due(28 * MS + MS // 2)
    assert (clock.missed, clock.longest_missed_run) == (3, 3)
    clock.arrived(29 * MS)
    assert not clock.due(30 * MS) and clock.due(30 * MS + MS // 2)
    # The thread frozen from 30.6 to 40.7 ms: the arrival then served stands for the 40.5 ms
    # deadline; 31.5 ... 39.5 ms were missed, in one run.
    clock.arrived(40 * MS + 700_000)
    assert (clock.missed, clock.longest_missed_run) == (3 + 9, 9)
    assert clock.next_ns == 42 * MS + 200_000


def test_arrival_gaps_longest_in_total_and_since_the_last_report():
    gaps = ArrivalGaps()
    assert gaps.longest_at(5.0) == 0.0 and gaps.since_report(5.0) == 0.0  # nothing yet
    for t in (10.0, 10.002, 10.004, 10.170, 10.172):  # a 166 ms stall
        gaps.arrival(t)
    assert gaps.longest_at(10.173) == pytest.approx(0.166)
    assert gaps.since_report(10.173) == pytest.approx(0.166)
    gaps.arrival(10.174)
    assert gaps.since_report(10.175) == pytest.approx(0.002)  # a new window
    # An open gap (no arrival since 10.174) counts as it grows, in both.
    assert gaps.since_report(10.5) == pytest.approx(0.326)
    assert gaps.longest_at(10.5) == pytest.approx(0.326)


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
    stamps, lateness = [], []

    def cycle():
        stamps.append(time.monotonic_ns())
        lateness.append(loop.deadlines.lateness_ns)
        if len(stamps) == 50:
            done.set()
    loop = PeriodicThread(500.0, cycle, 'test_periodic', priority=0)
    loop.start()
    assert done.wait(10.0)
    loop.stop()
    count = len(stamps)
    assert loop.deadlines.cycles == count and loop.failure is None
    # Deadline-driven: no cycle runs before its deadline, none a period or more after it (those
    # deadlines are missed, skipped). So the run spans its cycles (+ missed ones) at 2 ms each
    # within the first and the last cycle's lateness: under one period each, whatever the load
    # (a first cycle 1.8 ms late at load 6 gave a span of 96.2 ms).
    assert all(0 <= late < 2 * MS for late in lateness), lateness
    span = (stamps[49] - stamps[0]) / MS
    assert span > 49 * 2 - 2.0
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
