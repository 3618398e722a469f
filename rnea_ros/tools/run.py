"""
Every tool's exit status, one rule: 0 done, 2 bad input, 1 the machine, 130 Ctrl-C.

``run_tool(prog, work)`` runs a tool's work and turns what it raised into the one line the tool
prints and its exit status (``exit_status``): 2 for bad input (any ``RneaError`` but an
``OutputError``: the bag, the URDF, an option, the output directory), 1 for a failing machine
(``OutputError``: a full disk, the line names the file; any other ``OSError`` or ``ValueError``),
130 for a Ctrl-C (the staged outputs leave none half-written).
"""
from __future__ import annotations

from collections.abc import Callable
import sys

from rnea_ros.errors import MachineError, reason, RneaError

__all__ = ['exit_status', 'run_tool']


INTERRUPTED = 'interrupted (no output is left half-written)'


def run_tool(prog: str, work: Callable[[], int], interrupted: str = INTERRUPTED) -> int:
    """
    Return ``work()``'s exit status, or the status of what it raised (``exit_status``).

    ``interrupted``: the line printed after ``prog:`` on a Ctrl-C.
    """
    try:
        return work()
    except (RneaError, OSError, ValueError, KeyboardInterrupt) as exc:
        return exit_status(prog, exc, interrupted)


def exit_status(prog: str, exc: BaseException, interrupted: str = INTERRUPTED) -> int:
    """
    Print the one line of a tool run that failed with ``exc``; return the run's exit status.

    1 for a failing machine (a ``MachineError``; any other ``OSError`` or ``ValueError``), 2 for
    bad input (any other ``RneaError``), 130 for a Ctrl-C (``interrupted`` is printed). ``prog``
    begins the line.
    """
    if isinstance(exc, KeyboardInterrupt):
        print(f'{prog}: {interrupted}', file=sys.stderr)
        return 130
    print(f'{prog}: error: {reason(exc)}', file=sys.stderr)
    return 2 if isinstance(exc, RneaError) and not isinstance(exc, MachineError) else 1
