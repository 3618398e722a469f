"""JointStateInput / BaseStateInput: merging by name, rejections, freshness per joint, frames."""
from __future__ import annotations

import array
import math

import numpy as np
import pytest

from rnea_ros.control.joint_input import (BAD_QUATERNION, base_spatial_acceleration,
                                          BaseStateInput, DUPLICATE_NAME, FRESH, IMPLAUSIBLE,
                                          JointStateInput, LENGTH_MISMATCH, NEVER,
                                          NEVER_RECEIVED, NON_FINITE, Rejected, STALE)

NAMES = ('a', 'b', 'c')


def test_writes_into_caller_views_by_name_and_ignores_unknown_names():
    q = np.zeros(5)
    v = np.zeros(5)
    joints = JointStateInput(NAMES, q[2:], v[2:])
    joints.update(['c', 'x', 'a'], array.array('d', [3.0, 99.0, 1.0]), [30.0, 99.0, 10.0], [],
                  now=5.0, stamp='s1')
    np.testing.assert_array_equal(q, [0, 0, 1, 0, 3])
    np.testing.assert_array_equal(v, [0, 0, 10, 0, 30])
    assert list(joints.position_time) == [5.0, NEVER, 5.0]
    assert joints.stamp == 's1' and joints.accepted == 1


def test_partial_publishers_merge_per_joint_with_their_own_ages():
    joints = JointStateInput(NAMES)
    joints.update(['a', 'b'], [1.0, 2.0], [0.1, 0.2], [], now=1.0)
    joints.update(['c'], [3.0], [], [], now=2.0)  # no velocities: positions only
    np.testing.assert_array_equal(joints.position, [1, 2, 3])
    np.testing.assert_array_equal(joints.velocity, [0.1, 0.2, 0])
    assert list(joints.position_time) == [1.0, 1.0, 2.0]
    assert list(joints.velocity_time) == [1.0, 1.0, NEVER]
    assert joints.names_older_than(2.5, 1.0) == ['a', 'b']
    assert joints.names_older_than(2.5, 1.0, velocity=True) == ['a', 'b', 'c']
    assert joints.names_never_received() == []


def test_identity_order_fast_path():
    joints = JointStateInput(NAMES)
    joints.update(list(NAMES), [1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], now=1.0)
    np.testing.assert_array_equal(joints.position, [1, 2, 3])
    np.testing.assert_array_equal(joints.velocity, [4, 5, 6])


@pytest.mark.parametrize('position, velocity, effort, reason, text', [
    ([1.0, 2.0], [], [], LENGTH_MISMATCH, 'position has 2 entries for 3 names'),
    ([1.0, 2.0, 3.0], [1.0], [], LENGTH_MISMATCH, 'velocity has 1 entries for 3 names'),
    ([1.0, 2.0, 3.0], [], [1.0, 2.0], LENGTH_MISMATCH, 'effort has 2 entries'),
    ([1.0, math.nan, 3.0], [], [], NON_FINITE, "position[1] (joint 'b') is nan"),
    ([1.0, 2.0, 3.0], [0.0, 0.0, math.inf], [], NON_FINITE, "velocity[2] (joint 'c') is inf"),
])
def test_rejections_name_the_field_and_keep_the_previous_state(
        position, velocity, effort, reason, text):
    joints = JointStateInput(NAMES)
    joints.update(list(NAMES), [0.5, 0.5, 0.5], [0.1, 0.1, 0.1], [], now=1.0, stamp='good')
    with pytest.raises(Rejected) as error:
        joints.update(list(NAMES), position, velocity, effort, now=2.0, stamp='bad')
    assert error.value.reason == reason and text in str(error.value)
    np.testing.assert_array_equal(joints.position, [0.5, 0.5, 0.5])
    assert list(joints.position_time) == [1.0, 1.0, 1.0] and joints.stamp == 'good'


def test_duplicate_names_rejected_also_when_cached():
    joints = JointStateInput(NAMES)
    for _ in range(2):
        with pytest.raises(Rejected, match=r"name repeats \['a'\]") as error:
            joints.update(['a', 'b', 'a'], [1.0, 2.0, 3.0], [], [], now=1.0)
        assert error.value.reason == DUPLICATE_NAME
    assert joints.accepted == 0


def test_non_finite_effort_and_unknown_joints_are_not_checked():
    """Drivers publish NaN efforts; unknown joints are ignored entirely."""
    joints = JointStateInput(NAMES)
    joints.update(['a', 'zz'], [1.0, math.nan], [0.0, math.nan], [math.nan, math.nan], now=1.0)
    assert joints.position[0] == 1.0


