"""
The node's observer outputs without ROS: ``ControlCore`` with ``observer`` on.

The residual equals the library's observer fed the same samples, for motor torques too (the
actuation model's friction subtracted); the collision state follows the thresholds or latches with
a reaction until ``reset``; live thresholds and gain apply; a new model keeps a latched
collision; a crossing while the loop watch holds the loop unstable is counted, not a
collision. A clock step of the stamps, back or forward, restarts the observer (reported, a push
after it detected); an implausible effort is counted and not integrated. The DDS end of it is
``test_observer_node``.
"""
from __future__ import annotations

from types import SimpleNamespace

from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.control.core import ControlCore
from rnea_ros.control.observer_outputs import CLOCK_STEP, MAX_EFFORT
from rnea_ros.control.safety import COLLISION, ERROR, WARN
from rnea_ros.control.settings import Settings
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.observer.momentum import MomentumObserver


@pytest.fixture(scope='module')
def panda() -> RobotModel:
    return RobotModel.from_urdf_string(robot_path('panda').read_text())


def core_of(model, thresholds=None, **settings) -> ControlCore:
    return ControlCore(model, Settings(observer=True, collision_thresholds=thresholds or {},
                                       **settings).validate())


def live_set(core, changes) -> None:
    """Swap in the snapshot a live set of ``changes`` makes, as the node does."""
    core.use(core.settings.updated(changes, core.joint_names))


def test_motor_torques_give_the_library_residual_with_the_friction_subtracted(panda):
    friction = {'friction.panda_joint2.coulomb': 1.5, 'friction.panda_joint4.viscous': 0.8}
    settings = Settings(observer=True, measured_effort='motor', actuation=friction).validate()
    core = ControlCore(panda, settings)
    actuation = Actuation.from_parameters(panda, {
        **friction, 'friction_velocity_threshold': settings.friction_velocity_threshold})
    reference = MomentumObserver(panda, 50.0, measured_effort='motor', actuation=actuation)
    link_side = MomentumObserver(panda, 50.0)
    rng = np.random.default_rng(2)
    for k in range(20):
        q, v = rng.uniform(-1, 1, panda.nv), rng.uniform(-1, 1, panda.nv)
        effort = rng.normal(0, 2, panda.nv)
        stamp = SimpleNamespace(sec=3, nanosec=1_000_000 * k)
        core.on_joint_states(core.joint_names, q, v, effort, float(k), stamp)
        r = reference.update(3 + 1e-3 * k, q, v, effort)
        r_link_side = link_side.update(3 + 1e-3 * k, q, v, effort)
    np.testing.assert_allclose(core.observer.residual, r, rtol=0, atol=1e-12)
    assert np.max(np.abs(r - r_link_side)) > 0.1  # the friction made a difference
    # A sample stamped no later than the last is not integrated, and counted.
    core.on_joint_states(core.joint_names, q + 0.1, v, effort + 3.0, 21.0, stamp)
    np.testing.assert_array_equal(core.observer.residual, r)
    assert core.observer.status()[
        'joint_states stamped no later than the last (not integrated)'] == '1'


@pytest.mark.parametrize('measured_effort', ['link_side', 'motor'])
def test_a_declared_effort_bias_leaves_the_residual(panda, measured_effort):
    """
    effort_bias.<joint>: the observer integrates the measured effort minus it.

    At rest the sensor reads gravity + bias: r is 0 with the bias declared, -bias without.
    """
    bias = {'panda_joint2': 0.9, 'panda_joint5': -0.4}
    expected = np.zeros(panda.nv)
    for joint, value in bias.items():
        expected[panda.joint(joint).idx_v] = -value
    q, v = np.full(panda.nv, 0.1), np.zeros(panda.nv)
    effort = panda.gravity_torques(q) - expected
    for declared in (True, False):
        settings = Settings(observer=True, measured_effort=measured_effort, actuation={
            f'effort_bias.{joint}': value for joint, value in bias.items()} if declared else {}
                            ).validate()
        core = ControlCore(panda, settings)
        for k in range(400):  # 0.4 s at 1 kHz: 20 time constants of the gain 50 1/s
            core.on_joint_states(core.joint_names, q, v, effort, k * 1e-3,
                                 SimpleNamespace(sec=0, nanosec=1_000_000 * k))
        # The lag's remainder: |bias| e^-20 < 1e-8 N m; the momentum terms' rounding 1e-12.
        np.testing.assert_allclose(core.observer.residual, 0.0 * expected if declared
                                   else expected, rtol=0, atol=1e-8)


