"""
Drift: a joint whose residual (measured - predicted effort) grows from bag to bag.

A residual that grows over weeks is wear, a loose belt, a failing gearbox. For each robot and
joint the series is the per-bag residual RMS over the bag start time (successful bags with
measured effort). Both levels compared are medians, so one odd bag (a payload, a collision)
neither raises nor hides a flag.

- **Own history** (at least ``baseline + recent`` bags, default 5 + 3): the baseline is the
  median of the robot's first ``baseline`` bags; the current level is the median of its last
  ``recent`` bags.
- **Fleet** (fewer bags): the baseline is the median over the bags of the same joint on the
  other robots of the same model (URDF robot name), at least ``baseline`` of them; the current
  level is the median of this robot's last ``recent`` bags (or all of them).
- Otherwise the joint is not checked (method 'insufficient').

The joint is flagged when the current level exceeds the **threshold**
``max(factor x baseline, baseline + floor)``: it grew by the relative ``factor`` (default 1.5)
and by at least the absolute ``floor`` (default 0.2 N·m, or N for prismatic joints: a growth
below that is within the torque noise and model error of typical arm joints). No spread of the
baseline enters the rule: a drift that has already begun during the first bags widens their
scatter and would hide itself.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

FACTOR = 1.5
FLOOR = 0.2
BASELINE_BAGS = 5
RECENT_BAGS = 3


@dataclass(frozen=True)
class Thresholds:
    """The drift rule's parameters (see the module docstring)."""

    factor: float = FACTOR
    floor: float = FLOOR
    baseline_bags: int = BASELINE_BAGS
    recent_bags: int = RECENT_BAGS


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
    The drift check of one (robot, joint).

    ``method``: 'own', 'fleet' or 'insufficient'; ``bags``: residual values in the series;
    ``baseline``, ``current``, ``threshold``: N·m (N); ``ratio``: current / baseline; NaN where
    not checked.
    """

    robot: str
    joint: str
    method: str
    bags: int
    baseline: float
    current: float
    threshold: float
    ratio: float
    flagged: bool


def check(samples: list[Sample], thresholds: Thresholds = Thresholds()) -> list[Check]:
    """Check every (robot, joint) of ``samples`` (non-finite residuals are ignored)."""
    if thresholds.baseline_bags < 1 or thresholds.recent_bags < 1:
        raise ValueError('drift: baseline and recent bag counts must be at least 1')
    series: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    for sample in samples:
        if np.isfinite(sample.rms_residual):
            series[sample.robot, sample.joint].append(sample)
    keys = sorted({(s.robot, s.joint) for s in samples})
    checks = []
    for robot, joint in keys:
        own = sorted(series.get((robot, joint), []), key=lambda s: (s.start_ns, s.bag))
        values = np.array([s.rms_residual for s in own])
        needed = thresholds.baseline_bags + thresholds.recent_bags
        if values.size >= needed:
            reference = values[:thresholds.baseline_bags]
            method = 'own'
        else:
            models = {s.model for s in own}
            reference = np.array([s.rms_residual for (other, name), peers in series.items()
                                  if other != robot and name == joint for s in peers
                                  if s.model in models])
            method = 'fleet' if values.size and reference.size >= thresholds.baseline_bags \
                else 'insufficient'
        if method == 'insufficient':
            nan = float('nan')
            checks.append(Check(robot, joint, method, int(values.size), nan, nan, nan, nan,
                                False))
            continue
        baseline = float(np.median(reference))
        current = float(np.median(values[-thresholds.recent_bags:]))
        threshold = max(thresholds.factor * baseline, baseline + thresholds.floor)
        ratio = current / baseline if baseline > 0 else float('inf')
        checks.append(Check(robot, joint, method, int(values.size), baseline, current,
                            threshold, ratio, current > threshold))
    return checks
