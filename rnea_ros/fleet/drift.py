"""
Drift: a joint whose residual (measured - predicted effort) grows from bag to bag.

A residual that grows over weeks is wear, a loose belt, a failing gearbox. For each robot and
joint the series is the per-bag residual RMS over the bag start time (successful bags with
measured effort). Every (robot, joint) gets one of three verdicts:

- **not judged: needs N more bags** - fewer than ``min_bags`` (default 3) bags with measured
  effort; N is the number still missing. Nothing is said about drift.
- **drifting** - the late bags' level is above the early bags' level by more than the bag-to-bag
  scatter explains (one-sided test at the family-wise false-alarm rate ``alpha``, default
  0.05), and by more than the smallest growth worth a look (``factor``, ``floor``).
- **stable** - judged, and not drifting.

The rule, for a series of n >= ``min_bags`` bags in time order:

1. *Groups.* The late group is the last ``min(recent_bags, n // 2)`` bags (default 3), the early
   group the first ``min(baseline_bags, n - late)`` (default 5): 3 bags give 2 + 1, 4 give
   2 + 2, 8 and more give 5 + 3. *baseline* and *current* are the groups' medians, so one odd
   bag (a payload, a collision) of a group of 3 or more neither raises nor hides a flag.
2. *Scatter.* Residual RMS scatters from bag to bag in proportion to its level, so the test works
   on ``log(RMS)``. The scatter ``sigma`` is the median absolute difference between two bags
   of the same group, / (sqrt(2) x 0.6745) (the normal-consistent scale), pooled over the
   robots for each joint name when they give it at least ``JOINT_PAIRS`` (10) such pairs (one
   robot with 8 bags gives 13), else over every judged (robot, joint) of the run (two robots
   with 3 bags each give 16). Differences within a group hold no drift between the groups,
   and the median ignores the few pairs an odd bag or a drifting series spoils. The run-wide
   pool assumes the relative scatter is about the same for every joint.
3. *Statistic.* ``z = log(current / baseline) / (sigma x sqrt(v(early) + v(late)))``, where
   v(m) is the variance of the median of m unit normals (1, 0.5, 0.449, ... by simulation).
4. *p-value.* ``p = P(Z > z x R)``, Z a unit normal and R = (estimated / true sigma) simulated
   for this run's groups (seeded: a re-run gives the same numbers): the Student-t idea for a
   median-based scale, so that a scatter from few pairs widens the test as it should.
5. *Across joints and robots.* Holm's step-down correction over every judged (robot, joint):
   ``p_adjusted`` (Holm-adjusted) <= ``alpha`` keeps the chance of any false alarm in the
   run at most ``alpha`` when no joint drifts and the log-RMS scatter is normal.
6. *Size.* A significant growth is drifting when ``current > threshold = max(factor x
   baseline, baseline + floor)`` (default 1.2 and 0.2 N·m, or N for prismatic joints): at
   least 20 % and more than the torque noise and model error of typical arm joints.

With 3 bags the late group is one bag: a single odd last bag cannot be told from a change;
the next bag tells.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
import math

import numpy as np
from scipy.special import ndtr

FACTOR = 1.2
FLOOR = 0.2
BASELINE_BAGS = 5
RECENT_BAGS = 3
MIN_BAGS = 3
ALPHA = 0.05
# The bounds of the options (rnea_fleet --drift-*): a growth, a false-alarm rate, bag counts.
FACTOR_BOUNDS = (1.0, 1000.0)
FLOOR_BOUNDS = (0.0, 1e6)  # N m or N
ALPHA_BOUNDS = (1e-9, 0.5)
BAGS_BOUNDS = 100_000  # the most bags of a baseline, a current level or a judgement
DRIFTING = 'drifting'
STABLE = 'stable'
NOT_JUDGED = 'not judged'
# Normal-consistent scale of the absolute difference of two values: sqrt(2) x Phi^-1(0.75).
PAIR_SCALE = math.sqrt(2.0) * 0.6744897501960817
SIMULATIONS = 1000  # draws of the scatter estimate's ratio to the truth (fewer in huge runs)
SIMULATED_VALUES = 4_000_000  # memory bound of one simulation batch
SEED = 19
JOINT_PAIRS = 10  # within-group pairs a joint name needs for a scatter of its own


@dataclass(frozen=True)
class Thresholds:
    """The drift rule's parameters (see the module docstring)."""

    factor: float = FACTOR
    floor: float = FLOOR
    baseline_bags: int = BASELINE_BAGS
    recent_bags: int = RECENT_BAGS
    alpha: float = ALPHA
    min_bags: int = MIN_BAGS


@dataclass(frozen=True)
class Sample:
    """One bag's residual RMS of one joint."""

    robot: str
    model: str
    joint: str
    start_ns: int
    bag: str
    rms_residual: float