def feed(core, model, push: float, count: int, start: list) -> None:
    """``count`` samples at rest, 1 ms apart, joint 2's motor torque ``push`` short."""
    q, v = np.full(model.nv, 0.1), np.zeros(model.nv)
    effort = model.gravity_torques(q)
    effort[1] -= push
    for _ in range(count):
        start[0] += 1
        core.on_joint_states(core.joint_names, q, v, effort, start[0] * 1e-3,
                             SimpleNamespace(sec=0, nanosec=1_000_000 * start[0]))


def test_without_a_reaction_collision_follows_the_thresholds(panda):
    core, stamp = core_of(panda, {'panda_joint2': 0.5}), [0]
    feed(core, panda, 0.0, 3, stamp)
    assert not core.observer.collision and core.observer.changed  # its first value
    feed(core, panda, 2.0, 30, stamp)
    assert core.observer.collision and not core.observer.reacting
    assert core.cycle(stamp[0] * 1e-3, 0.0) and core.fault.code is None
    feed(core, panda, 0.0, 60, stamp)
    assert not core.observer.collision
    assert core.observer.last_event['joint'] == 'panda_joint2'
    assert core.observer.last_event['end'] is not None
    assert core.observer.last_event['peak'] == pytest.approx(2.0 * (1 - np.exp(-1.5)), rel=0.05)


def test_a_reaction_latches_until_reset_and_a_new_model_keeps_it(panda):
    core, stamp = core_of(panda, {'panda_joint2': 0.5}, collision_reaction='hold_gravity'), [0]
    feed(core, panda, 2.0, 30, stamp)
    feed(core, panda, 0.0, 60, stamp)
    assert core.observer.collision and core.observer.reacting
    assert core.cycle(stamp[0] * 1e-3, 0.0) and core.fault.code == COLLISION
    np.testing.assert_allclose(core.effort, panda.gravity_torques(core.state.q), rtol=0,
                               atol=1e-12)
    replaced = core_of(panda, {'panda_joint2': 0.5}, collision_reaction='hold_gravity')
    replaced.take_state_from(core)
    assert replaced.observer.reacting and replaced.observer.detections == 1
    assert replaced.observer.reset() and not replaced.observer.collision
    assert not replaced.observer.reset()  # nothing left to clear


def test_a_crossing_while_the_loop_is_unstable_is_counted_not_a_collision(panda):
    core, stamp = core_of(panda, {'panda_joint2': 0.5}, collision_reaction='stop'), [0]
    observer = core.observer
    core.watch.latched = True  # the loop watch's stop (unstable_reaction)
    feed(core, panda, 2.0, 30, stamp)
    assert not observer.collision and not observer.reacting and observer.take_events() == []
    assert observer.unstable_crossings == 1 and observer.detections == 0
    assert observer.last_event is None and 'last collision' not in observer.status()
    core.watch.reset()  # cleared: the crossing under way stays the instability's
    feed(core, panda, 2.0, 30, stamp)
    assert not observer.collision and observer.unstable_crossings == 1
    feed(core, panda, 0.0, 60, stamp)  # back under the threshold: detection resumes
    feed(core, panda, 2.0, 30, stamp)
    assert observer.reacting and observer.detections == 1
    event, = observer.take_events()
    assert event['kind'] == 'detected' and event['start'] == observer.last_event['start'] > 0.12
    assert observer.status()['threshold crossings while the loop was unstable (not '
                             'collisions)'] == '1'


