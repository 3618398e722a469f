"""
Smoothing differentiation of sampled signals: Savitzky-Golay on uneven sample times, with gaps.

Method
------
For each sample i, a polynomial of degree ``order`` (p) is fitted by least squares to the
``w`` samples around it (``w`` = the odd number of samples that spans ``window`` seconds at the
median sample interval, at least p + 1), in the local time tau = t_j - t_i; its first and second
derivatives at tau = 0 are the estimates. On evenly spaced samples this is exactly the
Savitzky-Golay filter; on uneven ones each sample gets its own weights. The window is centred
on the sample, and shifted to stay inside its segment near a segment's ends.

Gaps: consecutive samples further apart than ``max_gap`` seconds (default: 5 median intervals)
start a new segment; no window straddles a gap. A segment shorter than the window is fitted as a
whole, with the degree lowered to (its length - 1) if needed; a segment of fewer than 3 samples
gets NaN derivatives (a second derivative needs 3 samples).

Error bound
-----------
The fit is exact on polynomials of degree <= p, so by Taylor's theorem the error of the d-th
derivative estimate at sample i is bounded by::

    |error_d(i)| <= gain_d(i) * max |y^(p+1)| over the window,
    gain_d(i) = sum_j |w_dj| |tau_j|^(p+1) / (p+1)!

with w_dj the weights of the estimate. ``derivatives`` returns both gains. On evenly spaced
samples at interval h with a centred window of half-width m = (w-1)/2 samples and p = 3,
gain_2 is about 0.077 (m h)^2: 4.8e-5 s^2 for the default 0.05 s window (51 samples at 1 kHz),
so a sinusoid of amplitude A and angular frequency omega gets an acceleration error below
4.8e-5 * A * omega^4 (2e-3 rad/s^2 for A = 0.5 rad, omega = 3 rad/s). Near a segment end the
window is one-sided and the gain grows up to ~60 times (2.8e-3 s^2 there). Measurement noise
adds sum_j |w_dj| * noise, which the window length trades against the bias above.
"""
from __future__ import annotations

from dataclasses import dataclass

from numba import njit, prange
import numpy as np

DEFAULT_WINDOW = 0.05  # s
DEFAULT_ORDER = 3
GAP_FACTOR = 5.0


@dataclass(frozen=True)
class Derivatives:
    """
    First and second time derivatives (N, m), their error gains (N,), the segments.

    ``segments`` (K, 2): [start, stop) sample indices of the gap-free segments; ``samples``:
    the window length in samples; ``valid`` (N,): False where a segment was too short.
    """

    first: np.ndarray
    second: np.ndarray
    gain_first: np.ndarray
    gain_second: np.ndarray
    segments: np.ndarray
    samples: int
    valid: np.ndarray


def median_interval(times_ns: np.ndarray) -> float:
    """Median sample interval in seconds (nan for fewer than 2 samples)."""
    if times_ns.size < 2:
        return float('nan')
    return float(np.median(np.diff(times_ns))) * 1e-9


def segments(times_ns: np.ndarray, max_gap: float | None = None) -> np.ndarray:
    """[start, stop) index pairs of the runs without a gap longer than ``max_gap`` seconds."""
    n = times_ns.size
    if n == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if max_gap is None:
        max_gap = GAP_FACTOR * median_interval(times_ns) if n > 1 else np.inf
    breaks = np.flatnonzero(np.diff(times_ns) * 1e-9 > max_gap) + 1
    edges = np.concatenate([[0], breaks, [n]]).astype(np.int64)
    return np.stack([edges[:-1], edges[1:]], axis=1)


def window_samples(times_ns: np.ndarray, window: float, order: int) -> int:
    """Odd number of samples spanning ``window`` seconds, at least order + 1."""
    h = median_interval(times_ns)
    samples = int(round(window / h)) + 1 if np.isfinite(h) and h > 0 else order + 1
    samples = max(samples, order + 1)
    return samples + 1 - samples % 2


