"""
The rnea node end to end: the real console entry point over Fast DDS, one domain per test.

Each test starts ``python -m rnea_ros.node --ros-args --params-file <tmp yaml>`` (the code of the
``rnea_node`` console script), talks to it from rclpy in the test process, and compares what it
publishes with ``RobotModel`` and Pinocchio. Waiting is on messages, never on sleeps.
"""
from __future__ import annotations


from builtin_interfaces.msg import Time
from geometry_msgs.msg import AccelStamped, WrenchStamped
from harness.node_streams import (accel_point, ERROR, has_level, joint_state, OK, PANDA_ARM,
                                  random_arm_state, stamped, standing_solo, status, Streams, WARN,
                                  wrench_array)
from harness.oracle import Oracle, robot_path
from harness.ros_harness import BEST_EFFORT
from harness.standing import contacts, SOLO_FEET
from nav_msgs.msg import Odometry
import numpy as np
import pytest
from rosgraph_msgs.msg import Clock
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.contacts import ContactSolver
from rnea_ros.control.trajectory import point_derivatives, Trajectory

pytestmark = pytest.mark.timeout(90)


# ---------------------------------------------------------------------- end to end
def test_fixed_base_torques_match_rnea_and_pinocchio(ros, panda):
    model, xml = panda
    command = ['panda_joint3', 'panda_joint1', 'panda_joint7']
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'command_joints': command})
    q, v, a = random_arm_state(model)
    streams = Streams(ros, model.joint_names, q, v)
    streams.desired = accel_point(model.joint_names, a)
    expected = model.rnea(q, v, a)
    torques = streams.torque_for((11, 5), predicate=lambda m: np.allclose(m.effort, expected))
    assert list(torques.name) == list(model.joint_names)
    np.testing.assert_allclose(torques.position, q, rtol=0, atol=1e-15)
    np.testing.assert_allclose(torques.velocity, v, rtol=0, atol=1e-15)
    np.testing.assert_allclose(torques.effort, expected, rtol=1e-12, atol=1e-12)
    oracle = Oracle(model, robot_path('panda'), floating_base=False)
    np.testing.assert_allclose(torques.effort, oracle.rnea(q, v, a), rtol=1e-9, atol=1e-9)
    index = [model.joint_names.index(name) for name in command]
    command_msg = ros.wait_for(streams.command,
                               lambda m: np.allclose(m.data, expected[index]), tick=streams.tick)
    np.testing.assert_allclose(command_msg.data, expected[index], rtol=1e-12, atol=1e-12)
    assert command_msg.layout.dim[0].size == 3
    level = streams.diagnostic(has_level(OK))
    values = status(level)[2]
    assert values['state'] == 'ok'
    # The control thread's account: deadlines skipped, lateness, how it is scheduled.
    assert int(values['missed cycles']) >= 0 and float(values['max lateness [us]']) >= 0
    assert values['scheduling'].startswith(('SCHED_FIFO 50', 'normal: '))


