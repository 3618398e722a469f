"""
Smoothing differentiation of sampled signals: Savitzky-Golay on uneven sample times, with gaps.

Method
------
For each sample i, a polynomial of degree ``order`` (p) is fitted by least squares to the
samples of its window, in the local time tau = t_j - t_i; its value and first and second
derivatives at tau = 0 are the estimates. On evenly spaced samples this is exactly the
Savitzky-Golay filter; on uneven ones each sample gets its own weights.

Windows, holes and gaps
-----------------------
- The window of a sample is a span of time, not a count of samples: the samples within
  ``window``/2 seconds on either side, widened symmetrically (in time) where needed so that each
  side holds at least k = p // 2 + 1 samples and reaches at least 3/4 of the half-window (next
  to a hole: to the first sample past it). ``window`` defaults to 0.05 s, or 10 median sample
  intervals when that is longer (``default_window``: 0.05 s from 200 Hz up, 0.1 s at 100 Hz).
- Holes (dropped samples) shorter than ``max_gap`` are bridged: the fit runs through them, the
  window keeping its span in time (a hole only removes samples from it). ``max_gap`` defaults to
  half the window (``default_max_gap``): up to that, a centred window still sees samples on both
  sides of the hole. A longer interval is a gap: it starts a new segment and no window straddles
  it.
- Never past the data: a sample closer than half a window (or than k samples) to an end of its
  segment cannot have a centred window. It gets a one-sided window of the same span, starting
  (or ending) at the segment's end sample, and is flagged in ``edge``: its error gain is up to
  ~60 times that of a centred window (p = 3), so ``rnea_bag`` leaves such samples out where it
  uses the estimate. A segment shorter than the window is fitted as a whole, with the degree
  lowered to (its length - 1) if needed; a segment of fewer than 3 samples gets NaN derivatives
  (a second derivative needs 3 samples).

Error bound
-----------
The fit is exact on polynomials of degree <= p, so by Taylor's theorem the error of the d-th
derivative estimate at sample i is bounded by::

    |error_d(i)| <= gain_d(i) * max |y^(p+1)| over the window,
    gain_d(i) = sum_j |w_dj| |tau_j|^(p+1) / (p+1)!

with w_dj the weights of the estimate. ``derivatives`` returns both gains. On evenly spaced
samples at interval h with a centred window of half-width m h and p = 3, gain_2 is about
0.077 (m h)^2: 4.8e-5 s^2 for the default 0.05 s window at 1 kHz, so a sinusoid of amplitude A
and angular frequency omega gets an acceleration error below 4.8e-5 * A * omega^4 (2e-3 rad/s^2
for A = 0.5 rad, omega = 3 rad/s). A hole removes samples from the windows around it (more noise
gain) and widens those of the samples next to it: their gain grows by at most
(0.75 + 2 hole / window)^2, 2.4 for a 20 ms hole in a 0.05 s window. At a segment end
(``edge``) it grows up to ~60 times (2.8e-3 s^2 there). White measurement
noise of standard deviation sigma adds sigma * sqrt(sum_j w_dj^2) (``noise_gains``), which the
window length trades against the bias above.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.recording.savgol import find_windows, fit_windows

DEFAULT_WINDOW = 0.05  # s
# The default window spans at least this many median sample intervals (low sample rates).
MIN_WINDOW_INTERVALS = 10
DEFAULT_ORDER = 3
# The automatic choice (``accelerations.choose``): candidates from SHORTEST_WINDOW to
# LONGEST_WINDOW, each 2^(1/3) times the last (three steps double the window).
SHORTEST_WINDOW = 0.02  # s
LONGEST_WINDOW = 0.4  # s
CANDIDATE_STEP = 2.0 ** (1.0 / 3.0)
AUTO = 'auto'


@dataclass(frozen=True)
class Derivatives:
    """
    First and second time derivatives (N, m), their error gains (N,), the segments.

    ``segments`` (K, 2): [start, stop) sample indices of the gap-free segments; ``samples``:
    the window length in samples at the median interval; ``valid`` (N,): False where a segment
    was too short; ``edge`` (N,): the sample's window is one-sided (near a segment end);
    ``window`` and ``max_gap``: the settings used [s].
    """

    first: np.ndarray
    second: np.ndarray
    gain_first: np.ndarray
    gain_second: np.ndarray
    segments: np.ndarray
    samples: int
    valid: np.ndarray
    edge: np.ndarray
    window: float
    max_gap: float


@dataclass(frozen=True)
class Fit:
    """
    The fit at selected samples ``at`` (M,): value, first and second derivative (M, m).

    ``leverage`` (M,): the weight of sample i in its own fitted value (the residual y - value
    has variance sigma^2 (1 - leverage) under white noise of standard deviation sigma);
    ``noise_first``, ``noise_second`` (M,): sqrt(sum_j w_dj^2), the factors from that sigma to
    the standard deviation of each derivative; ``edge`` (M,) as in ``Derivatives``.
    """

    at: np.ndarray
    value: np.ndarray
    first: np.ndarray
    second: np.ndarray
    leverage: np.ndarray
    noise_first: np.ndarray
    noise_second: np.ndarray
    edge: np.ndarray


def median_interval(times_ns: np.ndarray) -> float:
    """Median sample interval in seconds (nan for fewer than 2 samples)."""
    if times_ns.size < 2:
        return float('nan')
    return float(np.median(np.diff(times_ns))) * 1e-9


def default_window(times_ns: np.ndarray) -> float:
    """``DEFAULT_WINDOW``, or ``MIN_WINDOW_INTERVALS`` median intervals when that is longer."""
    h = median_interval(times_ns)
    return max(DEFAULT_WINDOW, MIN_WINDOW_INTERVALS * h) if np.isfinite(h) else DEFAULT_WINDOW


def candidate_windows(times_ns: np.ndarray, longest: float | None = None) -> np.ndarray:
    """
    Return the windows [s] the automatic choice compares: a grid ``CANDIDATE_STEP`` apart.

    The grid holds ``default_window`` (0.05 s from 200 Hz up) and runs from
    ``SHORTEST_WINDOW`` (or ``MIN_WINDOW_INTERVALS`` median intervals when longer) to
    ``LONGEST_WINDOW`` (or 8 times the shortest when longer), capped at ``longest`` (but at
    least the shortest).
    """
    h = median_interval(times_ns)
    anchor = default_window(times_ns)
    shortest = max(SHORTEST_WINDOW, MIN_WINDOW_INTERVALS * h) if np.isfinite(h) \
        else SHORTEST_WINDOW
    top = max(LONGEST_WINDOW, 8 * shortest)
    if longest is not None:
        top = max(min(top, longest), shortest)
    step = np.log(CANDIDATE_STEP)
    low = int(np.ceil(np.log(shortest / anchor) / step - 1e-9))
    high = int(np.floor(np.log(top / anchor) / step + 1e-9))
    grid = anchor * CANDIDATE_STEP ** np.arange(low, max(high, low) + 1)
    return grid


def default_max_gap(window: float) -> float:
    """Half the window: a longer interval between samples splits the fit."""
    return 0.5 * window


def segments(times_ns: np.ndarray, max_gap: float) -> np.ndarray:
    """[start, stop) index pairs of the runs without an interval longer than ``max_gap`` s."""
    n = times_ns.size
    if n == 0:
        return np.zeros((0, 2), dtype=np.int64)
    breaks = np.flatnonzero(np.diff(times_ns) * 1e-9 > max_gap) + 1
    edges = np.concatenate([[0], breaks, [n]]).astype(np.int64)
    return np.stack([edges[:-1], edges[1:]], axis=1)


def settings(diff: Derivatives, order: int) -> dict:
    """
    Describe a ``derivatives`` result for the summary: settings, segments, error gains.

    The gains are those of the samples with a centred window (``rnea_bag`` leaves the others
    out).
    """
    # The samples kept by rnea_bag: centred windows (all, if there are none).
    kept = ~diff.edge if (~diff.edge).any() else np.ones_like(diff.edge)
    gains = diff.gain_second[kept & np.isfinite(diff.gain_second)]
    first = diff.gain_first[kept & np.isfinite(diff.gain_first)]
    return {
        'window': diff.window, 'samples': diff.samples, 'order': order,
        'max_gap': diff.max_gap, 'segments': int(diff.segments.shape[0]),
        'gain_first_median': float(np.median(first)) if first.size else None,
        'gain_second_median': float(np.median(gains)) if gains.size else None,
        'gain_second_max': float(gains.max()) if gains.size else None,
    }


def window_samples(times_ns: np.ndarray, window: float, order: int) -> int:
    """Odd number of samples spanning ``window`` seconds at the median interval, >= order + 1."""
    h = median_interval(times_ns)
    samples = int(round(window / h)) + 1 if np.isfinite(h) and h > 0 else order + 1
    samples = max(samples, order + 1)
    return samples + 1 - samples % 2


def resolve(times_ns: np.ndarray, window: float | None, order: int,
            max_gap: float | None) -> tuple[float, float]:
    """
    Check the settings and fill in the defaults: the (window, max_gap) ``derivatives`` uses.

    Raises ValueError naming the setting that is out of range.
    """
    if order < 2:
        raise ValueError(f'order {order}: a second derivative needs a polynomial degree >= 2')
    window = default_window(times_ns) if window is None else float(window)
    if not window > 0:
        raise ValueError(f'window {window} s: must be positive')
    max_gap = default_max_gap(window) if max_gap is None else float(max_gap)
    if not max_gap > 0:
        raise ValueError(f'max_gap {max_gap} s: must be positive')
    return window, max_gap


def _settings(times_ns, values, window, order, max_gap):
    times_ns = np.ascontiguousarray(times_ns, dtype=np.int64)
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    n = times_ns.size
    if values.shape[0] != n:
        raise ValueError(f'values: {values.shape[0]} rows for {n} sample times')
    window, max_gap = resolve(times_ns, window, order, max_gap)
    if n > 1 and np.any(np.diff(times_ns) <= 0):
        raise ValueError('sample times must be strictly increasing')
    return times_ns, values, window, max_gap


def windows(times_ns: np.ndarray, runs: np.ndarray, window: float, order: int,
            at: np.ndarray | None = None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """
    Per sample: [lo, hi) of its window, the polynomial degree (-1: none) and ``edge``.

    See the module docstring for the rule. With ``at`` (sorted sample indices): the windows of
    those samples only, in that order (the same as the full arrays indexed by ``at``).
    """
    t = times_ns
    n = t.size
    h = median_interval(t)
    full = at is None
    at = np.arange(n) if full else np.ascontiguousarray(at, dtype=np.int64)
    lo = np.zeros(at.size, dtype=np.int64)
    hi = np.zeros(at.size, dtype=np.int64)
    edge = np.zeros(at.size, dtype=np.bool_)
    if at.size:
        find_windows(t, runs, int(round(0.5 * window * 1e9)),
                     int(0.5 * h * 1e9) if np.isfinite(h) else 0, order // 2 + 1, at, full,
                     lo, hi, edge)
    count = hi - lo
    degree = np.where(count >= 3, np.minimum(order, count - 1), -1)
    return lo, hi, degree, edge


def derivatives(times_ns: np.ndarray, values: np.ndarray, window: float | None = None,
                order: int = DEFAULT_ORDER, max_gap: float | None = None) -> Derivatives:
    """
    Savitzky-Golay first and second derivatives of ``values`` (N, m) sampled at ``times_ns``.

    ``times_ns``: (N,) int64 sample times in ns, strictly increasing. ``window`` in seconds
    (default ``default_window``), ``order`` >= 2 the polynomial degree, ``max_gap`` in seconds
    (default ``default_max_gap``); see the module docstring. Units: values per second and per
    second squared.
    """
    return derivatives_and_first(times_ns, values, None, window, order, max_gap)[0]


def derivatives_and_first(times_ns: np.ndarray, values: np.ndarray, others: np.ndarray | None,
                          window: float | None = None, order: int = DEFAULT_ORDER,
                          max_gap: float | None = None) -> tuple[Derivatives, np.ndarray]:
    """
    Run ``derivatives`` on ``values`` and, in the same pass, the first derivative of ``others``.

    ``others`` (N, k) or None: columns sampled at the same times (the velocities), fitted with
    the same weights as ``values`` (the weights depend only on the times), so the first
    derivative of each equals ``derivatives(times_ns, others, ...).first``. Returns the
    ``Derivatives`` of ``values`` and the (N, k) first derivatives of ``others``.
    """
    times_ns, values, window, max_gap = _settings(times_ns, values, window, order, max_gap)
    n = times_ns.size
    others = np.zeros((n, 0)) if others is None else \
        np.ascontiguousarray(others, dtype=np.float64)
    if others.ndim == 1:
        others = others[:, None]
    if others.shape[0] != n:
        raise ValueError(f'others: {others.shape[0]} rows for {n} sample times')
    runs = segments(times_ns, max_gap)
    lo, hi, degree, edge = windows(times_ns, runs, window, order)
    first = np.empty_like(values)
    second = np.empty_like(values)
    others_first = np.empty_like(others)
    gain_first = np.empty(n)
    gain_second = np.empty(n)
    none = np.zeros((0, values.shape[1]))
    if n:
        fit_windows(times_ns, values, others, np.arange(n), lo, hi, degree, none, first,
                    second, others_first, gain_first, gain_second, np.zeros(0), np.zeros(0),
                    np.zeros(0))
    return Derivatives(first, second, gain_first, gain_second, runs,
                       window_samples(times_ns, window, order), degree >= 0, edge, window,
                       max_gap), others_first


def fit_at(times_ns: np.ndarray, values: np.ndarray, at: np.ndarray,
           window: float | None = None, order: int = DEFAULT_ORDER,
           max_gap: float | None = None) -> Fit:
    """Fit as ``derivatives`` does, at the samples ``at`` only, with its noise factors."""
    times_ns, values, window, max_gap = _settings(times_ns, values, window, order, max_gap)
    at = np.ascontiguousarray(at, dtype=np.int64)
    runs = segments(times_ns, max_gap)
    # The windows of the samples ``at`` only (sorted for the walk, then in the given order).
    ordered = np.argsort(at, kind='stable')
    lo, hi, degree, edge = (np.empty(at.size, dtype=np.int64), np.empty(at.size, np.int64),
                            np.empty(at.size, np.int64), np.empty(at.size, np.bool_))
    lo[ordered], hi[ordered], degree[ordered], edge[ordered] = windows(
        times_ns, runs, window, order, at[ordered])
    size = at.size
    value = np.empty((size, values.shape[1]))
    first = np.empty_like(value)
    second = np.empty_like(value)
    leverage, noise_first, noise_second = np.empty(size), np.empty(size), np.empty(size)
    if size:
        fit_windows(times_ns, values, np.zeros((values.shape[0], 0)), at, lo, hi, degree,
                    value, first, second, np.zeros((size, 0)), np.empty(size), np.empty(size),
                    leverage, noise_first, noise_second)
    return Fit(at, value, first, second, leverage, noise_first, noise_second, edge)
