"""
Column statistics of long (N, J) recordings in one compiled pass per array (numba).

The summary and the plot reductions of a one-hour 1 kHz bag read each (N, J) array once here,
instead of one numpy pass (and often a temporary array) per statistic. ``minus`` gives a
second array of the same shape: the statistics are then those of ``values - minus`` (the
residual, measured - predicted, without an (N, J) temporary). Sums run in sample order, as
``np.add.reduceat`` adds; whole-column sums of squares may differ from numpy's pairwise or
vectorised order in the last bits (~1e-15 relative).
"""
from __future__ import annotations

from typing import NamedTuple

from numba import njit
import numpy as np


class Moments(NamedTuple):
    """
    Per column of an (N, J) array and per row window ``starts`` (W windows).

    ``sum_squares``/``count`` over finite values; ``peak`` max |x| over finite values (-1 if
    none); ``argmax`` the first index of max |x| as ``np.argmax(np.abs(x), axis=0)`` gives it
    (the first NaN if any); ``window_sum_squares``/``window_count`` (W, J) over finite values;
    ``window_peak`` (W, J) max |x| as ``np.maximum.reduceat`` gives it (NaN propagates).
    """

    sum_squares: np.ndarray
    count: np.ndarray
    peak: np.ndarray
    argmax: np.ndarray
    window_sum_squares: np.ndarray
    window_count: np.ndarray
    window_peak: np.ndarray


class Buckets(NamedTuple):
    """Per row bucket (B, J): min and max skipping NaN (NaN if all NaN) and the plain sum."""

    low: np.ndarray
    high: np.ndarray
    sums: np.ndarray


@njit(cache=True, nogil=True)
def _moments(values, minus, subtract, starts):
    n, m = values.shape
    w = starts.size
    sum_squares = np.zeros(m)
    count = np.zeros(m, np.int64)
    peak = np.full(m, -1.0)
    best = np.full(m, -1.0)  # max |x| for argmax; NaN once a NaN was seen
    argmax = np.zeros(m, np.int64)
    window_sum_squares = np.zeros((w, m))
    window_count = np.zeros((w, m), np.int64)
    window_peak = np.zeros((w, m))
    for k in range(w):
        end = starts[k + 1] if k + 1 < w else n
        first = True
        for i in range(starts[k], end):
            for j in range(m):
                x = values[i, j] - minus[i, j] if subtract else values[i, j]
                size = abs(x)
                if first:
                    window_peak[k, j] = size
                elif not size <= window_peak[k, j]:  # a NaN wins, as in np.maximum
                    if not np.isnan(window_peak[k, j]):
                        window_peak[k, j] = size
                if np.isnan(size):
                    if not np.isnan(best[j]):
                        best[j] = size
                        argmax[j] = i
                    continue
                if size > best[j]:
                    best[j] = size
                    argmax[j] = i
                if size < np.inf:
                    square = x * x
                    sum_squares[j] += square
                    count[j] += 1
                    window_sum_squares[k, j] += square
                    window_count[k, j] += 1
                    if size > peak[j]:
                        peak[j] = size
            first = False
    return sum_squares, count, peak, argmax, window_sum_squares, window_count, window_peak


def moments(values: np.ndarray, minus: np.ndarray | None = None,
            starts: np.ndarray | None = None) -> Moments:
    """``Moments`` of (N, J) ``values`` (minus ``minus``), windows from rows ``starts``."""
    values = np.asarray(values, dtype=np.float64)
    starts = np.zeros(1 if values.shape[0] else 0, np.int64) if starts is None \
        else np.asarray(starts, dtype=np.int64)
    return Moments(*_moments(values, values if minus is None else np.asarray(minus, np.float64),
                             minus is not None, starts))


@njit(cache=True, nogil=True)
def _buckets(values, minus, subtract, starts):
    n, m = values.shape
    b = starts.size
    low = np.full((b, m), np.nan)
    high = np.full((b, m), np.nan)
    sums = np.zeros((b, m))
    for k in range(b):
        end = starts[k + 1] if k + 1 < b else n
        for i in range(starts[k], end):
            for j in range(m):
                x = values[i, j] - minus[i, j] if subtract else values[i, j]
                if i == starts[k]:
                    sums[k, j] = x
                else:
                    sums[k, j] += x
                if not np.isnan(x):
                    if not x >= low[k, j]:  # NaN (nothing yet) or smaller
                        low[k, j] = x
                    if not x <= high[k, j]:
                        high[k, j] = x
    return low, high, sums


def buckets(values: np.ndarray, starts: np.ndarray, minus: np.ndarray | None = None) -> Buckets:
    """
    Min, max and sum of each bucket of rows of (N, J) ``values`` (minus ``minus``).

    The same numbers as ``np.fmin.reduceat``, ``np.fmax.reduceat`` and ``np.add.reduceat``
    over ``starts`` (increasing, the first 0).
    """
    values = np.asarray(values, dtype=np.float64)
    return Buckets(*_buckets(values, values if minus is None else np.asarray(minus, np.float64),
                             minus is not None, np.asarray(starts, dtype=np.int64)))