def test_floating_base_torques_match_rnea_and_pinocchio(ros, solo):
    model, xml = solo
    ros.start_node({'robot_description': xml, 'floating_base': True, 'rate': 200.0})
    rng = np.random.default_rng(3)
    joints = model.joint_names[1:]
    q_joints, v_joints = rng.uniform(-1, 1, 12), rng.uniform(-1, 1, 12)
    a_joints = rng.uniform(-2, 2, 12)
    quaternion = rng.standard_normal(4)
    quaternion /= np.linalg.norm(quaternion)
    position, linear, angular = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
    accel_linear, accel_angular = rng.uniform(-3, 3, 3), rng.uniform(-3, 3, 3)
    streams = Streams(ros, joints, q_joints, v_joints, floating=True)
    streams.desired = accel_point(joints, a_joints)
    odometry = Odometry()
    odometry.header.frame_id, odometry.child_frame_id = 'odom', 'base_link'
    pose, twist = odometry.pose.pose, odometry.twist.twist
    pose.position.x, pose.position.y, pose.position.z = position
    o = pose.orientation
    o.x, o.y, o.z, o.w = quaternion
    twist.linear.x, twist.linear.y, twist.linear.z = linear
    twist.angular.x, twist.angular.y, twist.angular.z = angular
    accel = AccelStamped()
    accel.header.frame_id = 'base_link'
    accel.accel.linear.x, accel.accel.linear.y, accel.accel.linear.z = accel_linear
    accel.accel.angular.x, accel.accel.angular.y, accel.accel.angular.z = accel_angular
    streams.extra = [(streams.odom_pub, odometry),
                     (ros.publisher(AccelStamped, 'base_acceleration', BEST_EFFORT), accel)]
    q = np.concatenate([position, quaternion, q_joints])
    v = np.concatenate([linear, angular, v_joints])
    # The message is the classical acceleration; the model wants d/dt of the body twist.
    a = np.concatenate([accel_linear - np.cross(angular, linear), accel_angular, a_joints])
    expected = model.rnea(q, v, a)
    torques = streams.torque_for((12, 0), predicate=lambda m: np.allclose(m.effort,
                                                                          expected[6:]))
    assert list(torques.name) == list(joints)
    np.testing.assert_allclose(torques.effort, expected[6:], rtol=1e-12, atol=1e-12)
    oracle = Oracle(model, robot_path('solo12'), floating_base=True)
    np.testing.assert_allclose(torques.effort, oracle.rnea(q, v, a)[6:], rtol=1e-9, atol=1e-9)
    streams.extra = []  # odometry stops: fault
    streams.diagnostic(has_level(ERROR, 'state', 'odometry_stale'))


def test_trajectory_republished_with_efforts(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 100.0})
    q_measured = np.zeros(model.nq)
    q_measured[-1] = 0.02  # the finger: not in the trajectory, taken at its measured position
    streams = Streams(ros, model.joint_names, q_measured, np.zeros(model.nv))
    streams.torque_for()  # the node is up and has the measured state
    out = ros.matched(ros.collect(JointTrajectory, 'joint_trajectory_with_effort'))
    publisher = ros.publisher(JointTrajectory, 'planned_trajectory')
    rng = np.random.default_rng(5)
    arm = [model.joint_names.index(name) for name in PANDA_ARM]
    for fields in ('pva', 'pv', 'p'):
        times = np.array([0.0, 0.4, 1.0, 1.5, 2.5])
        positions = rng.uniform(-1, 1, (5, 7))
        velocities = rng.uniform(-1, 1, (5, 7))
        accelerations = rng.uniform(-2, 2, (5, 7))
        msg = JointTrajectory(joint_names=list(PANDA_ARM))
        msg.header.frame_id = fields
        for k in range(5):
            point = JointTrajectoryPoint(positions=positions[k].tolist())
            if 'v' in fields:
                point.velocities = velocities[k].tolist()
            if 'a' in fields:
                point.accelerations = accelerations[k].tolist()
            point.time_from_start.sec = int(times[k])
            point.time_from_start.nanosec = int(round((times[k] % 1) * 1e9))
            msg.points.append(point)
        publisher.publish(msg)
        result = ros.wait_for(out, lambda m: m.header.frame_id == fields, start=0)
        assert list(result.joint_names) == list(PANDA_ARM) and len(result.points) == 5
        trajectory = Trajectory.from_points(PANDA_ARM, [
            (t, p.positions, p.velocities, p.accelerations) for t, p in zip(times, msg.points)])
        q_points, v_points, a_points = point_derivatives(trajectory)
        for k, point in enumerate(result.points):
            np.testing.assert_array_equal(point.positions, msg.points[k].positions)
            np.testing.assert_array_equal(point.velocities, msg.points[k].velocities)
            assert len(point.accelerations) == len(msg.points[k].accelerations)
            q, v, a = q_measured.copy(), np.zeros(model.nv), np.zeros(model.nv)
            q[arm], v[arm], a[arm] = q_points[k], v_points[k], a_points[k]
            expected = model.rnea(q, v, a)[arm]
            np.testing.assert_allclose(point.effort, expected, rtol=1e-12, atol=1e-12)
        if fields == 'pva':  # the points' own derivatives were used as they are
            np.testing.assert_array_equal(a_points, accelerations)