def derivatives(times_ns: np.ndarray, values: np.ndarray, window: float = DEFAULT_WINDOW,
                order: int = DEFAULT_ORDER, max_gap: float | None = None) -> Derivatives:
    """
    Savitzky-Golay first and second derivatives of ``values`` (N, m) sampled at ``times_ns``.

    ``times_ns``: (N,) int64 sample times in ns, strictly increasing. ``window`` in seconds,
    ``order`` >= 2 the polynomial degree, ``max_gap`` in seconds (see the module docstring).
    Units: values per second and per second squared.
    """
    times_ns = np.ascontiguousarray(times_ns, dtype=np.int64)
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    n = times_ns.size
    if values.shape[0] != n:
        raise ValueError(f'values: {values.shape[0]} rows for {n} sample times')
    if order < 2:
        raise ValueError(f'order {order}: a second derivative needs a polynomial degree >= 2')
    if window <= 0:
        raise ValueError(f'window {window} s: must be positive')
    if n > 1 and np.any(np.diff(times_ns) <= 0):
        raise ValueError('sample times must be strictly increasing')
    runs = segments(times_ns, max_gap)
    width = window_samples(times_ns, window, order)
    lo = np.zeros(n, dtype=np.int64)
    hi = np.zeros(n, dtype=np.int64)
    degree = np.zeros(n, dtype=np.int64)
    for start, stop in runs:
        length = stop - start
        k = np.arange(start, stop)
        if length >= width:
            first = np.clip(k - width // 2, start, stop - width)
            lo[start:stop], hi[start:stop] = first, first + width
            degree[start:stop] = order
        else:
            lo[start:stop], hi[start:stop] = start, stop
            degree[start:stop] = min(order, length - 1) if length >= 3 else -1
    first = np.empty_like(values)
    second = np.empty_like(values)
    gain_first = np.empty(n)
    gain_second = np.empty(n)
    if n:
        _savitzky_golay(times_ns, values, lo, hi, degree, first, second, gain_first,
                        gain_second)
    return Derivatives(first, second, gain_first, gain_second, runs, width, degree >= 0)


@njit(cache=True, parallel=True)
def _savitzky_golay(t, y, lo, hi, degree, d1, d2, g1, g2):
    """Per-sample least-squares polynomial fit; see the module docstring for the method."""
    n, m = y.shape
    max_degree = max(2, degree.max())
    chunks = 8
    size = (n + chunks - 1) // chunks
    for chunk in prange(chunks):
        gram = np.empty((max_degree + 1, max_degree + 1))
        rhs = np.empty((2, max_degree + 1))
        power = np.empty(2 * max_degree + 2)
        for i in range(chunk * size, min(n, (chunk + 1) * size)):
            p = degree[i]
            if p < 0:
                d1[i, :] = np.nan
                d2[i, :] = np.nan
                g1[i] = np.nan
                g2[i] = np.nan
                continue
            # Local time scaled to [-1, 1] keeps the normal equations well conditioned.
            scale = max(abs(t[lo[i]] - t[i]), abs(t[hi[i] - 1] - t[i])) * 1e-9
            # gram[r, c] = sum_j u_j^(r + c): accumulate the power sums once.
            power[:2 * p + 1] = 0.0
            for j in range(lo[i], hi[i]):
                u = (t[j] - t[i]) * 1e-9 / scale
                term = 1.0
                for k in range(2 * p + 1):
                    power[k] += term
                    term *= u
            for r in range(p + 1):
                for c in range(p + 1):
                    gram[r, c] = power[r + c]
            # Rows 1 and 2 of gram^-1 (it is symmetric): solve gram z = e1, gram z = e2.
            rhs[:, :p + 1] = 0.0
            rhs[0, 1] = 1.0
            rhs[1, 2] = 1.0
            _solve_two(gram, rhs, p + 1)
            d1[i, :] = 0.0
            d2[i, :] = 0.0
            bound1 = 0.0
            bound2 = 0.0
            factorial = 1.0
            scale_power = scale
            for k in range(2, p + 2):
                factorial *= k
                scale_power *= scale
            for j in range(lo[i], hi[i]):
                tau = (t[j] - t[i]) * 1e-9
                u = tau / scale
                basis = 1.0
                w1 = 0.0
                w2 = 0.0
                for k in range(p + 1):
                    w1 += rhs[0, k] * basis
                    w2 += rhs[1, k] * basis
                    basis *= u
                w1 /= scale
                w2 *= 2.0 / (scale * scale)
                for c in range(m):
                    d1[i, c] += w1 * y[j, c]
                    d2[i, c] += w2 * y[j, c]
                # basis is u^(p+1) here: |tau|^(p+1) = |u|^(p+1) scale^(p+1).
                remainder = abs(basis) * scale_power / factorial
                bound1 += abs(w1) * remainder
                bound2 += abs(w2) * remainder
            g1[i] = bound1
            g2[i] = bound2


@njit(cache=True)
def _solve_two(a, b, size):
    """
    Solve a x = b[0] and a x = b[1] in place in b.

    Solve a x = b[0] and a x = b[1] in place in b (Gaussian elimination with partial
    pivoting on the leading size x size block of a, which it overwrites).
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
            for s in range(2):
                b[s, col], b[s, pivot] = b[s, pivot], b[s, col]
        for r in range(col + 1, size):
            factor = work[r, col] / work[col, col]
            for c in range(col, size):
                work[r, c] -= factor * work[col, c]
            for s in range(2):
                b[s, r] -= factor * b[s, col]
    for s in range(2):
        for r in range(size - 1, -1, -1):
            total = b[s, r]
            for c in range(r + 1, size):
                total -= work[r, c] * b[s, c]
            b[s, r] = total / work[r, r]
