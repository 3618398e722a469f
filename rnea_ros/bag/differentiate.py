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

from numba import njit, prange
import numpy as np

DEFAULT_WINDOW = 0.05  # s
# The default window spans at least this many median sample intervals (low sample rates).
MIN_WINDOW_INTERVALS = 10
DEFAULT_ORDER = 3


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
        _windows(t, runs, int(round(0.5 * window * 1e9)),
                 int(0.5 * h * 1e9) if np.isfinite(h) else 0, order // 2 + 1, at, full,
                 lo, hi, edge)
    count = hi - lo
    degree = np.where(count >= 3, np.minimum(order, count - 1), -1)
    return lo, hi, degree, edge


@njit(cache=True)
def _seek(t, j, x, start, stop, right):
    """
    Move j (start <= j <= stop) to the first index whose time is >= x (> x if right).

    Walks from j: amortised O(1) when x moves little between calls.
    """
    if right:
        while j > start and t[j - 1] > x:
            j -= 1
        while j < stop and t[j] <= x:
            j += 1
    else:
        while j > start and t[j - 1] >= x:
            j -= 1
        while j < stop and t[j] < x:
            j += 1
    return j


@njit(cache=True, parallel=True)
def _windows(t, runs, half_ns, tolerance, side, at, full, lo, hi, edge):
    """
    Fill lo, hi, edge of the samples ``at`` (sorted; all if ``full``), run by run.

    The rule of the module docstring, in 8 parallel chunks of ``at``. Every search walks from
    where the previous sample's ended (``full``) or from the sample itself (a sparse ``at``,
    and the first sample of a chunk or a run), which finds the same index.
    """
    reach = 3 * half_ns // 4
    span = 2 * half_ns
    chunks = 8
    size = (at.size + chunks - 1) // chunks
    for chunk in prange(chunks):
        row = chunk * size
        last = min(at.size, row + size)
        if row >= last:
            continue
        r = np.searchsorted(runs[:, 1], at[row], side='right')
        while row < last:
            start, stop = runs[r, 0], runs[r, 1]
            r += 1
            if at[row] >= stop:
                continue
            first_t, last_t = t[start], t[stop - 1]
            # One-sided windows of the same span from (to) the segment's end sample, holding
            # at least 2 side + 1 samples.
            start_hi = min(max(_seek(t, start, first_t + span, start, stop, True),
                               start + 2 * side + 1), stop)
            end_lo = max(min(_seek(t, stop, last_t - span, start, stop, False),
                             stop - 2 * side - 1), start)
            pl = pr = a = b = at[row]
            while row < last and at[row] < stop:
                i = at[row]
                if not full:
                    pl = pr = a = b = i
                ti = t[i]
                near_start = i - side < start
                near_end = i + side >= stop
                half = half_ns
                if not (near_start or near_end):
                    pl = _seek(t, pl, ti - reach, start, stop, True)
                    pr = _seek(t, pr, ti + reach, start, stop, False)
                    left = min(pl - 1, i - side)
                    right = max(pr, i + side)
                    if left < start:
                        near_start = True
                    if right >= stop:
                        near_end = True
                    if not (near_start or near_end):
                        half = max(half, ti - t[left], t[right] - ti)
                if ti - half < first_t - tolerance:
                    near_start = True
                if ti + half > last_t + tolerance:
                    near_end = True
                edge[row] = near_start or near_end
                if near_start and near_end:
                    lo[row], hi[row] = start, stop
                elif near_start:
                    lo[row], hi[row] = start, start_hi
                elif near_end:
                    lo[row], hi[row] = end_lo, stop
                else:
                    a = _seek(t, a, ti - half, start, stop, False)
                    b = _seek(t, b, ti + half, start, stop, True)
                    lo[row], hi[row] = a, b
                row += 1


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
        _savitzky_golay(times_ns, values, others, np.arange(n), lo, hi, degree, none, first,
                        second, others_first, gain_first, gain_second, np.zeros(0),
                        np.zeros(0), np.zeros(0))
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
        _savitzky_golay(times_ns, values, np.zeros((values.shape[0], 0)), at, lo, hi, degree,
                        value, first, second, np.zeros((size, 0)), np.empty(size),
                        np.empty(size), leverage, noise_first, noise_second)
    return Fit(at, value, first, second, leverage, noise_first, noise_second, edge)


