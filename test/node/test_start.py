"""
Starting the node as users do: parameters of every kind, namespaces, --help, missing modules.

Each case runs the real ``python -m rnea_ros.node`` (the ``rnea_node`` console script) or a
console script from the environment; the ones that start a node talk to it over real DDS.
"""
from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

from diagnostic_msgs.msg import DiagnosticArray
from harness.node_calls import run_node
from harness.oracle import robot_path
import pytest
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import GetParameters

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@pytest.mark.parametrize('override, line', [
    ('rate:=-5.0', "parameter 'rate' is -5.0: expected a number from 0 to 10000"),
    ('rate:=fast', "parameter 'rate' is 'fast': expected a number from 0 to 10000"),
    ('thread_priority:=1.5',
     "parameter 'thread_priority' is 1.5: expected an integer from 0 to 99"),
    ('floating_base:=2', "parameter 'floating_base' is 2: expected true or false"),
    ('state_source:=1', "parameter 'state_source' is 1: expected one of: measured, desired"),
    ('torque_terms:=all',
     "parameter 'torque_terms' is 'all': expected one of: full, gravity, gravity_coriolis"),
    ('cycle_trigger:=sometimes',
     "parameter 'cycle_trigger' is 'sometimes': expected one of: joint_states, clock"),
    ('gravity:=[0.0, -9.81]',
     "parameter 'gravity' is [0.0, -9.81]: expected 3 finite numbers of magnitude at most "
     '10000 (world frame, m/s^2)'),
    ('command_joints:=5', "parameter 'command_joints' is 5: expected a list of strings"),
    ("wrench_topics:=['ft sensor']",
     "parameter 'wrench_topics': 'ft sensor' does not make a valid topic name 'ft sensor': "
     "topic name 'ft sensor' is invalid: topic name must not contain characters other than "
     "alphanumerics, '_', '~', '{', or '}'"),
    ('observer:=1', "parameter 'observer' is 1: expected true or false"),
    ('observer_gain:=-1.0', "parameter 'observer_gain' is -1.0: expected a number from 0.1 "
                            'to 1000'),
    ('observer_gain:=.nan', "parameter 'observer_gain' is nan: expected a number from 0.1 "
                            'to 1000'),
    ('observer_gain:=fast', "parameter 'observer_gain' is 'fast': expected a number from 0.1 "
                            'to 1000'),
    ('measured_effort:=current', "parameter 'measured_effort' is 'current': expected one of: "
                                 'link_side, motor'),
    ('collision_reaction:=retract', "parameter 'collision_reaction' is 'retract': expected "
                                    'one of: none, stop, hold_gravity, zero'),
    ('collision_debounce:=-0.01', "parameter 'collision_debounce' is -0.01: expected a number "
                                  'from 0 to 1'),
    ('collision_auto_reset:=.inf', "parameter 'collision_auto_reset' is inf: expected a number "
                                   'from 0 to 3600'),
    ('collision_profile:=carrying', "parameter 'collision_profile' is 'carrying': expected '' "
                                    'or one of collision_profiles []'),
    ('wrench_estimation_links:=5', "parameter 'wrench_estimation_links' is 5: expected a list "
                                   'of strings'),
    ("wrench_estimation_links:=['a b']",
     "parameter 'wrench_estimation_links': 'a b' does not make a valid topic name "
     "'estimated_wrenches/a b': topic name 'estimated_wrenches/a b' is invalid: topic name "
     "must not contain characters other than alphanumerics, '_', '~', '{', or '}'"),
])
def test_bad_parameter_is_one_line_and_exit_2(override, line):
    result = run_node('-p', override)
    assert result.returncode == 2, result.stderr
    assert result.stderr == f'rnea_node: {line}\n'
    assert result.stdout == ''