def test_tracked_efforts_merge_by_name_and_a_message_without_them_keeps_them():
    joints = JointStateInput(NAMES)
    effort = joints.track_effort()
    joints.update(['c', 'x', 'a'], [0.0, 0.0, 0.0], [], array.array('d', [3.0, 99.0, 1.0]),
                  now=1.0)
    np.testing.assert_array_equal(effort, [1.0, 0.0, 3.0])
    assert joints.with_effort
    joints.update(['b'], [0.0], [], [math.nan], now=2.0)  # not checked: the observer says
    assert joints.with_effort and effort[0] == 1.0 and math.isnan(effort[1])
    joints.update(['a', 'b', 'c'], [0.0, 0.0, 0.0], [], [], now=3.0)
    assert not joints.with_effort and effort[0] == 1.0 and effort[2] == 3.0


def test_copy_state_from_matches_by_name():
    old = JointStateInput(('b', 'a'))
    old.update(['a', 'b'], [1.0, 2.0], [3.0, 4.0], [], now=7.0, stamp='s')
    new = JointStateInput(NAMES)
    new.copy_state_from(old)
    np.testing.assert_array_equal(new.position, [1, 2, 0])
    assert list(new.position_time) == [7.0, 7.0, NEVER] and new.stamp == 's'


def test_odometry_fills_free_flyer_state_and_normalises_quaternion():
    q, v = np.zeros(19), np.zeros(18)
    base = BaseStateInput(q[:7], v[:6])
    assert list(q[:7]) == [0, 0, 0, 0, 0, 0, 1]  # identity until odometry arrives
    base.update((1, 2, 3), (0, 0, 0, 1.0005), (4, 5, 6), (7, 8, 9), now=3.0)
    np.testing.assert_allclose(q[:7], [1, 2, 3, 0, 0, 0, 1])
    np.testing.assert_array_equal(v[:6], [4, 5, 6, 7, 8, 9])
    with pytest.raises(Rejected) as error:
        base.update((0, 0, 0), (0, 0, 0, 2.0), (0, 0, 0), (0, 0, 0), now=4.0)
    assert error.value.reason == BAD_QUATERNION and base.time == 3.0
    with pytest.raises(Rejected, match='twist.linear holds nan'):
        base.update((0, 0, 0), (0, 0, 0, 1), (math.nan, 0, 0), (0, 0, 0), now=4.0)


def test_base_acceleration_is_converted_from_classical_to_spatial():
    """A base spinning at w with velocity v and zero classical acceleration: a_lin = -w x v."""
    twist = np.array([1.0, 0, 0, 0, 0, 2.0])
    out = np.zeros(6)
    base_spatial_acceleration((0, 0, 0), (0, 0, 0.5), twist, out)
    np.testing.assert_allclose(out, [0, -2.0, 0, 0, 0, 0.5])


# ---------------------------------------------------------------------- freshness per joint
ARM, GRIPPER = np.arange(7), np.array([7])
ARM_GRIPPER = tuple(f'arm{k}' for k in range(7)) + ('gripper',)


def feed(joints, rng, start, end, rates, stop=None):
    """
    Return the messages of an arm and a gripper publisher, merged in arrival order.

    The arm (joints 0-6) and the gripper (joint 7) publish at ``rates`` (Hz), stamps jittered by
    +-20 % of the period, every 10th arm message dropped; each stops at ``stop[name]``.
    """
    stop = stop or {}
    events = []
    for name, rate, indices in (('arm', rates[0], ARM), ('gripper', rates[1], GRIPPER)):
        t, k = start, 0
        while t < min(end, stop.get(name, np.inf)):
            if not (name == 'arm' and k % 10 == 9):
                events.append((t, indices))
            k += 1
            t += (1 + rng.uniform(-0.2, 0.2)) / rate
    events.sort(key=lambda event: event[0])
    return events


def run_cycles(joints, events, end, rate=500.0, timeout=0.1, max_timeout=1.0):
    """
    Merge ``events`` and evaluate freshness at each cycle of ``rate``.

    Returns the (time, code) of the cycles that were not FRESH.
    """
    faults, k = [], 0
    commanded = np.arange(8)
    for now in np.arange(events[0][0], end, 1 / rate):
        while k < len(events) and events[k][0] <= now:
            t, indices = events[k]
            names = [ARM_GRIPPER[j] for j in indices]
            joints.update(names, [0.1] * len(names), [0.0] * len(names), [], now=t)
            k += 1
        code = joints.fault(now, commanded, timeout, max_timeout, True)
        if code != FRESH:
            faults.append((now, code))
    return faults


