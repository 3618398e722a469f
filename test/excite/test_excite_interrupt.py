"""
A Ctrl-C stops ``rnea_excite`` within a second, even inside one long step of the optimiser.

A SIGKILLed ``rnea_excite`` (no clean-up runs) takes its forked optimiser with it.

panda's 7 arm joints with 10 harmonics of 0.2 Hz: SLSQP's least-squares subproblem over the
~20 000 sampled limits then runs in compiled code for seconds per iteration. The tool prints a
line after each iteration; the next thing the optimiser does is such a step, so SIGINT sent on
the first line lands in it.
"""
from __future__ import annotations

import os
from pathlib import Path
import select
import signal
import subprocess
import sys
import threading
import time

from harness.oracle import robot_path
import psutil
import pytest

PANDA_ARM = ','.join(f'panda_joint{k}' for k in range(1, 8))
STOP = 1.0  # s: what the tool promises
LOADED = 2.0  # s: margin for a loaded 2-core machine (scheduling, the child being killed)

pytestmark = pytest.mark.timeout(600)


def _optimising(output: Path):
    """Start rnea_excite on a long design; return it, its reader thread, lines and event."""
    script = Path(sys.executable).with_name('rnea_excite')
    process = subprocess.Popen(
        [str(script), '--urdf', str(robot_path('panda')), '--output', str(output), '--joints',
         PANDA_ARM, '--harmonics', '10', '--base-frequency', '0.2', '--duration', '5',
         '--no-plots'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    iterating = threading.Event()
    lines = []

    def read():
        for line in process.stdout:
            lines.append(line)
            if line.startswith('rnea_excite: iteration 1:'):
                iterating.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return process, reader, lines, iterating


def test_sigint_while_optimising_exits_130_within_a_second_and_writes_nothing(tmp_path):
    output = tmp_path / 'out'
    process, reader, lines, iterating = _optimising(output)
    try:
        assert iterating.wait(480), ''.join(lines) + process.stderr.read()
        sent = time.monotonic()
        os.kill(process.pid, signal.SIGINT)
        status = process.wait(timeout=60)
        stopped = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    reader.join(timeout=10)
    assert status == 130
    assert stopped <= STOP + LOADED, f'{stopped:.2f} s'
    assert process.stderr.read() == 'rnea_excite: interrupted (no output is left half-written)\n'
    assert not output.exists()  # nothing written: not even the directory


def test_the_optimiser_dies_with_a_sigkilled_rnea_excite(tmp_path):
    process, reader, lines, iterating = _optimising(tmp_path / 'out')
    try:
        assert iterating.wait(480), ''.join(lines) + process.stderr.read()
        workers = psutil.Process(process.pid).children()
        assert len(workers) == 1, workers
        worker = os.pidfd_open(workers[0].pid)  # readable once the worker has ended
        try:
            sent = time.monotonic()
            process.kill()  # SIGKILL: rnea_excite runs no clean-up
            ended, _, _ = select.select([worker], [], [], 60)
            took = time.monotonic() - sent
        finally:
            os.close(worker)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    reader.join(timeout=10)
    if not ended:
        workers[0].kill()  # not left behind by a failing test
    assert ended, 'the optimiser outlived rnea_excite by 60 s'
    assert took <= STOP + LOADED, f'{took:.2f} s'
