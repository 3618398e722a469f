"""
Periodic timing for the node's control thread, without ROS: deadlines, sleeping, priority.

A control loop at ``rate`` Hz has the deadlines ``t_k = t_0 + k / rate`` on the steady clock
(``CLOCK_MONOTONIC``, the clock of ``time.monotonic``). The thread sleeps until the next deadline
(an absolute sleep: the time a cycle takes does not shift the following ones) and then runs one
cycle. ``Deadlines`` keeps that schedule and its account:

- a cycle's *lateness* is how long after its deadline it started (wake-up and scheduling delay);
- a deadline is a **missed cycle** when no cycle started for it before the next deadline came:
  the thread woke more than one period after it. Missed deadlines are skipped, not run late in
  a burst (a burst would only publish stale duplicates): the thread runs one cycle for the most
  recent deadline and continues on the original grid.

So ``cycles + missed`` is the number of deadlines passed, and the achieved rate is
``cycles / elapsed``. ``longest_missed_run`` is the most deadlines skipped in one go: one stall of
166 ms at 1 kHz is a run of 166, where 166 scattered misses are runs of 1.

``ArrivalClock`` is the same grid locked to the arrivals of a message: each arrival pushes the
next deadline to 1.5 periods after it, so its deadlines only come due when no message came for
1.5 periods (a fallback at the rate, half a period out of phase with the arrivals expected). A
deadline no cycle served within a period (neither the clock's nor an arrival's: the thread did
not run) is missed likewise.

The sleeps, the timer slack and ``SCHED_FIFO`` (``set_fifo_priority``: when the process may, a
no-op elsewhere that says why) are ``rnea_ros.timing``'s, shared with the simulated robot.
"""
from __future__ import annotations

import os
import threading
import time

from rnea_ros.timing.clock import new_timespec, set_timer_slack, sleep_until
from rnea_ros.timing.scheduling import set_fifo_priority

# Longest single sleep, so a stop request is seen within this time even at low rates [ns].
MAX_SLEEP_NS = 100_000_000
# SCHED_FIFO priority of the thread running rclpy's executor when the node's threads are real
# time: the lowest, so it never preempts them, yet no normal process preempts it while it holds
# the GIL they wait for.
EXECUTOR_PRIORITY = 1


def middleware_threads(tasks: str = '/proc/self/task') -> str:
    """
    Say how this process's Fast DDS reception and timed-event threads are scheduled.

    The threads named ``dds.udp.<port>``, ``dds.shm.<port>`` (reception) and ``dds.ev.<n>``
    (timed events), e.g. ``SCHED_FIFO 49 (5 threads)``, or ``normal (5 threads)``; several
    groups when they differ. Linux only; elsewhere, or without such threads, says so.
    """
    groups: dict[str, int] = {}
    try:
        for tid in os.listdir(tasks):
            try:
                with open(f'{tasks}/{tid}/comm') as comm:
                    name = comm.read().strip()
                if not (name.startswith(('dds.udp.', 'dds.ev.'))
                        or (name.startswith('dds.shm.') and name[8:].isdigit())):
                    continue
                policy = os.sched_getscheduler(int(tid)) & ~os.SCHED_RESET_ON_FORK
                key = (f'SCHED_FIFO {os.sched_getparam(int(tid)).sched_priority}'
                       if policy == os.SCHED_FIFO else 'normal')
            except (OSError, ValueError):
                continue  # the thread ended meanwhile
            groups[key] = groups.get(key, 0) + 1
    except (OSError, AttributeError):
        return 'unknown (not Linux)'
    if not groups:
        return 'none found'
    return ', '.join(f'{key} ({count} threads)' for key, count in sorted(groups.items()))


class Deadlines:
    """
    The deadline grid of a periodic loop and its account (see the module docstring).

    ``next_ns`` is the deadline to sleep until; ``due(now_ns)`` is called on waking and returns
    True when a cycle is to run now (False: woke early, sleep again). Counters: ``cycles``,
    ``missed``, ``max_lateness_ns`` (of the cycles that ran).
    """

    def __init__(self, period_ns: int, start_ns: int):
        if period_ns <= 0:
            raise ValueError(f'period must be > 0 ns, got {period_ns}')
        self.period_ns = int(period_ns)
        self.next_ns = int(start_ns) + self.period_ns
        self.cycles = 0
        self.missed = 0
        self.longest_missed_run = 0
        self.max_lateness_ns = 0
        self.lateness_ns = 0

    def due(self, now_ns: int) -> bool:
        """
        Account for waking at ``now_ns``; True if a cycle runs now.

        Account for waking at ``now_ns``; True if a cycle runs now (then for the deadline
        ``next_ns`` had, or the latest one passed since, skipping those in between).
        """
        late = now_ns - self.next_ns
        if late < 0:
            return False
        if late >= self.period_ns:
            skipped = self._skip(late)
            self.next_ns += skipped * self.period_ns
            late -= skipped * self.period_ns
        self.lateness_ns = late
        if late > self.max_lateness_ns:
            self.max_lateness_ns = late
        self.cycles += 1
        self.next_ns += self.period_ns
        return True

    def _skip(self, late: int) -> int:
        """Count as missed the deadlines more than a period before ``next_ns + late``."""
        skipped = late // self.period_ns
        self.missed += skipped
        if skipped > self.longest_missed_run:
            self.longest_missed_run = skipped
        return skipped


