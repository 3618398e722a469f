"""
Sample times that can be put in order: clock steps, stamps out of order, interleaved motions.

Every path that reads joint_states from a bag (``rnea_bag`` and its ``--observer``, the fleet's
bag task, ``rnea_identify``) builds its series with ``series.joint_series``, which applies both
checks below; none of them can skip them.

- The tolerance of disorder: ``STEP_PERIODS`` median sample periods, at least ``STEP_SECONDS``
  (100 periods, 0.5 s). The period is the median interval of the stamps or of the receive
  times, whichever is shorter (stamps scrambled by a broken sender have no period of their
  own). In the bag's (receive) order, a header stamp that goes back, or jumps forward while
  the receive times do not, by more than that is a step of the sender's clock, or stamps out
  of order (``clock_steps``, ``clock_segment``): an error naming the topic, the message, its
  receive time after the bag start and both stamps (with several, their count: the stamps are
  out of order). Smaller disorder (two publishers, delivery jitter) is sorted by stamp.
- A clock that steps back while the receive clock steps with it (a simulated clock that is
  reset, a logger that records the stamps as receive times) leaves no trace in the times: the
  bag holds two stretches of time with the same stamps, which sorting interleaves into a motion
  that never happened (``interleaved``). Its trace, in blocks of ``STEP_PERIODS`` sorted
  samples: the messages come twice as densely (at least ``DENSER``, 1.5, times the density of
  the sparsest quarter of the blocks) and the positions jump back and forth between the two
  motions (on some joint, the mean step between neighbours exceeds ``ZIGZAG_RANGE``, 5 %, of
  its range of motion over the samples: a smooth motion sampled at twice the rate, or noise at
  rest, steps far less). Consecutive such blocks spanning at least ``STEP_SECONDS`` are
  refused, naming the topic, the first and last message of the stretch and their stamps after
  the bag start. Samples of the two sides cannot be told apart: the way out is a time window
  on one side of the stretch.
"""
from __future__ import annotations

import numpy as np

from rnea_ros.errors import InputError

STEP_PERIODS = 100
STEP_SECONDS = 0.5
DENSER = 1.5
ZIGZAG_RANGE = 0.05


def step_threshold(stamps_ns: np.ndarray, receive_ns: np.ndarray) -> float:
    """Return the tolerance of disorder [ns]: ``STEP_PERIODS`` periods, ``STEP_SECONDS`` least."""
    periods = []
    for times in (stamps_ns, receive_ns):
        d = np.diff(times)
        ahead = d[d > 0]
        if ahead.size:
            periods.append(float(np.median(ahead)))
    period = min(periods) if periods else 0.0
    return max(STEP_PERIODS * period, STEP_SECONDS * 1e9)


def clock_steps(stamps_ns: np.ndarray, receive_ns: np.ndarray) -> np.ndarray:
    """
    Return the indices k where the stamps step between messages k-1 and k (module docstring).

    ``stamps_ns`` and ``receive_ns`` in the bag's (receive) order. A step: the stamp goes back,
    or forward while the receive time does not follow, by more than ``step_threshold``.
    """
    if stamps_ns.size < 2:
        return np.zeros(0, dtype=np.int64)
    threshold = step_threshold(stamps_ns, receive_ns)
    d_stamp = np.diff(stamps_ns)
    excess = d_stamp - np.diff(receive_ns)  # what the stamps did that the receive times did not
    back = (d_stamp < 0) & (excess < -threshold)
    forward = (d_stamp > threshold) & (excess > threshold)
    return np.flatnonzero(back | forward) + 1