@dataclass(frozen=True)
class Check:
    """
    The drift verdict of one (robot, joint).

    ``verdict``: 'drifting', 'stable' or 'not judged: needs N more bag(s)'; ``bags``: bags with
    a residual; ``needed``: bags still missing (0 when judged); ``baseline``, ``current``,
    ``threshold``: N·m (N); ``ratio``: current / baseline; ``statistic``: z; ``p_value``,
    ``p_adjusted`` (Holm), ``alpha``: the false-alarm rate; ``scatter``: the pooled bag-to-bag
    scatter of log RMS. NaN where not judged.
    """

    robot: str
    joint: str
    verdict: str
    bags: int
    needed: int
    baseline: float
    current: float
    threshold: float
    ratio: float
    statistic: float
    p_value: float
    p_adjusted: float
    alpha: float
    scatter: float

    @property
    def flagged(self) -> bool:
        """Tell whether the joint was judged drifting."""
        return self.verdict == DRIFTING

    @property
    def judged(self) -> bool:
        """Tell whether a verdict was given (drifting or stable)."""
        return self.needed == 0


def not_judged(needed: int) -> str:
    """Return the verdict of a joint that lacks ``needed`` bags."""
    return f'{NOT_JUDGED}: needs {needed} more bag{"s" if needed != 1 else ""}'