@njit(cache=True, parallel=True)
def _savitzky_golay(t, y, z, at, lo, hi, degree, d0, d1, d2, dz, g1, g2, leverage, n1, n2):
    """
    Per-sample least-squares polynomial fit at the samples ``at``; see the module docstring.

    Row k: the sample at[k], its window [lo[k], hi[k]) and degree[k]. Writes row k of d1, d2
    (of the values y), dz (first derivative of the columns z with the same weights), g1, g2;
    d0, leverage, n1, n2 only when d0 has rows.
    """
    count = at.size
    stats = d0.shape[0] > 0
    max_degree = max(2, degree.max())
    longest = max(1, (hi - lo).max())
    chunks = 8
    size = (count + chunks - 1) // chunks
    for chunk in prange(chunks):
        gram = np.empty((max_degree + 1, max_degree + 1))
        rhs = np.empty((3, max_degree + 1))
        power = np.empty(2 * max_degree + 2)
        weights = np.empty((4, longest))
        for row in range(chunk * size, min(count, (chunk + 1) * size)):
            p = degree[row]
            if p < 0:
                d1[row, :] = np.nan
                d2[row, :] = np.nan
                dz[row, :] = np.nan
                g1[row] = np.nan
                g2[row] = np.nan
                if stats:
                    d0[row, :] = np.nan
                    leverage[row] = np.nan
                    n1[row] = np.nan
                    n2[row] = np.nan
                continue
            i = at[row]
            start = lo[row]
            width = hi[row] - start
            g1[row], g2[row], own = _weights(t, i, start, width, p, gram, rhs, power, weights,
                                             stats)
            _apply(y, start, width, weights, d1, d2, row, True)
            _apply(z, start, width, weights, dz, dz, row, False)
            if stats:
                _apply(y, start, width, weights[2:], d0, d0, row, False)
                leverage[row] = own
                square1 = 0.0
                square2 = 0.0
                for k in range(width):
                    square1 += weights[0, k] * weights[0, k]
                    square2 += weights[1, k] * weights[1, k]
                n1[row] = np.sqrt(square1)
                n2[row] = np.sqrt(square2)


@njit(cache=True)
def _weights(t, i, start, width, p, gram, rhs, power, weights, stats):
    """
    Fill weights[0, 1, 2][:width]: the first, second derivative and value weights at t[i].

    Of the degree-p fit over the samples start..start + width - 1 (weights[3]: scratch).
    Returns the error gains of the first and second derivatives and the value weight of
    sample i (its leverage).
    """
    ti = t[i]
    # Local time scaled to [-1, 1] keeps the normal equations well conditioned.
    scale = max(ti - t[start], t[start + width - 1] - ti) * 1e-9
    inverse = 1.0 / scale
    # gram[r, c] = sum_j u_j^(r + c): accumulate the power sums once.
    if p == 3:
        s1 = s2 = s3 = s4 = s5 = s6 = 0.0
        for k in range(width):
            u = (t[start + k] - ti) * 1e-9 * inverse
            weights[3, k] = u
            u2 = u * u
            u3 = u2 * u
            s1 += u
            s2 += u2
            s3 += u3
            s4 += u2 * u2
            s5 += u2 * u3
            s6 += u3 * u3
        _solve_cubic(float(width), s1, s2, s3, s4, s5, s6, rhs)
    else:
        power[:2 * p + 1] = 0.0
        for k in range(width):
            u = (t[start + k] - ti) * 1e-9 * inverse
            term = 1.0
            for e in range(2 * p + 1):
                power[e] += term
                term *= u
        for r in range(p + 1):
            for c in range(p + 1):
                gram[r, c] = power[r + c]
        # Rows 1, 2 and 0 of gram^-1 (it is symmetric): solve gram z = e1, e2, e0.
        rhs[:, :p + 1] = 0.0
        rhs[0, 1] = 1.0
        rhs[1, 2] = 1.0
        rhs[2, 0] = 1.0
        _solve(gram, rhs, p + 1, 3)
    # Per sample: w1 = sum_k rhs[0, k] u^k / scale, w2 = 2 sum_k rhs[1, k] u^k / scale^2.
    for k in range(p + 1):
        rhs[0, k] *= inverse
        rhs[1, k] *= 2.0 * inverse * inverse
    factorial = 1.0
    scale_power = 1.0
    for e in range(2, p + 2):
        factorial *= e
    for e in range(p + 1):
        scale_power *= scale
    # |tau|^(p+1) / (p+1)! = |u|^(p+1) scale^(p+1) / (p+1)!
    remainder_scale = scale_power / factorial
    bound1 = 0.0
    bound2 = 0.0
    own = 0.0
    if p == 3:
        a0, a1, a2, a3 = rhs[0, 0], rhs[0, 1], rhs[0, 2], rhs[0, 3]
        b0, b1, b2, b3 = rhs[1, 0], rhs[1, 1], rhs[1, 2], rhs[1, 3]
        for k in range(width):
            u = weights[3, k]
            w1 = a0 + u * (a1 + u * (a2 + u * a3))
            w2 = b0 + u * (b1 + u * (b2 + u * b3))
            weights[0, k] = w1
            weights[1, k] = w2
            u2 = u * u
            u4 = u2 * u2
            bound1 += abs(w1) * u4
            bound2 += abs(w2) * u4
        bound1 *= remainder_scale
        bound2 *= remainder_scale
    else:
        for k in range(width):
            u = (t[start + k] - ti) * 1e-9 * inverse
            w1 = rhs[0, p]
            w2 = rhs[1, p]
            for e in range(p - 1, -1, -1):
                w1 = rhs[0, e] + u * w1
                w2 = rhs[1, e] + u * w2
            weights[0, k] = w1
            weights[1, k] = w2
            remainder = abs(u ** (p + 1)) * remainder_scale
            bound1 += abs(w1) * remainder
            bound2 += abs(w2) * remainder
    if stats:
        for k in range(width):
            u = (t[start + k] - ti) * 1e-9 * inverse
            w0 = rhs[2, p]
            for e in range(p - 1, -1, -1):
                w0 = rhs[2, e] + u * w0
            weights[2, k] = w0
            if start + k == i:
                own = w0
    return bound1, bound2, own