def test_live_thresholds_and_gain_apply(panda):
    core, stamp = core_of(panda), [0]
    feed(core, panda, 2.0, 30, stamp)
    assert not core.observer.collision  # no joint watched
    assert core.observer.status()['collision thresholds [N m or N]'] == 'none (not watched)'
    live_set(core, {'collision_threshold.panda_joint2': 1.0, 'observer_gain': 10.0})
    feed(core, panda, 2.0, 12, stamp)  # over the threshold for longer than 10 ms
    assert core.observer.collision
    np.testing.assert_array_equal(core.observer.observer.gain, np.full(panda.nv, 10.0))
    live_set(core, {'collision_threshold.panda_joint2': None})
    feed(core, panda, 2.0, 1, stamp)
    assert not core.observer.collision  # not watched any more


def test_a_new_model_with_a_payload_keeps_integrating_as_the_library_set_model(panda):
    """A payload set mid-run: r goes on (no restart from 0), as ``MomentumObserver.set_model``."""
    core = core_of(panda)
    reference = MomentumObserver(panda, 50.0)
    carrying = panda.with_payload('panda_link8', 2.0, (0.0, 0.0, 0.05),
                                  (0.01, 0, 0, 0.01, 0, 0.01))
    rng = np.random.default_rng(5)
    q, v = rng.uniform(-1, 1, panda.nv), rng.uniform(-0.5, 0.5, panda.nv)
    effort = carrying.rnea(q, v, np.zeros(panda.nv))  # the payload is there all along

    def step(k, target):
        stamp = SimpleNamespace(sec=1, nanosec=1_000_000 * k)
        target.on_joint_states(target.joint_names, q + 1e-3 * k * v, v, effort, 1 + 1e-3 * k,
                               stamp)
        return reference.update(1 + 1e-3 * k, q + 1e-3 * k * v, v, effort)

    for k in range(40):
        r = step(k, core)
    assert np.max(np.abs(r)) > 1.0  # the unmodelled payload shows in r
    replaced = core_of(carrying)
    replaced.take_state_from(core)
    reference.set_model(carrying)
    for k in range(40, 45):
        r = step(k, replaced)
    np.testing.assert_allclose(replaced.observer.residual, r, rtol=0, atol=1e-9)
    assert np.max(np.abs(r)) > 0.5  # decaying from where it was, not restarted at 0


