"""
Absolute sleeps on the steady clock, the timer slack, and ``StepSchedule``.

``sleep_until(deadline_ns)`` sleeps until ``time.monotonic_ns()`` reaches an absolute deadline
(``clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`` through libc; a relative ``time.sleep``
where there is no libc): a loop that sleeps to ``start + k * period`` never accumulates the
time its steps take or the sleeps' overshoot. ``set_timer_slack`` lowers how late the kernel
may wake the calling thread (Linux rounds sleeps up by 50 µs by default).

``StepSchedule`` is the grid of a loop that must run *every* step, late or not (a physics
simulation cannot skip one): step k is due at ``start + k * period`` (plus an offset the caller
gives, e.g. a simulated jitter); ``wait(k)`` sleeps until then and accounts for how late the
step starts. A step that starts a full period or more after its deadline is **late**: the loop
is behind its schedule and catches up by running the following steps without sleeping, on the
same grid.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import time

CLOCK_MONOTONIC = 1
TIMER_ABSTIME = 1
PR_SET_TIMERSLACK = 29
EINTR = 4
# Timer slack for the real-time threads [ns]: the kernel may wake a sleeper this much late.
TIMER_SLACK_NS = 1_000


class _Timespec(ctypes.Structure):
    _fields_ = [('tv_sec', ctypes.c_long), ('tv_nsec', ctypes.c_long)]


def _libc():
    if not sys.platform.startswith('linux'):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library('c') or 'libc.so.6', use_errno=True)
        libc.clock_nanosleep.argtypes = [ctypes.c_int, ctypes.c_int,
                                         ctypes.POINTER(_Timespec), ctypes.c_void_p]
        libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                               ctypes.c_ulong]
        return libc
    except (OSError, AttributeError):
        return None


_LIBC = _libc()


def sleep_until(deadline_ns: int, timespec: _Timespec | None = None) -> None:
    """
    Sleep until ``time.monotonic_ns() >= deadline_ns`` (absolute, releases the GIL).

    ``timespec``: a caller-owned ``_Timespec`` to reuse (no allocation per call). Without libc
    (not Linux), a relative ``time.sleep``.
    """
    if _LIBC is None:
        delay = deadline_ns - time.monotonic_ns()
        if delay > 0:
            time.sleep(delay * 1e-9)
        return
    if timespec is None:
        timespec = _Timespec()
    timespec.tv_sec, timespec.tv_nsec = divmod(deadline_ns, 1_000_000_000)
    # ctypes releases the GIL during the call; EINTR (a signal) just sleeps again.
    while _LIBC.clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, timespec, None) == EINTR:
        pass


def new_timespec() -> _Timespec:
    """Return a ``timespec`` for ``sleep_until`` to reuse (no allocation per sleep)."""
    return _Timespec()


def set_timer_slack(slack_ns: int = TIMER_SLACK_NS) -> str | None:
    """Set the calling thread's timer slack; None on success, else why it was not."""
    if _LIBC is None:
        return 'timer slack: not Linux'
    if _LIBC.prctl(PR_SET_TIMERSLACK, slack_ns, 0, 0, 0) != 0:
        return f'timer slack: prctl failed ({os.strerror(ctypes.get_errno())})'
    return None


class StepSchedule:
    """
    Deadlines ``start + k * period`` of a loop that runs every step (see the module docstring).

    ``wait(k, offset_ns)`` sleeps until step k's deadline plus ``offset_ns`` and returns how
    late the step starts [ns] (0 when on time). Counters: ``steps`` (waits), ``late_steps``
    (started a period or more after their deadline), ``max_lateness_ns``. ``sleep`` and
    ``clock`` default to ``sleep_until`` and ``time.monotonic_ns``.
    """

    def __init__(self, period_ns: int, start_ns: int, sleep=sleep_until,
                 clock=time.monotonic_ns):
        if period_ns <= 0:
            raise ValueError(f'period must be > 0 ns, got {period_ns}')
        self.period_ns = int(period_ns)
        self.start_ns = int(start_ns)
        self.steps = 0
        self.late_steps = 0
        self.max_lateness_ns = 0
        self._sleep, self._clock = sleep, clock
        self._timespec = new_timespec()

    def deadline_ns(self, k: int, offset_ns: int = 0) -> int:
        """Return step k's deadline: ``start + k * period + offset_ns`` (never from a wake-up)."""
        return self.start_ns + k * self.period_ns + int(offset_ns)

    def wait(self, k: int, offset_ns: int = 0) -> int:
        """Sleep until step k's deadline (+ ``offset_ns``); return its lateness [ns]."""
        deadline = self.deadline_ns(k, offset_ns)
        now = self._clock()
        if now < deadline:
            self._sleep(deadline, self._timespec)
            now = self._clock()
        lateness = max(0, now - deadline)
        self.steps += 1
        if lateness >= self.period_ns:
            self.late_steps += 1
        if lateness > self.max_lateness_ns:
            self.max_lateness_ns = lateness
        return lateness
