"""
The node's observer outputs over real DDS: external torques, wrenches, collision, bad input.

The node (``rate: 0``: one answer per joint_states message) is fed joint_states with measured
efforts one message at a time (each waited for), and what it publishes is compared with the
library's ``MomentumObserver`` and ``estimate_wrench`` fed the same samples. A repeated sample
(same stamp) must not change the residual. The collision output follows the thresholds without
a reaction, and latches with one until ``~/reset_collision``, the published effort switching to
the reaction's output meanwhile. Every observer parameter abused is refused with its name and
reason: at start (exit 2, one line) and live (refused, the node keeps answering). Stamps
stepped back or forward restart the observer, reported at ERROR and in the log, and a push after
the step is detected; an absurd effort is counted, not integrated, and latches nothing.
"""
from __future__ import annotations

import math

from geometry_msgs.msg import WrenchStamped
from harness.node_calls import run_node, set_parameter
from harness.node_streams import ERROR, has_level, OK, status, WARN
from harness.observer_feeder import Feeder, LINK, sample, stamp_of
import numpy as np
import pytest
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParametersAtomically
from std_srvs.srv import Trigger

from rnea_ros.observer.momentum import MomentumObserver
from rnea_ros.observer.wrench import estimate_wrench

pytestmark = pytest.mark.timeout(120)


def motion(model, count: int, seed: int = 4):
    """Yield samples of a smooth motion: q, v and an effort that is not the rigid-body one."""
    rng = np.random.default_rng(seed)
    q0, amplitude = rng.uniform(-0.5, 0.5, model.nv), rng.uniform(0.1, 0.3, model.nv)
    for k in range(count):
        t = 1e-3 * k
        q = q0 + amplitude * np.sin(3 * t)
        v = 3 * amplitude * np.cos(3 * t)
        effort = model.gravity_torques(q) + rng.normal(0, 0.3, model.nv)
        yield q, v, effort


def test_external_torques_equal_the_library_observer_and_repeats_do_not_integrate(ros, panda):
    model, xml = panda
    point = [0.02, -0.01, 0.1]  # a pure force there, on the second wrench link
    ros.start_node({'robot_description': xml, 'rate': 0.0, 'observer': True,
                    'observer_gain': 80.0, 'wrench_estimation_links': [LINK, 'panda_link7'],
                    'wrench_point.panda_link7': point})
    feeder = Feeder(ros, model)
    forces = ros.collect(WrenchStamped, 'estimated_wrenches/panda_link7')
    reference = MomentumObserver(model, 80.0)
    stamp = 5 * 10**9
    for k, (q, v, effort) in enumerate(motion(model, 12)):
        stamp += 1_000_000 + 37_000 * (k % 3)  # jittered stamps: dt from the stamps
        torques, external = feeder.send(q, v, effort, stamp)
        r = reference.update(stamp_of(external) * 1e-9, q, v, effort)
        assert list(external.name) == list(model.joint_names)
        np.testing.assert_allclose(external.effort, r, rtol=0, atol=1e-9)
        for collector, link, at in ((feeder.wrench, LINK, None), (forces, 'panda_link7', point)):
            wrench = feeder.ros.wait_for(collector, lambda m: stamp_of(m) == stamp, 15.0,
                                         feeder.tick, start=0)
            assert wrench.header.frame_id == link
            w = wrench.wrench
            np.testing.assert_allclose(
                [w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z],
                estimate_wrench(model, q, r, link, point=at), rtol=0, atol=1e-9)
    # The force at the point: its torque about the link origin is c x f.
    np.testing.assert_allclose([w.torque.x, w.torque.y, w.torque.z],
                               np.cross(point, [w.force.x, w.force.y, w.force.z]), atol=1e-9)
    assert np.max(np.abs(r)) > 0.01  # the residual moved: the comparison means something
    # The same stamp again, with another effort: answered, not integrated.
    torques, repeated = feeder.send(q + 0.01, v, effort + 5.0, stamp)
    np.testing.assert_array_equal(repeated.effort, external.effort)
    np.testing.assert_allclose(torques.position, q + 0.01, rtol=0, atol=1e-15)
    # The next new sample integrates from the last integrated one, as the library does.
    q, v, effort = next(motion(model, 1, seed=9))
    _, external = feeder.send(q, v, effort, stamp + 1_000_000)
    np.testing.assert_allclose(external.effort, reference.update(
        (stamp + 1_000_000) * 1e-9, q, v, effort), rtol=0, atol=1e-9)