def clock_segment(stamps_ns: np.ndarray, receive_ns: np.ndarray, topic: str,
                  window: tuple[int | None, int | None] = (None, None),
                  ways_out: str = '--clock receive', origin_ns: int | None = None) -> slice:
    """
    Return the rows of the one clock segment that holds the receive-time ``window``.

    Raises ``InputError`` for a step inside the window (all of it, without one), naming
    ``topic``, the message (index in ``stamps_ns``; receive time from ``origin_ns``, default
    the first message) and the stamps on either side; for several, their count.
    """
    lo, hi = window
    first, last = 0, stamps_ns.size
    inside = []
    for k in clock_steps(stamps_ns, receive_ns).tolist():
        if lo is not None and receive_ns[k - 1] < lo:
            first = k  # the margin read before the window: another segment
        elif hi is not None and receive_ns[k] >= hi:
            last = min(last, k)
        else:
            inside.append(k)
    if not inside:
        return slice(first, last)
    k = inside[0]
    before, after = int(stamps_ns[k - 1]), int(stamps_ns[k])
    jump = (after - before) * 1e-9
    received = (int(receive_ns[k]) - int(receive_ns[k - 1])) * 1e-9
    origin = int(receive_ns[0]) if origin_ns is None else int(origin_ns)
    at = (int(receive_ns[k]) - origin) * 1e-9
    what = (f'the header clock steps {"back" if jump < 0 else "forward"} {abs(jump):.6g} s'
            if len(inside) == 1 else
            f'the header stamps are out of order by more than '
            f'{step_threshold(stamps_ns, receive_ns) * 1e-9:.6g} s at {len(inside)} messages, '
            f'the first {"back" if jump < 0 else "forward"} {abs(jump):.6g} s')
    raise InputError(
        f'{topic}: {what} at message {k}, received {at:.6f} s after the bag start '
        f'(stamp {_seconds(after)} after {_seconds(before)}, received {received:.6g} s '
        f'later): sorted by stamp the two sides would interleave; use {ways_out}')


def interleaved(times_ns: np.ndarray, position: np.ndarray, names, topic: str,
                messages: np.ndarray, origin_ns: int, one_side: str) -> None:
    """
    Refuse samples where two stretches of a recording share their stamps (module docstring).

    ``times_ns`` (N,) sorted sample times, ``position`` (N, J) their positions (finite, or NaN
    in a joint no message carries), ``names`` the J joints; ``messages`` (N,) the index of
    each sample's message in the bag's order; ``origin_ns`` the bag start; ``one_side`` the
    options that analyse one side only, for the error.
    """
    blocks = times_ns.size // STEP_PERIODS
    if blocks < 2 or not position.shape[1]:
        return
    rows = blocks * STEP_PERIODS
    times = times_ns[:rows].reshape(blocks, STEP_PERIODS)
    density = (STEP_PERIODS - 1) / np.maximum(times[:, -1] - times[:, 0], 1).astype(float)
    dense = density >= DENSER * np.percentile(density, 25)
    if not dense.any():
        return
    with np.errstate(invalid='ignore'):
        span = np.nanpercentile(position, 99, axis=0) - np.nanpercentile(position, 1, axis=0)
        step = np.mean(np.abs(np.diff(position[:rows].reshape(blocks, STEP_PERIODS, -1),
                                      axis=1)), axis=1)
        turns = dense[:, None] & (step > ZIGZAG_RANGE * span) & (span > 0)
    flagged = turns.any(axis=1)
    start = 0
    while start < blocks:
        if not flagged[start]:
            start += 1
            continue
        stop = start
        while stop + 1 < blocks and flagged[stop + 1]:
            stop += 1
        first, last = start * STEP_PERIODS, (stop + 1) * STEP_PERIODS - 1
        if times_ns[last] - times_ns[first] >= STEP_SECONDS * 1e9:
            j = int(np.argmax(turns[start:stop + 1].sum(axis=0)))
            b = start + int(np.argmax(turns[start:stop + 1, j]))
            raise InputError(
                f'{topic}: two stretches of the recording share the stamps from message '
                f'{int(messages[first])}, stamped {(int(times_ns[first]) - origin_ns) * 1e-9:.6f}'
                f' s after the bag start, to message {int(messages[last])}, stamped '
                f'{(int(times_ns[last]) - origin_ns) * 1e-9:.6f} s: messages '
                f'{density[b] / np.percentile(density, 25):.3g} times as dense as elsewhere, '
                f'{names[j]!r} jumping {step[b, j]:.3g} between neighbours '
                f'({100 * step[b, j] / span[j]:.3g} % of its range of motion): a clock that '
                f'stepped back with the receive times, the two sides interleaved; use '
                f'{one_side}')
        start = stop + 1


def _seconds(ns: int) -> str:
    return f'{ns // 1_000_000_000}.{ns % 1_000_000_000:09d} s'
