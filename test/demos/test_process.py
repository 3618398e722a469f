"""The process launcher: environment, log, waiting for a line, SIGINT then SIGKILL, exit code."""
from __future__ import annotations

import signal
import sys

import pytest

from rnea_ros.demos import process as launcher
from rnea_ros.demos.process import ProcessExited, ros_environment, RosProcess

# A child that reports its ROS environment, says it is ready, and exits 3 on SIGINT.
CHILD = """
import os, signal, sys, time
print('domain', os.environ['ROS_DOMAIN_ID'], os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'],
      os.environ.get('EXTRA'))
signal.signal(signal.SIGINT, lambda *_: sys.exit(3))
print('ready', flush=True)
while True:
    time.sleep(0.01)
"""
# A child that ignores SIGINT: only SIGKILL ends it.
STUBBORN = """
import signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
print('ready', flush=True)
while True:
    time.sleep(0.01)
"""


def test_the_environment_is_the_domain_on_localhost_unbuffered_plus_extras(monkeypatch):
    monkeypatch.setenv('ROS_DOMAIN_ID', '0')
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'SUBNET')
    env = ros_environment(42, {'PYTHONUNBUFFERED': '0', 'EXTRA': 'x'})
    assert env['ROS_DOMAIN_ID'] == '42'
    assert env['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'LOCALHOST'
    assert env['RCUTILS_LOGGING_BUFFERED_STREAM'] == '0'
    assert env['PYTHONUNBUFFERED'] == '0'  # the caller's extras come last
    assert env['EXTRA'] == 'x'


def test_a_process_runs_on_its_domain_and_sigint_gives_its_exit_code(tmp_path):
    with RosProcess([sys.executable, '-c', CHILD], 17, tmp_path / 'child.log', 'child',
                    {'EXTRA': 'yes'}) as child:
        assert child.wait_for_output('ready', 60.0) == 'ready'
        assert child.running() and child.returncode is None
        assert child.stop() == 3
    assert not child.running()
    assert (tmp_path / 'child.log').read_text().splitlines()[0] == 'domain 17 LOCALHOST yes'


def test_a_process_that_ignores_sigint_is_killed_after_the_timeout(tmp_path):
    child = RosProcess([sys.executable, '-c', STUBBORN], 5, tmp_path / 'stubborn.log')
    child.wait_for_output('ready', 60.0)
    assert child.stop(timeout=0.5) == -signal.SIGKILL


def test_waiting_for_a_line_of_a_process_that_exits_says_its_exit_code_and_output(tmp_path):
    child = RosProcess([sys.executable, '-c', 'print("bad parameter rate"); raise SystemExit(2)'],
                       5, tmp_path / 'failing.log', 'failing')
    with pytest.raises(ProcessExited, match=r"failing exited \(2\) before writing 'ready'"
                                            r':\nbad parameter rate'):
        child.wait_for_output('ready', 60.0)
    assert child.stop() == 2


def test_waiting_for_a_line_that_never_comes_times_out_with_the_log(tmp_path):
    with RosProcess([sys.executable, '-c', CHILD], 5, tmp_path / 'child.log', 'child') as child:
        child.wait_for_output('ready', 60.0)  # its log holds the first line (a loaded machine)
        with pytest.raises(TimeoutError, match=r"child did not write 'never' within 0.2 s:\n"
                                               r'domain 5 LOCALHOST None'):
            child.wait_for_output('never', 0.2)


def test_the_launcher_imports_no_rclpy():
    source = open(launcher.__file__).read()
    module_level = [line for line in source.splitlines() if line.startswith(('import', 'from'))]
    assert not [line for line in module_level if 'rclpy' in line]