class ArrivalClock(Deadlines):
    """
    A deadline grid that each arrival of a message moves (see the module docstring).

    ``arrived(now_ns)`` at each arrival; ``due(now_ns)`` (from ``Deadlines``) tells whether a
    fallback cycle runs now; ``wait_s(now_ns)`` is how long to wait for the next arrival before
    that. Missed deadlines are those the waiting thread woke more than one period late for.
    """

    def __init__(self, period_ns: int, start_ns: int):
        super().__init__(period_ns, start_ns)
        self.delay_ns = self.period_ns * 3 // 2
        self.arrived(start_ns)

    def arrived(self, now_ns: int) -> None:
        """
        Restart the grid 1.5 periods after an arrival at ``now_ns``.

        The arrival's cycle stands for the deadline of the last period; deadlines before it
        that no cycle served (the waiting thread did not wake for them) are missed.
        """
        late = now_ns - self.next_ns
        if late >= self.period_ns:
            self._skip(late)
        self.next_ns = int(now_ns) + self.delay_ns

    def wait_s(self, now_ns: int) -> float:
        """Return the seconds left until the next deadline (0 when it has passed)."""
        return max(0, self.next_ns - now_ns) * 1e-9


class RealtimeThread:
    """
    A daemon thread that sets up real-time scheduling and reports how it ends.

    On start it lowers its timer slack and asks for SCHED_FIFO ``priority`` (0: no change);
    ``setup_problems`` lists what could not be had (the loop runs anyway). Subclasses write
    ``_loop()``, which runs until ``_stopping``; an exception escaping it is kept in ``failure``
    and passed to ``on_failure(exc)``: never silent. ``start()`` returns once the loop is ready
    (the subclass calls ``self._started.set()``).
    """

    def __init__(self, name: str, priority: int = 0, on_failure=None):
        self._priority = priority
        self._on_failure = on_failure
        self._stopping = False
        self.setup_problems: list[str] = []
        self.failure: BaseException | None = None
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._started.wait()

    def _run(self) -> None:
        self.setup_problems = [p for p in (set_timer_slack(), set_fifo_priority(self._priority))
                               if p]
        try:
            self._loop()
        except BaseException as exc:  # noqa: B036 - reported, never silent
            if not self._ending(exc):
                self.failure = exc
                if self._on_failure is not None:
                    self._on_failure(exc)
        finally:
            self._started.set()

    def _loop(self) -> None:
        raise NotImplementedError

    def _ending(self, exc: BaseException) -> bool:
        """Tell whether ``exc`` only says the loop is being shut down (not a failure)."""
        return False

    def _wake_up(self) -> None:
        """Interrupt the loop's wait so that it sees ``_stopping``."""

    def stop(self, timeout: float = 2.0) -> None:
        self._stopping = True
        if self._thread.is_alive():
            self._wake_up()
            self._thread.join(timeout)


class PeriodicThread(RealtimeThread):
    """
    Call ``cycle()`` at every deadline of a ``rate`` Hz grid, from a thread of its own.

    Calls ``cycle()`` at every deadline of a ``rate`` Hz grid, from a thread of its own
    (see ``RealtimeThread`` for scheduling and failures).
    """

    def __init__(self, rate: float, cycle, name: str, priority: int = 0, on_failure=None):
        super().__init__(name, priority, on_failure)
        self.deadlines = Deadlines(round(1e9 / rate), time.monotonic_ns())
        self._cycle = cycle

    def _loop(self) -> None:
        deadlines, cycle = self.deadlines, self._cycle
        deadlines.next_ns = time.monotonic_ns() + deadlines.period_ns
        timespec = new_timespec()
        self._started.set()
        while not self._stopping:
            wake = deadlines.next_ns
            now = time.monotonic_ns()
            if wake - now > MAX_SLEEP_NS:
                wake = now + MAX_SLEEP_NS
            sleep_until(wake, timespec)
            if self._stopping:
                break
            if deadlines.due(time.monotonic_ns()):
                cycle()