def test_the_effort_gain_of_the_actuation_makes_the_measured_torque(ros, panda):
    """effort_gain.<joint> given for the node: r is the library's with the same actuation model."""
    from rnea_ros.dynamics.actuation import Actuation
    model, xml = panda
    actuation = {'effort_gain.panda_joint2': 2.0, 'effort_gain.panda_joint4': 0.5,
                 'effort_bias.panda_joint2': 0.3}
    ros.start_node({'robot_description': xml, 'rate': 0.0, 'observer': True, **actuation})
    feeder = Feeder(ros, model)
    reference = MomentumObserver(model, 50.0,
                                 actuation=Actuation.from_parameters(model, actuation))
    plain = MomentumObserver(model, 50.0)
    stamp = 5 * 10**9
    for q, v, effort in motion(model, 8):
        stamp += 1_000_000
        _, external = feeder.send(q, v, effort, stamp)
        r = reference.update(stamp * 1e-9, q, v, effort)
        np.testing.assert_allclose(external.effort, r, rtol=0, atol=1e-9)
    # Without the gain the residual differs on those joints (the comparison means something).
    unscaled = plain.run(np.arange(1, 9) * 1e-3 + 5, *map(np.array, zip(*motion(model, 8))))
    assert abs(unscaled[-1, 1] - r[1]) > 1e-3 and abs(unscaled[-1, 3] - r[3]) > 1e-3


def test_bursts_answered_once_are_all_integrated_as_the_library_does(ros, panda):
    """Bursts of samples sent without waiting, the last of each awaited: r integrates all."""
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 0.0, 'observer': True})
    feeder = Feeder(ros, model)
    samples = list(motion(model, 120, seed=6))
    stamps = [10**9 + 10**6 * k for k in range(len(samples))]
    feeder.send(*samples[0], stamps[0])  # the node is up and answering
    for burst in range(1, len(samples), 17):
        for k in range(burst, min(burst + 17, len(samples))):
            feeder.message = sample(model.joint_names, *samples[k], stamps[k])
            feeder.streams.js_pub.publish(feeder.message)
        external = ros.wait_for(feeder.external, lambda m: stamp_of(m) == stamps[k], 15.0,
                                start=0)  # the burst's last, integrated after the others
    Q, V, E = (np.array(column) for column in zip(*samples))
    R = MomentumObserver(model, 50.0).run(np.array(stamps) * 1e-9, Q, V, E)
    np.testing.assert_allclose(external.effort, R[-1], rtol=0, atol=1e-9)
    assert np.max(np.abs(R[-1])) > 0.05  # a residual that a lost sample would change
    report = feeder.diagnostic(lambda m: status(m) and 'observer queue' in status(m)[2])
    assert 'observer queue overflowed (samples not integrated)' not in status(report)[2]


def test_a_non_finite_effort_withholds_the_external_torques_and_restarts(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 0.0, 'observer': True})
    feeder = Feeder(ros, model)
    q, v = np.full(model.nv, 0.2), np.zeros(model.nv)
    g = model.gravity_torques(q)
    feeder.send(q, v, g + 1.0, 10**9)
    feeder.send(q, v, g + 1.0, 10**9 + 10**6)
    bad = g.copy()
    bad[2] = math.nan
    feeder.message = sample(model.joint_names, q, v, bad, 10**9 + 2 * 10**6)
    torques = ros.wait_for(feeder.streams.torques, lambda m: stamp_of(m) == 10**9 + 2 * 10**6,
                           15.0, feeder.tick)
    np.testing.assert_allclose(torques.effort, model.rnea(q, v, np.zeros(model.nv)),
                               rtol=0, atol=1e-9)  # the torques go on
    report = feeder.diagnostic(
        lambda m: status(m) and 'observer samples not finite (observer restarted)'
        in status(m)[2], timeout=15.0)
    # Each copy of the sample (sent again while waiting) is one more.
    assert int(status(report)[2]['observer samples not finite (observer restarted)']) >= 1
    assert not [m for m in feeder.external.messages if stamp_of(m) == 10**9 + 2 * 10**6]
    # The next sample starts the observer again: r = 0, finite, published.
    _, external = feeder.send(q, v, g + 1.0, 10**9 + 3 * 10**6)
    np.testing.assert_array_equal(external.effort, np.zeros(model.nv))


