"""
Long recordings reduced for plotting: min/max envelopes and bucket means (numpy only).

The time axis is cut into ``BUCKETS`` buckets of equal sample count (about one per horizontal
pixel of a wide plot). A line keeps the minimum and maximum of every bucket, in time order
(``envelope``), so every peak stays visible however long the bag; a stacked area keeps each
bucket's mean (``bucket_means``). Inputs of at most ``2 * buckets`` samples are kept as they
are. ``reduce_bag`` does both once for the PNG plots and the HTML report of a bag.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

BUCKETS = 1000


def bucket_starts(n: int, buckets: int = BUCKETS) -> np.ndarray:
    """First sample index of each of at most ``buckets`` equal-count buckets over n samples."""
    return np.unique(np.linspace(0, n, min(n, buckets) + 1).astype(np.int64)[:-1])


def envelope(x: np.ndarray, columns: Mapping[str, np.ndarray], buckets: int = BUCKETS):
    """
    Min/max per bucket of each column, interleaved in time: lines that keep every peak.

    ``x`` (N,) increasing; ``columns`` name -> (N,) or (N, J) values (NaN: not recorded,
    skipped). Returns (x, columns) of 2 * buckets rows (each bucket's start time twice), or
    the input itself when it has no more rows than that. An all-NaN bucket stays NaN (a gap).
    """
    x = np.asarray(x)
    if x.size <= 2 * buckets:
        return x, dict(columns)
    starts = bucket_starts(x.size, buckets)
    out = {}
    with np.errstate(invalid='ignore'):
        for name, values in columns.items():
            values = np.asarray(values, dtype=np.float64)
            pair = np.empty((2 * starts.size,) + values.shape[1:])
            pair[0::2] = np.fmin.reduceat(values, starts, axis=0)  # fmin/fmax skip NaN
            pair[1::2] = np.fmax.reduceat(values, starts, axis=0)
            out[name] = pair
    return np.repeat(x[starts], 2), out


def bucket_means(x: np.ndarray, columns: Mapping[str, np.ndarray], buckets: int = BUCKETS):
    """Mean per bucket of ``x`` and of each (N,) or (N, J) column; short inputs as they are."""
    x = np.asarray(x)
    if x.size <= 2 * buckets:
        return x, dict(columns)
    starts = bucket_starts(x.size, buckets)
    counts = np.diff(np.append(starts, x.size))
    out = {}
    for name, values in columns.items():
        values = np.asarray(values, dtype=np.float64)
        sums = np.add.reduceat(values, starts, axis=0)
        out[name] = sums / counts.reshape((-1,) + (1,) * (values.ndim - 1))
    return np.add.reduceat(x, starts) / counts, out


@dataclass(frozen=True)
class ReducedBag:
    """
    The curves of a bag analysis, reduced once for every picture.

    ``lines``: 'predicted' and, with measured effort, 'measured' and 'residual', each
    (len(line_time), J) envelopes; ``areas``: each term and 'total', (len(area_time), J)
    bucket means. ``samples``: the length of the unreduced recording.
    """

    samples: int
    buckets: int
    line_time: np.ndarray
    lines: dict[str, np.ndarray]
    area_time: np.ndarray
    areas: dict[str, np.ndarray]

    @property
    def reduced(self) -> bool:
        """Whether the curves are envelopes/means rather than every sample."""
        return self.samples > 2 * self.buckets


def reduce_bag(time: np.ndarray, total: np.ndarray, terms: Mapping[str, np.ndarray],
               measured: np.ndarray | None, buckets: int = BUCKETS) -> ReducedBag:
    """Envelopes of the predicted/measured/residual effort and means of the terms (N, J)."""
    lines = {'predicted': total}
    if measured is not None and np.isfinite(measured).any():
        lines['measured'] = measured
        lines['residual'] = measured - total
    line_time, lines = envelope(time, lines, buckets)
    area_time, areas = bucket_means(time, {**terms, 'total': total}, buckets)
    return ReducedBag(int(np.asarray(time).size), buckets, line_time, lines, area_time, areas)
