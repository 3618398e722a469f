"""
Compiled kernels of ``differentiate``: the window of each sample, the least-squares fits.

``find_windows`` applies the window rule of ``differentiate``'s docstring; ``fit_windows``
computes per sample the weights of the polynomial fit (they depend on the sample times only)
and applies them to any number of value columns. numba, ``cache=True``, no fastmath.
"""
from __future__ import annotations

from numba import njit, prange
import numpy as np


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
def find_windows(t, runs, half_ns, tolerance, side, at, full, lo, hi, edge):
    """
    Fill lo, hi, edge of the samples ``at`` (sorted; all if ``full``), run by run.

    The rule of ``differentiate``'s docstring, in 8 parallel chunks of ``at``. Every search
    walks from where the previous sample's ended (``full``) or from the sample itself (a
    sparse ``at``, and the first sample of a chunk or a run), which finds the same index.
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


@njit(cache=True, parallel=True)
def fit_windows(t, y, z, at, lo, hi, degree, d0, d1, d2, dz, g1, g2, leverage, n1, n2):
    """
    Per-sample least-squares polynomial fit at the samples ``at``; see ``differentiate``.

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
