"""The control logic without ROS: torques, fault policy, desired motion, model checks."""
from __future__ import annotations

from dataclasses import replace

from harness.oracle import robot_path
from harness.standing import contacts, standing
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.contacts import ContactSolver
from rnea_ros.control.core import ControlCore
from rnea_ros.control.safety import (JOINT_STATES_MISSING, JOINT_STATES_STALE, ODOMETRY_STALE,
                                     VELOCITY_MISSING)
from rnea_ros.control.settings import ModelRejected, ParameterRejected, Settings
from rnea_ros.control.trajectory import Trajectory
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.node.model_loading import load_model


@pytest.fixture(scope='module')
def ur5() -> RobotModel:
    return RobotModel.from_urdf_file(robot_path('ur5'))


def make(model, **settings) -> ControlCore:
    return ControlCore(model, Settings(**settings).validate())


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
        core.use(replace(core.settings, torque_terms=terms))
        assert core.cycle(1.02, 0.0)
        np.testing.assert_allclose(core.effort, expected, atol=1e-12)


def test_a_live_set_is_one_snapshot_taken_whole_by_the_next_cycle(ur5):
    # effort_limit_scale and torque_terms of one set: the limits are rebuilt on the swap, and
    # the next cycle publishes the clipped gravity torques (both values, not one of them).
    q, v = state(ur5, 3)
    core = make(ur5)
    before = core.settings
    core.on_joint_states(ur5.joint_names, q, v, [], now=1.0)
    assert core.cycle(1.0, 0.0)
    core.use(before.updated({'effort_limit_scale': 0.01, 'torque_terms': 'gravity'},
                            core.joint_names))
    assert (before.effort_limit_scale, before.torque_terms) == (1.0, 'full')  # unchanged
    assert core.cycle(1.01, 0.0)
    limit = 0.01 * ur5.effort_limits
    np.testing.assert_allclose(core.effort, np.clip(ur5.gravity_torques(q), -limit, limit),
                               atol=1e-12)
    assert np.any(np.abs(core.effort) == limit)  # the clipping is exercised


def test_timeouts_on_the_steady_clock(ur5):
    q, v = state(ur5)
    core = make(ur5, input_timeout=0.1, acceleration_timeout=0.05, fault_output='hold_gravity')
    assert core.input_fault(0.0) == JOINT_STATES_MISSING
    # No position measured yet: nothing to hold, so zero, not the gravity torques at q = 0.
    assert core.cycle(0.0, 0.0) and core.fault.code == JOINT_STATES_MISSING
    assert not core.effort.any() and ur5.gravity_torques(np.zeros(6)).any()
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


