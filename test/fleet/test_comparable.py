"""
Drift is judged between bags of like motions only (``rnea_ros.fleet.comparable``).

The rule on digests built here (speeds, shares, the reference bag, the reasons), and end to
end: a robot whose first bag is still and whose later bags move is not flagged drifting (its
still bag is not judged, with the reason, in every output), while a planted drift among like
bags still is.

Regression test of a fleet that flagged the joints of a robot drifting because its first bag
was recorded at rest and its later ones in motion.
"""
from __future__ import annotations

import json

from harness import bagdata
from harness.fleet_bags import fleet_bag, RATE, SAMPLES, WEEK_NS
from harness.fleet_runs import fleet, mcap_file
import numpy as np
import pyarrow.parquet as pq
import pytest

from rnea_ros.fleet.comparable import alike_counts, difference, not_comparable
from rnea_ros.fleet.task import JointStats, Outcome

JOINTS = ('j1', 'j2')


def outcome(bag: str, day: int, speeds, shares, robot: str = 'arm', units=('N·m', 'N')):
    joints = tuple(JointStats(name, unit, 1.0, 2.0, 0.1, 0.2, speed, share)
                   for name, unit, speed, share in zip(JOINTS, units, speeds, shares))
    return Outcome(bag, f'/fleet/{bag}', robot, 'ok', model='m', start_ns=day * 86_400 * 10**9,
                   duration=1.0, samples=100, joints=joints)


def test_alike_within_twice_the_speed_and_thirty_points_of_moving_share():
    base = outcome('a', 0, (0.5, 0.1), (0.9, 0.8))
    assert difference(outcome('b', 1, (0.99, 0.05), (0.65, 0.55)), base) is None
    assert difference(outcome('c', 1, (1.01, 0.1), (0.9, 0.8)), base) == (
        'j1 RMS speed 1.01 rad/s, there 0.5 rad/s (more than 2 x apart)')
    assert difference(outcome('d', 1, (0.5, 0.1), (0.9, 0.49)), base) == (
        'j2 moving 49 % of the time, there 80 % (more than 30 points apart)')


def test_still_joints_are_alike_whatever_their_speed_noise():
    # Below 0.03 rad/s a speed counts as 0.03: 0.001 and 0.02 rad/s are both at rest.
    still = outcome('a', 0, (0.001, 0.0), (0.0, 0.0))
    assert difference(outcome('b', 1, (0.02, 0.004), (0.0, 0.0)), still) is None
    assert difference(outcome('c', 1, (0.07, 0.0), (0.0, 0.0)), still) == (
        'j1 RMS speed 0.07 rad/s, there 0.001 rad/s (more than 2 x apart)')


def test_a_still_first_bag_is_left_out_with_the_reason():
    bags = [outcome('run_00', 0, (0.001, 0.001), (0.0, 0.0))] + [
        outcome(f'run_{k:02d}', k, (0.5 + 0.05 * k, 0.3), (0.97, 0.9)) for k in (1, 2, 3)]
    assert not_comparable(bags) == {
        'run_00': 'not comparable with run_01 (the usual motion of the robot): j1 RMS speed '
                  '0.001 rad/s, there 0.55 rad/s (more than 2 x apart)'}


def test_the_usual_motion_is_per_robot_and_the_earliest_of_a_tie():
    bags = [outcome('s', 0, (0.0, 0.0), (0.0, 0.0), robot='a'),
            outcome('m', 1, (0.5, 0.3), (1.0, 1.0), robot='a'),
            outcome('x', 0, (0.5, 0.3), (1.0, 1.0), robot='b')]
    assert list(not_comparable(bags)) == ['m']  # a: one bag each way, the earliest wins


def test_every_pair_at_once_as_pair_by_pair():
    rng = np.random.default_rng(4)
    speed = np.exp(rng.normal(-1.0, 0.6, (40, 3)))
    share = rng.uniform(0.4, 1.0, (40, 3))
    speed[3, 1] = share[3, 1] = np.nan  # a joint one bag does not give
    bags = [outcome(f'b{k}', k, speed[k, :2], share[k, :2]) for k in range(40)]
    expected = [sum(difference(a, b) is None for b in bags) for a in bags]
    np.testing.assert_array_equal(alike_counts(speed[:, :2], share[:, :2]), expected)


