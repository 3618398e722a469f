"""
The machine's floor for real-time figures: how late a bare periodic sleep loop wakes up.

A real-time figure (a node's cycle latency, a closed loop's fresh answers) means little without
what the machine gives a loop that does nothing: ``wake_up_lateness`` runs a bare loop at
``rate`` Hz for ``seconds`` in a thread of its own, under SCHED_FIFO at ``priority`` where the
process may (as the node's control thread), sleeping to absolute deadlines on the steady clock
(``clock.sleep_until``, the node's own sleep), and returns how late each wake-up came after its
deadline. ``Floor.describe`` is the line the benches print beside their figures: on a quiet
2-core machine its p99 is ~70 µs at 1 kHz, over 1 ms on a loaded one.
"""
from __future__ import annotations

from dataclasses import dataclass
import os
import threading
import time

import numpy as np

from rnea_ros.timing.clock import new_timespec, set_timer_slack, sleep_until
from rnea_ros.timing.scheduling import set_fifo_priority

__all__ = ['Floor', 'wake_up_lateness']


@dataclass(frozen=True)
class Floor:
    """Wake-up lateness of a bare loop [µs] (percentiles, max), and how it ran."""

    rate: float
    seconds: float
    p50: float
    p99: float
    worst: float
    fifo: bool  # ran under SCHED_FIFO
    load: float  # 1-minute load average at the end

    def describe(self) -> str:
        """Return the one line a bench prints beside its real-time figures."""
        policy = 'SCHED_FIFO' if self.fifo else 'normal (SCHED_FIFO not permitted)'
        return (f'machine floor: a bare {self.rate / 1000:g} kHz {policy} sleep loop over '
                f'{self.seconds:g} s wakes up late by p50 {self.p50:.0f} µs, p99 '
                f'{self.p99:.0f} µs, max {self.worst:.0f} µs (1-minute load {self.load:.2f})')


def wake_up_lateness(rate: float = 1000.0, seconds: float = 2.0, priority: int = 80) -> Floor:
    """Run a bare loop at ``rate`` Hz for ``seconds`` and return its wake-up lateness."""
    if rate <= 0.0 or seconds <= 0.0:
        raise ValueError(f'rate and seconds must be positive, not {rate!r}, {seconds!r}')
    period = round(1e9 / rate)
    lateness = np.zeros(max(1, int(rate * seconds)), dtype=np.int64)
    problems: list[str | None] = []

    def loop() -> None:
        set_timer_slack()
        problems.append(set_fifo_priority(priority))
        timespec = new_timespec()
        deadline = time.monotonic_ns() + period
        for k in range(lateness.shape[0]):
            sleep_until(deadline, timespec)
            lateness[k] = time.monotonic_ns() - deadline
            deadline += period

    thread = threading.Thread(target=loop, name='floor', daemon=True)
    thread.start()
    thread.join()
    micro = lateness / 1000.0
    return Floor(rate, seconds, float(np.percentile(micro, 50)), float(np.percentile(micro, 99)),
                 float(micro.max()), fifo=problems == [None], load=os.getloadavg()[0])


if __name__ == '__main__':  # python -m rnea_ros.timing.floor: the line, for a 2 s run
    print(wake_up_lateness().describe())