def test_a_clock_step_either_way_restarts_the_observer_and_a_push_after_is_detected(ros, panda):
    """Stamps stepped 30 s back (a sim time reset), then 30 s forward: the observer never blind."""
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 0.0, 'observer': True,
                    'collision_threshold.panda_joint2': 5.0})
    feeder = Feeder(ros, model)
    q, v = np.full(model.nv, 0.1), np.zeros(model.nv)
    quiet = model.gravity_torques(q)
    pushed = quiet.copy()
    pushed[1] -= 20.0  # an external 20 N m on joint 2, against a threshold of 5 N m
    stamp = 100 * 10**9
    for _ in range(3):
        stamp += 10**6
        feeder.send(q, v, quiet, stamp)
    for jump, words in ((-30, 'back 30.000000 s'), (30, 'forward 30.000000 s in ')):
        reports, changes = len(feeder.streams.diagnostics.messages), len(
            feeder.collision.messages)
        before, stamp = stamp, stamp + jump * 10**9
        _, external = feeder.send(q, v, pushed, stamp)
        np.testing.assert_array_equal(external.effort, np.zeros(model.nv))  # restarted
        for _ in range(20):  # 20 (1 - exp(-50 t)) > 5 after 5.8 ms, a collision 10 ms later
            stamp += 10**6
            _, external = feeder.send(q, v, pushed, stamp)
        assert external.effort[1] == pytest.approx(20.0 * (1 - math.exp(-50 * 0.02)), rel=1e-6)
        assert ros.wait_for(feeder.collision, lambda m: m.data, 15.0, feeder.tick,
                            start=changes).data is True
        step = f'joint_states stamps stepped {words}'
        report = ros.wait_for(feeder.streams.diagnostics, has_level(ERROR, 'last clock step',
                                                                    step),
                              15.0, feeder.tick, start=reports)
        level, message, values = status(report)
        expected = (f'from stamp {before * 1e-9:.6f} s to {(before + jump * 10**9) * 1e-9:.6f} '
                    's: observer restarted')
        # A stale-input fault this process caused at load may come first in the message: the
        # step is its end, and the whole of 'last clock step' and of the log line.
        last = values['last clock step']
        assert last.startswith(step) and last.endswith(expected), last
        assert message.endswith(last), message
        ros.spin_until(lambda: last in ros.process.output(), 15.0, what='the log line')
        for _ in range(60):  # the push ends: collision follows the threshold again
            stamp += 10**6
            feeder.send(q, v, quiet, stamp)
        assert ros.wait_for(feeder.collision, lambda m: not m.data, 15.0, feeder.tick,
                            start=changes + 1).data is False
    assert values['observer clock steps (observer restarted)'] == '2'
    assert [m.data for m in feeder.collision.messages] == [False, True, False, True, False]


