"""Run ``rnea_ctl`` (``python -m rnea_ros.ctl``, the console script's main) beside a harness."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import subprocess
import sys


@dataclass
class Done:
    """What a finished ``rnea_ctl`` gave."""

    code: int
    stdout: str
    stderr: str


def start_ctl(arguments: list[str], cwd: Path, out: Path) -> subprocess.Popen:
    """Start ``rnea_ctl ARGUMENTS`` in ``cwd``; its output goes to ``out``.stdout/.stderr."""
    return subprocess.Popen([sys.executable, '-m', 'rnea_ros.ctl', *arguments], cwd=cwd,
                            stdout=open(out.with_suffix('.stdout'), 'w'),
                            stderr=open(out.with_suffix('.stderr'), 'w'),
                            stdin=subprocess.DEVNULL)


def finished(process: subprocess.Popen, out: Path) -> Done:
    """Return what ``process`` (ended) printed."""
    process.wait()
    return Done(process.returncode, out.with_suffix('.stdout').read_text(),
                out.with_suffix('.stderr').read_text())


def run_ctl(ros, arguments: list[str], cwd: Path, timeout: float = 120.0) -> Done:
    """Run ``rnea_ctl`` to its end while the harness spins (its subscribers keep receiving)."""
    out = cwd / f'ctl{len(list(cwd.glob("ctl*.stdout")))}'
    process = start_ctl(arguments, cwd, out)
    try:
        ros.spin_until(lambda: process.poll() is not None, timeout,
                       what=f'rnea_ctl {" ".join(arguments)} to end')
    finally:
        if process.poll() is None:
            process.kill()
    return finished(process, out)