def test_a_held_desired_point_given_again_is_fresh_with_the_same_torques(ur5):
    """The same one-point Trajectory again (a held reference): kept, its age reset."""
    q, v = state(ur5, 2)
    a = np.linspace(-0.5, 1.0, 6)
    core = make(ur5, acceleration_timeout=0.05)
    held = Trajectory.from_points(ur5.joint_names, [(0, [], [], a)])
    core.on_joint_states(ur5.joint_names, q, v, [], now=2.0)
    core.on_desired(held, 0.0, now=2.0)
    taken = core.state.desired
    core.on_joint_states(ur5.joint_names, q, v, [], now=2.07)
    core.on_desired(held, 0.07, now=2.07)
    assert core.state.desired is taken and (taken.start, taken.received) == (0.07, 2.07)
    assert core.cycle(2.08, 0.0)  # 0.08 s after the first: fresh from the second
    np.testing.assert_allclose(core.effort, ur5.rnea(q, v, a), atol=1e-12)
    core.on_desired(Trajectory.from_points(ur5.joint_names, [(0, [], [], -a)]), 0.08, now=2.08)
    assert core.state.desired is not taken and core.cycle(2.09, 0.0)
    np.testing.assert_allclose(core.effort, ur5.rnea(q, v, -a), atol=1e-12)


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
    # A parameter that does not fit: exit 2 at start; a model from the topic is rejected.
    with pytest.raises(ParameterRejected, match=r"^parameter 'command_joints': \['nope'\] are "
                                                r'not independent joints of the model'):
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
    code = ('import sys, rnea_ros, rnea_ros.control.core, rnea_ros.control.joint_input, '
            'rnea_ros.control.trajectory, rnea_ros.control.safety, rnea_ros.control.diagnostics\n'
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


def test_fault_cycles_are_counted_per_kind_between_two_reports(ur5):
    """A fault that came and went between two reports still shows (WARN), with its count."""
    q, v = state(ur5)
    core = make(ur5, input_timeout=0.1, max_input_timeout=0.1)
    assert core.cycle(0.5, 0.0)  # joint_states never received
    core.status(0.5, 0.0)  # a report: counts start over
    core.on_joint_states(ur5.joint_names, q, v, [], now=1.0)
    for now in (1.05, 1.15, 1.16, 1.17):  # ok, then 3 stale cycles
        assert core.cycle(now, 0.0)
    core.on_joint_states(ur5.joint_names, q, v, [], now=1.18)
    assert core.cycle(1.19, 0.0) and core.fault.code is None
    level, message, values = core.status(1.2, 0.0)
    assert level == 1 and '3 cycles (joint_states_stale)' in message
    assert values['fault cycles since last report'] == '3'
    assert values['fault cycles (joint_states_stale)'] == '3'
    assert values['fault cycles (joint_states_missing)'] == '1'
    level, _, values = core.status(1.21, 0.0)
    assert level == 0 and values['fault cycles since last report'] == '0'


ACTUATION = {'armature.shoulder_pan_joint': 0.4, 'armature.elbow_joint': 0.1,
             'friction.shoulder_pan_joint.coulomb': 2.0,
             'friction.shoulder_pan_joint.viscous': 0.5,
             'friction.elbow_joint.offset': -0.3, 'friction.wrist_1_joint.coulomb': 1.0}


def test_armature_always_and_friction_when_compensating_match_the_library(ur5):
    """Add armature * a and friction(v) to rnea: v desired where the desired motion gives it."""
    names = ur5.joint_names
    q, v = state(ur5, 3)
    a = np.linspace(-2, 2, 6)
    core = make(ur5, actuation=ACTUATION, friction_velocity_threshold=0.05)
    actuation = Actuation.from_parameters(ur5, {**ACTUATION,
                                                'friction_velocity_threshold': 0.05})
    core.on_joint_states(names, q, v, [], now=1.0)
    # Desired accelerations for all, desired velocities for the first three joints only.
    core.on_desired(Trajectory.from_points(names, [(0, [], [], a)]), 0.0, now=1.0)
    assert core.cycle(1.01, 0.0)
    rigid = ur5.rnea(q, v, a)
    np.testing.assert_allclose(core.effort, rigid + actuation.armature_torques(a), rtol=0,
                               atol=1e-12)
    assert actuation.armature[0] == 0.4 and actuation.armature[2] == 0.1
    core.use(replace(core.settings, friction_compensation=True))
    assert core.cycle(1.02, 0.0)  # no desired velocities: the measured ones
    np.testing.assert_allclose(core.effort, rigid + actuation.armature_torques(a)
                               + actuation.friction_torques(v), rtol=0, atol=1e-12)
    v_desired = np.array([0.3, -0.2, 0.01])
    core.on_desired(Trajectory.from_points(names[:3], [(0, [], v_desired, a[:3])]), 0.0, 1.0)
    assert core.cycle(1.03, 0.0)
    a_used = np.concatenate([a[:3], np.zeros(3)])
    v_friction = np.concatenate([v_desired, v[3:]])
    np.testing.assert_allclose(core.effort, ur5.rnea(q, v, a_used)
                               + actuation.armature_torques(a_used)
                               + actuation.friction_torques(v_friction), rtol=0, atol=1e-12)
    values = core.status(1.03, 0.0)[2]
    assert values['friction compensation'] == ('on: shoulder_pan_joint, elbow_joint, '
                                               'wrist_1_joint')
    assert values['armature'] == 'shoulder_pan_joint 0.4, elbow_joint 0.1'
    core.use(replace(core.settings, torque_terms='gravity'))  # no acceleration: no armature
    assert core.cycle(1.04, 0.0)
    np.testing.assert_allclose(core.effort, ur5.gravity_torques(q)
                               + actuation.friction_torques(v_friction), rtol=0, atol=1e-12)


@pytest.mark.parametrize('params, text', [
    ({'armature.nope': 1.0}, "parameter 'armature.nope': unknown joint 'nope'; expected one of"),
    ({'friction.elbow_joint.stiction': 1.0},
     "parameter 'friction.elbow_joint.stiction': expected friction.<joint>.{coulomb,viscous,"),
    ({'armature.elbow_joint': -1.0},
     "parameter 'armature.elbow_joint': expected a number from 0 to 1e+06, got -1.0"),
])
def test_actuation_parameters_that_do_not_fit_the_model_are_refused(ur5, params, text):
    with pytest.raises(ParameterRejected) as error:
        make(ur5, actuation=params)
    assert str(error.value).startswith(text)


@pytest.fixture(scope='module')
def panda() -> RobotModel:
    return RobotModel.from_urdf_file(robot_path('panda'))


def test_locked_joints_are_held_not_required_and_not_commanded(panda):
    names = panda.joint_names
    arm = names[:7]
    q, v = state(panda, 4)
    core = make(panda, locked_joints=('panda_finger_joint1',), locked_positions=(0.03,))
    assert core.command_joints == arm
    core.on_joint_states(arm, q[:7], v[:7], [], now=1.0)
    assert core.cycle(1.01, 0.0) and core.fault.code is None
    q_used, v_used = q.copy(), v.copy()
    q_used[7], v_used[7] = 0.03, 0.0
    np.testing.assert_allclose(core.effort, panda.rnea(q_used, v_used, np.zeros(8)), rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(core.command, core.effort[:7], rtol=0, atol=0)
    assert core.status(1.01, 0.0)[2]['locked joints'] == 'panda_finger_joint1 0.03'


@pytest.mark.parametrize('settings, error, text', [
    ({'locked_joints': ('nope',), 'locked_positions': (0.0,)}, ParameterRejected,
     "parameter 'locked_joints': ['nope'] are not independent one-DoF joints of the model"),
    ({'locked_joints': ('panda_finger_joint1',), 'locked_positions': (0.5,)}, ParameterRejected,
     "parameter 'locked_positions': 0.5 for joint 'panda_finger_joint1' is outside its limits "
     '[0.0, 0.04]'),
    ({'locked_joints': ('panda_finger_joint1',), 'locked_positions': ()}, ValueError,
     "parameter 'locked_positions' has 0 values for 1 locked_joints"),
    ({'locked_joints': ('panda_joint1',), 'locked_positions': (0.0,),
      'command_joints': ('panda_joint1',)}, ValueError,
     "parameter 'command_joints' names locked joints ['panda_joint1']"),
])
def test_bad_locked_joints_are_refused_naming_the_parameter(panda, settings, error, text):
    with pytest.raises(error) as raised:
        make(panda, **settings)
    assert str(raised.value).startswith(text)


def test_trajectory_efforts_on_a_floating_base_use_the_contact_solution():
    """Standing solo12: a trajectory point at the standing state gets the cycle's torques."""
    model, q = standing('solo12')
    core = ControlCore(model, Settings(floating_base=True, contacts=tuple(contacts('solo12')),
                                       actuation={'armature.FL_KFE': 0.2}).validate())
    joints = model.joint_names[1:]
    core.on_joint_states(joints, q[7:], np.zeros(12), [], now=1.0)
    core.on_odometry(q[:3], q[3:7], (0, 0, 0), (0, 0, 0), now=1.0)
    assert core.cycle(1.01, 0.0) and core.fault.code is None
    cycle = core.effort.copy()
    solution = ContactSolver(model, contacts('solo12')).solve(q, np.zeros(18), np.zeros(18))
    np.testing.assert_allclose(cycle, solution.tau[6:], rtol=0, atol=1e-9)
    at_rest = np.zeros(12)
    efforts = core.trajectory_efforts(Trajectory.from_points(
        joints, [(0.0, q[7:], at_rest, at_rest), (1.0, q[7:], at_rest, at_rest)]))
    np.testing.assert_allclose(efforts, [cycle, cycle], rtol=0, atol=1e-9)
    # The plain RNEA (no contacts) would be far off: the legs carry the weight.
    assert np.max(np.abs(model.rnea(q, np.zeros(18), np.zeros(18))[6:] - cycle)) > 0.5


def test_hold_gravity_on_a_standing_floating_base_is_the_contact_solution_at_rest():
    """Stale joint_states: the legs keep carrying the weight (g(q) alone lets the body sag)."""
    model, q = standing('solo12')
    core = ControlCore(model, Settings(floating_base=True, contacts=tuple(contacts('solo12')),
                                       input_timeout=0.1, fault_output='hold_gravity'
                                       ).validate())
    core.on_joint_states(model.joint_names[1:], q[7:], np.full(12, 0.3), [], now=1.0)
    core.on_odometry(q[:3], q[3:7], (0, 0, 0), (0, 0, 0), now=1.0)
    assert core.cycle(1.5, 0.0) and core.fault.code in (JOINT_STATES_STALE, ODOMETRY_STALE)
    at_rest = ContactSolver(model, contacts('solo12')).solve(q, np.zeros(18), np.zeros(18))
    np.testing.assert_allclose(core.effort, at_rest.tau[6:], rtol=0, atol=1e-9)
    assert np.max(np.abs(model.gravity_torques(q)[6:] - core.effort)) > 0.5


def test_the_base_acceleration_is_low_passed_over_its_stamps():
    """First order: weight 1 - exp(-dt / T) per message; restarts when stale or not advancing."""
    model, _ = standing('solo12')
    core = make(model, floating_base=True, base_acceleration_time_constant=0.01,
                acceleration_timeout=0.1)
    ones = np.ones(3)
    core.on_base_acceleration(ones, 2 * ones, now=5.0, stamp=100.0)  # the first: as it is
    np.testing.assert_array_equal(core.state.base_acceleration, [1, 1, 1, 2, 2, 2])
    # 1 ms of stamps later (whatever the arrival time): a weight of 1 - exp(-0.1).
    core.on_base_acceleration(3 * ones, 0 * ones, now=5.05, stamp=100.001)
    weight = -np.expm1(-0.1)
    np.testing.assert_allclose(core.state.base_acceleration,
                               [1 + 2 * weight] * 3 + [2 - 2 * weight] * 3, rtol=1e-12)
    for now, stamp in ((5.06, 100.001),  # a time that does not advance
                       (5.07, 99.0),  # nor one that goes back (a restarted publisher)
                       (5.5, 99.1)):  # after the previous one went stale (0.43 s > 0.1 s)
        core.on_base_acceleration(ones * now, ones, now=now, stamp=stamp)
        np.testing.assert_array_equal(core.state.base_acceleration, [now] * 3 + [1] * 3)
    core.use(replace(core.settings, base_acceleration_time_constant=0.0))  # live: each as it is
    core.on_base_acceleration(-ones, ones, now=5.501, stamp=99.101)
    np.testing.assert_array_equal(core.state.base_acceleration, [-1, -1, -1, 1, 1, 1])
    # Unstamped messages: their arrival times are their times (10 ms apart: 1 - exp(-1)).
    core = make(model, floating_base=True, base_acceleration_time_constant=0.01)
    core.on_base_acceleration(ones, ones, now=1.0)
    core.on_base_acceleration(0 * ones, 0 * ones, now=1.01)
    np.testing.assert_allclose(core.state.base_acceleration, np.full(6, np.exp(-1.0)), rtol=1e-12)