def test_an_absurd_effort_is_counted_not_integrated_and_a_reset_clears_as_usual(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 0.0, 'observer': True,
                    'collision_threshold.panda_joint2': 5.0, 'collision_reaction': 'zero'})
    feeder = Feeder(ros, model)
    reference = MomentumObserver(model, 50.0)
    q, v = np.full(model.nv, 0.1), np.zeros(model.nv)
    quiet = model.gravity_torques(q)
    absurd = quiet.copy()
    absurd[1] = 1e300
    stamp = 10**9
    for _ in range(3):
        stamp += 10**6
        _, external = feeder.send(q, v, quiet, stamp)
        reference.update(stamp * 1e-9, q, v, quiet)
    stamp += 10**6
    feeder.message = sample(model.joint_names, q, v, absurd, stamp)
    torques = ros.wait_for(feeder.streams.torques, lambda m: stamp_of(m) == stamp, 15.0,
                           feeder.tick)
    np.testing.assert_allclose(torques.effort, model.rnea(q, v, np.zeros(model.nv)),
                               rtol=0, atol=1e-9)  # the torques go on, no reaction
    line = 'joint panda_joint2 effort 1e+300 (measured torque 1e+300), beyond 870'
    report = feeder.diagnostic(has_level(WARN, 'last implausible effort', line))
    assert status(report)[1] == ('measured effort beyond its plausibility bound: samples not '
                                 f'integrated ({line})')
    # Each copy of the sample (sent again while waiting) is one more.
    assert int(status(report)[2][
        'observer samples with an implausible effort (not integrated)']) >= 1
    assert not [m for m in feeder.external.messages if stamp_of(m) == stamp]
    assert [m.data for m in feeder.collision.messages] == [False]
    # The next sample integrates from the last good one, as if the absurd one never came.
    stamp += 10**6
    pushed = quiet.copy()
    pushed[1] -= 20.0
    _, external = feeder.send(q, v, pushed, stamp)
    np.testing.assert_allclose(external.effort, reference.update(stamp * 1e-9, q, v, pushed),
                               rtol=0, atol=1e-9)
    for _ in range(20):  # a real push: latched as usual, and cleared by the reset
        stamp += 10**6
        torques, _ = feeder.send(q, v, pushed, stamp)
    assert ros.wait_for(feeder.collision, lambda m: m.data, 15.0, feeder.tick, start=0)
    for _ in range(60):
        stamp += 10**6
        torques, _ = feeder.send(q, v, quiet, stamp)
    np.testing.assert_array_equal(torques.effort, np.zeros(model.nv))  # the reaction
    response = ros.call(Trigger, '/rnea/reset_collision', Trigger.Request())
    assert (response.success, response.message) == (True, 'collision cleared')
    assert ros.wait_for(feeder.collision, lambda m: not m.data, 15.0, feeder.tick,
                        start=2).data is False
    stamp += 10**6
    torques, _ = feeder.send(q, v, quiet, stamp)
    np.testing.assert_allclose(torques.effort, model.rnea(q, v, np.zeros(model.nv)),
                               rtol=0, atol=1e-9)
    assert [m.data for m in feeder.collision.messages] == [False, True, False]


def pushed_arm(ros, panda, first_stamp_ns: int):
    """
    Start the observer node on the panda at rest, panda_joint2 watched at 0.5 N m, no reaction.

    Return (feeder, quiet, push, run): ``quiet`` the rigid-body effort, ``push`` what makes r
    -2 N m on joint 2 when subtracted from it, ``run(effort, count)`` sends ``count`` samples
    1 ms apart and returns the last (joint_torques, external_torques).
    """
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 0.0, 'observer': True,
                    'collision_threshold.panda_joint2': 0.5, 'collision_reaction': 'none'})
    feeder = Feeder(ros, model)
    q, v = np.full(model.nv, 0.1), np.zeros(model.nv)
    quiet = model.rnea(q, v, np.zeros(model.nv))
    push = np.zeros(model.nv)
    push[1] = 2.0  # the motor gives 2 N m less than the arm needs: r -> -2 on joint 2
    stamp = [first_stamp_ns]

    def run(effort, count):
        for _ in range(count):
            stamp[0] += 10**6
            torques, external = feeder.send(q, v, effort, stamp[0])
        return torques, external
    return feeder, quiet, push, run


def test_collision_follows_the_thresholds_or_latches_the_reaction_until_reset(ros, panda):
    feeder, quiet, push, run = pushed_arm(ros, panda, 2 * 10**9)
    zero = np.zeros(len(quiet))
    run(quiet, 3)
    assert ros.wait_for(feeder.collision, lambda m: True, 15.0, feeder.tick, start=0).data is \
        False
    torques, external = run(quiet - push, 30)  # 30 ms: r reaches 1.55 N m on joint 2
    assert external.effort[1] > 0.5  # tau_ext = g - tau_m at rest
    assert ros.wait_for(feeder.collision, lambda m: m.data, 15.0, feeder.tick, start=0)
    np.testing.assert_allclose(torques.effort, quiet, rtol=0, atol=1e-9)  # no reaction
    run(quiet, 60)  # the push ends: r decays below the threshold
    changes = [m.data for m in feeder.collision.messages]
    assert changes[-1] is False and changes == [False, True, False]
    # With a reaction: the published effort is the reaction, collision stays until the reset.
    result = set_parameter(ros, 'collision_reaction', ParameterValue(
        type=ParameterType.PARAMETER_STRING, string_value='zero'))
    assert result.successful, result.reason
    torques, _ = run(quiet - push, 30)
    assert ros.wait_for(feeder.collision, lambda m: m.data, 15.0, feeder.tick, start=3)
    np.testing.assert_array_equal(torques.effort, zero)
    torques, external = run(quiet, 60)
    assert abs(external.effort[1]) < 0.5  # under the threshold, and still:
    np.testing.assert_array_equal(torques.effort, zero)
    assert [m.data for m in feeder.collision.messages] == [False, True, False, True]
    report = feeder.diagnostic(has_level(ERROR, 'state', 'collision'), timeout=15.0)
    values = status(report)[2]
    assert values['collision'] == 'true' and values['collisions detected'] == '2'
    assert values['last collision'].startswith('joint panda_joint2, from stamp ')
    response = ros.call(Trigger, '/rnea/reset_collision', Trigger.Request())
    assert (response.success, response.message) == (True, 'collision cleared')
    assert ros.wait_for(feeder.collision, lambda m: not m.data, 15.0, feeder.tick,
                        start=4).data is False
    torques, _ = run(quiet, 1)
    np.testing.assert_allclose(torques.effort, quiet, rtol=0, atol=1e-9)
    response = ros.call(Trigger, '/rnea/reset_collision', Trigger.Request())
    assert (response.success, response.message) == (True, 'no collision to clear')
    feeder.diagnostic(has_level(OK), timeout=15.0)


