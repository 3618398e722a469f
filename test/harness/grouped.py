"""
``run_grouped``: ``subprocess.run`` for a command that starts processes of its own.

A bench or demo script starts the sim and the node as its children. ``subprocess.run`` kills
only the script when its test times out (pytest-timeout raises in the test), and the sim and
the node it started run on, orphaned: they load the machine and, once the script's domain lock
is released, talk on a ROS domain the next test takes. Here the command runs in its own
session and the whole group is killed when the call returns or raises.
"""
from __future__ import annotations

import os
import signal
import subprocess


def run_grouped(argv: list[str], timeout: float | None = None,
                **kwargs) -> subprocess.CompletedProcess:
    """Run ``argv`` to its end (text output captured); kill its process group afterwards."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, **kwargs)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:  # the group is empty: everything exited
            pass
        process.wait()
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)
