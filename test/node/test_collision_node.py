"""
The collision reactions over real DDS: the log line, the event message, counters, live changes.

The node (``rate: 0``) is fed joint_states one message at a time (``test_observer_node``'s
``Feeder``) at rest with joint 2's measured torque 2 N m short (a push: r -> 2 N m, beyond
0.5 N m after ~6 ms). A detection is logged once at ERROR, published once on
``collision_events`` and counted in the diagnostics; ``collision_debounce`` and
``collision_profile`` apply live; a profile that is not declared is refused with its reason.
On path a a latched collision sends the trajectory controller a trajectory that holds the
measured position and holds the planner's back until the reset.
"""
from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticStatus
from harness.node_calls import set_parameter
from harness.node_streams import ERROR, has_level, status
from harness.observer_feeder import Feeder
import numpy as np
import pytest
from rcl_interfaces.msg import ParameterType, ParameterValue
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.node.observer_messages import EVENTS_QOS

pytestmark = pytest.mark.timeout(120)
ARM = [f'panda_joint{k}' for k in range(1, 8)]


def started(ros, panda, **params):
    """Start the node on the panda at rest; return (feeder, run, quiet, push)."""
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 0.0, 'observer': True,
                    'collision_threshold.panda_joint2': 0.5, **params})
    feeder = Feeder(ros, model)
    q, v = np.full(model.nv, 0.1), np.zeros(model.nv)
    quiet = model.rnea(q, v, np.zeros(model.nv))
    push = np.zeros(model.nv)
    push[1] = 2.0
    stamp = [10**9]

    def run(effort, count):
        for _ in range(count):
            stamp[0] += 10**6
            torques, _ = feeder.send(q, v, effort, stamp[0])
        return torques
    return feeder, run, quiet, push


def string(value: str) -> ParameterValue:
    return ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=value)


def test_a_detection_is_logged_once_published_as_an_event_and_counted(ros, panda):
    feeder, run, quiet, push = started(ros, panda, collision_reaction='stop',
                                       wrench_estimation_links=['panda_hand'])
    events = ros.collect(DiagnosticStatus, 'collision_events', EVENTS_QOS)
    run(quiet, 3)
    torques = run(quiet - push, 40)
    assert ros.wait_for(feeder.collision, lambda m: m.data, 15.0, feeder.tick, start=0)
    model = panda[0]
    # At rest the stop reaction is g(q) (no damping term at v = 0), then the hold about it.
    np.testing.assert_allclose(torques.effort, model.gravity_torques(np.full(model.nv, 0.1)),
                               rtol=0, atol=1e-9)
    event = ros.wait_for(events, start=0, tick=feeder.tick)
    values = {kv.key: kv.value for kv in event.values}
    assert event.level == bytes([ERROR]) and values['event'] == 'detected'
    assert values['joints'] == 'panda_joint2' and values['reaction'] == 'stop'
    assert float(values['peak residual [N m or N]']) > 0.5
    assert float(values['estimated force at panda_hand [N]']) > 0.0
    assert event.message.startswith('collision detected at joint(s) panda_joint2 (stamp ')
    ros.spin_until(lambda: event.message in ros.process.output(), 15.0, what='the log line')
    run(quiet - push, 30)  # the push goes on, latched: no second detection, no second line
    report = feeder.diagnostic(has_level(ERROR, 'state', 'collision'))
    values = status(report)[2]
    assert values['collisions detected'] == '1' and values['collision reactions'] == '1'
    assert values['collision reaction'] == 'stop' and values['collision profile'] == 'default'
    output = ros.process.output()
    assert output.count('collision detected at joint(s)') == 1, output
    assert '[ERROR]' in output.split(event.message)[0].splitlines()[-1]
    assert len(events.messages) == 1


def test_debounce_and_profile_change_live_and_an_undeclared_profile_is_refused(ros, panda):
    feeder, run, quiet, push = started(
        ros, panda, collision_profiles=['carrying'], collision_profile='carrying',
        **{'collision_threshold.carrying.panda_joint2': 5.0})
    run(quiet, 3)
    run(quiet - push, 40)
    run(quiet, 60)
    assert [m.data for m in feeder.collision.messages] == [False]  # 2 N m < 5 N m
    refused = set_parameter(ros, 'collision_profile', string('nope'))
    assert not refused.successful
    assert refused.reason == ("parameter 'collision_profile' is 'nope': expected '' or one of "
                              "collision_profiles ['carrying']")
    assert set_parameter(ros, 'collision_profile', string('')).successful
    result = set_parameter(ros, 'collision_debounce', ParameterValue(
        type=ParameterType.PARAMETER_DOUBLE, double_value=0.1))
    assert result.successful, result.reason
    run(quiet - push, 40)  # beyond 0.5 N m for ~56 ms in all: under the 0.1 s debounce
    run(quiet, 60)
    assert [m.data for m in feeder.collision.messages] == [False]
    assert set_parameter(ros, 'collision_debounce', ParameterValue(
        type=ParameterType.PARAMETER_DOUBLE, double_value=0.01)).successful
    run(quiet - push, 40)
    assert ros.wait_for(feeder.collision, lambda m: m.data, 15.0, feeder.tick, start=0)
    # Without a reaction a collision is no fault: whatever the level, the counts say it.
    values = status(feeder.diagnostic(lambda m: status(m) is not None and status(m)[2].get(
        'collisions detected') == '1'))[2]
    assert values['collision profile'] == 'default'
    assert values['collision debounce [s]'] == '0.01'


def test_on_path_a_a_latched_collision_holds_the_controller_and_the_planner_back(ros, panda):
    feeder, run, quiet, push = started(ros, panda, collision_reaction='stop')
    out = ros.matched(ros.collect(JointTrajectory, 'joint_trajectory_with_effort'))
    planner = ros.publisher(JointTrajectory, 'planned_trajectory')

    def plan(tag: str) -> JointTrajectory:
        msg = JointTrajectory(joint_names=ARM)
        msg.header.frame_id = tag
        for k in (1, 2):
            point = JointTrajectoryPoint(positions=[0.1 * k] * 7)
            point.time_from_start.sec = k
            msg.points.append(point)
        return msg
    run(quiet, 3)
    planner.publish(plan('before'))
    ros.wait_for(out, lambda m: m.header.frame_id == 'before', start=0)
    run(quiet - push, 40)
    stop = ros.wait_for(out, lambda m: len(m.points) == 1, 15.0, feeder.tick, start=0)
    model = panda[0]
    q = np.full(model.nv, 0.1)
    arm = [model.joint_names.index(name) for name in ARM]
    assert list(stop.joint_names) == ARM and stop.header.stamp.sec == 0
    point, = stop.points
    np.testing.assert_array_equal(point.positions, q[arm])
    assert list(point.velocities) == [0.0] * 7 and list(point.accelerations) == [0.0] * 7
    assert (point.time_from_start.sec, point.time_from_start.nanosec) == (0, 0)
    np.testing.assert_allclose(point.effort, model.gravity_torques(q)[arm], rtol=0, atol=1e-9)
    planner.publish(plan('during'))
    report = feeder.diagnostic(has_level(ERROR, 'rejected planned_trajectory (collision)', '1'))
    assert status(report)[2]['collision'] == 'true'
    assert not [m for m in out.messages if m.header.frame_id == 'during']
    response = ros.call(Trigger, '/rnea/reset_collision', Trigger.Request())
    assert response.success
    planner.publish(plan('after'))
    ros.wait_for(out, lambda m: m.header.frame_id == 'after', start=0)