def test_a_threshold_unset_live_can_be_set_again_and_then_detects_a_push(ros, panda):
    """Unset (ros2 param delete: no value), the joint is not watched until set again, live."""
    feeder, quiet, push, run = pushed_arm(ros, panda, 3 * 10**9)
    run(quiet, 3)
    name = 'collision_threshold.panda_joint2'
    unset = set_parameter(ros, name, ParameterValue(type=ParameterType.PARAMETER_NOT_SET))
    assert unset.successful, unset.reason
    _, external = run(quiet - push, 30)
    assert external.effort[1] > 0.5  # over the old threshold, and no joint is watched:
    assert [m.data for m in feeder.collision.messages] == [False]
    # A model rebuilt meanwhile (a payload set) reads the thresholds: the unset one too.
    payload = ros.call(SetParametersAtomically, '/rnea/set_parameters_atomically',
                       SetParametersAtomically.Request(parameters=[ParameterMsg(
                           name='payload.link', value=ParameterValue(
                               type=ParameterType.PARAMETER_STRING,
                               string_value='panda_link8'))])).result
    assert payload.successful, payload.reason
    run(quiet, 60)  # r decays
    assert not any(m.data for m in feeder.collision.messages)
    again = set_parameter(ros, name, ParameterValue(
        type=ParameterType.PARAMETER_DOUBLE, double_value=0.5))
    assert again.successful, again.reason
    run(quiet - push, 30)
    assert ros.wait_for(feeder.collision, lambda m: m.data, 15.0, feeder.tick, start=0).data
    report = feeder.diagnostic(lambda m: status(m) and status(m)[2].get(
        'collision thresholds [N m or N]') == 'panda_joint2 0.5', timeout=15.0)
    assert status(report)[2]['last collision'].startswith('joint panda_joint2, from stamp ')
    # The other parameters refuse to be unset, and stay settable.
    not_set = ParameterValue(type=ParameterType.PARAMETER_NOT_SET)
    for name, reason in [
            ('observer_gain', "parameter 'observer_gain' is None: expected a number from 0.1 "
                              'to 1000'),
            ('friction.panda_joint1.coulomb', "parameter 'friction.panda_joint1.coulomb' is "
                                              'read-only: the actuation model is set at start (a '
                                              'parameters file)')]:
        result = set_parameter(ros, name, not_set)
        assert (result.successful, result.reason) == (False, reason)
    gain = set_parameter(ros, 'observer_gain', ParameterValue(
        type=ParameterType.PARAMETER_DOUBLE, double_value=20.0))
    assert gain.successful, gain.reason