def at_rest(core, model, push: float, stamps_ns, arrivals) -> None:
    """Feed samples at rest stamped ``stamps_ns``, arriving at ``arrivals`` [s], joint 2 pushed."""
    q, v = np.full(model.nv, 0.1), np.zeros(model.nv)
    effort = model.gravity_torques(q)
    effort[1] -= push  # the motor gives less than gravity needs: r -> +push on joint 2
    for stamp, arrival in zip(stamps_ns, arrivals):
        core.on_joint_states(core.joint_names, q, v, effort, arrival,
                             SimpleNamespace(sec=stamp // 10**9, nanosec=stamp % 10**9))


def test_stamps_stepped_back_restart_the_observer_and_a_push_after_it_is_detected(panda):
    """A sim time reset or an NTP step back: not a blind observer until the clock catches up."""
    core = core_of(panda, {'panda_joint2': 5.0})
    ms, t0 = 10**6, 100 * 10**9
    at_rest(core, panda, 0.0, [t0 + k * ms for k in range(50)], [1e-3 * k for k in range(50)])
    # Two publishers slightly out of order: skipped and counted, no clock step.
    at_rest(core, panda, 0.0, [t0 + 49 * ms - int(0.9 * CLOCK_STEP * 1e9)], [0.0495])
    assert (core.observer.not_newer, core.observer.clock_steps) == (1, 0)
    assert core.observer.alarm() is None
    # The stamps step back 30 s; the arm is pushed 20 N m on joint 2 from then on.
    back = t0 - 30 * 10**9
    at_rest(core, panda, 20.0, [back + k * ms for k in range(1)], [0.050])
    observer = core.observer
    step = ('joint_states stamps stepped back 30.049000 s, from stamp 100.049000 s to '
            '70.000000 s: observer restarted')
    assert (observer.clock_steps, observer.not_newer, observer.valid) == (1, 1, True)
    np.testing.assert_array_equal(observer.residual, np.zeros(panda.nv))  # restarted here
    assert observer.status()['last clock step'] == step
    assert observer.status()['observer clock steps (observer restarted)'] == '1'
    assert observer.alarm() == (ERROR, step)
    assert observer.alarm() is None  # once per report
    assert observer.notice(0.050) == step
    assert observer.notice(0.051) is None
    # r = 20 (1 - exp(-50 t)) passes 5 N m after 5.8 ms, a collision 10 ms later.
    at_rest(core, panda, 20.0, [back + k * ms for k in range(1, 18)],
            [0.050 + 1e-3 * k for k in range(1, 18)])
    assert observer.collision and observer.detections == 1
    assert observer.residual[1] == pytest.approx(20.0 * (1 - np.exp(-50 * 0.017)), rel=1e-6)
    assert observer.last_event['start'] == pytest.approx(70.006, abs=1e-9)


def test_stamps_stepped_forward_restart_the_observer_without_integrating_the_jump(panda):
    """An accelerating arm: a 30 s dt would make r the momentum's rate, a false collision."""
    core = core_of(panda, {'panda_joint2': 0.5})
    rng = np.random.default_rng(3)
    q0, amplitude = rng.uniform(-0.5, 0.5, panda.nv), rng.uniform(0.2, 0.4, panda.nv)
    reference = MomentumObserver(panda, 50.0)

    def at(k: int, stamp: float):
        t = 1e-3 * k
        q, v = q0 + amplitude * np.sin(3 * t), 3 * amplitude * np.cos(3 * t)
        effort = panda.rnea(q, v, -9 * amplitude * np.sin(3 * t))  # no external torque
        core.on_joint_states(core.joint_names, q, v, effort, t, SimpleNamespace(
            sec=int(stamp), nanosec=round((stamp - int(stamp)) * 1e9)))
        return q, v, effort

    for k in range(300):
        at(k, 10 + 1e-3 * k)
    assert np.max(np.abs(core.observer.residual)) < 0.01
    for k in range(300, 400):  # the stamps 30 s ahead, the steady clock 1 ms on
        q, v, effort = at(k, 40 + 1e-3 * k)
        r = reference.update(40 + 1e-3 * k, q, v, effort)  # started at the step
        np.testing.assert_allclose(core.observer.residual, r, rtol=0, atol=1e-9)
    assert not core.observer.collision and core.observer.detections == 0
    assert core.observer.clock_steps == 1
    assert core.observer.last_clock_step == (
        'joint_states stamps stepped forward 30.001000 s in 0.001000 s of arrivals, from '
        'stamp 10.299000 s to 40.300000 s: observer restarted')
    # A gap in the messages (stamps and arrivals 0.5 s on alike) is integrated, no step.
    at(900, 40.9)
    assert core.observer.clock_steps == 1 and core.observer.samples == 401


def test_an_implausible_effort_is_counted_not_integrated_and_latches_nothing(panda):
    core = core_of(panda, {'panda_joint2': 5.0}, collision_reaction='zero')
    reference = MomentumObserver(panda, 50.0)
    q, v = np.full(panda.nv, 0.1), np.zeros(panda.nv)
    quiet = panda.gravity_torques(q) + 0.5
    absurd = quiet.copy()
    absurd[1] = 1e300
    r = np.zeros(panda.nv)
    for k in range(20):
        effort = absurd if k == 10 else quiet
        core.on_joint_states(core.joint_names, q, v, effort, 1e-3 * k,
                             SimpleNamespace(sec=1, nanosec=k * 10**6))
        if k == 10:
            observer = core.observer
            assert not observer.valid and observer.implausible == 1
            np.testing.assert_array_equal(observer.residual, r)  # the last good one
        else:
            r = reference.update(1 + 1e-3 * k, q, v, effort)
            np.testing.assert_allclose(core.observer.residual, r, rtol=0, atol=1e-12)
            assert core.observer.valid
    assert not observer.collision and not observer.reacting and observer.detections == 0
    assert observer.samples == 19
    values = observer.status()
    assert values['observer samples with an implausible effort (not integrated)'] == '1'
    line = 'joint panda_joint2 effort 1e+300 (measured torque 1e+300), beyond 870'
    assert values['last implausible effort'] == line
    assert observer.alarm() == (WARN, 'measured effort beyond its plausibility bound: samples '
                                f'not integrated ({line})')
    assert observer.alarm() is None


def test_the_effort_bound_is_on_the_measured_torque_effort_gain_times_effort(panda):
    # An arm reporting mN m, effort_gain 0.001: every effort is 1000 x its torque, beyond 10 x
    # the effort limits, yet each sample is plausible and integrated; the bound still holds
    # for the torque (effort_gain x effort - effort_bias), here 10 x 87 N m on panda_joint1.
    gains = {f'effort_gain.{name}': 0.001 for name in panda.joint_names}
    core = core_of(panda, {'panda_joint2': 5.0}, actuation=gains)
    reference = MomentumObserver(panda, 50.0)
    q, v = np.full(panda.nv, 0.1), np.zeros(panda.nv)
    torque = panda.gravity_torques(q) + 0.5
    assert np.max(np.abs(1000.0 * torque)) > 10 * 87.0  # the raw effort: beyond the bound
    for k in range(10):
        core.on_joint_states(core.joint_names, q, v, 1000.0 * torque, 1e-3 * k,
                             SimpleNamespace(sec=1, nanosec=k * 10**6))
        r = reference.update(1 + 1e-3 * k, q, v, torque)
        assert core.observer.valid
        np.testing.assert_allclose(core.observer.residual, r, rtol=0, atol=1e-9)
    assert core.observer.implausible == 0 and core.observer.samples == 10
    beyond = 1000.0 * torque
    beyond[0] = 1000.0 * 871.0  # 871 N m: beyond 870
    core.on_joint_states(core.joint_names, q, v, beyond, 0.01,
                         SimpleNamespace(sec=1, nanosec=10 * 10**6))
    assert core.observer.implausible == 1 and not core.observer.valid
    assert core.observer.last_implausible == ('joint panda_joint1 effort 871000 (measured '
                                              'torque 871), beyond 870')


def test_a_joint_without_an_effort_limit_is_bounded_by_the_absolute_cap():
    text = robot_path('panda').read_text().replace('effort="87.0"', 'effort="0"', 1)
    model = RobotModel.from_urdf_string(text)
    bound = core_of(model).observer.effort_bound
    assert bound[0] == MAX_EFFORT
    np.testing.assert_array_equal(bound[1:], 10.0 * model.effort_limits[1:])


def test_a_publisher_that_leaves_its_stamps_at_zero_is_skipped_not_a_clock_step(panda):
    """Two publishers, one stamping nothing: the stamped samples are integrated, no restart."""
    core = core_of(panda, {'panda_joint2': 5.0})
    for k in range(40):
        at_rest(core, panda, 20.0, [5 * 10**9 + k * 10**6, 0], [1e-3 * k, 1e-3 * k + 5e-4])
    observer = core.observer
    assert (observer.clock_steps, observer.not_newer, observer.samples) == (0, 40, 40)
    assert observer.collision
