"""
Real-time scheduling of a thread: ``set_fifo_priority`` (SCHED_FIFO where the process may).

Shared by the node's threads and the simulated robot's step thread; without the permission it
is a no-op that says why.
"""
from __future__ import annotations

import os

# Interval after which a thread waiting for the GIL forces the running one to hand it over [s]
# (Python's default is 5 ms, longer than a control period): ``sys.setswitchinterval``.
SWITCH_INTERVAL = 100e-6


def set_fifo_priority(priority: int, reset_on_fork: bool = False) -> str | None:
    """
    Run the calling thread under SCHED_FIFO at ``priority`` (1..99; 0: leave it alone).

    Returns None on success (or for 0), else the reason it stays a normal thread, e.g. no
    permission: grant it with ``ulimit -r`` / ``rtprio`` in /etc/security/limits.conf, or
    CAP_SYS_NICE. ``reset_on_fork``: the threads and processes it starts afterwards begin as
    normal ones (SCHED_RESET_ON_FORK) instead of inheriting the policy.
    """
    if priority <= 0:
        return None
    if not hasattr(os, 'sched_setscheduler'):
        return 'SCHED_FIFO: not available on this platform'
    policy = os.SCHED_FIFO | (os.SCHED_RESET_ON_FORK if reset_on_fork else 0)
    try:
        os.sched_setscheduler(0, policy, os.sched_param(priority))
    except OSError as exc:
        return (f'SCHED_FIFO priority {priority} not permitted ({exc.strerror}); running as a '
                f'normal thread (allow it with an rtprio limit or CAP_SYS_NICE)')
    return None
