"""The control logic without ROS: torques, fault policy, desired motion, model checks."""
from __future__ import annotations

import numpy as np
from oracle import robot_path
import pytest

from rnea_ros import RobotModel
from rnea_ros.node.feedforward import Feedforward
from rnea_ros.node.safety import JOINT_STATES_MISSING, JOINT_STATES_STALE, VELOCITY_MISSING
from rnea_ros.node.settings import load_model, ModelRejected, Settings
from rnea_ros.node.trajectory import Trajectory


@pytest.fixture(scope='module')
def ur5() -> RobotModel:
    return RobotModel.from_urdf_file(robot_path('ur5'))


def make(model, **settings) -> Feedforward:
    return Feedforward(model, Settings(**settings).validate())


def state(model, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, model.nq), rng.uniform(-1, 1, model.nv)


def test_full_gravity_and_coriolis_terms(ur5):
    q, v = state(ur5)
    a = np.linspace(-1, 1, 6)
    core = make(ur5)
    core.on_joint_states(ur5.joint_names, q, v, [], now=1.0)
    core.on_desired(Trajectory.from_points(ur5.joint_names, [(0, [], [], a)]), 0.0, now=1.0)
    assert core.cycle(1.01, 0.0)
    np.testing.assert_allclose(core.effort, ur5.rnea(q, v, a), atol=1e-12)
    np.testing.assert_array_equal(core.position, q)
    for terms, expected in (('gravity', ur5.gravity_torques(q)),
                            ('gravity_coriolis', ur5.rnea(q, v, np.zeros(6)))):
        core.settings.torque_terms = terms
        assert core.cycle(1.02, 0.0)
        np.testing.assert_allclose(core.effort, expected, atol=1e-12)


def test_timeouts_on_the_steady_clock(ur5):
    q, v = state(ur5)
    core = make(ur5, input_timeout=0.1, acceleration_timeout=0.05, fault_output='hold_gravity')
    assert core.input_fault(0.0) == JOINT_STATES_MISSING
    core.on_joint_states(ur5.joint_names, q, [], [], now=1.0)
    assert core.input_fault(1.05) == VELOCITY_MISSING  # full terms need velocities
    core.on_joint_states(ur5.joint_names, q, v, [], now=1.0)
    assert core.input_fault(1.05) is None
    assert core.input_fault(1.2) == JOINT_STATES_STALE
    assert core.cycle(1.2, 0.0) and core.fault.code == JOINT_STATES_STALE
    np.testing.assert_allclose(core.effort, ur5.gravity_torques(q), atol=1e-12)
    a = np.ones(6)
    core.on_joint_states(ur5.joint_names, q, v, [], now=2.0)
    core.on_desired(Trajectory.from_points(ur5.joint_names, [(0, [], [], a)]), 0.0, now=2.0)
    assert core.cycle(2.04, 0.0) and core.fault.code is None
    np.testing.assert_allclose(core.effort, ur5.rnea(q, v, a), atol=1e-12)
    assert core.cycle(2.08, 0.0)  # the desired acceleration timed out, the state did not
    np.testing.assert_allclose(core.effort, ur5.rnea(q, v, np.zeros(6)), atol=1e-12)
    assert core.status(2.08, 0.0)[0] == 1  # WARN


def test_command_order_and_partial_trajectory(ur5):
    names = ur5.joint_names
    q, v = state(ur5, 1)
    core = make(ur5, command_joints=(names[2], names[0]))
    core.on_joint_states(names, q, v, [], now=0.0)
    core.on_desired(Trajectory.from_points([names[1], 'unknown'], [(0, [], [], [2.0, 5.0])]),
                    0.0, now=0.0)
    assert core.cycle(0.01, 0.0)
    a = np.zeros(6)
    a[1] = 2.0
    tau = ur5.rnea(q, v, a)
    np.testing.assert_allclose(core.command, tau[[2, 0]], atol=1e-12)