@pytest.mark.parametrize('overrides, line', [
    (('observer:=true', 'floating_base:=true'),
     "parameter 'observer' is true but floating_base is true: the momentum observer needs a "
     'fixed base'),
    (("wrench_estimation_links:=['panda_hand']", 'wrench_point.panda_hand:=[0.0, 1.0]'),
     "parameter 'wrench_point.panda_hand' is [0.0, 1.0]: expected 3 finite numbers (a point "
     'in the link frame, m)'),
    (("wrench_estimation_links:=['panda_hand']", 'wrench_point.panda_hand:=[0.0, .nan, 1.0]'),
     "parameter 'wrench_point.panda_hand' is [0.0, nan, 1.0]: expected 3 finite numbers (a "
     'point in the link frame, m)'),
    (("wrench_estimation_links:=['panda_hand']", 'wrench_point.hand:=[0.0, 0.0, 1.0]'),
     "parameter 'wrench_point.hand' names no link of wrench_estimation_links ['panda_hand']"),
])
def test_observer_settings_that_do_not_go_together_are_one_line_and_exit_2(overrides, line):
    result = run_node(*(arg for override in overrides for arg in ('-p', override)))
    assert result.returncode == 2, result.stderr
    assert result.stderr == f'rnea_node: {line}\n'


@pytest.mark.parametrize('params, line', [
    ({'wrench_estimation_links': ['nope']},
     "parameter 'wrench_estimation_links': ['nope'] are not links of the model; links: "),
    ({'collision_threshold.panda_joint1': -1.0},
     "parameter 'collision_threshold.panda_joint1' is -1.0: expected a number from 1e-06 to "
     '1e+06 (N m or N; unset: not watched)'),
    ({'collision_threshold.panda_joint1': 'high'},
     "parameter 'collision_threshold.panda_joint1' is 'high': expected a number from 1e-06 to "
     '1e+06 (N m or N; unset: not watched)'),
    ({'collision_threshold.nope': 1.0},
     "parameter 'collision_threshold.nope' names no one-DoF joint of the model"),
    ({}, "parameter 'collision_threshold.panda_joint1' is nan: expected a number from 1e-06 to "
         '1e+06 (N m or N; unset: not watched)'),  # .nan: YAML's NaN, given with -p
])
def test_an_observer_parameter_that_does_not_fit_the_model_exits_2(ros, panda, params, line):
    _, xml = panda
    nan = () if params else ('-p', 'collision_threshold.panda_joint1:=.nan')
    process = ros.start_node({'robot_description': xml, 'observer': True, **params}, nan)
    assert process.proc.wait(60) == 2
    lines = [text for text in process.output().splitlines() if line in text]
    assert len(lines) == 1, process.output()


def test_live_observer_parameters_are_checked_and_the_node_keeps_running(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 0.0, 'observer': True,
                    'collision_threshold.panda_joint1': 3.0})
    feeder = Feeder(ros, model)
    q, v = np.full(model.nv, 0.1), np.zeros(model.nv)
    feeder.send(q, v, model.gravity_torques(q), 10**9)
    double, string = ParameterType.PARAMETER_DOUBLE, ParameterType.PARAMETER_STRING
    threshold = 'expected a number from 1e-06 to 1e+06 (N m or N; unset: not watched)'
    for name, value, reason in [
            ('observer_gain', ParameterValue(type=double, double_value=-1.0),
             "parameter 'observer_gain' is -1.0: expected a number from 0.1 to 1000"),
            ('observer_gain', ParameterValue(type=double, double_value=math.nan),
             "parameter 'observer_gain' is nan: expected a number from 0.1 to 1000"),
            ('collision_threshold.panda_joint1', ParameterValue(type=double,
                                                                double_value=math.inf),
             f"parameter 'collision_threshold.panda_joint1' is inf: {threshold}"),
            ('collision_threshold.panda_joint1', ParameterValue(type=double, double_value=0.0),
             f"parameter 'collision_threshold.panda_joint1' is 0.0: {threshold}"),
            ('collision_threshold.panda_joint1', ParameterValue(type=double,
                                                                double_value=math.nan),
             f"parameter 'collision_threshold.panda_joint1' is nan: {threshold}"),
            ('collision_threshold.panda_joint1', ParameterValue(type=double, double_value=-2.0),
             f"parameter 'collision_threshold.panda_joint1' is -2.0: {threshold}"),
            ('collision_threshold.panda_joint2', ParameterValue(type=string,
                                                                string_value='high'),
             f"parameter 'collision_threshold.panda_joint2' is 'high': {threshold}"),
            ('collision_reaction', ParameterValue(type=string, string_value='retract'),
             "parameter 'collision_reaction' is 'retract': expected one of: none, stop, "
             'hold_gravity, zero')]:
        result = set_parameter(ros, name, value)
        assert (result.successful, result.reason) == (False, reason), name
    result = set_parameter(ros, 'collision_threshold.nope', ParameterValue(
        type=double, double_value=1.0))
    assert not result.successful  # no such parameter: rclpy refuses it
    assert not set_parameter(ros, 'observer', ParameterValue(
        type=ParameterType.PARAMETER_BOOL, bool_value=False)).successful  # read-only
    # Good values are taken (an integer for a number too), and the node still answers.
    result = set_parameter(ros, 'collision_threshold.panda_joint2', ParameterValue(
        type=ParameterType.PARAMETER_INTEGER, integer_value=2))
    assert result.successful, result.reason
    assert set_parameter(ros, 'observer_gain', ParameterValue(
        type=double, double_value=20.0)).successful
    _, external = feeder.send(q, v, model.gravity_torques(q), 10**9 + 10**6)
    assert np.all(np.isfinite(external.effort))
    report = feeder.diagnostic(
        lambda m: status(m) and 'panda_joint2 2' in status(m)[2].get(
            'collision thresholds [N m or N]', ''), timeout=15.0)
    assert status(report)[2]['collision thresholds [N m or N]'] == 'panda_joint1 3, panda_joint2 2'
    assert status(report)[2]['observer'].startswith('on, gain 20 1/s')