@pytest.mark.parametrize('arm_rate', [200.0, 500.0, 1000.0])
def test_slow_gripper_publisher_gives_no_fault_cycle(arm_rate):
    """An arm at 200-1000 Hz and a gripper at 5 Hz from another publisher, default timeouts."""
    joints = JointStateInput(ARM_GRIPPER)
    events = feed(joints, np.random.default_rng(int(arm_rate)), 0.0, 3.0, (arm_rate, 5.0))
    faults = run_cycles(joints, events, 3.0)
    # Only the start-up, before the gripper's first message arrived, is missing.
    assert all(code == NEVER_RECEIVED for _, code in faults)
    assert not faults or faults[-1][0] < events[0][0] + 0.25
    timeouts = joints.timeouts(0.1, 1.0)
    np.testing.assert_allclose(timeouts[:7], 0.1, rtol=0, atol=1e-12)  # the arm keeps 0.1 s
    assert 0.45 < timeouts[7] < 0.75  # 3 x ~0.2 s


@pytest.mark.parametrize('stopped, bound', [('arm', 0.1), ('gripper', 1.0)])
def test_a_publisher_that_stops_trips_the_fault_within_its_bound(stopped, bound):
    """
    Trip the arm after input_timeout, the gripper after 3 of its periods.

    At most max_input_timeout; both stay tripped.
    """
    joints = JointStateInput(ARM_GRIPPER)
    events = feed(joints, np.random.default_rng(3), 0.0, 4.0, (500.0, 5.0), stop={stopped: 2.0})
    last = max(t for t, indices in events if (indices is ARM) == (stopped == 'arm'))
    faults = [(t, code) for t, code in run_cycles(joints, events, 4.0) if t > 1.0]
    assert faults and all(code == STALE for _, code in faults)
    first = faults[0][0]
    assert first <= last + bound + 2e-3  # within the bound (+ one 500 Hz cycle)
    assert first > last + 0.1 - 2e-3  # and not before input_timeout
    assert faults[-1][0] > 3.99 and len(faults) == pytest.approx((4.0 - first) * 500, abs=2)


def test_period_estimate_follows_the_publisher_and_is_bounded():
    joints = JointStateInput(('a',))
    assert joints.timeouts(0.1, 1.0)[0] == pytest.approx(1.0)  # one message or none: the bound
    for k in range(50):
        joints.update(['a'], [0.0], [], [], now=0.5 * k)  # 2 Hz: 3 periods would be 1.5 s
    assert joints.period[0] == pytest.approx(0.5, abs=1e-9)
    assert joints.timeouts(0.1, 1.0)[0] == pytest.approx(1.0)  # capped by max_input_timeout
    assert joints.timeouts(2.0, 1.0)[0] == pytest.approx(2.0)  # never below input_timeout


def test_locked_joints_are_held_never_stale_and_ignored_in_messages():
    q, v = np.zeros(3), np.zeros(3)
    joints = JointStateInput(NAMES, q, v)
    joints.lock({'c': 0.25})
    np.testing.assert_allclose(q, [0, 0, 0.25], rtol=0, atol=0)
    joints.update(['a', 'b', 'c'], [1.0, 2.0, 9.0], [0.1, 0.2, 9.0], [], now=1.0)
    np.testing.assert_allclose(q, [1, 2, 0.25], rtol=0, atol=0)
    np.testing.assert_allclose(v, [0.1, 0.2, 0.0], rtol=0, atol=0)
    assert joints.fault(50.0, np.array([2]), 0.1, 1.0, True) == FRESH
    assert joints.fault(50.0, np.array([0, 2]), 0.1, 1.0, True) == STALE
    assert joints.names_never_received() == []
    with pytest.raises(KeyError):
        joints.lock({'nope': 0.0})


# A revolute joint (limits [-1, 3] rad, 2 rad/s) and a continuous one without a velocity limit.
BOUNDED_URDF = (
    '<robot name="r"><link name="base"/>'
    '<link name="l1"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" '
    'ixz="0" iyz="0"/></inertial></link>'
    '<link name="l2"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" '
    'ixz="0" iyz="0"/></inertial></link>'
    '<joint name="a" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>'
    '<limit effort="10" velocity="2" lower="-1" upper="3"/></joint>'
    '<joint name="b" type="continuous"><parent link="l1"/><child link="l2"/><axis xyz="1 0 0"/>'
    '</joint></robot>')


@pytest.fixture(scope='module')
def bounded():
    from rnea_ros import RobotModel
    model = RobotModel.from_urdf_string(BOUNDED_URDF)
    joints = JointStateInput(('a', 'b'))
    joints.bound_by(model)
    return joints


