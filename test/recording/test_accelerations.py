"""The state arrays the dynamics get from the estimated velocities and accelerations."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rnea_ros.recording.accelerations import Estimate, estimate
from rnea_ros.recording.differentiate import default_window, derivatives


def test_model_arrays_scatter_the_joint_columns_and_flag_non_finite_rows():
    rng = np.random.default_rng(0)
    n = 50
    position, velocity, acceleration, effort = (rng.standard_normal((n, 3)) for _ in range(4))
    velocity[7, 1] = np.nan
    acceleration[9, 2] = np.inf
    position[11, 0] = np.nan
    effort[13, 2] = np.nan  # a missing effort is not a reason to leave a sample out
    estimate = Estimate(velocity, acceleration, None, [], np.zeros(n, dtype=bool))
    qi, vi = [4, 1, 2], [3, 0, 1]  # not in order, columns 0 and 3 of q are not joints
    q, v, a, full, finite = estimate.model_arrays(position, effort, qi, vi, 5, 4)
    expected = {}
    for name, size, columns, source, fill in (
            ('q', 5, qi, position, 0.0), ('v', 4, vi, velocity, 0.0),
            ('a', 4, vi, acceleration, 0.0), ('effort', 4, vi, effort, np.nan)):
        expected[name] = np.full((n, size), fill)
        expected[name][:, columns] = source
    for name, got in zip(('q', 'v', 'a', 'effort'), (q, v, a, full)):
        np.testing.assert_array_equal(got, expected[name], err_msg=name)
    assert np.flatnonzero(~finite).tolist() == [7, 9, 11]


@pytest.mark.parametrize('mode', ['velocities', 'positions'])
def test_each_joint_gets_the_derivative_of_its_route(mode):
    """One pass serves every route: as the separate ``derivatives`` calls, to 1e-12 relative."""
    rng = np.random.default_rng(1)
    t_ns = np.cumsum(1_000_000 + rng.integers(-200_000, 200_000, 2000)).astype(np.int64)
    t = t_ns * 1e-9
    position = np.stack([np.sin(t), 0.5 * np.cos(2.0 * t), np.full(t.size, 0.3)], axis=1)
    velocity = np.stack([np.full(t.size, np.nan), -np.sin(2.0 * t), np.zeros(t.size)], axis=1)
    velocity[::7, 1] += 1e-4 * rng.standard_normal(velocity[::7, 1].shape)
    series = SimpleNamespace(times_ns=t_ns, position=position, velocity=velocity,
                             names=['a', 'b', 'c'], locked={'c': (0.3, '--lock')})
    # The differentiator's default window, given: one window for every route.
    got = estimate(series, ['revolute'] * 3, None, default_window(t_ns), 3, None, mode)
    assert [r.route for r in got.routes] == ['positions', mode, 'locked']
    from_positions = derivatives(t_ns, position)
    expected = np.stack([from_positions.second[:, 0],
                         derivatives(t_ns, velocity[:, 1]).first[:, 0]
                         if mode == 'velocities' else from_positions.second[:, 1],
                         np.zeros(t.size)], axis=1)
    scale = np.abs(expected).max()
    assert np.abs(got.acceleration - expected).max() <= 1e-12 * scale
    # The missing velocity comes from the positions, the others are the messages'.
    assert np.abs(got.velocity[:, 0] - from_positions.first[:, 0]).max() <= 1e-12
    assert np.array_equal(got.velocity[:, 1:], velocity[:, 1:])
    assert np.array_equal(got.edge, from_positions.edge)
