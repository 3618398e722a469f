"""The Savitzky-Golay differentiator on uneven sample times: exactness, error bound, gaps."""
from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.recording.differentiate import (
    default_window, derivatives, derivatives_and_first, fit_at, segments, window_samples,
    windows)


def _times(n: int, jitter: float, seed: int = 0, rate: float = 1000.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    steps = 1e9 / rate * (1 + rng.uniform(-jitter, jitter, n))
    return np.round(np.cumsum(steps)).astype(np.int64)


@pytest.mark.parametrize('order', [2, 3, 4])
def test_exact_on_polynomials_of_the_fit_degree(order):
    t_ns = _times(600, 0.4)
    t = (t_ns - t_ns[300]) * 1e-9
    coefficients = np.array([0.3, -1.2, 2.5, 4.0, -3.0])[:order + 1]
    y = np.polynomial.polynomial.polyval(t, coefficients)
    dy = np.polynomial.polynomial.polyval(t, np.polynomial.polynomial.polyder(coefficients))
    ddy = np.polynomial.polynomial.polyval(
        t, np.polynomial.polynomial.polyder(coefficients, 2))
    d = derivatives(t_ns, y, window=0.03, order=order)
    np.testing.assert_allclose(d.first[:, 0], dy, rtol=0, atol=1e-7)
    np.testing.assert_allclose(d.second[:, 0], ddy, rtol=0, atol=1e-4)
    # Interior samples are far from the ends: much tighter there.
    np.testing.assert_allclose(d.second[100:-100, 0], ddy[100:-100], rtol=0, atol=1e-6)


def test_matches_a_direct_least_squares_fit():
    t_ns = _times(200, 0.3, seed=2)
    y = np.sin(3.0 * t_ns * 1e-9) + 0.1 * np.cos(17.0 * t_ns * 1e-9)
    d = derivatives(t_ns, y, window=0.02, order=3)
    assert d.edge[:10].all() and d.edge[-10:].all() and not d.edge[12:-12].any()
    for i in (0, 5, 100, 199):
        # Centred: the samples within 10 ms; at an end: the first (last) 20 ms.
        if i < 100:
            inside = np.abs(t_ns - t_ns[i]) <= 10_000_000 if not d.edge[i] else \
                t_ns - t_ns[0] <= 20_000_000
        else:
            inside = np.abs(t_ns - t_ns[i]) <= 10_000_000 if not d.edge[i] else \
                t_ns[-1] - t_ns <= 20_000_000
        tau = (t_ns[inside] - t_ns[i]) * 1e-9
        fit = np.polynomial.polynomial.polyfit(tau, y[inside], 3)
        assert d.first[i, 0] == pytest.approx(fit[1], rel=1e-8, abs=1e-8)
        assert d.second[i, 0] == pytest.approx(2 * fit[2], rel=1e-7, abs=1e-6)


def test_error_bound_holds_on_uneven_samples_with_a_gap():
    t_ns = _times(4000, 0.5, seed=1)
    t_ns[2000:] += 300_000_000  # 0.3 s gap
    t = t_ns * 1e-9
    amplitude, omega = 0.7, 4.0
    y = amplitude * np.sin(omega * t)
    d = derivatives(t_ns, y, window=0.05, order=3)
    assert d.segments.tolist() == [[0, 2000], [2000, 4000]]
    bound4 = amplitude * omega ** 4
    error1 = np.abs(d.first[:, 0] - amplitude * omega * np.cos(omega * t))
    error2 = np.abs(d.second[:, 0] + amplitude * omega ** 2 * np.sin(omega * t))
    assert np.all(error1 <= d.gain_first * bound4)
    assert np.all(error2 <= d.gain_second * bound4)
    # The bound is informative, not vacuous: within a factor 50 of the actual worst error.
    assert np.max(d.gain_second * bound4) < 50 * np.max(error2) + 1e-6
    assert np.max(error2) < 0.05


def test_no_window_straddles_a_gap():
    t_ns = _times(1000, 0.0)
    t_ns[500:] += 100_000_000
    t = t_ns * 1e-9
    y = 2.0 * t ** 2 + np.where(np.arange(1000) >= 500, 5.0, 0.0)  # a jump across the gap
    d = derivatives(t_ns, y, window=0.05, order=3)
    np.testing.assert_allclose(d.second[:, 0], 4.0, atol=1e-5)
    np.testing.assert_allclose(d.first[:, 0], 4.0 * t, atol=1e-7)


def test_short_segments_lower_the_degree_or_give_nan():
    t_ns = np.array([0, 1, 2, 3, 100, 101, 300], dtype=np.int64) * 1_000_000
    y = 1.0 + 0.5 * (t_ns * 1e-9) ** 2
    d = derivatives(t_ns, y, window=0.05, order=3, max_gap=0.01)
    assert d.segments.tolist() == [[0, 4], [4, 6], [6, 7]]
    np.testing.assert_allclose(d.second[:4, 0], 1.0, atol=1e-6)  # 4 samples: a cubic fit
    assert d.valid.tolist() == [True] * 4 + [False] * 3
    assert np.isnan(d.second[4:, 0]).all() and np.isnan(d.first[6, 0])


def test_default_window_and_gap():
    # 0.05 s, or 10 median intervals when longer; a gap is an interval over half the window.
    assert default_window(np.arange(100) * 1_000_000) == 0.05
    assert default_window(np.arange(100) * 2_000_000) == 0.05
    assert default_window(np.arange(100) * 10_000_000) == pytest.approx(0.1)
    t_ns = np.array([0, 10, 20, 30, 81, 91, 140, 200], dtype=np.int64) * 1_000_000
    d = derivatives(t_ns, np.zeros(8))
    assert d.window == pytest.approx(0.1) and d.max_gap == pytest.approx(0.05)
    # Median interval 10 ms: 51 ms and 60 ms are gaps, 49 ms is not.
    assert d.segments.tolist() == [[0, 4], [4, 7], [7, 8]]
    assert window_samples(np.arange(100) * 1_000_000, 0.05, 3) == 51
    assert window_samples(np.arange(100) * 10_000_000, 0.01, 3) == 5


def test_holes_are_bridged_with_the_span_kept():
    """A 19 ms hole at 1 kHz: one segment, fitted through, no spike at the hole."""
    t_ns = _times(1000, 0.2, seed=3)
    t_ns[500:] += 19_000_000
    t = t_ns * 1e-9
    y = 0.5 * np.sin(3.0 * t) + 0.2 * np.cos(7.0 * t)
    d = derivatives(t_ns, y)
    assert d.segments.tolist() == [[0, 1000]]
    assert not d.edge[30:-30].any()
    exact = -4.5 * np.sin(3.0 * t) - 9.8 * np.cos(7.0 * t)
    error = np.abs(d.second[:, 0] - exact)[~d.edge]
    near = np.abs(t_ns[~d.edge] - t_ns[500]) < 50_000_000
    # The windows next to the hole widen to reach past it: their bias gain grows by at most
    # (0.75 + 2 hole / window)^2 = 2.3, never to a one-sided fit's ~60.
    assert error[near].max() < 2.5 * error[~near].max()
    assert d.gain_second[~d.edge].max() < 2.5 * np.median(d.gain_second[~d.edge])


def test_ends_use_one_sided_windows_of_the_same_span():
    t_ns = np.arange(200, dtype=np.int64) * 1_000_000
    lo, hi, degree, edge = windows(t_ns, np.array([[0, 200]]), 0.05, 3)
    assert edge.tolist() == [True] * 25 + [False] * 150 + [True] * 25
    assert lo[:25].tolist() == [0] * 25 and hi[:25].tolist() == [51] * 25
    assert lo[-25:].tolist() == [149] * 25 and hi[-25:].tolist() == [200] * 25
    assert (hi[25:175] - lo[25:175]).tolist() == [51] * 150
    assert (degree == 3).all()


@pytest.mark.parametrize('kwargs, message', [
    ({'order': 1}, 'degree >= 2'),
    ({'window': 0.0}, 'must be positive'),
])
def test_bad_settings(kwargs, message):
    t_ns = np.arange(10, dtype=np.int64) * 1_000_000
    with pytest.raises(ValueError, match=message):
        derivatives(t_ns, np.zeros(10), **kwargs)


def test_times_must_increase():
    with pytest.raises(ValueError, match='strictly increasing'):
        derivatives(np.array([0, 2, 2, 3], dtype=np.int64), np.zeros(4))


def test_one_pass_equals_the_separate_ones():
    """
    ``derivatives_and_first`` and ``fit_at`` against ``derivatives``: same weights, same results.

    Jittered stamps, a bridged hole, a gap and a 2-sample run (NaN); relative tolerance 1e-12
    of each column's largest value (the sums are taken in another order).
    """
    t_ns = _times(3000, 0.3, seed=4)
    t_ns[1000:] += 15_000_000  # a hole, bridged
    t_ns[2000:] += 200_000_000  # a gap
    t_ns[2998:] += 200_000_000  # a run of 2 samples: no estimate
    t = t_ns * 1e-9
    rng = np.random.default_rng(5)
    y = np.stack([np.sin(2.0 * t), np.cos(3.0 * t) + 1e-3 * rng.standard_normal(t.size)], 1)
    z = np.stack([2.0 * np.cos(2.0 * t), -3.0 * np.sin(3.0 * t), t ** 2,
                  0.1 * rng.standard_normal(t.size), np.exp(-t)], axis=1)
    alone, alone_z = derivatives(t_ns, y), derivatives(t_ns, z)
    both, first_z = derivatives_and_first(t_ns, y, z)

    def same(a, b):
        assert np.array_equal(np.isnan(a), np.isnan(b))
        scale = np.nanmax(np.abs(a), axis=0)
        assert np.all(np.nanmax(np.abs(a - b), axis=0) <= 1e-12 * scale)

    same(both.first, alone.first)
    same(both.second, alone.second)
    same(both.gain_second, alone.gain_second)
    same(first_z, alone_z.first)
    assert np.isnan(first_z[-2:]).all() and np.isfinite(first_z[:-2]).all()
    assert np.array_equal(both.edge, alone.edge)
    # At a few samples in any order (their windows found alone), as over the whole series.
    at = np.array([2500, 3, 1000, 1999, 2000, 999, 2998, 1500])
    fit = fit_at(t_ns, y, at)
    same(fit.first, alone.first[at])
    same(fit.second, alone.second[at])
    assert np.array_equal(fit.edge, alone.edge[at])
    full = windows(t_ns, alone.segments, alone.window, 3)
    for part, whole in zip(windows(t_ns, alone.segments, alone.window, 3, np.sort(at)), full):
        assert np.array_equal(part, whole[np.sort(at)])


def test_windows_of_some_samples_equal_those_of_all():
    """The full pass (8 parallel chunks walking on) and a sparse one (a walk per sample) agree."""
    rng = np.random.default_rng(6)
    steps = np.round(1e6 * (1 + rng.uniform(-0.4, 0.4, 20_000))).astype(np.int64)
    holes = rng.random(steps.size) < 0.01  # holes up to 60 ms: bridged, or gaps (new runs)
    steps[holes] += rng.integers(1, 60, holes.sum()) * 1_000_000
    t_ns = np.cumsum(steps)
    runs = segments(t_ns, 0.025)
    assert 50 < runs.shape[0] < 150
    at = np.arange(1, t_ns.size, 3)
    for whole, part in zip(windows(t_ns, runs, 0.05, 3), windows(t_ns, runs, 0.05, 3, at)):
        assert np.array_equal(whole[at], part)
