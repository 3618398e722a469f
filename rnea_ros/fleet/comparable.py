"""
Which bags of a robot are compared for drift: those whose motions are alike.

A residual depends on the motion: a moving joint carries its friction and the model's
inertial errors, a still one only its gravity and offset errors. The residual of a still bag
against that of a moving bag says nothing about wear, so drift compares bags of like motions
only. The motion of a bag is, per joint, its RMS speed and the share of samples moving faster
than ``MOVING_SPEED`` (0.03 rad/s or m/s; ``rnea_ros.bag.motion``, summary.json).

The rule: two bags are **alike** when for every joint that both give:

- their RMS speeds, each taken as at least ``MOVING_SPEED`` (two still joints are alike),
  are within a factor ``SPEED_RATIO`` (2) of each other, and
- their moving shares differ by at most ``SHARE_DIFFERENCE`` (0.3: 30 percentage points).

The robot's **usual motion** is that of its reference bag: the bag alike to the most of the
robot's analysed bags (itself included; the earliest of a tie). The bags alike to the
reference are judged; any other bag is **not judged**, with the reason: the joint that differs
and its numbers in both bags. A still bag among moving ones is left out, and so are moving
bags among still ones. The rule is not transitive: two judged bags may differ from each other
by up to twice the tolerances, through the reference.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
import math

import numpy as np

from rnea_ros.bag.motion import MOVING_SPEED
from rnea_ros.fleet.task import Outcome

SPEED_RATIO = 2.0
SHARE_DIFFERENCE = 0.3
PAIR_VALUES = 4_000_000  # memory bound of one block of pairs (x joints)


def rule() -> str:
    """Return the rule in one sentence (fleet.md, report.html)."""
    return ('Only bags of like motions are compared: a bag is judged when, for every joint, '
            f'its RMS speed is within {SPEED_RATIO:g} x that of the usual motion of its robot '
            f'(speeds below {MOVING_SPEED:g} rad/s or m/s counted as {MOVING_SPEED:g}) and its '
            f'share of samples moving faster than {MOVING_SPEED:g} within '
            f'{100 * SHARE_DIFFERENCE:.0f} points of it; the usual motion is that of the bag '
            'alike to the most bags of the robot; any other bag is **not judged**, with '
            'the reason.')


def _speed_unit(effort_unit: str) -> str:
    return 'm/s' if effort_unit == 'N' else 'rad/s'


def difference(bag: Outcome, reference: Outcome) -> str | None:
    """Return how the motion of ``bag`` differs from ``reference`` (one joint), or None."""
    theirs = {joint.joint: joint for joint in reference.joints}
    for mine in bag.joints:
        other = theirs.get(mine.joint)
        if other is None or not all(math.isfinite(x) for x in (
                mine.speed_rms, other.speed_rms, mine.moving_share, other.moving_share)):
            continue
        low, high = sorted(max(x, MOVING_SPEED) for x in (mine.speed_rms, other.speed_rms))
        unit = _speed_unit(mine.unit)
        if high > SPEED_RATIO * low:
            return (f'{mine.joint} RMS speed {mine.speed_rms:.3g} {unit}, there '
                    f'{other.speed_rms:.3g} {unit} (more than {SPEED_RATIO:g} x apart)')
        if abs(mine.moving_share - other.moving_share) > SHARE_DIFFERENCE:
            return (f'{mine.joint} moving {100 * mine.moving_share:.0f} % of the time, there '
                    f'{100 * other.moving_share:.0f} % (more than '
                    f'{100 * SHARE_DIFFERENCE:.0f} points apart)')
    return None


def not_comparable(outcomes: Sequence[Outcome]) -> dict[str, str]:
    """
    Return the bags left out of the drift judgement: bag name -> reason (module docstring).

    Only analysed bags are considered; failed bags are neither judged nor listed here.
    """
    robots: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        if outcome.status == 'ok':
            robots[outcome.robot or ''].append(outcome)
    reasons = {}
    for bags in robots.values():
        bags.sort(key=lambda o: (o.start_ns or 0, o.bag))
        counts = alike_counts(*_motions(bags))
        reference = bags[int(np.argmax(counts))]  # argmax: the earliest of a tie
        for bag in bags:
            reason = difference(bag, reference)
            if reason is not None:
                reasons[bag.bag] = (f'not comparable with {reference.bag} (the usual motion '
                                    f'of the robot): {reason}')
    return reasons


def _motions(bags: Sequence[Outcome]) -> tuple[np.ndarray, np.ndarray]:
    """Return (bags, joints) arrays of RMS speed and moving share, NaN where not given."""
    columns: dict[str, int] = {}
    for bag in bags:
        for joint in bag.joints:
            columns.setdefault(joint.joint, len(columns))
    speed = np.full((len(bags), len(columns)), np.nan)
    share = np.full((len(bags), len(columns)), np.nan)
    for row, bag in enumerate(bags):
        for joint in bag.joints:
            speed[row, columns[joint.joint]] = joint.speed_rms
            share[row, columns[joint.joint]] = joint.moving_share
    return speed, share


def alike_counts(speed: np.ndarray, share: np.ndarray) -> np.ndarray:
    """
    Return, per bag (row), how many bags (itself included) are alike to it.

    ``speed``, ``share``: (bags, joints), NaN where a joint is not given; the rule of
    ``difference``, every pair at once (in blocks of rows: thousands of bags fit in memory).
    """
    count, joints = speed.shape
    with np.errstate(invalid='ignore'):
        speed = np.maximum(speed, MOVING_SPEED)  # NaN stays NaN: the joint is not compared
    block = max(1, PAIR_VALUES // max(count * joints, 1))
    counts = np.zeros(count, np.int64)
    for start in range(0, count, block):
        rows = slice(start, start + block)
        high = np.fmax(speed[rows, None, :], speed[None, :, :])
        low = np.fmin(speed[rows, None, :], speed[None, :, :])
        with np.errstate(invalid='ignore'):
            apart = (high > SPEED_RATIO * low) & np.isfinite(speed[rows, None, :]) \
                & np.isfinite(speed[None, :, :])
            apart |= np.abs(share[rows, None, :] - share[None, :, :]) > SHARE_DIFFERENCE
        counts[rows] = (~apart.any(axis=2)).sum(axis=1)
    return counts