def test_trajectory_efforts_use_measured_state_for_other_joints(ur5):
    names = ur5.joint_names
    q, _ = state(ur5, 2)
    core = make(ur5)
    core.on_joint_states(names, q, np.zeros(6), [], now=0.0)
    points = [(0.0, [0.1, 0.2], [0.0, 0.0], [1.0, 2.0]),
              (1.0, [0.3, 0.4], [0.0, 0.0], [0.0, 0.0])]
    efforts = core.trajectory_efforts(Trajectory.from_points([names[4], names[1]], points))
    expected_q = q.copy()
    expected_q[[4, 1]] = [0.1, 0.2]
    a = np.zeros(6)
    a[[4, 1]] = [1.0, 2.0]
    np.testing.assert_allclose(efforts[0], ur5.rnea(expected_q, np.zeros(6), a)[[4, 1]],
                               atol=1e-12)


def test_model_checks(ur5):
    xml = robot_path('ur5').read_text()
    with pytest.raises(ModelRejected, match=r"command_joints \['nope'\]"):
        load_model(xml, Settings(command_joints=('nope',)))
    with pytest.raises(ModelRejected, match='invalid URDF'):
        load_model('<robot name="x"><link name="a"/><link name="a"/></robot>', Settings())
    with pytest.raises(ModelRejected, match='empty'):
        load_model('  ', Settings())
    planar = ('<robot name="p"><link name="w"/><link name="b"><inertial><mass value="1"/>'
              '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
              '<joint name="pl" type="planar"><parent link="w"/><child link="b"/>'
              '<axis xyz="0 0 1"/></joint></robot>')
    with pytest.raises(ModelRejected, match="joint 'pl' is planar"):
        load_model(planar, Settings())


def test_xacro_robot_description_is_refused_as_xacro():
    """Issue 9 #6: unexpanded xacro as robot_description says so, and how to expand it."""
    xacro = robot_path('ur5').read_text().replace(  # ur5.urdf declares xmlns:xacro
        '</robot>', '<xacro:property name="scale" value="1"/></robot>')
    with pytest.raises(ModelRejected, match=r'^invalid URDF: this is unexpanded xacro, not URDF '
                                            r'\(element <xacro:property>\): expand it first: '
                                            r'`xacro robot.urdf.xacro name:=value > robot.urdf`'):
        load_model(xacro, Settings())


@pytest.mark.parametrize('bad', [{'fault_output': 'x'}, {'state_source': 'x'},
                                 {'torque_terms': 'x'}, {'input_timeout': 0.0},
                                 {'gravity': (0.0, float('nan'), 0.0)},
                                 {'command_joints': ('a', 'a')}])
def test_settings_validation(bad):
    with pytest.raises(ValueError):
        Settings(**bad).validate()


def test_library_and_logic_modules_do_not_import_ros():
    import subprocess
    import sys
    code = ('import sys, rnea_ros, rnea_ros.node.feedforward, rnea_ros.node.joint_input, '
            'rnea_ros.node.trajectory, rnea_ros.node.safety, rnea_ros.node.diagnostics\n'
            'bad = [m for m in sys.modules if m.split(".")[0] in '
            '("rclpy", "sensor_msgs", "std_msgs", "trajectory_msgs")]\n'
            'assert not bad, bad')
    subprocess.run([sys.executable, '-c', code], check=True)


def test_bound_outputs_are_written_in_place(ur5):
    """The node binds the arrays of its preallocated messages: a cycle fills them, no copy."""
    import array
    names = ur5.joint_names
    q, v = state(ur5, 2)
    core = make(ur5, command_joints=(names[5], names[1]))
    buffers = [array.array('d', bytes(8 * size)) for size in (6, 6, 6, 2)]
    core.bind_outputs(*(np.frombuffer(buffer, dtype=np.float64) for buffer in buffers))
    core.on_joint_states(list(names), array.array('d', q), array.array('d', v),
                         array.array('d'), now=0.0)
    assert core.cycle(0.01, 0.0)
    tau = ur5.rnea(q, v, np.zeros(6))
    np.testing.assert_array_equal(buffers[0], q)
    np.testing.assert_array_equal(buffers[1], v)
    np.testing.assert_allclose(buffers[2], tau, atol=1e-12)
    np.testing.assert_allclose(buffers[3], tau[[5, 1]], atol=1e-12)
    with pytest.raises(ValueError, match=r'command: expected a float64 array of shape \(2,\)'):
        core.bind_outputs(np.zeros(6), np.zeros(6), np.zeros(6), np.zeros(3))