# ---------------------------------------------------------------------- faults
def test_no_model_publishes_nothing_and_reports_error(ros, panda):
    model, _ = panda
    ros.start_node({'rate': 200.0})
    streams = Streams(ros, model.joint_names, np.zeros(8), np.zeros(8))
    first = streams.diagnostic(has_level(ERROR))
    assert 'waiting for robot_description' in status(first)[1]
    streams.diagnostic(has_level(ERROR))  # a second report: a second of joint_states went by
    assert streams.torques.messages == [] and streams.command.messages == []
    ros.spin_until(lambda: 'waiting for robot_description on topic' in ros.process.output(),
                   what='the waiting log line')


def test_invalid_model_parameter_publishes_nothing(ros, panda):
    model, _ = panda
    xml = ('<robot name="bad"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
           '<parent link="a"/><child link="missing"/><axis xyz="0 0 1"/></joint></robot>')
    ros.start_node({'robot_description': xml, 'rate': 200.0})
    streams = Streams(ros, model.joint_names, np.zeros(8), np.zeros(8))
    report = streams.diagnostic(has_level(ERROR))
    assert 'model invalid' in status(report)[1] and 'missing' in status(report)[1]
    streams.diagnostic(has_level(ERROR))
    assert streams.torques.messages == []
    assert 'rejected' in ros.process.output()


def test_late_description_then_bad_then_other_joints(ros, panda):
    model, xml = panda
    ros.start_node({'rate': 200.0, 'fault_output': 'zero'})
    q, v, a = random_arm_state(model, 7)
    streams = Streams(ros, model.joint_names, q, v)
    streams.diagnostic(has_level(ERROR))  # running, waiting for a model
    description = ros.latched_publisher(String, 'robot_description')
    description.publish(String(data=xml))
    expected = model.rnea(q, v, np.zeros(model.nv))
    streams.torque_for(predicate=lambda m: np.allclose(m.effort, expected, atol=1e-12))
    description.publish(String(data='<robot name="broken"><link name="a"></robot>'))
    report = streams.diagnostic(has_level(WARN, 'last robot_description rejected'))
    assert 'model kept' in status(report)[1]
    torques = streams.torque_for((20, 0))  # still computing with the panda
    np.testing.assert_allclose(torques.effort, expected, rtol=1e-12, atol=1e-12)
    description.publish(String(data=robot_path('ur5').read_text()))
    report = streams.diagnostic(has_level(ERROR, 'state', 'model_mismatch'))
    assert 'added' in status(report)[1]
    torques = streams.torque_for((21, 0), predicate=lambda m: not np.any(m.effort))
    assert list(torques.name) == list(model.joint_names)  # the running model's layout
    # The same joints again (here: the same robot) is adopted and clears the fault.
    description.publish(String(data=xml))
    streams.diagnostic(has_level(OK))
    torques = streams.torque_for((22, 0), predicate=lambda m: np.any(m.effort))
    np.testing.assert_allclose(torques.effort, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('fault_output', ['zero', 'hold_gravity'])
def test_stale_joint_states_fault_output_and_recovery(ros, panda, fault_output):
    model, _ = panda
    streams = Streams.on_panda(ros, panda, 2, (30, 0), input_timeout=0.1,
                               fault_output=fault_output)
    q, good = streams.q, streams.expected
    streams.send_joint_states = False
    fault = (np.zeros(model.nv) if fault_output == 'zero' else model.gravity_torques(q))
    torques = ros.wait_for(streams.torques, lambda m: np.allclose(m.effort, fault, atol=1e-12),
                           tick=streams.tick)
    assert all(np.isfinite(torques.effort))
    report = streams.diagnostic(has_level(ERROR, 'state', 'joint_states_stale'))
    assert 'older than input_timeout' in status(report)[1]
    streams.send_joint_states = True
    streams.torque_for((31, 0), predicate=lambda m: np.allclose(m.effort, good))
    streams.diagnostic(has_level(OK))


def test_missing_commanded_joint_is_a_fault_other_joints_assumed_zero(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'command_joints': list(PANDA_ARM)})
    q, v, _ = random_arm_state(model, 4)
    streams = Streams(ros, PANDA_ARM[:3] + PANDA_ARM[4:], np.delete(q[:7], 3),
                      np.delete(v[:7], 3))
    torques = streams.torque_for((40, 0))
    assert not np.any(torques.effort)  # hold_gravity (default) holds no unknown position: zero
    report = streams.diagnostic(has_level(ERROR, 'state', 'joint_states_missing'))
    assert 'panda_joint4' in status(report)[2]['commanded joints never received']
    # With every arm joint, the finger (not commanded, never received) is assumed at 0.
    streams.names, streams.q, streams.v = list(PANDA_ARM), q[:7], v[:7]
    q_used, v_used = q.copy(), v.copy()
    q_used[7] = v_used[7] = 0.0
    expected = model.rnea(q_used, v_used, np.zeros(model.nv))
    streams.torque_for((41, 0), predicate=lambda m: np.allclose(m.effort, expected))
    report = streams.diagnostic(has_level(OK))
    assert 'panda_finger_joint1' in status(report)[2]['joints never received (assumed at 0)']


