"""The state arrays the dynamics get from the estimated velocities and accelerations."""
from __future__ import annotations

import numpy as np

from rnea_ros.bag.accelerations import Estimate


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
