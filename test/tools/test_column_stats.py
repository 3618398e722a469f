"""One-pass column statistics: the numbers numpy's separate passes give."""
from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.tools import column_stats


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    values, minus = rng.normal(size=(1000, 3)), rng.normal(size=(1000, 3))
    values[5, 0], values[7, 1], minus[9, 2] = np.nan, np.inf, np.nan
    values[100:300, 2] = np.nan  # an all-NaN bucket and window for column 2
    return values, minus, np.array([0, 10, 100, 150, 600])


@pytest.mark.parametrize('subtract', [False, True])
def test_moments_match_numpy(data, subtract):
    values, minus, starts = data
    x = values - minus if subtract else values
    found = column_stats.moments(values, minus if subtract else None, starts)
    finite = np.isfinite(x)
    zeroed = np.where(finite, x, 0.0)
    np.testing.assert_allclose(found.sum_squares, (zeroed ** 2).sum(axis=0), rtol=1e-13)
    np.testing.assert_array_equal(found.count, finite.sum(axis=0))
    np.testing.assert_array_equal(found.peak, np.abs(zeroed).max(axis=0))
    np.testing.assert_array_equal(found.argmax, np.argmax(np.abs(x), axis=0))  # first NaN
    np.testing.assert_allclose(found.window_sum_squares,
                               np.add.reduceat(zeroed ** 2, starts, axis=0), rtol=1e-13)
    np.testing.assert_array_equal(found.window_count,
                                  np.add.reduceat(finite.astype(int), starts, axis=0))
    np.testing.assert_array_equal(found.window_peak,
                                  np.maximum.reduceat(np.abs(x), starts, axis=0))


@pytest.mark.parametrize('subtract', [False, True])
def test_buckets_match_reduceat(data, subtract):
    values, minus, starts = data
    x = values - minus if subtract else values
    found = column_stats.buckets(values, starts, minus if subtract else None)
    with np.errstate(invalid='ignore'):
        np.testing.assert_array_equal(found.low, np.fmin.reduceat(x, starts, axis=0))
        np.testing.assert_array_equal(found.high, np.fmax.reduceat(x, starts, axis=0))
        np.testing.assert_allclose(found.sums, np.add.reduceat(x, starts, axis=0), rtol=1e-13)