def test_fault_output_none_publishes_nothing(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'fault_output': 'none'})
    streams = Streams(ros, model.joint_names, np.zeros(8), np.zeros(8))
    streams.torque_for((50, 0))
    streams.send_joint_states = False
    streams.diagnostic(has_level(ERROR, 'state', 'joint_states_stale'))
    count = len(streams.torques.messages)
    streams.diagnostic(has_level(ERROR))  # one more second without joint_states
    assert len(streams.torques.messages) == count


def test_desired_acceleration_timeout_falls_back_to_zero(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'acceleration_timeout': 0.05})
    q, v, a = random_arm_state(model, 6)
    streams = Streams(ros, model.joint_names, q, v)
    streams.desired = accel_point(model.joint_names, a)
    with_a = model.rnea(q, v, a)
    streams.torque_for((60, 0), predicate=lambda m: np.allclose(m.effort, with_a))
    streams.diagnostic(has_level(OK, 'desired motion', 'active'))
    streams.desired = None
    without = model.rnea(q, v, np.zeros(model.nv))
    streams.torque_for((61, 0), predicate=lambda m: np.allclose(m.effort, without))
    report = streams.diagnostic(has_level(WARN, 'desired motion', 'timed out'))
    assert 'gravity + velocity-product' in status(report)[1]


def test_malformed_inputs_dropped_with_reason(ros, panda):
    model, _ = panda
    streams = Streams.on_panda(ros, panda, 8, (70, 0), input_timeout=0.2)
    q, v = streams.q, streams.v
    names = list(model.joint_names)
    short = joint_state(names, q[:-1], v, stamp=(71, 0))
    duplicate = joint_state(names[:-1] + names[:1], q, v, stamp=(71, 0))
    nan = joint_state(names, q, np.where(np.arange(8) == 2, np.nan, v), stamp=(71, 0))
    bad = [short, duplicate, nan]
    streams.send_joint_states = False
    streams.extra = [(streams.js_pub, msg) for msg in bad]
    keys = [f'rejected joint_states ({reason})'
            for reason in ('length_mismatch', 'duplicate_name', 'non_finite')]
    streams.diagnostic(lambda m: status(m) and all(key in status(m)[2] for key in keys))
    # Nothing from the bad messages was used: the old sample aged out into the fault.
    assert not any(stamped((71, 0))(m) for m in streams.torques.messages)
    streams.diagnostic(has_level(ERROR, 'state', 'joint_states_stale'))
    output = ros.process.output()
    assert 'position has 7 entries for 8 names' in output
    assert "velocity[2] (joint 'panda_joint3') is nan" in output
    assert "name repeats ['panda_joint1']" in output


def test_non_finite_torque_is_never_published(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'fault_output': 'zero'})
    # Desired accelerations of 1e308: M a overflows (a joint_states sample cannot do it: 1e200
    # rad/s is beyond the velocity's plausibility bound, the sample dropped).
    streams = Streams(ros, model.joint_names, np.zeros(8), np.zeros(8))
    streams.desired = accel_point(model.joint_names, np.full(8, 1e308))
    # The answers before the desired motion is heard are g(q): wait for the fault's zero.
    torques = streams.torque_for((80, 0), predicate=lambda m: not np.any(m.effort))
    assert np.all(np.isfinite(torques.effort)) and not np.any(torques.effort)
    report = streams.diagnostic(has_level(ERROR, 'state', 'non_finite_output'))
    assert int(status(report)[2]['non-finite torques replaced']) > 0


