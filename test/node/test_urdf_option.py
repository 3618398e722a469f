"""
``rnea_node --urdf FILE``: the model from a file, as ``rnea_sim`` and ``rnea_bag`` take it.

Started for real over DDS; a bad file or ``--xacro-arg`` is one line and exit 2 before ROS.
"""
from __future__ import annotations

from pathlib import Path
import subprocess
import sys

from diagnostic_msgs.msg import DiagnosticArray
from harness.launch_file import XACRO_ARM
from harness.oracle import robot_path
import pytest

pytestmark = pytest.mark.timeout(300)

BIN = Path(sys.executable).parent


def _model_status(ros, robot: str):
    diagnostics = ros.collect(DiagnosticArray, '/diagnostics')
    message = ros.wait_for(diagnostics, lambda msg: any(
        s.hardware_id == robot and s.values for s in msg.status), timeout=120)
    return next(s for s in message.status if s.hardware_id == robot)


def test_urdf_option_loads_the_file_over_the_params_file(ros, tmp_path):
    """--urdf wins over a robot_description given in --params-file (as rnea_sim's)."""
    ros.start_node({'robot_description': robot_path('ur5').read_text()},
                   command=[
                       str(BIN / 'rnea_node'), '--urdf', str(robot_path('panda')),
                       '--ros-args', '--params-file', str(ros.tmp_path / 'rnea0_params.yaml')])
    status = _model_status(ros, 'panda')
    assert status.name == '/rnea: feed-forward torques'


def test_urdf_option_expands_xacro_with_its_arguments(ros, tmp_path):
    xacro = tmp_path / 'arm.urdf.xacro'
    xacro.write_text(XACRO_ARM)
    ros.start_node({}, command=[str(BIN / 'rnea_node'), '--urdf', str(xacro),
                                '--xacro-arg', 'prefix:=left_'])
    status = _model_status(ros, 'arm')
    values = {kv.key: kv.value for kv in status.values}
    assert any('left_joint' in value for value in values.values()), values


@pytest.mark.parametrize('arguments, line', [
    (['--urdf', '/nonexistent/robot.urdf'],
     "rnea_node: error: cannot read --urdf '/nonexistent/robot.urdf': No such file or "
     'directory'),
    (['--xacro-arg', 'prefix:=left_'],
     'rnea_node: error: --xacro-arg: expected --urdf FILE to expand'),
    (['--urdf', 'robot.urdf', '--xacro-arg', 'prefix'],
     "rnea_node: error: --xacro-arg: expected a xacro argument name:=value, got 'prefix'"),
])
def test_bad_urdf_option_is_one_line_and_exit_2(arguments, line):
    result = subprocess.run([str(BIN / 'rnea_node'), *arguments], capture_output=True,
                            text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert result.stderr == line + '\n'


def test_xacro_that_cannot_expand_is_one_line_naming_the_option(tmp_path):
    bad = tmp_path / 'bad.urdf.xacro'
    bad.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="a">'
                   '<xacro:nowhere/></robot>')
    result = subprocess.run([str(BIN / 'rnea_node'), '--urdf', str(bad)], capture_output=True,
                            text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert result.stderr.startswith(f"rnea_node: error: --urdf: xacro cannot expand '{bad}'")
    assert 'unknown macro name: xacro:nowhere' in result.stderr
    assert result.stderr.count('\n') == 1
