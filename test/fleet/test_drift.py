"""The drift rule: own history, robustness to one odd bag, the floor, the fleet's median."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.fleet.drift import check, Sample, Thresholds

DAY = 24 * 3600 * 10**9


def series(robot: str, values, joint: str = 'j2', model: str = 'arm') -> list[Sample]:
    return [Sample(robot, model, joint, k * DAY, f'{robot}_{k:02d}', float(v))
            for k, v in enumerate(values)]


def only(checks, robot, joint='j2'):
    return next(c for c in checks if (c.robot, c.joint) == (robot, joint))


def test_a_growing_residual_is_flagged_against_its_first_bags():
    rng = np.random.default_rng(0)
    values = 0.5 + rng.normal(0, 0.03, 12)
    values[-3:] += [0.5, 0.6, 0.7]  # the last bags: +100 % and more
    result = only(check(series('a', values)), 'a')
    assert result.method == 'own' and result.flagged and result.bags == 12
    assert result.baseline == pytest.approx(np.median(values[:5]))
    assert result.current == pytest.approx(np.median(values[-3:]))
    assert result.threshold == pytest.approx(1.5 * result.baseline)


def test_the_bag_order_is_the_start_time_not_the_input_order():
    samples = series('a', [0.5] * 5 + [1.5] * 3)
    result = only(check(list(reversed(samples))), 'a')
    assert result.flagged and result.baseline == 0.5 and result.current == 1.5


def test_one_odd_bag_among_the_last_is_not_a_drift():
    values = [0.5, 0.52, 0.49, 0.51, 0.5, 0.5, 3.0, 0.51]  # a payload on one day
    assert not only(check(series('a', values)), 'a').flagged


def test_one_odd_bag_among_the_first_does_not_hide_a_drift():
    values = [0.5, 3.0, 0.49, 0.51, 0.5, 1.2, 1.3, 1.25]
    result = only(check(series('a', values)), 'a')
    assert result.baseline == 0.5 and result.flagged


def test_growth_below_the_floor_is_not_a_drift():
    values = [0.1] * 5 + [0.25] * 3  # 2.5 x, but only 0.15 N·m
    assert not only(check(series('a', values)), 'a').flagged
    assert only(check(series('a', values), Thresholds(floor=0.1)), 'a').flagged


def test_a_robot_with_few_bags_is_compared_with_the_fleet_of_its_model():
    samples = (series('a', [0.5, 0.6, 0.55, 0.5, 0.52, 0.58]) + series('b', [0.45, 0.5, 0.6])
               + series('c', [1.4, 1.5]) + series('d', [0.5, 0.55])
               + series('e', [9.0] * 9, model='other_arm'))
    checks = check(samples)
    assert only(checks, 'c').method == 'fleet' and only(checks, 'c').flagged
    assert only(checks, 'c').baseline == pytest.approx(np.median(
        [0.5, 0.6, 0.55, 0.5, 0.52, 0.58, 0.45, 0.5, 0.6, 0.5, 0.55]))  # no other model
    assert only(checks, 'd').method == 'fleet' and not only(checks, 'd').flagged
    assert only(checks, 'b').method == 'fleet' and not only(checks, 'b').flagged


def test_too_little_data_is_not_checked():
    checks = check(series('a', [0.5, 3.0]) + series('b', [float('nan')] * 9))
    for robot in ('a', 'b'):
        result = only(checks, robot)
        assert result.method == 'insufficient' and not result.flagged
        assert math.isnan(result.threshold)
    assert only(checks, 'b').bags == 0