def test_efforts_clipped_to_scaled_urdf_limits(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'effort_limit_scale': 0.05})
    q, v, a = random_arm_state(model, 9)
    streams = Streams(ros, model.joint_names, q, v)
    streams.desired = accel_point(model.joint_names, 20 * a)
    limit = 0.05 * model.effort_limits
    expected = np.clip(model.rnea(q, v, 20 * a), -limit, limit)
    torques = streams.torque_for((90, 0), predicate=lambda m: np.allclose(m.effort, expected))
    assert np.any(np.abs(torques.effort) == limit)  # the test does exercise the clipping
    assert np.all(np.abs(torques.effort) <= limit)


def test_sim_time_clock_jumps_do_not_stall(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'use_sim_time': True})
    streams = Streams(ros, model.joint_names, np.zeros(8), np.zeros(8))
    clock = ros.publisher(Clock, '/clock')
    jumps = iter(range(10**6))
    publish_joint_states = streams.tick

    def tick():
        k = next(jumps)
        clock.publish(Clock(clock=Time(sec=1000 if k % 2 else 5)))  # back and forth
        publish_joint_states()
    streams.tick = tick
    for k in range(5):
        streams.torque_for((100 + k, 0))
    streams.diagnostic(has_level(OK))


def test_rate_zero_answers_each_message_and_watchdog_faults(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 0.0, 'input_timeout': 0.1,
                    'fault_output': 'zero'})
    q, v, _ = random_arm_state(model, 10)
    streams = Streams(ros, model.joint_names, q, v)
    good = model.rnea(q, v, np.zeros(model.nv))
    for k in range(5):
        torques = streams.torque_for((110 + k, 0))
        np.testing.assert_allclose(torques.effort, good, rtol=1e-12, atol=1e-12)
    streams.send_joint_states = False
    ros.wait_for(streams.torques, lambda m: not np.any(m.effort), tick=streams.tick)
    report = streams.diagnostic(has_level(ERROR, 'state', 'joint_states_stale'))
    assert status(report)[2]['missed cycles'].startswith('0 (rate 0')


def test_desired_state_source_samples_a_multi_point_trajectory(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'state_source': 'desired'})
    q, v, _ = random_arm_state(model, 11)
    streams = Streams(ros, model.joint_names, q, v)
    streams.torque_for((120, 0))
    # Constant acceleration c over 10 s: quintic segments reproduce p0 + v0 t + c t^2 / 2.
    c = np.linspace(-1, 1, 7)
    p0 = np.linspace(0.2, -0.2, 7)
    msg = JointTrajectory(joint_names=list(PANDA_ARM))
    for t in range(0, 11, 2):
        msg.points.append(JointTrajectoryPoint(
            positions=(p0 + c * t * t / 2).tolist(), velocities=(c * t).tolist(),
            accelerations=c.tolist()))
        msg.points[-1].time_from_start.sec = t
    streams.desired_pub.publish(msg)  # stamp 0: starts on receipt
    arm = [model.joint_names.index(name) for name in PANDA_ARM]

    def on_trajectory(m):
        position, velocity = np.array(m.position), np.array(m.velocity)
        t = velocity[arm][-1] / c[-1]
        return 0 < t < 10 and np.allclose(position[arm], p0 + c * t * t / 2, atol=1e-9)
    torques = streams.torque_for((121, 0), predicate=on_trajectory)
    a = np.zeros(model.nv)
    a[arm] = c
    position, velocity = np.array(torques.position), np.array(torques.velocity)
    assert position[7] == q[7] and velocity[7] == v[7]  # the finger: measured
    np.testing.assert_allclose(torques.effort, model.rnea(position, velocity, a), rtol=1e-9,
                               atol=1e-9)


