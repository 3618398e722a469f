"""
Bookkeeping for the node's diagnostics, without ROS: cycle timing, rejections, throttling.

Everything here is updated on the control path without allocating (fixed ring buffers, counters)
and summarised once per diagnostics period, where allocation does not matter.
"""
from __future__ import annotations

import math
import time

import numpy as np


class CycleStats:
    """
    Compute times of the last ``window`` cycles (ring buffer), cycle count, achieved rate.

    ``record(duration)`` after each cycle, from the cycle's thread. Missed cycles are counted by
    the loop that runs the cycles (``realtime.Deadlines``: a deadline skipped because the loop
    woke more than one period after it); with ``rate`` 0 (one cycle per joint_states message)
    there are no deadlines.
    """

    def __init__(self, rate: float, window: int = 4096):
        self.period = 1.0 / rate if rate > 0 else 0.0
        self._durations = np.zeros(window)
        self._count = 0
        self.cycles = 0
        self._window_start = time.monotonic()
        self._window_first_cycle = 0

    def record(self, duration: float) -> None:
        """Record a cycle whose compute (and publishing) took ``duration`` seconds."""
        self._durations[self._count % len(self._durations)] = duration
        self._count += 1
        self.cycles += 1

    def summary(self, now: float) -> dict[str, float]:
        """Compute-time percentiles (µs) over the buffer and the rate since the last summary."""
        durations = self._durations[:min(self._count, len(self._durations))]
        cycles = self.cycles  # read once: the cycle thread keeps counting meanwhile
        elapsed = now - self._window_start
        rate = (cycles - self._window_first_cycle) / elapsed if elapsed > 0 else 0.0
        self._window_start, self._window_first_cycle = now, cycles
        if durations.size == 0:
            return {'rate': rate}
        p50, p99 = np.percentile(durations, (50, 99)) * 1e6
        return {'rate': rate, 'p50': p50, 'p99': p99, 'max': durations.max() * 1e6}


class Rejections:
    """Counts of dropped input messages per (topic, reason), with a throttled warning per key."""

    def __init__(self, throttle: float = 1.0):
        self.counts: dict[tuple[str, str], int] = {}
        self.last_detail: dict[str, str] = {}
        self._throttle = throttle
        self._last_warning: dict[tuple[str, str], float] = {}

    def record(self, topic: str, reason: str, detail: str, now: float) -> str | None:
        """Count a rejection; returns the warning text if one is due (at most 1 per throttle)."""
        key = (topic, reason)
        self.counts[key] = self.counts.get(key, 0) + 1
        self.last_detail[topic] = detail
        if now - self._last_warning.get(key, -math.inf) < self._throttle:
            return None
        self._last_warning[key] = now
        count = self.counts[key]
        return f'{topic}: message dropped ({reason}): {detail} [{count} so far]'

    def total(self) -> int:
        return sum(self.counts.values())


class ArrivalGaps:
    """
    The longest interval between two arrivals of a message: in total and since the last report.

    ``arrival(now)`` on each message (steady clock, seconds). The gap still open (since the last
    arrival) counts too, so a report made during a stall already shows it.
    """

    def __init__(self):
        self.last: float | None = None
        self.longest = 0.0
        self._window_longest = 0.0

    def arrival(self, now: float) -> None:
        if self.last is not None:
            gap = now - self.last
            if gap > self.longest:
                self.longest = gap
            if gap > self._window_longest:
                self._window_longest = gap
        self.last = now

    def _open_gap(self, now: float) -> float:
        last = self.last  # read once: the inputs thread writes it meanwhile
        return 0.0 if last is None else max(0.0, now - last)

    def longest_at(self, now: float) -> float:
        """Return the longest gap so far, the open one included [s]."""
        return max(self.longest, self._open_gap(now))

    def since_report(self, now: float) -> float:
        """Return the longest gap since the previous call, the open one included [s]."""
        longest = max(self._window_longest, self._open_gap(now))
        self._window_longest = 0.0
        return longest
