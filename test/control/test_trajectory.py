"""Trajectory validation, sampling as joint_trajectory_controller interpolates, derivatives."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.control.joint_input import DUPLICATE_NAME, LENGTH_MISMATCH, NON_FINITE, Rejected
from rnea_ros.control.trajectory import (EMPTY, MISSING_FIELD, point_derivatives,
                                         TIME_NOT_INCREASING, Trajectory, TrajectorySampler)

TIMES = np.array([0.0, 0.3, 0.7, 1.2, 2.0])


def cubic(t):
    return 1 + 2 * t - 3 * t**2 + 0.5 * t**3, 2 - 6 * t + 1.5 * t**2, -6 + 3 * t


def quintic(t):
    return (t**5 - 2 * t**3 + t, 5 * t**4 - 6 * t**2 + 1, 20 * t**3 - 12 * t)


def build(f, fields: str, times=TIMES) -> Trajectory:
    points = []
    for t in times:
        p, v, a = f(t)
        points.append((t, [p, -p], [v, -v] if 'v' in fields else [],
                       [a, -a] if 'a' in fields else []))
    return Trajectory.from_points(['j0', 'j1'], points)


def sample(trajectory, t):
    out = np.zeros(2), np.zeros(2), np.zeros(2)
    TrajectorySampler(trajectory).sample(t, *out)
    return out


@pytest.mark.parametrize('t', [0.0, 0.1, 0.5, 0.7, 1.9999])
def test_quintic_reproduces_a_quintic_motion(t):
    q, v, a = sample(build(quintic, 'pva'), t)
    np.testing.assert_allclose([q[0], v[0], a[0]], quintic(t), atol=1e-9)
    np.testing.assert_allclose([q[1], v[1], a[1]], -np.array(quintic(t)), atol=1e-9)


@pytest.mark.parametrize('t', [0.05, 0.5, 1.5])
def test_cubic_hermite_reproduces_a_cubic_motion(t):
    trajectory = build(cubic, 'pv')
    assert trajectory.interpolation == 'cubic'
    q, v, a = sample(trajectory, t)
    np.testing.assert_allclose([q[0], v[0], a[0]], cubic(t), atol=1e-9)


def test_linear_with_positions_only():
    trajectory = Trajectory.from_points(['j'], [(0.0, [0.0], [], []), (2.0, [4.0], [], [])])
    assert trajectory.interpolation == 'linear'
    out = np.zeros(1), np.zeros(1), np.zeros(1)
    TrajectorySampler(trajectory).sample(0.5, *out)
    np.testing.assert_allclose([x[0] for x in out], [1.0, 2.0, 0.0], rtol=0, atol=1e-12)


def test_before_and_after_the_points_hold_them_at_rest():
    trajectory = build(cubic, 'pva', times=TIMES + 1.0)
    for t, at in ((0.2, 1.0), (5.0, 3.0)):
        q, v, a = sample(trajectory, t)
        assert q[0] == pytest.approx(cubic(at)[0]) and not v.any() and not a.any()


def test_single_point_is_constant():
    trajectory = Trajectory.from_points(['a', 'b'], [(3.0, [], [], [1.0, 2.0])])
    assert trajectory.interpolation == 'constant'
    for t in (-1.0, 0.0, 10.0):
        q, v, a = sample(trajectory, t)
        assert list(a) == [1.0, 2.0] and not q.any() and not v.any()


@pytest.mark.parametrize('fields', ['pva', 'pv', 'p'])
def test_point_derivatives_of_a_cubic_motion_are_exact(fields):
    """The carried fields as they are; missing ones from the spline (exact for cubics)."""
    q, v, a = point_derivatives(build(cubic, fields))
    p_ref, v_ref, a_ref = cubic(TIMES)
    np.testing.assert_allclose(q[:, 0], p_ref, atol=1e-12)
    np.testing.assert_allclose(v[:, 0], v_ref, atol=1e-9)
    if fields != 'pv':
        np.testing.assert_allclose(a[:, 0], a_ref, atol=1e-9)


def test_point_derivatives_with_velocities_average_the_hermite_accelerations():
    """The cubic Hermite's acceleration jumps at interior points: the mean of both sides."""
    trajectory = build(quintic, 'pv')
    q, v, a = point_derivatives(trajectory)
    sampler = TrajectorySampler(trajectory)
    out = np.zeros(2), np.zeros(2), np.zeros(2)
    eps = 1e-7
    for k in range(1, len(TIMES) - 1):
        sampler.sample(TIMES[k] - eps, *out)
        before = out[2][0]
        sampler.sample(TIMES[k] + eps, *out)
        after = out[2][0]
        assert a[k, 0] == pytest.approx((before + after) / 2, abs=1e-5)
    # The carried velocities pass through; the reference is recomputed (vectorised powers may
    # round the last bit differently from the scalar ones that built the points).
    np.testing.assert_allclose(v[:, 0], quintic(TIMES)[1], rtol=0, atol=1e-12)


def test_point_derivatives_few_points():
    two = Trajectory.from_points(['j'], [(0.0, [0.0], [], []), (2.0, [4.0], [], [])])
    q, v, a = point_derivatives(two)
    np.testing.assert_allclose(v[:, 0], [2.0, 2.0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a[:, 0], [0.0, 0.0], rtol=0, atol=1e-12)
    times = [0.0, 1.0, 3.0]
    three = Trajectory.from_points(['j'], [(t, [t * t], [], []) for t in times])
    q, v, a = point_derivatives(three)
    np.testing.assert_allclose(v[:, 0], 2 * np.array(times), rtol=0, atol=1e-9)
    np.testing.assert_allclose(a[:, 0], [2, 2, 2], rtol=0, atol=1e-9)


@pytest.mark.parametrize('names, points, reason, text', [
    (['a', 'a'], [(0, [1, 2], [], [])], DUPLICATE_NAME, "repeats ['a']"),
    (['a'], [], EMPTY, 'no points'),
    (['a', 'b'], [(0, [1], [], [])], LENGTH_MISMATCH, 'points[0].positions has 1 values'),
    (['a'], [(0, [1], [1], []), (1, [1], [], [])], LENGTH_MISMATCH,
     'points[1].velocities has 0 values'),
    (['a'], [(0, [1], [], []), (1, [math.nan], [], [])], NON_FINITE,
     "points[1].positions[0] (joint 'a') is nan"),
    (['a'], [(0, [1], [], []), (0, [2], [], [])], TIME_NOT_INCREASING, 'points[1]'),
    (['a'], [(0, [], [], [1]), (1, [], [], [1])], MISSING_FIELD, 'needs positions'),
    (['a'], [(0, [0], [], [1]), (1, [0], [], [1])], MISSING_FIELD, 'no velocities'),
])
def test_invalid_trajectories_are_rejected_with_the_reason(names, points, reason, text):
    with pytest.raises(Rejected) as error:
        Trajectory.from_points(names, points)
    assert error.value.reason == reason and text in str(error.value)
