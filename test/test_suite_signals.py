"""
The suite gives the tools it starts a Ctrl-C they can take, however the suite was started.

A non-interactive shell starts a background command (``scripts/test.sh &``, ``nohup``) with
SIGINT ignored, and an ignored signal is inherited by every process started after: the tests of
what a Ctrl-C does to a tool then waited for children that could not be interrupted (a fleet
run ended 0 instead of 130, rnea_identify and rnea_excite hung). ``conftest.pytest_configure``
takes SIGINT back.
"""
from __future__ import annotations

from pathlib import Path
import subprocess
import sys

ROOT = Path(__file__).resolve().parents[1]
PROBE = ('import signal; h = signal.getsignal(signal.SIGINT); '
         'print(getattr(h, "__name__", repr(h)))')


def test_a_child_of_this_session_takes_a_ctrl_c():
    child = subprocess.run([sys.executable, '-c', PROBE], capture_output=True, text=True,
                           timeout=60, stdin=subprocess.DEVNULL)
    assert child.stdout == 'default_int_handler\n', child.stderr


def test_a_session_started_in_the_background_gives_its_children_a_ctrl_c():
    # The background shell ignores SIGINT for the session it starts (asserted first).
    this = f'{Path(__file__).relative_to(ROOT)}::test_a_child_of_this_session_takes_a_ctrl_c'
    script = (f"{sys.executable} -c '{PROBE}' & wait; "
              f'{sys.executable} -m pytest -q -p no:cacheprovider {this} & wait')
    result = subprocess.run(['bash', '-c', script], cwd=ROOT, capture_output=True, text=True,
                            timeout=300, stdin=subprocess.DEVNULL)
    lines = result.stdout.splitlines()
    assert lines[0] == '<Handlers.SIG_IGN: 1>', result.stdout
    assert result.returncode == 0 and '1 passed' in lines[-1], result.stdout + result.stderr
