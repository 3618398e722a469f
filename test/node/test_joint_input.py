"""JointStateInput / BaseStateInput: merging by name, rejection reasons, ages, frames."""
from __future__ import annotations

import array
import math

import numpy as np
import pytest

from rnea_ros.node.joint_input import (BAD_QUATERNION, base_spatial_acceleration, BaseStateInput,
                                       DUPLICATE_NAME, JointStateInput, LENGTH_MISMATCH, NEVER,
                                       NON_FINITE, Rejected)

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
