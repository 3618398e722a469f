"""
The drift rule on per-bag digest tables (residual RMS per robot, joint and bag).

Its groups and medians, robustness to one odd bag, the size threshold, a small fleet's drift
flagged (two robots with three bags each), a constant residual not flagged, the false-alarm
rate over 200 generated fleets, and the verdict and headline of joints with too few bags.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.fleet.drift import check, FACTOR, FLOOR, headline, Sample, Thresholds

DAY = 24 * 3600 * 10**9
JOINTS = [f'j{k}' for k in range(1, 9)]
# Realistic per-bag residual RMS of an 8-joint arm (N·m): the levels of the joints, and their
# bag-to-bag scatter (5 % of the level, log-normal: the motion and the load differ per bag).
LEVELS = np.array([1.2, 1.0, 0.9, 0.7, 0.3, 0.25, 0.15, 0.4])
SCATTER = 0.05


def series(robot: str, values, joint: str = 'j2', model: str = 'arm') -> list[Sample]:
    return [Sample(robot, model, joint, k * DAY, f'{robot}_{k:02d}', float(v))
            for k, v in enumerate(values)]


def only(checks, robot, joint='j2'):
    return next(c for c in checks if (c.robot, c.joint) == (robot, joint))


def robot_bags(rng, robot: str, bags: int, growth=None, scatter=SCATTER) -> list[Sample]:
    """
    ``bags`` digests of one robot, every joint at its level with the scatter above.

    ``growth`` (joint index, total relative growth): that joint grows linearly over the bags;
    ``scatter``: one for all joints, or one per joint.
    """
    values = LEVELS * np.exp(rng.normal(0.0, scatter, (bags, LEVELS.size)))
    if growth is not None:
        joint, total = growth
        values[:, joint] *= 1.0 + total * np.arange(bags) / (bags - 1)
    return [sample for j, joint in enumerate(JOINTS)
            for sample in series(robot, values[:, j], joint)]


def test_a_growing_residual_is_flagged_against_its_first_bags():
    rng = np.random.default_rng(0)
    values = 0.5 + rng.normal(0, 0.03, 12)
    values[-3:] += [0.5, 0.6, 0.7]  # the last bags: +100 % and more
    result = only(check(series('a', values)), 'a')
    assert result.verdict == 'drifting' and result.flagged and result.bags == 12
    assert result.baseline == pytest.approx(np.median(values[:5]))
    assert result.current == pytest.approx(np.median(values[-3:]))
    assert result.threshold == pytest.approx(max(FACTOR * result.baseline,
                                                 result.baseline + FLOOR))
    assert result.p_adjusted == result.p_value < 0.05 and result.needed == 0


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
    assert only(check(series('a', values)), 'a').verdict == 'stable'
    assert only(check(series('a', values), Thresholds(floor=0.1)), 'a').flagged


def test_the_groups_of_a_short_series():
    # 3 bags: the first 2 against the last; 4 bags: 2 against 2
    three = only(check(series('a', [1.0, 1.2, 2.0])), 'a')
    assert (three.baseline, three.current) == (pytest.approx(1.1), 2.0)
    four = only(check(series('a', [1.0, 1.2, 2.0, 2.2])), 'a')
    assert (four.baseline, four.current) == (pytest.approx(1.1), pytest.approx(2.1))


@pytest.mark.parametrize('bags', [(3, 3), (3, 4), (4, 4)])
def test_two_robots_with_three_or_four_bags_a_shoulder_growing_54_percent(bags):
    rng = np.random.default_rng(sum(bags))
    samples = (robot_bags(rng, 'a', bags[0], growth=(1, 0.54))
               + robot_bags(rng, 'b', bags[1]))
    checks = check(samples)
    assert {(c.robot, c.joint) for c in checks if c.flagged} == {('a', 'j2')}
    assert only(checks, 'a').p_adjusted < 0.05 and only(checks, 'a').statistic > 3
    assert headline(checks) == '1 joint drifting, 15 judged stable'


def test_friction_growing_from_0_3_to_1_8_n_m_in_three_bags_is_drifting():
    # The residual of a joint with Coulomb friction c: about sqrt(noise^2 + (0.8 c)^2) (the
    # friction torque's RMS over a sine motion), the noise the model error of the joint.
    rng = np.random.default_rng(5)
    samples = robot_bags(rng, 'a', 3) + robot_bags(rng, 'b', 3)
    coulomb = np.array([0.3, 1.05, 1.8])
    worn = np.hypot(0.5, 0.8 * coulomb) * np.exp(rng.normal(0.0, SCATTER, 3))
    samples = [s for s in samples if (s.robot, s.joint) != ('a', 'j2')] + series('a', worn)
    checks = check(samples)
    assert [(c.robot, c.joint) for c in checks if c.flagged] == [('a', 'j2')]


def test_the_scatter_is_per_joint_with_enough_pairs_else_over_the_run():
    scatters = SCATTER * np.linspace(0.5, 2.0, LEVELS.size)
    own = check(robot_bags(np.random.default_rng(3), 'a', 8, scatter=scatters))
    assert len({c.scatter for c in own}) == 8  # 13 pairs each: one scatter per joint
    assert own[0].scatter < own[-1].scatter
    pooled = check(robot_bags(np.random.default_rng(3), 'a', 4, scatter=scatters))
    assert len({c.scatter for c in pooled}) == 1  # 2 pairs each: one scatter for the run


def test_eight_bags_of_a_constant_residual_are_stable():
    checks = check(robot_bags(np.random.default_rng(8), 'a', 8))
    assert [c.verdict for c in checks] == ['stable'] * 8
    assert headline(checks) == '0 joints drifting, 8 judged stable'


@pytest.mark.parametrize('robots, bags, scatters', [
    (1, 8, SCATTER), (2, 3, SCATTER),
    (2, 8, SCATTER * np.array([0.5, 1.5, 1.0, 0.7, 1.3, 0.6, 1.4, 0.9])),  # per joint
])
def test_false_alarms_over_200_fleets_stay_within_the_stated_rate(robots, bags, scatters):
    # The statistical part alone (no size threshold): any joint judged drifting in a fleet
    # whose residuals are constant is a false alarm of the fleet.
    rng = np.random.default_rng(200 + bags)
    loose = Thresholds(factor=1.0, floor=0.0)
    alarms = sum(any(c.flagged for c in check(
        [s for r in range(robots) for s in robot_bags(rng, f'r{r}', bags, scatter=scatters)],
        loose)) for _ in range(200))
    alpha = Thresholds().alpha
    # Binomial(200, alpha): mean 10, 3 standard deviations 9.2.
    assert alarms <= 200 * alpha + 3 * math.sqrt(200 * alpha * (1 - alpha))


def test_too_few_bags_are_not_judged_and_the_headline_says_so():
    rng = np.random.default_rng(2)
    few = robot_bags(rng, 'a', 2)
    checks = check(few)
    assert {c.verdict for c in checks} == {'not judged: needs 1 more bag'}
    assert {c.needed for c in checks} == {1} and not any(c.flagged for c in checks)
    assert all(math.isnan(c.threshold) and math.isnan(c.p_value) for c in checks)
    assert headline(checks) == 'Nothing judged: 8 joints need 1 more bag each'
    mixed = check(few + robot_bags(rng, 'b', 3) + series('c', [0.5], joint='j1'))
    assert only(mixed, 'c', 'j1').verdict == 'not judged: needs 2 more bags'
    assert headline(mixed) == ('0 joints drifting, 8 judged stable, 9 not judged (need 1 to '
                               '2 more bags)')
    assert headline(check(few + robot_bags(rng, 'b', 3))) == (
        '0 joints drifting, 8 judged stable, 8 not judged (need 1 more bag each)')


def test_bags_without_measured_effort_do_not_count():
    checks = check(series('a', [0.5, 3.0]) + series('b', [float('nan')] * 9))
    assert only(checks, 'a').verdict == 'not judged: needs 1 more bag'
    assert only(checks, 'b').verdict == 'not judged: needs 3 more bags'
    assert only(checks, 'b').bags == 0


@pytest.mark.parametrize('thresholds, message', [
    (Thresholds(min_bags=2), 'drift: the minimum number of bags must be at least 3 (the '
     'scatter needs two early bags), got 2'),
    (Thresholds(baseline_bags=1), 'drift: the baseline bags must be at least 2 and the recent '
     'bags at least 1, got 1 and 3'),
    (Thresholds(alpha=0.0), 'drift: alpha must be between 0 and 1, got 0'),
])
def test_bad_thresholds_are_refused(thresholds, message):
    with pytest.raises(ValueError) as error:
        check([], thresholds)
    assert str(error.value) == message
