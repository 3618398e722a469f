"""
The node against careless and hostile use, over real DDS: parameters, sizes, names, models.

An unknown command joint and an absurd gravity stop it at start; integers for numbers are taken
live as at start, with the start's words for a refused value; oversized trajectories and
joint_states are dropped undecoded or unmapped, counted and warned; a second node of the same
name is warned about or refused; rejected descriptions leave no parameters behind. Same harness
as ``test_node`` (the real node as a subprocess, one domain per test).
"""
from __future__ import annotations

from harness.node_calls import run_node, set_parameter
from harness.node_streams import ERROR, has_level, joint_state, random_arm_state, status, Streams
from harness.ros_harness import NodeProcess
import numpy as np
import pytest
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, ListParameters
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = pytest.mark.timeout(120)


def test_unknown_command_joint_exits_2_naming_the_parameter_and_the_joint(ros, panda):
    _, xml = panda
    process = ros.start_node({'robot_description': xml, 'command_joints': ['nope']})
    assert process.proc.wait(60) == 2
    lines = [line for line in process.output().splitlines()
             if "parameter 'command_joints': ['nope'] are not independent joints of the model"
             in line]
    assert len(lines) == 1, process.output()


def test_a_huge_gravity_is_refused_as_gravity():
    result = run_node('-p', 'gravity:=[1.0e308, 0.0, 0.0]')
    assert result.returncode == 2, result.stderr
    assert result.stderr == ("rnea_node: parameter 'gravity' is [1e+308, 0.0, 0.0]: expected 3 "
                             'finite numbers of magnitude at most 10000 (world frame, m/s^2)\n')


def test_live_integer_for_a_number_is_taken_and_a_bad_value_refused_in_the_start_words(
        ros, panda):
    """``ros2 param set /rnea input_timeout 1`` is an integer: taken as 1.0, as at start."""
    _, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0})
    result = set_parameter(ros, 'input_timeout', ParameterValue(
        type=ParameterType.PARAMETER_INTEGER, integer_value=1))
    assert result.successful, result.reason
    value, = ros.call(GetParameters, '/rnea/get_parameters',
                      GetParameters.Request(names=['input_timeout'])).values
    assert (value.type, value.double_value) == (ParameterType.PARAMETER_DOUBLE, 1.0)
    words = "parameter 'input_timeout' is 100.0: expected a number from 0.0001 to 60"
    result = set_parameter(ros, 'input_timeout', ParameterValue(
        type=ParameterType.PARAMETER_INTEGER, integer_value=100))
    assert (result.successful, result.reason) == (False, words)
    result = set_parameter(ros, 'fault_output', ParameterValue(
        type=ParameterType.PARAMETER_INTEGER, integer_value=3))
    assert (result.successful, result.reason) == (
        False, "parameter 'fault_output' is 3: expected one of: zero, hold_gravity, none")
    result = set_parameter(ros, 'armature.panda_joint1', ParameterValue(
        type=ParameterType.PARAMETER_DOUBLE, double_value=0.5))
    assert (result.successful, result.reason) == (
        False, "parameter 'armature.panda_joint1' is read-only: the actuation model is set at "
               'start (a parameters file)')
    start = run_node('-p', 'input_timeout:=100')
    assert start.returncode == 2 and start.stderr == f'rnea_node: {words}\n'


def _points(count: int, names) -> JointTrajectory:
    msg = JointTrajectory(joint_names=list(names))
    for k in range(count):
        point = JointTrajectoryPoint(positions=[0.1] * len(names))
        point.time_from_start.sec = k + 1
        msg.points.append(point)
    return msg


def test_oversized_trajectories_and_joint_states_are_dropped_counted_and_warned(ros, panda):
    model, _ = panda
    streams = Streams.on_panda(ros, panda, 3, (40, 0), max_trajectory_points=10)
    expected = streams.expected
    trajectory = ros.publisher(JointTrajectory, 'planned_trajectory')
    huge_names = joint_state([f'j{k}' for k in range(1001)], np.zeros(1001), stamp=(41, 0))
    streams.extra = [(streams.desired_pub, _points(11, model.joint_names[:7])),
                     (trajectory, _points(11, model.joint_names[:7])),
                     (streams.js_pub, huge_names)]
    keys = [f'rejected {topic} (too_large)'
            for topic in ('desired_accelerations', 'planned_trajectory', 'joint_states')]
    streams.diagnostic(lambda m: status(m) and all(key in status(m)[2] for key in keys))
    output = ros.process.output()
    assert 'desired_accelerations: message dropped (too_large): 11 points ' \
           '(max_trajectory_points is 10)' in output
    assert 'joint_states: message dropped (too_large): name has 1001 entries ' \
           '(at most 1000)' in output
    # Nothing of them was used: the torques still have zero desired acceleration.
    torques = streams.torque_for((42, 0))
    np.testing.assert_allclose(torques.effort, expected, rtol=0, atol=1e-9)


def test_a_second_node_of_the_same_name_is_refused_or_warned_about(ros, panda, tmp_path):
    _, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 100.0})
    streams = Streams(ros, [], [], [])
    streams.diagnostic(lambda m: status(m) is not None, timeout=60)  # the first one runs
    refused = NodeProcess({'refuse_duplicate_name': True}, ros.domain, tmp_path, 'refused')
    assert refused.proc.wait(60) == 2
    refused.stop()
    assert refused.output().splitlines()[-1] == (
        'rnea_node: 1 other node(s) named /rnea already run and refuse_duplicate_name is true: '
        'not starting')
    second = ros.start_node({'robot_description': xml, 'rate': 100.0})
    report = streams.diagnostic(has_level(ERROR, 'other nodes with this name', '1'), timeout=60)
    assert '1 other node(s) named like this one' in status(report)[1]
    ros.spin_until(lambda: '1 other node(s) named /rnea run beside this one' in second.output(),
                   what='the warning of the second node')


def test_rejected_descriptions_leave_no_parameters_behind(ros, panda):
    """30 arms of other joints, rejected one after the other: the parameters stay as before."""
    model, xml = panda
    ros.start_node({'rate': 100.0})
    streams = Streams(ros, model.joint_names, *random_arm_state(model, 4)[:2])
    description = ros.latched_publisher(String, 'robot_description')
    description.publish(String(data=xml))
    streams.torque_for((50, 0))

    def parameter_count() -> int:
        return len(ros.call(ListParameters, '/rnea/list_parameters',
                            ListParameters.Request()).result.names)
    baseline = parameter_count()
    assert baseline > 30  # the panda's armature.<joint> and friction.<joint>.* among them
    for k in range(30):
        other = xml.replace('panda_joint', f'arm{k}_joint')
        description.publish(String(data=other))
        ros.spin_until(lambda: f"added ['arm{k}_joint1'" in ros.process.output(),
                       what=f'the rejection of arm {k}')
    assert parameter_count() == baseline