def groups(bags: int, thresholds: Thresholds) -> tuple[int, int]:
    """Return the sizes of the early and the late group of a series of ``bags`` bags."""
    late = min(thresholds.recent_bags, bags // 2)
    return min(thresholds.baseline_bags, bags - late), late


@lru_cache(maxsize=None)
def median_variance(size: int) -> float:
    """Return the variance of the median of ``size`` unit normals (simulated, seeded)."""
    if size <= 2:
        return 1.0 / size
    draws = np.random.default_rng(SEED).standard_normal((200_000, size))
    return float(np.var(np.median(draws, axis=1)))


def scale_ratios(sizes: list[int], rng: np.random.Generator) -> np.ndarray:
    """
    Simulate (pooled scatter estimate / true scatter) for groups of ``sizes`` bags.

    Unit normal log-RMS values in groups of the given sizes, the estimate of the module
    docstring (median absolute within-group difference / ``PAIR_SCALE``), repeated.
    """
    counts = Counter(size for size in sizes if size >= 2)
    pairs = sum(n * size * (size - 1) // 2 for size, n in counts.items())
    draws = int(np.clip(SIMULATED_VALUES // max(pairs, 1), 50, SIMULATIONS))
    differences = []
    for size, n in sorted(counts.items()):
        values = rng.standard_normal((draws, n, size))
        first, second = np.triu_indices(size, 1)
        differences.append(np.abs(values[..., first] - values[..., second]).reshape(draws, -1))
    return np.median(np.concatenate(differences, axis=1), axis=1) / PAIR_SCALE


def holm(p_values: np.ndarray) -> np.ndarray:
    """Return Holm's step-down adjusted p-values (family-wise error rate)."""
    count = p_values.size
    order = np.argsort(p_values, kind='stable')
    steps = np.maximum.accumulate((count - np.arange(count)) * p_values[order])
    adjusted = np.empty(count)
    adjusted[order] = np.minimum(steps, 1.0)
    return adjusted


def _validate(thresholds: Thresholds) -> None:
    if thresholds.min_bags < 3:
        raise ValueError('drift: the minimum number of bags must be at least 3 (the scatter '
                         f'needs two early bags), got {thresholds.min_bags}')
    if thresholds.baseline_bags < 2 or thresholds.recent_bags < 1:
        raise ValueError('drift: the baseline bags must be at least 2 and the recent bags at '
                         f'least 1, got {thresholds.baseline_bags} and '
                         f'{thresholds.recent_bags}')
    if not 0.0 < thresholds.alpha < 1.0:
        raise ValueError(f'drift: alpha must be between 0 and 1, got {thresholds.alpha:g}')


def check(samples: list[Sample], thresholds: Thresholds = Thresholds()) -> list[Check]:
    """Judge every (robot, joint) of ``samples`` (non-finite or non-positive RMS ignored)."""
    _validate(thresholds)
    series: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    for sample in samples:
        if np.isfinite(sample.rms_residual) and sample.rms_residual > 0:
            series[sample.robot, sample.joint].append(sample)
    keys = sorted({(s.robot, s.joint) for s in samples})
    judged = {}  # key -> (early values, late values)
    for key in keys:
        own = sorted(series.get(key, []), key=lambda s: (s.start_ns, s.bag))
        values = np.array([s.rms_residual for s in own])
        if values.size >= thresholds.min_bags:
            early, late = groups(values.size, thresholds)
            judged[key] = (values[:early], values[values.size - late:], values.size)
    tests = _test(judged)
    keys_judged = list(judged)
    adjusted = dict(zip(keys_judged, holm(np.array([tests[k][3] for k in keys_judged]))))
    checks = []
    nan = float('nan')
    for key in keys:
        robot, joint = key
        if key not in judged:
            count = len(series.get(key, []))
            needed = thresholds.min_bags - count
            checks.append(Check(robot, joint, not_judged(needed), count, needed, nan, nan, nan,
                                nan, nan, nan, nan, thresholds.alpha, nan))
            continue
        baseline, current, statistic, p_value, scatter = tests[key]
        threshold = max(thresholds.factor * baseline, baseline + thresholds.floor)
        p_adjusted = float(adjusted[key])
        drifting = p_adjusted <= thresholds.alpha and current > threshold
        checks.append(Check(robot, joint, DRIFTING if drifting else STABLE,
                            judged[key][2], 0, baseline, current, threshold,
                            current / baseline, statistic, p_value, p_adjusted,
                            thresholds.alpha, scatter))
    return checks


def _pairs(values: np.ndarray) -> np.ndarray:
    """Return the absolute differences of log RMS between every two bags of a group."""
    logs = np.log(values)
    first, second = np.triu_indices(logs.size, 1)
    return np.abs(logs[first] - logs[second])


def _scopes(keys: list[tuple[str, str]], pair_counts: list[int]) -> dict:
    """Map each (robot, joint) to the scope of its scatter: its joint name, or the run (None)."""
    per_joint: Counter = Counter()
    for (_, joint), count in zip(keys, pair_counts):
        per_joint[joint] += count
    return {key: key[1] if per_joint[key[1]] >= JOINT_PAIRS else None for key in keys}


def _test(judged: dict) -> dict:
    """Return (baseline, current, z, p, scatter) of every judged (robot, joint)."""
    keys = list(judged)
    pairs = {key: np.concatenate([_pairs(judged[key][0]), _pairs(judged[key][1])])
             for key in keys}
    scope_of = _scopes(keys, [pairs[key].size for key in keys])
    members: dict = defaultdict(list)
    for key in keys:
        members[scope_of[key]].append(key)
    members[None] = keys  # the run's scope pools every judged joint
    scatter, ratios = {}, {}
    for scope in set(scope_of.values()):
        inside = members[scope]
        scatter[scope] = float(np.median(np.concatenate([pairs[k] for k in inside]))) \
            / PAIR_SCALE
        ratios[scope] = scale_ratios([g.size for k in inside for g in judged[k][:2]],
                                     np.random.default_rng(SEED))
    result = {}
    for key in keys:
        early, late, _ = judged[key]
        scope = scope_of[key]
        baseline, current = float(np.median(early)), float(np.median(late))
        change = math.log(current / baseline)
        spread = math.sqrt(median_variance(early.size) + median_variance(late.size))
        if scatter[scope] > 0:
            statistic = change / (scatter[scope] * spread)
            p_value = float(np.mean(ndtr(-statistic * ratios[scope])))
        else:  # identical bags in every group: any growth is beyond the scatter
            statistic = math.copysign(math.inf, change) if change else 0.0
            p_value = 0.0 if change > 0 else 1.0
        result[key] = (baseline, current, statistic, p_value, scatter[scope])
    return result


def headline(checks: list[Check], bags_not_judged: int = 0) -> str:
    """
    Return one sentence saying what was judged, e.g.

    '1 joint drifting, 3 judged stable, 9 not judged (need 1 more bag each)'. A run that
    judged nothing says so ('Nothing judged: ...'), never that no joint drifts.
    ``bags_not_judged``: bags left out, their motion unlike their robot's usual one
    (``rnea_ros.fleet.comparable``): '; 1 bag not judged (motion unlike the usual one of the
    robot)'.
    """
    text = _joint_headline(checks)
    if bags_not_judged:
        text += (f'; {bags_not_judged} bag{"s" if bags_not_judged != 1 else ""} not judged '
                 '(motion unlike the usual one of the robot)')
    return text


def _joint_headline(checks: list[Check]) -> str:
    drifting = sum(c.flagged for c in checks)
    stable = sum(c.verdict == STABLE for c in checks)
    missing = [c.needed for c in checks if not c.judged]
    if not checks:
        return 'Nothing judged: no joint has a residual.'
    need = ''
    if missing:
        low, high = min(missing), max(missing)
        need = (f'need {low} more bag{"s" if low != 1 else ""} each' if low == high
                else f'need {low} to {high} more bags')
    if not (drifting or stable):
        return f'Nothing judged: {_joints(len(missing))} {need}'
    text = f'{_joints(drifting)} drifting, {stable} judged stable'
    return text + (f', {len(missing)} not judged ({need})' if missing else '')


def _joints(count: int) -> str:
    return f'{count} joint{"s" if count != 1 else ""}'