def test_bad_parameter_value_exits_with_reason(ros, panda):
    _, xml = panda
    process = ros.start_node({'robot_description': xml, 'fault_output': 'explode'})
    assert process.proc.wait(30) == 2
    assert "parameter 'fault_output' is 'explode'" in process.output()


def test_live_parameter_change_to_gravity_only(ros, panda):
    from rcl_interfaces.msg import Parameter as ParameterMsg
    from rcl_interfaces.msg import ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0})
    q, v, _ = random_arm_state(model, 12)
    streams = Streams(ros, model.joint_names, q, v)
    streams.torque_for((130, 0))
    client = ros.node.create_client(SetParameters, '/rnea/set_parameters')
    ros.spin_until(lambda: client.service_is_ready(), what='the parameter service')

    def set_parameter(name, value):
        request = SetParameters.Request(parameters=[ParameterMsg(name=name, value=ParameterValue(
            type=ParameterType.PARAMETER_STRING, string_value=value))])
        future = client.call_async(request)
        ros.spin_until(future.done, what=f'setting {name}')
        return future.result().results[0]
    assert not set_parameter('torque_terms', 'everything').successful
    assert set_parameter('torque_terms', 'gravity').successful
    gravity = model.gravity_torques(q)
    streams.torque_for((131, 0), predicate=lambda m: np.allclose(m.effort, gravity))
    assert not set_parameter('robot_description', '<robot/>').successful  # read-only


def test_example_config_with_a_urdf_params_file_runs(ros, panda, tmp_path):
    """What the launch file passes: config/rnea.yaml, then robot_description from the URDF."""
    from pathlib import Path
    model, xml = panda
    config = Path(__file__).resolve().parents[2] / 'config' / 'rnea.yaml'
    urdf_params = tmp_path / 'urdf.yaml'
    import json
    urdf_params.write_text(json.dumps({'/**': {'ros__parameters': {'robot_description': xml}}}))
    ros.start_node({}, extra_args=('--params-file', str(config), '--params-file',
                                   str(urdf_params)))
    q, v, _ = random_arm_state(model, 13)
    streams = Streams(ros, model.joint_names, q, v)
    expected = model.rnea(q, v, np.zeros(model.nv))
    streams.torque_for((140, 0), predicate=lambda m: np.allclose(m.effort, expected))


# ---------------------------------------------------------------------- wrenches
def test_contact_wrenches_standing_solo12_match_the_solver(ros):
    model, q, streams, feet = standing_solo(ros, {})
    zeros = np.zeros(model.nv)
    solution = ContactSolver(model, contacts('solo12')).solve(q, zeros, zeros)
    assert solution.feasible
    torques = streams.torque_for((150, 0), predicate=lambda m: np.allclose(
        m.effort, solution.tau[6:], atol=1e-9))
    np.testing.assert_allclose(torques.effort, solution.tau[6:], rtol=0, atol=1e-9)
    weight = np.zeros(3)
    for k, (link, collector) in enumerate(feet.items()):
        # Not the fault output (zero) of a first joint_states answered before any odometry.
        msg = ros.wait_for(collector, lambda m: stamped((150, 0))(m) and wrench_array(m).any(),
                           start=0, tick=streams.tick)
        assert msg.header.frame_id == link  # link frame, about the link origin
        np.testing.assert_allclose(wrench_array(msg), solution.wrenches[k], rtol=0, atol=1e-9)
        rotation, _ = model.link_placement(q, link)
        weight += rotation @ wrench_array(msg)[:3]
    mass = float(model.tree.mass.sum())
    np.testing.assert_allclose(weight, [0.0, 0.0, 9.81 * mass], rtol=0, atol=1e-9)
    report = streams.diagnostic(has_level(OK, 'contact solver status', 'optimal'))
    assert status(report)[2]['contact feasible'] == 'true'