@njit(cache=True)
def _solve_cubic(s0, s1, s2, s3, s4, s5, s6, rhs):
    """
    Rows 1, 2 and 0 of the inverse of the 4 x 4 Hankel matrix of s0..s6, in rhs[0, 1, 2].

    The normal equations of the cubic fit: symmetric positive definite, so an LDL^T
    factorisation without pivoting is stable (what the general ``_solve`` does in ~3 times
    the time, with pivoting and loops over arrays).
    """
    d0 = s0
    l10 = s1 / d0
    l20 = s2 / d0
    l30 = s3 / d0
    d1 = s2 - l10 * s1
    l21 = (s3 - l20 * s1) / d1
    l31 = (s4 - l30 * s1) / d1
    d2 = s4 - l20 * s2 - l21 * l21 * d1
    l32 = (s5 - l30 * s2 - l31 * l21 * d1) / d2
    d3 = s6 - l30 * s3 - l31 * l31 * d1 - l32 * l32 * d2
    for row, unit in ((0, 1), (1, 2), (2, 0)):
        # L y = e_unit, then D z = y, then L^T x = z.
        y0 = 1.0 if unit == 0 else 0.0
        y1 = (1.0 if unit == 1 else 0.0) - l10 * y0
        y2 = (1.0 if unit == 2 else 0.0) - l20 * y0 - l21 * y1
        y3 = -l30 * y0 - l31 * y1 - l32 * y2
        x3 = y3 / d3
        x2 = y2 / d2 - l32 * x3
        x1 = y1 / d1 - l21 * x2 - l31 * x3
        x0 = y0 / d0 - l10 * x1 - l20 * x2 - l30 * x3
        rhs[row, 0], rhs[row, 1], rhs[row, 2], rhs[row, 3] = x0, x1, x2, x3


@njit(cache=True)
def _apply(y, start, width, weights, first, second, row, both):
    """
    first[row, c] = sum_k weights[0, k] y[start + k, c] (and second[row] with weights[1]).

    Four columns at a time in local sums: independent additions the processor overlaps.
    """
    m = y.shape[1]
    c = 0
    while c + 4 <= m:
        f0 = f1 = f2 = f3 = 0.0
        s0 = s1 = s2 = s3 = 0.0
        for k in range(width):
            w = weights[0, k]
            y0 = y[start + k, c]
            y1 = y[start + k, c + 1]
            y2 = y[start + k, c + 2]
            y3 = y[start + k, c + 3]
            f0 += w * y0
            f1 += w * y1
            f2 += w * y2
            f3 += w * y3
            if both:
                v = weights[1, k]
                s0 += v * y0
                s1 += v * y1
                s2 += v * y2
                s3 += v * y3
        first[row, c], first[row, c + 1], first[row, c + 2], first[row, c + 3] = f0, f1, f2, f3
        if both:
            second[row, c], second[row, c + 1] = s0, s1
            second[row, c + 2], second[row, c + 3] = s2, s3
        c += 4
    while c < m:
        f0 = 0.0
        s0 = 0.0
        for k in range(width):
            f0 += weights[0, k] * y[start + k, c]
            if both:
                s0 += weights[1, k] * y[start + k, c]
        first[row, c] = f0
        if both:
            second[row, c] = s0
        c += 1


@njit(cache=True)
def _solve(a, b, size, systems):
    """
    Solve a x = b[s] for s < systems in place in b.

    Gaussian elimination with partial pivoting on the leading size x size block of a, which
    it overwrites.
    """
    work = a
    for col in range(size):
        pivot = col
        for r in range(col + 1, size):
            if abs(work[r, col]) > abs(work[pivot, col]):
                pivot = r
        if pivot != col:
            for c in range(size):
                work[col, c], work[pivot, c] = work[pivot, c], work[col, c]
            for s in range(systems):
                b[s, col], b[s, pivot] = b[s, pivot], b[s, col]
        for r in range(col + 1, size):
            factor = work[r, col] / work[col, col]
            for c in range(col, size):
                work[r, c] -= factor * work[col, c]
            for s in range(systems):
                b[s, r] -= factor * b[s, col]
    for s in range(systems):
        for r in range(size - 1, -1, -1):
            total = b[s, r]
            for c in range(r + 1, size):
                total -= work[r, c] * b[s, c]
            b[s, r] = total / work[r, r]
