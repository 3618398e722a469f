"""
Regular clock: the logged stamps of a fixed-rate sampler, with their stamp noise smoothed out.

A robot samples its joints on a fixed-rate clock, but the logger may stamp each sample later
and by a varying amount (the driver's thread, the network): such stamp noise is not when the
sample was taken. Over stamps that carry it, finite differences of the positions disagree with
the robot's own velocities (by 20 % RMS on real loggers), and the differentiator turns it into
acceleration noise proportional to the joint's velocity. Where the samples were really taken at
uneven instants (the stamps are the instants), the stamps must be kept as they are.

``regularise`` fits the clock: within each run of samples without a hole (``_holes``: an
interval longer than ``HOLE_INTERVALS`` median intervals across which the stamps' phase against
the median interval steps by more than half an interval), a least-squares line of the stamp
against the sample number over a centred stretch of ``SPAN`` seconds (the whole run if
shorter), the sample's regular time its value there. A hole keeps its length as the two runs'
fitted ends say (no count of the samples dropped is needed, so a wrong count cannot shift the
rest of the log). Runs shorter than ``MIN_RUN`` samples keep their stamps.

Which time base the differentiator uses is decided from the data (``accelerations.choose_clock``):
the regular clock when it lowers the positions' residual noise around the local polynomial fits
(stamp noise shows there as noise proportional to the velocity) by more than ``GAIN``, the stamps
otherwise. On evenly stamped logs both are the same.
"""
from __future__ import annotations

import numpy as np

HOLE_INTERVALS = 1.5
SPAN = 0.5  # s
MIN_RUN = 8
HOLE_SAMPLES = 16
GAIN = 0.9  # the regular clock must bring the residual variance below GAIN x the stamps'


def regularise(times_ns: np.ndarray) -> np.ndarray | None:
    """
    Return the regular clock's times [ns] (int64, N), or None where it cannot be fitted.

    None: fewer than ``MIN_RUN`` samples, no positive median interval, or fitted times that are
    not strictly increasing (a clock that is not regular).
    """
    t = np.asarray(times_ns, dtype=np.int64)
    n = t.size
    if n < MIN_RUN:
        return None
    step = np.diff(t)
    h = float(np.median(step))
    if not h > 0:
        return None
    rel = (t - t[0]).astype(np.float64)
    out = rel.copy()
    breaks = _holes(rel, h) + 1
    edges = np.concatenate([[0], breaks, [n]])
    half = max(int(round(0.5 * SPAN * 1e9 / h)), MIN_RUN)
    for start, stop in zip(edges[:-1], edges[1:]):
        if stop - start >= MIN_RUN:
            out[start:stop] = _local_lines(rel[start:stop], half)
    regular = t[0] + np.round(out).astype(np.int64)
    if np.any(np.diff(regular) <= 0):
        return None
    return regular


def _holes(rel: np.ndarray, h: float) -> np.ndarray:
    """
    Return the indices i where samples were dropped between i and i + 1.

    A candidate is an interval longer than ``HOLE_INTERVALS`` h; it is a hole when the median
    of t_j - h j over the ``HOLE_SAMPLES`` samples after it exceeds that over the samples
    before it by more than h / 2 (a stamp noise large enough to make one interval long does not
    move the medians).
    """
    n = rel.size
    candidates = np.flatnonzero(np.diff(rel) > HOLE_INTERVALS * h)
    phase = rel - h * np.arange(n)
    holes = []
    for i in candidates.tolist():
        before = phase[max(0, i - HOLE_SAMPLES + 1):i + 1]
        after = phase[i + 1:i + 1 + HOLE_SAMPLES]
        if np.median(after) - np.median(before) > 0.5 * h:
            holes.append(i)
    return np.array(holes, dtype=np.int64)


def _local_lines(y: np.ndarray, half: int) -> np.ndarray:
    """
    Per sample i, the least-squares line of y against the index over i +- half, at i.

    Inside the run that is the mean of y over the stretch (a centred stretch); near its ends
    the stretch keeps its length and the end's own line is used. y is detrended by the run's
    line first, so that the running sums stay small.
    """
    n = y.size
    index = np.arange(n, dtype=np.float64)
    trend = np.polynomial.polynomial.Polynomial.fit(index, y, 1)
    r = y - trend(index)
    width = min(2 * half + 1, n)
    out = np.empty(n)
    sums = np.concatenate([[0.0], np.cumsum(r)])
    inner = np.arange(half, n - half)
    out[inner] = (sums[inner + half + 1] - sums[inner - half]) / (2 * half + 1)
    for lo, at in ((0, index[:half]), (n - width, index[max(n - half, half):])):
        line = np.polynomial.polynomial.Polynomial.fit(index[lo:lo + width], r[lo:lo + width], 1)
        out[at.astype(np.int64)] = line(at)
    return out + trend(index)