def test_integers_are_doubles_and_params_file_applies_under_a_namespace(ros, tmp_path):
    """
    Apply config/rnea.yaml's ``/**`` under /left; take integers as doubles; name the status.

    ``rate: 1000`` in the file and ``-p input_timeout:=1`` are integers.
    """
    config = (ROOT / 'config' / 'rnea.yaml').read_text()
    assert '\n    rate: 500.0\n' in config
    params = tmp_path / 'rnea.yaml'
    assert '\n    fault_output: hold_gravity\n' in config
    params.write_text(config.replace('\n    rate: 500.0\n', '\n    rate: 1000\n').replace(
        '\n    fault_output: hold_gravity\n', '\n    fault_output: zero\n'))
    description = tmp_path / 'description.yaml'
    description.write_text(_description_yaml(robot_path('ur5')))
    ros.start_node({}, command=[
        sys.executable, '-m', 'rnea_ros.node', '--ros-args', '-r', '__ns:=/left',
        '--params-file', str(params), '--params-file', str(description),
        '-p', 'input_timeout:=1'])
    diagnostics = ros.collect(DiagnosticArray, '/diagnostics')
    names = {'/left/rnea: feed-forward torques'}
    found = ros.wait_for(diagnostics, lambda msg: any(
        s.name in names and s.hardware_id == 'ur5' for s in msg.status), timeout=120)
    assert [s.name for s in found.status] == ['/left/rnea: feed-forward torques']
    response = ros.call(GetParameters, '/left/rnea/get_parameters', GetParameters.Request(
        names=['rate', 'input_timeout', 'fault_output']))
    rate, timeout, fault_output = response.values
    assert (rate.type, rate.double_value) == (ParameterType.PARAMETER_DOUBLE, 1000.0)
    assert (timeout.type, timeout.double_value) == (ParameterType.PARAMETER_DOUBLE, 1.0)
    assert fault_output.string_value == 'zero'  # the file's other values apply too


def _description_yaml(urdf: Path) -> str:
    return json.dumps({'/**': {'ros__parameters': {'robot_description': urdf.read_text()}}})


def test_urdf_with_colon_comments_in_a_p_override_is_one_line_and_exit_2():
    """The README's old ``-p robot_description:="$(cat ur10.urdf)"``: rcl cannot parse it."""
    urdf = (robot_path('ur5').parent / 'ur10_robot.urdf').read_text()
    result = run_node('-p', f'robot_description:={urdf}')
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert lines[-1] == ('rnea_node: invalid ROS arguments: the value of -p '
                         'robot_description:=... is not valid YAML (rcl reads -p values as '
                         'YAML); give a text such as a URDF in a --params-file')
    assert 'Traceback' not in result.stderr
    assert all(line.startswith(('[ERROR] [', '[rcutils|')) for line in lines[:-1])  # rcl's log


@pytest.mark.parametrize('script', ['rnea_node', 'rnea_node_demo', 'rnea_demo', 'rnea_bag'])
def test_every_console_script_help_prints_usage_and_exits_0(script):
    result = subprocess.run([str(BIN / script), '--help'], capture_output=True, text=True,
                            timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f'usage: {script} ')
    assert result.stderr == ''


def test_rnea_node_help_lists_the_parameters_without_starting_a_node():
    result = subprocess.run([str(BIN / 'rnea_node'), '--help'], capture_output=True, text=True,
                            timeout=120, stdin=subprocess.DEVNULL)
    assert '  rate: a number from 0 to 10000 (read-only)\n' in result.stdout
    assert '  autostart: true or false (read-only)\n' in result.stdout
    assert '[INFO]' not in result.stdout + result.stderr


def test_unknown_argument_exits_2():
    result = subprocess.run([str(BIN / 'rnea_node'), '--rate', '5'], capture_output=True,
                            text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert result.stderr.endswith('rnea_node: error: unrecognized arguments: --rate 5\n')


def test_missing_module_is_one_line_with_the_pip_command():
    """Without daqp (no rosdep key) a colcon user gets the pip command, not a traceback."""
    code = ("import sys; sys.modules['daqp'] = None; "  # makes `import daqp` fail
            'from rnea_ros.node.main import main; sys.exit(main(["rnea_node"]))')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 1
    assert result.stderr == ("rnea_node: cannot start: Python module 'daqp' is missing; "
                             'install it with: python3 -m pip install daqp\n')