def test_an_absurd_velocity_or_position_is_a_bad_sample_and_mn_m_efforts_count(ros, panda):
    # An arm reporting its torques in mN m (effort_gain 0.001): each sample is integrated (the
    # bound is on the measured torque, not on the raw effort). One sample at 1e6 rad/s on
    # panda_joint1 (URDF 2.175 rad/s), one at 1e300 rad: rejected whole, counted, neither
    # answered nor integrated (no residual of 1e10, no collision): the next good sample's
    # residual is the library observer's that never saw them.
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 0.0, 'observer': True,
                    'collision_threshold.panda_joint2': 5.0,
                    **{f'effort_gain.{name}': 0.001 for name in model.joint_names}})
    feeder = Feeder(ros, model)
    reference = MomentumObserver(model, 50.0)
    q, v = np.full(model.nv, 0.1), np.full(model.nv, 0.05)
    torque = model.gravity_torques(q)
    stamp = 10**9
    for _ in range(3):
        stamp += 10**6
        torques, external = feeder.send(q, v, 1000.0 * torque, stamp)
        np.testing.assert_allclose(external.effort, reference.update(stamp * 1e-9, q, v, torque),
                                   rtol=0, atol=1e-9)
    absurd_v, absurd_q = v.copy(), q.copy()
    absurd_v[0], absurd_q[1] = 1e6, 1e300
    lines = ("velocity[0] (joint 'panda_joint1') is 1e+06: beyond its plausibility bound",
             "position[1] (joint 'panda_joint2') is 1e+300: beyond its plausibility bound")
    for (bad_q, bad_v), line in zip(((q, absurd_v), (absurd_q, v)), lines):
        stamp += 10**6
        feeder.message = sample(model.joint_names, bad_q, bad_v, 1000.0 * torque, stamp)
        # Sent again every 10 ms: each copy one more rejection, warned at most once a second.
        ros.spin_until(lambda line=line: line in ros.process.output(), 15.0, feeder.tick,
                       what=line)
    report = feeder.diagnostic(lambda m: int((status(m) or (0, '', {}))[2].get(
        'rejected joint_states (implausible)', '0')) >= 2)
    assert 'observer samples with an implausible effort (not integrated)' not in status(report)[2]
    # Not answered: no torques stamped like a bad sample. (The node's other outputs stay: the
    # fault output it publishes, stamped with its clock, while no joint_states came yet.)
    bad_stamps = {stamp - 10**6, stamp}
    assert not [m for m in feeder.streams.torques.messages if stamp_of(m) in bad_stamps]
    stamp += 10**6
    torques, external = feeder.send(q, v, 1000.0 * torque, stamp)
    np.testing.assert_allclose(torques.effort, model.rnea(q, v, np.zeros(model.nv)), rtol=0,
                               atol=1e-9)
    np.testing.assert_allclose(external.effort, reference.update(stamp * 1e-9, q, v, torque),
                               rtol=0, atol=1e-9)
    assert np.max(np.abs(external.effort)) < 1.0
    assert [m.data for m in feeder.collision.messages] == [False]