def test_contact_wrenches_zero_under_stale_inputs(ros):
    model, q, streams, feet = standing_solo(ros, {'input_timeout': 0.1, 'fault_output': 'zero'})
    streams.torque_for((160, 0), predicate=lambda m: np.any(m.effort))
    link = SOLO_FEET[0]
    ros.wait_for(feet[link], lambda m: wrench_array(m)[:3].any(), tick=streams.tick)
    streams.send_joint_states = False  # the fault: the fault output, zero wrenches
    torques = ros.wait_for(streams.torques, lambda m: not np.any(m.effort), tick=streams.tick)
    for collector in feet.values():
        msg = ros.wait_for(collector, stamped((torques.header.stamp.sec,
                                               torques.header.stamp.nanosec)),
                           start=0, tick=streams.tick)
        assert np.all(np.isfinite(wrench_array(msg)))
    zero = ros.wait_for(feet[link], lambda m: not wrench_array(m).any(), start=0,
                        tick=streams.tick)
    assert zero.header.frame_id == link
    streams.diagnostic(has_level(ERROR, 'state', 'joint_states_stale'))


def test_bad_contact_setting_exits_with_reason(ros):
    process = ros.start_node({'robot_description': robot_path('solo12').read_text(),
                              'floating_base': True, 'contacts': ['FL_FOOT', 'FR_FOOT'],
                              'contact': {'FR_FOOT': {'type': 'surface', 'friction': 0.5}}})
    assert process.proc.wait(30) == 2
    output = process.output()
    assert "parameter 'contact.FR_FOOT.half_extents' is not set" in output, output
    process = ros.start_node({'robot_description': robot_path('solo12').read_text(),
                              'floating_base': True, 'contacts': ['FL_FOOT'],
                              'contact': {'FL_FOOT': {'friction': -1.0}}})
    assert process.proc.wait(30) == 2
    assert "parameter 'contact.FL_FOOT.friction' is -1.0" in process.output()


def test_measured_wrench_changes_fixed_base_torques(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'input_timeout': 0.2,
                    'wrench_topics': ['hand_wrench', 'other_wrench'],
                    'publish_joint_reaction_wrenches': True})
    q, v, _ = random_arm_state(model, 14)
    streams = Streams(ros, model.joint_names, q, v)
    zeros = np.zeros(model.nv)
    plain = model.rnea(q, v, zeros)
    streams.torque_for((170, 0), predicate=lambda m: np.allclose(m.effort, plain, atol=1e-12))
    wrench = WrenchStamped()
    wrench.header.frame_id = 'panda_hand'
    values = [3.0, -2.0, -15.0, 0.4, 0.1, -0.3]
    f, t = wrench.wrench.force, wrench.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = values
    elsewhere = WrenchStamped()
    elsewhere.header.frame_id = 'force_plate'  # not a link of the panda: dropped
    elsewhere.wrench.force.z = 100.0
    streams.extra = [(ros.publisher(WrenchStamped, 'hand_wrench', BEST_EFFORT), wrench),
                     (ros.publisher(WrenchStamped, 'other_wrench', BEST_EFFORT), elsewhere)]
    f_ext = {'panda_hand': np.array(values)}
    expected = model.rnea(q, v, zeros, f_ext=f_ext)
    assert not np.allclose(expected, plain)
    torques = streams.torque_for((171, 0), predicate=lambda m: np.allclose(m.effort, expected))
    np.testing.assert_allclose(torques.effort, expected, rtol=1e-12, atol=1e-12)
    # Joint reaction wrenches with the same f_ext, in the child link frame.
    reaction = ros.collect(WrenchStamped, 'joint_reaction_wrenches/panda_joint7')
    msg = ros.wait_for(reaction, stamped((171, 0)), tick=streams.tick)
    assert msg.header.frame_id == 'panda_link7'
    reactions = model.joint_reaction_wrenches(q, v, zeros, f_ext=f_ext)
    np.testing.assert_allclose(wrench_array(msg), reactions['panda_joint7'], rtol=1e-12,
                               atol=1e-12)
    ros.spin_until(lambda: "frame_id 'force_plate' is not a link" in ros.process.output(),
                   tick=streams.tick, what='the warning naming the frame')
    # The wrench stops: after input_timeout it is taken as zero, and reported.
    streams.extra = []
    streams.torque_for((172, 0), predicate=lambda m: np.allclose(m.effort, plain, atol=1e-12))
    report = streams.diagnostic(has_level(WARN, 'wrench topics stale (taken as zero)',
                                          'hand_wrench'))
    assert int(status(report)[2]['rejected other_wrench (unknown_frame)']) > 0
