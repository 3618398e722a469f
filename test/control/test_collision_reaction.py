"""
The collision reactions without ROS: the stop torque, debounce, auto reset, threshold profiles.

A ``ControlCore`` with the observer on, fed samples 1 ms apart at rest at q = 0.1 with joint 2's
measured torque short by a push: the residual of joint 2 follows the push as a first-order lag
of gain 50 1/s, r(t) = push (1 - exp(-50 t)), so a 2 N m push crosses 0.5 N m after
ln(4/3) / 50 = 5.75 ms. Expected values are computed by hand from that and from the documented
formulas (``braking``: the torque of a = -2 v / T braking, a = -2 v / T + (q_rest - q) / T^2
holding, ID(q, v, a) = M(q) a + C(q, v) v + g(q) through ``RobotModel.rnea``).
"""
from __future__ import annotations

from types import SimpleNamespace

from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.control import collision_events
from rnea_ros.control.core import ControlCore
from rnea_ros.control.declaration import REST_SPEED
from rnea_ros.control.observer_outputs import check_profile_names
from rnea_ros.control.safety import COLLISION
from rnea_ros.control.settings import ParameterRejected, Settings
from rnea_ros.control.trajectory import Trajectory

MS = 1e-3


@pytest.fixture(scope='module')
def panda() -> RobotModel:
    return RobotModel.from_urdf_string(robot_path('panda').read_text())


def core_of(model, thresholds=None, profiles=None, **settings) -> ControlCore:
    return ControlCore(model, Settings(
        observer=True, wrench_estimation_links=('panda_hand',),
        collision_thresholds=thresholds or {}, collision_profile_thresholds=profiles or {},
        **settings).validate())


def live_set(core, changes) -> None:
    """Swap in the snapshot a live set of ``changes`` makes, as the node does."""
    core.use(core.settings.updated(changes, core.joint_names))


class Feeder:
    """Samples 1 ms apart at ``q``, velocity ``v``; joint 2's torque ``push`` short."""

    def __init__(self, core, model):
        self.core, self.model, self.k = core, model, 0
        self.q = np.full(model.nv, 0.1)

    def __call__(self, push: float, count: int, v: float = 0.0) -> None:
        velocity = np.full(self.model.nv, v)
        effort = self.model.rnea(self.q, velocity, np.zeros(self.model.nv))
        effort[1] -= push
        for _ in range(count):
            self.k += 1
            self.core.on_joint_states(self.core.joint_names, self.q, velocity, effort,
                                      self.k * MS, SimpleNamespace(sec=0, nanosec=1_000_000
                                                                   * self.k))

    @property
    def now(self) -> float:
        return self.k * MS


def test_stop_brakes_with_the_damping_then_holds_the_pose_at_rest(panda):
    core = core_of(panda, {'panda_joint2': 0.5}, collision_reaction='stop',
                   collision_stop_time=0.2, effort_limit_scale=0.0)
    feed = Feeder(core, panda)
    feed(2.0, 30, v=0.3)
    assert core.observer.reacting
    q_detect = core.state.q.copy()
    assert core.cycle(feed.now, 0.0) and core.fault.code == COLLISION
    v = np.full(panda.nv, 0.3)  # no armature declared: ID(q, v, -2 v / T)
    np.testing.assert_allclose(core.effort, panda.rnea(q_detect, v, -2.0 * v / 0.2), rtol=0,
                               atol=1e-9)
    # Still braking (0.3 rad/s): no spring, whatever q is now; M(q) of this pose.
    feed.q = q_detect + 0.05
    feed(0.0, 1, v=0.3)
    assert core.cycle(feed.now, 0.0)
    np.testing.assert_allclose(core.effort, panda.rnea(feed.q, v, -2.0 * v / 0.2), rtol=0,
                               atol=1e-9)
    # At rest (every |v| below REST_SPEED): the pose of that cycle is held.
    q_rest = feed.q.copy()
    feed(0.0, 1, v=0.5 * REST_SPEED)
    assert core.cycle(feed.now, 0.0) and core.torques.stop.resting
    np.testing.assert_array_equal(core.torques.stop.q_rest, q_rest)
    pushed = q_rest + 0.02
    feed.q = pushed
    feed(0.0, 1, v=0.0)
    assert core.cycle(feed.now, 0.0)
    still = np.zeros(panda.nv)
    np.testing.assert_allclose(core.effort, panda.rnea(pushed, still, (q_rest - pushed) / 0.2**2),
                               rtol=0, atol=1e-9)
    # A new collision after a reset brakes again from its own pose.
    assert core.observer.reset()
    assert core.cycle(feed.now, 0.0) and core.fault.code is None


