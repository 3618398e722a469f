"""
``rnea_sim --mjcf``: the simulated robot of an MJCF file (identified.xml) over DDS.

Bad input is one line and exit code 2 before anything is written; the UR5's identified.xml
publishes joint_states in ``RobotModel.from_mjcf``'s joint order and moves under effort
commands.
"""
from __future__ import annotations

from pathlib import Path
import sys

from harness.mjcf_twins import identified_xml
from harness.oracle import robot_path
from harness.ros_harness import BEST_EFFORT
from harness.sim_cases import ARM, run_sim
import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rnea_ros import RobotModel

pytestmark = pytest.mark.timeout(300)


def _file(tmp: Path, name: str, text: str) -> str:
    path = tmp / name
    path.write_text(text)
    return str(path)


def _robot(tmp: Path) -> str:
    return str(identified_xml(tmp))


@pytest.mark.parametrize('make_args, line', [
    (lambda tmp: ['--mjcf', str(tmp / 'absent.xml')], "MJCF '{tmp}/absent.xml': no such file"),
    (lambda tmp: ['--mjcf', str(robot_path('ur5'))],
     f"MJCF '{robot_path('ur5')}': the root element is <robot>: expected <mujoco> (an MJCF "
     'file; a URDF goes to --urdf)'),
    (lambda tmp: ['--mjcf', _robot(tmp), '--urdf', str(robot_path('ur5'))],
     '--urdf and --mjcf: give one robot, not both'),
    (lambda tmp: ['--mjcf', _robot(tmp), '--xacro-arg', 'a:=1'],
     '--xacro-arg: applies to --urdf, not to --mjcf'),
    (lambda tmp: ['--mjcf', _robot(tmp), '--gap', _file(tmp, 'gap.yaml', 'seed: 1')],
     '--gap {tmp}/gap.yaml: with --mjcf the file is the robot as it is: only --gap none '
     'applies (a gap edits URDF text)'),
    (lambda tmp: ['--mjcf', _robot(tmp), '--ros-args', '-p', 'gap:=solo12'],
     "parameter 'gap' is 'solo12': expected none with --mjcf (the file is the robot as it is; "
     'a gap edits URDF text)'),
    (lambda tmp: ['--mjcf', _robot(tmp), '--ros-args', '-p', 'floating_base:=true'],
     "parameter 'floating_base' is True: expected false with --mjcf (a fixed-base robot, its "
     'joints all in the file)'),
    (lambda tmp: ['--mjcf', _file(tmp, 'ball.xml', ARM.format(
        joint='<joint name="wrist" type="ball"/>', extra=''))],
     "MJCF '{tmp}/ball.xml': joint 'wrist' (body 'a') is a ball joint: rnea_sim --mjcf takes "
     'fixed-base robots (hinge and slide joints)'),
    (lambda tmp: ['--mjcf', _file(tmp, 'free.xml', ARM.format(
        joint='<freejoint name="root"/>', extra=''))],
     "MJCF '{tmp}/free.xml': joint 'root' (body 'a') is a free joint: rnea_sim --mjcf takes "
     'fixed-base robots (hinge and slide joints)'),
])
def test_bad_mjcf_input_is_one_line_and_exit_2(tmp_path, make_args, line):
    args = make_args(tmp_path)
    before = sorted(tmp_path.iterdir())
    result = run_sim('--record', str(tmp_path / 'bag'), *args)
    assert result.returncode == 2, result.stderr
    assert result.stderr == 'rnea_sim: ' + line.replace('{tmp}', str(tmp_path)) + '\n'
    assert sorted(tmp_path.iterdir()) == before  # no bag


def test_the_mjcf_robot_publishes_joint_states_and_moves_under_effort_commands(ros):
    """identified.xml of the UR5, no gravity: a torque on the base joint turns it."""
    path = identified_xml(ros.tmp_path)
    names = list(RobotModel.from_mjcf(path).joint_names)
    states = ros.collect(JointState, 'joint_states', BEST_EFFORT)
    commands = ros.publisher(Float64MultiArray, 'effort_commands')
    initial = [0.0, -1.0, 1.0, 0.0, 0.5, 0.0]
    params = {'gravity': [0.0, 0.0, 0.0], 'kp': [0.0] + [100.0] * 5,
              'kd': [0.0] + [10.0] * 5, 'initial_positions': initial, 'command_timeout': 0.0}
    ros.start_node(params, command=[sys.executable, '-m', 'rnea_ros.sim', '--mjcf', str(path),
                                    '--ros-args', '--params-file',
                                    str(ros.tmp_path / 'rnea0_params.yaml')])
    first = ros.wait_for(states, timeout=60)
    assert list(first.name) == names
    assert list(first.position) == pytest.approx(initial, abs=1e-9)
    assert all(e == 0.0 for e in first.effort)  # no gap: the applied torque, exactly
    ros.spin_until(lambda: commands.get_subscription_count() > 0, timeout=30)
    commands.publish(Float64MultiArray(data=[3.0] + [0.0] * 5))
    moved = ros.wait_for(states, lambda m: m.position[0] > 0.05, timeout=30)
    assert moved.effort[0] == pytest.approx(3.0)  # within the file's effort limit (150 N m)
    held = max(abs(p - q) for p, q in zip(moved.position[1:], initial[1:]))
    assert held < 0.5 * moved.position[0]