def still_bag(path, model, start_ns: int, seed: int):
    """Write a bag of the panda held at rest: position noise only, effort = gravity + noise."""
    rng = np.random.default_rng(seed)
    times = np.arange(SAMPLES) * int(1e9 / RATE) + start_ns
    q = bagdata.CENTER + rng.normal(0.0, 1e-5, (SAMPLES, 8))
    effort = model.rnea_batch(q, np.zeros_like(q), np.zeros_like(q))
    effort = np.round((effort + rng.normal(0.0, 0.02, effort.shape)) / 0.005) * 0.005
    names = bagdata.PANDA_JOINTS + [bagdata.MIMIC]
    states = [(ns, bagdata.joint_state(ns, names, np.append(q[k], q[k, 7]), np.zeros(9),
                                       np.append(effort[k], 0.0)))
              for k, ns in enumerate(times.tolist())]
    return bagdata.write_bag(path, {'/joint_states': (bagdata.JOINT_STATE, states)})


@pytest.fixture(scope='module')
def still_then_moving(tmp_path_factory, panda_model):
    """arm_a: a still bag, then 3 moving ones; arm_b: 8 moving bags, friction constant."""
    root = tmp_path_factory.mktemp('still_then_moving')
    coulomb = np.full(8, 0.6)
    still_bag(root / 'arm_a' / 'run_00', panda_model, bagdata.BAG_START, seed=1)
    for k in range(1, 4):
        fleet_bag(root / 'arm_a' / f'run_{k:02d}', panda_model, bagdata.BAG_START + k * WEEK_NS,
                  seed=k, coulomb=coulomb)
    for k in range(8):
        fleet_bag(root / 'arm_b' / f'run_{k:02d}', panda_model,
                  bagdata.BAG_START + k * WEEK_NS + 3600 * 10**9, seed=100 + k, coulomb=coulomb)
    output = tmp_path_factory.mktemp('still_then_moving_out')
    status, out, err = fleet(root, '--output', output, '--urdf', bagdata.PANDA, '--no-plots',
                             '--workers', '2')
    return {'status': status, 'out': out, 'err': err, 'output': output}


def test_a_still_bag_then_moving_bags_flags_nothing(still_then_moving):
    run = still_then_moving
    assert run['status'] == 0, run['err']
    reason = ('not comparable with arm_a.run_01 (the usual motion of the robot): panda_joint1 '
              'RMS speed')
    assert f'rnea_fleet: drift: arm_a.run_00: not judged: {reason}' in run['err']
    assert run['out'].startswith(
        'rnea_fleet: drift: 0 joints drifting, 16 judged stable; 1 bag not judged (motion '
        'unlike the usual one of the robot) (')
    rows = pq.read_table(run['output'] / 'fleet.parquet').to_pylist()
    assert not any(r['drift'] for r in rows)
    still = [r for r in rows if r['bag'] == 'arm_a.run_00']
    assert len(still) == 8 and not any(r['compared'] for r in still)
    assert all(r['verdict'].startswith(f'not judged: {reason}') for r in still)
    assert all(r['moving_share'] == 0.0 and r['speed_rms'] == 0.0 for r in still)
    moving = [r for r in rows if r['bag'] != 'arm_a.run_00']
    assert all(r['compared'] and r['verdict'] == 'stable' for r in moving)
    assert all(r['moving_share'] > 0.5 for r in moving if r['joint'] != 'panda_finger_joint1')
    drift = json.loads((run['output'] / 'fleet.json').read_text())['drift']
    assert [(b['robot'], b['bag']) for b in drift['bags_not_judged']] == [
        ('arm_a', 'arm_a.run_00')]
    assert drift['rule']['comparable'] == {'moving_speed': 0.03, 'speed_ratio': 2.0,
                                           'share_difference': 0.3}
    text = (run['output'] / 'fleet.md').read_text()
    assert '## Bags not judged' in text and f'| `arm_a.run_00` | `arm_a` | {reason}' in text
    page = (run['output'] / 'report.html').read_text()
    assert '<table id="not-judged">' in page and 'arm_a.run_00' in page


def test_a_stored_result_without_the_motion_is_analysed_again(tmp_path):
    from rnea_ros.fleet.task import analyse, Job
    bag = mcap_file(tmp_path / 'run.mcap')
    output = tmp_path / 'out' / 'bags' / 'run'
    job = Job(str(bag), 'run', 'arm', str(output), {'urdf': str(bagdata.PANDA),
                                                    'no_plots': True}, 'settings')
    first = analyse(job)
    assert first.status == 'ok' and not first.skipped, first.error
    assert analyse(job).skipped  # unchanged: reused
    summary = json.loads((output / 'summary.json').read_text())
    for joint in summary['joints']:  # as an older rnea_fleet stored it
        del joint['speed_rms'], joint['moving_share']
    (output / 'summary.json').write_text(json.dumps(summary))
    again = analyse(job)
    assert not again.skipped and again.joints == first.joints
    assert all(np.isfinite(j.speed_rms) and np.isfinite(j.moving_share) for j in again.joints)