def test_stop_brakes_as_hard_as_the_weakest_joint_allows(panda):
    # At 0.3 rad/s and T = 0.01 s the braking torque is far beyond the panda's limits: the part
    # beyond g(q) + C(q, v) v is scaled as a whole until one joint sits at its limit, so the
    # braking keeps its direction (clipped joint by joint it would not).
    core = core_of(panda, {'panda_joint2': 0.5}, collision_reaction='stop',
                   collision_stop_time=0.01)
    feed = Feeder(core, panda)
    feed(2.0, 30, v=0.3)
    assert core.cycle(feed.now, 0.0) and core.fault.code == COLLISION
    q, v = core.state.q, np.full(panda.nv, 0.3)
    bias = panda.rnea(q, v, np.zeros(panda.nv))
    beyond = panda.rnea(q, v, -2.0 * v / 0.01) - bias
    limits = core.limiter.upper
    scale = (core.effort - bias) / beyond
    np.testing.assert_allclose(scale, scale[0], rtol=1e-9)
    assert 0.0 < scale[0] < 1.0
    assert np.max(np.abs(core.effort) - limits) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize('reaction', ['stop', 'hold_gravity'])
def test_under_a_feedback_law_stop_brakes_with_its_own_damping(panda, reaction):
    # Under pd_feedforward every fault published the law's damped rest g(q) - Kd v, the stop
    # reaction's brake included: on the simulated panda pushed on its flange that left the
    # arm moving 1.7 s and 0.95 rad after the event (bench/bench_collision.py --clock lockstep).
    # `stop` now brakes with its own damping under every law; the other reactions keep the
    # damped rest (a zero or gravity-only torque would let the arm fall or coast).
    gains = {f'{kind}.{joint}': value for joint in panda.joint_names
             for kind, value in (('kp', 100.0), ('kd', 10.0))}
    core = core_of(panda, {'panda_joint2': 0.5}, collision_reaction=reaction,
                   collision_stop_time=0.2, effort_limit_scale=0.0,
                   control_law='pd_feedforward', gains=gains)
    feed = Feeder(core, panda)
    feed(2.0, 30, v=0.3)
    assert core.observer.reacting
    assert core.cycle(feed.now, 0.0) and core.fault.code == COLLISION
    v = np.full(panda.nv, 0.3)
    q = core.state.q
    expected = panda.rnea(q, v, -2.0 * v / 0.2) if reaction == 'stop' else \
        panda.gravity_torques(q) - 10.0 * v
    np.testing.assert_allclose(core.effort, expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize('reaction', ['stop', 'hold_gravity'])
def test_after_a_reset_a_feedback_law_rests_until_a_newer_desired_motion(panda, reaction):
    # After reset_collision the law tracked the reference again, which had moved on meanwhile:
    # on the simulated panda the arm jumped towards it at 3.1 rad/s and was detected as a new
    # collision. The damped rest holds until a desired motion taken after the reset.
    gains = {f'{kind}.{joint}': value for joint in panda.joint_names
             for kind, value in (('kp', 100.0), ('kd', 10.0))}
    core = core_of(panda, {'panda_joint2': 0.5}, collision_reaction=reaction,
                   effort_limit_scale=0.0, control_law='pd_feedforward', gains=gains,
                   acceleration_timeout=10.0)
    feed = Feeder(core, panda)
    names = core.joint_names
    moved_on = Trajectory.from_points(names, [(0, np.full(panda.nv, 0.6), [], [])])
    core.on_desired(moved_on, 0.0, now=0.0)
    feed(0.0, 5)
    assert core.cycle(feed.now, 0.0) and not core.torques.law.resting  # tracking
    feed(2.0, 30)
    assert core.cycle(feed.now, 0.0) and core.fault.code == COLLISION
    feed(0.0, 60)  # the push gone, the residual back under the threshold
    assert core.cycle(feed.now, 0.0) and core.fault.code == COLLISION  # latched
    assert core.observer.reset()
    rest = panda.gravity_torques(feed.q)  # at rest: g(q) - D 0
    for _ in range(3):
        feed(0.0, 1)
        assert core.cycle(feed.now, 0.0) and core.fault.code is None
        np.testing.assert_allclose(core.effort, rest, rtol=0, atol=1e-9)
        assert core.torques.law.resting and core.reference.held_back
    core.on_desired(moved_on, 0.0, now=feed.now)  # the same reference, sent again: newer
    feed(0.0, 1)
    assert core.cycle(feed.now, 0.0) and not core.torques.law.resting
    np.testing.assert_allclose(core.effort, rest + 100.0 * (0.6 - feed.q), rtol=0, atol=1e-9)


def test_the_debounce_is_how_long_the_residual_stays_beyond_and_it_is_live(panda):
    # Joint 2 is beyond 0.5 N m from 6 ms into a 30 ms push of 2 N m until
    # ln(2 (1 - e^-1.5) / 0.5) / 50 = 22.6 ms after it: about 46 ms.
    core = core_of(panda, {'panda_joint2': 0.5}, collision_debounce=0.06)
    feed = Feeder(core, panda)
    feed(2.0, 30)
    feed(0.0, 60)
    assert core.observer.detections == 0 and core.observer.take_events() == []
    live_set(core, {'collision_debounce': 0.02})
    feed(2.0, 30)
    events = core.observer.take_events()
    assert core.observer.detections == 1 and [e['kind'] for e in events] == ['detected']
    # The first sample beyond is the 6th of the push (5.75 ms); detected 20 ms later.
    start = (90 + 6) * MS
    assert events[0]['start'] == pytest.approx(start, abs=1e-9)
    assert events[0]['stamp'] == pytest.approx(start + 0.02, abs=1e-9)
    assert events[0]['joints'] == ['panda_joint2'] and events[0]['reaction'] == 'none'
    assert core.observer.status()['collision debounce [s]'] == '0.02'


def test_auto_reset_clears_after_that_long_at_rest_under_the_thresholds(panda):
    core = core_of(panda, {'panda_joint2': 0.5}, collision_reaction='stop',
                   collision_auto_reset=0.05)
    feed = Feeder(core, panda)
    feed(2.0, 30)
    assert core.observer.latched and core.observer.take_events()[0]['kind'] == 'detected'
    end = feed.now
    while abs(core.observer.residual[1]) > 0.5:  # beyond until 22.6 ms after the push
        feed(0.0, 1)
    quiet = feed.now
    assert quiet - end == pytest.approx(0.0226, abs=1.5 * MS)
    feed(0.0, 49)
    assert core.observer.latched  # 49 ms under: not yet
    feed(0.0, 1)
    assert not core.observer.latched and not core.observer.collision
    event, = core.observer.take_events()
    assert event['kind'] == 'auto_reset' and event['stamp'] == pytest.approx(quiet + 0.05)
    assert core.observer.auto_resets == 1
    assert 'collision_auto_reset' in collision_events.describe(event)


@pytest.mark.parametrize('after, v', [(0.0, 0.0), (0.05, 2 * REST_SPEED)])
def test_no_auto_reset_when_off_or_while_the_arm_moves(panda, after, v):
    core = core_of(panda, {'panda_joint2': 0.5}, collision_reaction='hold_gravity',
                   collision_auto_reset=after)
    feed = Feeder(core, panda)
    feed(2.0, 30)
    feed(0.0, 500, v=v)
    assert core.observer.latched and core.observer.auto_resets == 0


def test_a_profile_switches_the_thresholds_live_its_unset_joints_keep_the_default(panda):
    core = core_of(panda, {'panda_joint2': 0.5, 'panda_joint4': 0.7},
                   {'carrying': {'panda_joint2': 5.0}}, collision_profiles=('carrying',),
                   collision_profile='carrying')
    assert core.observer.thresholds == {'panda_joint2': 5.0, 'panda_joint4': 0.7}
    feed = Feeder(core, panda)
    feed(2.0, 60)
    assert not core.observer.collision  # 2 N m is under the carrying threshold
    live_set(core, {'collision_profile': ''})
    feed(2.0, 12)
    assert core.observer.collision
    event, = core.observer.take_events()
    assert event['profile'] == '' and event['threshold'] == 0.5
    live_set(core, {'collision_threshold.carrying.panda_joint2': 1.0,
                    'collision_profile': 'carrying'})
    assert core.observer.thresholds['panda_joint2'] == 1.0
    assert core.observer.status()['collision profile'] == 'carrying'


def test_threshold_names_split_into_the_default_and_the_profile_sets():
    joints = ('j1', 'a.b')
    settings = Settings(collision_profiles=('p',)).validate().updated({
        'collision_threshold.j1': 1.0, 'collision_threshold.a.b': 3.0,
        'collision_threshold.p.a.b': 2.0, 'collision_threshold.q.j1': 4.0, 'armature.j1': 0.1},
        joints)
    assert settings.collision_thresholds == {'j1': 1.0, 'a.b': 3.0}
    assert settings.collision_profile_thresholds == {'p': {'a.b': 2.0}}
    assert settings.actuation == {'armature.j1': 0.1}
    with pytest.raises(ParameterRejected, match="parameter 'collision_profiles': joint 'a.b' "
                       'makes collision_threshold.a.b name both'):
        check_profile_names(('b', 'a.b'), ('a',))  # joint b in profile a, or joint a.b


@pytest.mark.parametrize('profiles, profile, message', [
    (('x', 'x'), '', "parameter 'collision_profiles' is ['x', 'x']: expected distinct"),
    (('a.b',), '', "parameter 'collision_profiles' is ['a.b']: expected distinct non-empty "
                   'names without a dot'),
    (('x',), 'y', "parameter 'collision_profile' is 'y': expected '' or one of "
                  "collision_profiles ['x']"),
])
def test_bad_profiles_are_refused_with_one_line(profiles, profile, message):
    with pytest.raises(ValueError) as error:
        Settings(collision_profiles=profiles, collision_profile=profile).validate()
    assert str(error.value).startswith(message)


def test_the_detection_line_names_joints_peak_and_the_estimated_force(panda):
    core = core_of(panda, {'panda_joint2': 0.5}, collision_reaction='stop')
    feed = Feeder(core, panda)
    feed(2.0, 20)
    event, = core.observer.take_events()
    line = collision_events.describe(event)
    # Beyond from the 7th sample (the observer integrates a step behind), detected 10 ms on.
    assert line.startswith('collision detected at joint(s) panda_joint2 (stamp 0.017000 s, '
                           'beyond the threshold since 0.007000 s): peak |r| ')
    assert f'peak |r| {event["peak"]:.4g} at panda_joint2 (threshold 0.5, profile default)' in line
    assert ', estimated force at panda_hand ' in line and line.endswith('; reaction stop')
    assert event['forces']['panda_hand'] > 0.0
    values = collision_events.key_values(event)
    assert values['joint'] == 'panda_joint2' and values['reaction'] == 'stop'
