"""
The timing the benches share: best time per call, contenders interleaved; a tool's fresh run.

``best_per_call`` times each contender in turn, repeat by repeat, and keeps each one's best, so
that a noisy, shared machine slows all alike (``bench_rnea``, ``bench_forward_dynamics``,
``bench_regressor``, ``bench_contacts``, ``bench_observer``). ``fresh_run`` runs a command-line
tool in a fresh process as a user does (interpreter start, imports and the numba cache
included) and gives its wall clock (``bench_bag``, ``bench_identify``, ``bench_fleet``,
``bench_excite``).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
import subprocess
import sys
import time
from typing import TypeVar

Key = TypeVar('Key')


def per_call(function: Callable[[], object], calls: int = 1, clock=time.perf_counter) -> float:
    """Seconds per call of ``calls`` calls of ``function()`` on ``clock``."""
    start = clock()
    for _ in range(calls):
        function()
    return (clock() - start) / calls


def best_per_call(contenders: Mapping[Key, tuple[Callable[[], object], int]], repeats: int,
                  clock=time.perf_counter) -> dict[Key, float]:
    """Best seconds per call of each ``name: (function, calls)``, timed in turn per repeat."""
    best = dict.fromkeys(contenders, float('inf'))
    for _ in range(repeats):
        for name, (function, calls) in contenders.items():
            best[name] = min(best[name], per_call(function, calls, clock))
    return best


def fresh_run(command: list[str], tool: str) -> tuple[float, subprocess.CompletedProcess]:
    """Run ``command`` in a fresh process: (wall-clock s, its result); exit if it fails."""
    begin = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - begin
    if done.returncode:
        sys.exit(f'{tool} failed:\n{done.stdout}\n{done.stderr}')
    return wall, done