@pytest.mark.parametrize('field, values, detail', [
    ('velocity', [1e6, 0.0], "velocity[0] (joint 'a') is 1e+06: beyond its plausibility bound, "
                             'expected of magnitude at most 20 (10 times its URDF velocity '
                             'limit 2)'),
    ('velocity', [0.0, -1e5], "velocity[1] (joint 'b') is -100000: beyond its plausibility "
                              'bound, expected of magnitude at most 10000 (it has no URDF '
                              'velocity limit)'),
    ('position', [1e300, 0.0], "position[0] (joint 'a') is 1e+300: beyond its plausibility "
                               'bound, expected from -19 to 21 (its URDF range [-1, 3] widened '
                               'by 18 each side)'),
    ('position', [0.0, 2e6], "position[1] (joint 'b') is 2e+06: beyond its plausibility bound, "
                             'expected from -1e+06 to 1e+06 (it has no URDF limits)'),
])
def test_a_sample_beyond_the_plausibility_bound_is_rejected_whole(bounded, field, values, detail):
    # One sample with a finite absurd velocity or position: no measurement of the arm.
    bounded.update(['a', 'b'], [0.5, 0.25], [0.1, 0.2], [], now=1.0)
    message = {'position': [0.5, 0.25], 'velocity': [0.1, 0.2], field: values}
    with pytest.raises(Rejected) as error:
        bounded.update(['a', 'b'], message['position'], message['velocity'], [], now=2.0)
    assert (error.value.reason, str(error.value)) == (IMPLAUSIBLE, detail)
    np.testing.assert_array_equal(bounded.position, [0.5, 0.25])  # the previous sample stays
    np.testing.assert_array_equal(bounded.velocity, [0.1, 0.2])
    assert list(bounded.position_time) == [1.0, 1.0]


def test_values_at_the_plausibility_bound_are_taken(bounded):
    bounded.update(['a', 'b'], [21.0, -1e6], [-20.0, 1e4], [], now=3.0)
    np.testing.assert_array_equal(bounded.position, [21.0, -1e6])
    np.testing.assert_array_equal(bounded.velocity, [-20.0, 1e4])


@pytest.mark.parametrize('law', ['feedforward', 'pd_feedforward', 'computed_torque'])
def test_under_every_law_an_absurd_velocity_leaves_the_torques_of_the_last_good_sample(law):
    # Taken, 1e6 rad/s on panda_joint1 (URDF 2.175 rad/s) put the torques at the effort limits.
    from harness.oracle import robot_path

    from rnea_ros import RobotModel
    from rnea_ros.control.core import ControlCore
    from rnea_ros.control.settings import Settings
    panda = RobotModel.from_urdf_file(robot_path('panda'))
    gains = {f'{kind}.{name}': 1.0 for name in panda.joint_names for kind in ('kp', 'kd')}
    core = ControlCore(panda, Settings(control_law=law, gains=gains, rate=0.0).validate())
    q, v = np.full(panda.nv, 0.1), np.full(panda.nv, 0.2)
    core.on_joint_states(panda.joint_names, q, v, [], now=1.0)
    assert core.cycle(1.0, 0.0)
    good = core.effort.copy()
    absurd = v.copy()
    absurd[0] = 1e6
    with pytest.raises(Rejected) as error:
        core.on_joint_states(panda.joint_names, q, absurd, [], now=1.001)
    assert error.value.reason == IMPLAUSIBLE
    assert core.cycle(1.001, 0.0)
    np.testing.assert_array_equal(core.effort, good)
    assert np.all(np.abs(good) < 0.5 * panda.effort_limits)


def test_a_short_stroke_is_bounded_at_least_a_slack_beyond_its_limits():
    # A finger of 4 cm: its range stretched 10 times is 0.4 m, the slack (2 pi, m here) wider.
    from rnea_ros import RobotModel
    model = RobotModel.from_urdf_string(
        '<robot name="f"><link name="base"/><link name="finger"><inertial><mass value="0.1"/>'
        '<inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="f" type="prismatic"><parent link="base"/><child link="finger"/>'
        '<axis xyz="1 0 0"/><limit effort="20" velocity="0.2" lower="0" upper="0.04"/></joint>'
        '</robot>')
    joints = JointStateInput(('f',))
    joints.bound_by(model)
    np.testing.assert_allclose([joints.position_low[0], joints.position_high[0]],
                               [-2 * math.pi, 0.04 + 2 * math.pi], rtol=0, atol=1e-15)
    joints.update(['f'], [-0.9], [1.9], [], now=1.0)  # beyond the stroke, within the bound
    with pytest.raises(Rejected) as error:
        joints.update(['f'], [6.4], [0.0], [], now=2.0)
    assert str(error.value) == ("position[0] (joint 'f') is 6.4: beyond its plausibility bound, "
                                'expected from -6.28319 to 6.32319 (its URDF range [0, 0.04] '
                                'widened by 6.28319 each side)')
