"""
One option's walk from the command line to the kernel: each module once, in one direction.

``rnea_bag --window S`` is followed through every Python call that receives it (the value
itself or the options object holding it): the calls between modules must form a graph without
cycles (no module hands the option back to one that gave it), every module outside ``bag`` is
entered through one function only, and ``bag``'s options object stops at the bag tool's
boundary (the tools' option parser, ``rnea_ros.tools.options``, builds it from the parsed
command line): the recording library receives the number, never the options.
"""
from __future__ import annotations

from pathlib import Path
import sys

from harness import bagdata

from rnea_ros.bag.cli import main

WINDOW = 0.0421337  # a value no default or other option has


def _carries(frame) -> str | None:
    """Return 'value' or 'options' when an argument of ``frame``'s call holds the window."""
    code = frame.f_code
    for name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
        value = frame.f_locals.get(name)
        if isinstance(value, float) and value == WINDOW:
            return 'value'
        if getattr(value, 'window', None) == WINDOW:
            return 'options'
    return None


def _walk(argv: list[str]) -> list[tuple[str, str, str, str]]:
    """Run rnea_bag on ``argv``; the (caller module, callee module, callee, carrier) calls."""
    calls = []

    def profile(frame, event, arg):
        if event != 'call' or not frame.f_globals.get('__name__', '').startswith('rnea_ros.'):
            return
        carrier = _carries(frame)
        if carrier:
            caller = frame.f_back.f_globals.get('__name__', '')
            calls.append((caller, frame.f_globals['__name__'], frame.f_code.co_name, carrier))

    sys.setprofile(profile)
    try:
        assert main(argv) == 0
    finally:
        sys.setprofile(None)
    return calls


def _has_cycle(edges: set[tuple[str, str]]) -> bool:
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    state = {}

    def visit(node):
        state[node] = 'open'
        for nxt in graph.get(node, ()):
            if state.get(nxt) == 'open' or (nxt not in state and visit(nxt)):
                return True
        state[node] = 'done'
        return False

    return any(node not in state and visit(node) for node in list(graph))


def test_the_window_walks_from_the_command_line_to_the_kernel_once(tmp_path: Path, capsys):
    bag = bagdata.panda_bag(tmp_path / 'bag', bagdata.sample_times(400))
    calls = _walk([str(bag), '--urdf', str(bagdata.PANDA), '--window', str(WINDOW),
                   '--no-plots', '--no-progress', '--output', str(tmp_path / 'out')])
    between = {(a, b) for a, b, _, _ in calls if a != b and a.startswith('rnea_ros.')}
    modules = {b for _, b, _, _ in calls}
    # It reaches the differentiator, the module whose kernels fit with it.
    assert {'rnea_ros.bag.options', 'rnea_ros.bag.pipeline',
            'rnea_ros.recording.differentiate'} <= modules
    assert not _has_cycle(between), sorted(between)
    # Into each module outside the bag tool through one function; the library gets numbers.
    entries = {}
    for caller, callee, function, carrier in calls:
        if callee.startswith(('rnea_ros.bag.', 'rnea_ros.tools.options')):
            continue  # the bag tool and the parser that builds its options
        if caller.split('.')[1] != callee.split('.')[1]:
            entries.setdefault(callee, set()).add(function)
            assert carrier == 'value', f'{callee}.{function} receives the options object'
    assert entries and all(len(functions) == 1 for functions in entries.values()), entries
    assert 'rnea_ros.bag.pipeline' in {b for a, b in between if a == 'rnea_ros.bag.cli'}
