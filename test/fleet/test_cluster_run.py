"""
``rnea_fleet --scheduler`` on a real Dask cluster (a scheduler and two worker processes).

Over the generated fleet of ``conftest``: per-bag results equal ``rnea_bag`` run alone, the
fleet table, the failed bags' rows and the exit status, the planted drift flagged and nothing
else, a re-run that reuses every result and computes only an added bag, ``--overwrite``.
"""
from __future__ import annotations

import json
import shutil

from harness import bagdata
from harness.fleet_bags import fleet_bag, WEEK_NS
from harness.fleet_runs import fleet, read_rows
import numpy as np
import pytest

from rnea_ros.bag import cli as bag_cli
from rnea_ros.bag.report import read_table

pytestmark = pytest.mark.slow

PANDA_JOINTS = [f'panda_joint{k}' for k in range(1, 8)] + ['panda_finger_joint1']
GOOD = {'arm_a': 8, 'arm_b': 8, 'arm_c': 2}


@pytest.fixture(scope='module')
def first_run(cluster, fleet_dir, tmp_path_factory):
    output = tmp_path_factory.mktemp('fleet_out')
    status, out, err = fleet(fleet_dir, '--output', output, '--urdf', bagdata.PANDA,
                             '--scheduler', cluster.address, '--no-plots')
    return {'status': status, 'out': out, 'err': err, 'output': output,
            'table': read_rows(output / 'fleet.parquet')}


def test_per_bag_results_equal_rnea_bag_alone(first_run, fleet_dir, tmp_path, capsys):
    for robot, run in (('arm_a', 'run_07'), ('arm_b', 'run_06')):
        alone = tmp_path / f'{robot}_{run}'
        assert bag_cli.main([str(fleet_dir / robot / run), '--urdf', str(bagdata.PANDA),
                             '--no-plots', '--output', str(alone)]) == 0
        ours = first_run['output'] / 'bags' / f'{robot}.{run}'
        # Bit for bit: the same text of every torque.
        assert (ours / 'torques.csv').read_bytes() == (alone / 'torques.csv').read_bytes()
        theirs = read_table(alone / 'residual.parquet')
        mine = read_table(ours / 'residual.parquet')
        assert list(mine) == list(theirs)
        for name in mine:
            np.testing.assert_array_equal(mine[name], theirs[name])
        expected = json.loads((alone / 'summary.json').read_text())
        stored = json.loads((ours / 'summary.json').read_text())
        assert stored['joints'] == expected['joints']
        assert set(stored['fleet']) == {'bag_digest', 'settings_digest', 'bag_start_ns'}


def test_fleet_table(first_run):
    rows = first_run['table']
    ok = [r for r in rows if r['status'] == 'ok']
    assert len(ok) == sum(GOOD.values()) * len(PANDA_JOINTS)
    for robot, count in GOOD.items():
        bags = sorted({r['bag'] for r in ok if r['robot'] == robot})
        assert bags == [f'{robot}.run_{k:02d}' for k in range(count)]
    for row in ok:
        summary = json.loads((first_run['output'] / 'bags' / row['bag'] /
                              'summary.json').read_text())
        joint = next(j for j in summary['joints'] if j['joint'] == row['joint'])
        assert row['rms_torque'] == joint['rms'] and row['peak_torque'] == joint['peak']
        assert row['rms_residual'] == joint['rms_residual']
        assert row['peak_residual'] == joint['peak_residual']
        # 495 joint_states messages, less the ends without a two-sided fit (rnea_bag's rule)
        # (half the longest window chosen at each end: at most a tenth of the bag).
        left_out = summary['run']['differentiation']['edge_samples_left_out']
        window = summary['run']['differentiation']['window']
        assert 0 < left_out <= window * 495 + 2
        assert row['samples'] == summary['run']['samples'] == 495 - left_out
        assert row['duration'] == pytest.approx(summary['run']['duration'], rel=1e-12)
        # A 1 s bag less the left-out ends.
        assert 0.98 - window < row['duration'] <= 1.0
        assert row['model'] == 'panda' and row['error'] == ''
        k = int(row['bag'][-2:])
        robot_index = list(GOOD).index(row['robot'])
        # start: the bag start (its first message, a few ms after the first generated
        # sample time when that one was dropped), UTC
        first = (bagdata.BAG_START + k * WEEK_NS + robot_index * 3600 * 10**9) * 1e-9
        assert row['start'].utcoffset().total_seconds() == 0
        assert row['start'].timestamp() == pytest.approx(first, abs=0.01)
    assert [r['joint'] for r in ok[:8]] == PANDA_JOINTS
    assert all(r['rms_residual'] is not None and r['rms_residual'] > 0 for r in ok)


def test_failed_bags_have_an_error_row_and_exit_status_1(first_run, fleet_dir):
    assert first_run['status'] == 1
    failed = {r['bag']: r for r in first_run['table'] if r['status'] == 'error'}
    assert set(failed) == {'run_corrupt', 'run_empty', 'run_foreign'}
    for row in failed.values():
        assert row['joint'] == '' and row['robot'] == 'arm_c' and row['start'] is None
        assert row['rms_torque'] is None and not row['drift']
        assert f'rnea_fleet: error: {row["bag"]}: {row["error"]}' in first_run['err']
    assert failed['run_corrupt']['error'].startswith(
        f"cannot read bag '{fleet_dir / 'arm_c' / 'run_corrupt'}' (corrupt or not a rosbag2")
    assert failed['run_empty']['error'] == 'no /joint_states messages in the bag'
    assert failed['run_foreign']['error'] == (
        "joint_states topic 'joint_states' is not in the bag; the bag has no "
        'sensor_msgs/msg/JointState topic (all topics: /chatter (std_msgs/msg/String))')
    assert not (first_run['output'] / 'bags' / 'run_corrupt').exists()
    assert '21 bags: 18 analysed, 0 reused (unchanged), 3 failed' in first_run['out']


def test_the_planted_drift_is_flagged_and_nothing_else(first_run):
    flagged = {(r['robot'], r['joint']) for r in first_run['table'] if r['drift']}
    assert flagged == {('arm_a', 'panda_joint2')}
    key = ('arm_a', 'panda_joint2')
    rows = [r for r in first_run['table'] if (r['robot'], r['joint']) == key]
    assert len(rows) == 8 and all(r['drift'] for r in rows)
    assert 'rnea_fleet: drift: arm_a / panda_joint2' in first_run['err']
    text = (first_run['output'] / 'fleet.md').read_text()
    assert '**1 joint(s) drifting:** `arm_a` / `panda_joint2`' in text
    headline = '1 joint drifting, 15 judged stable, 8 not judged (need 1 more bag each)'
    assert f'**{headline}.**' in text
    assert f'rnea_fleet: drift: {headline} (drifting: ' in first_run['out']
    assert '| `arm_a` | `panda_joint2` | 8 | **drifting** |' in text
    assert '| `arm_c` | `panda_joint2` | 2 | not judged: needs 1 more bag |' in text
    verdicts = json.loads((first_run['output'] / 'fleet.json').read_text())['drift']
    assert verdicts['headline'] == headline
    assert verdicts['counts'] == {'drifting': 1, 'stable': 15, 'not_judged': 8}
    page = (first_run['output'] / 'report.html').read_text()
    assert page.count('<tr class="drift">') == 1
    assert ('<tr class="drift"><td class="name">arm_a</td><td class="name">panda_joint2</td>'
            in page)


def test_rerun_reuses_results_and_computes_only_a_new_bag(
        first_run, cluster, fleet_dir, tmp_path):
    output = first_run['output']
    stamps = {p: p.stat().st_mtime_ns for p in (output / 'bags').glob('*/torques.csv')}
    assert len(stamps) == 18
    status, out, err = fleet(fleet_dir, '--output', output, '--urdf', bagdata.PANDA,
                             '--scheduler', cluster.address, '--no-plots', '--progress')
    assert status == 1
    assert '21 bags: 0 analysed, 18 reused (unchanged), 3 failed' in out
    assert err.startswith('\rbags:') and '100%|' in err and ' 21/21 ' in err  # tqdm's bar
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    assert read_rows(output / 'fleet.parquet') == first_run['table']
    # A bag added to the fleet, and a result missing one of its files, are computed again.
    extra = tmp_path / 'more'
    (extra / 'arm_d').mkdir(parents=True)
    shutil.copytree(fleet_dir / 'arm_a' / 'run_00', extra / 'arm_d' / 'run_00')
    removed = output / 'bags' / 'arm_b.run_03' / 'decomposition.parquet'
    removed.unlink()
    status, out, _ = fleet(fleet_dir, extra, '--output', output, '--urdf', bagdata.PANDA,
                           '--scheduler', cluster.address, '--no-plots')
    assert '22 bags: 2 analysed, 17 reused (unchanged), 3 failed' in out
    assert removed.exists()
    kept = {p: t for p, t in stamps.items() if p.parent != removed.parent}
    assert {p: p.stat().st_mtime_ns for p in kept} == kept and len(kept) == 17
    status, out, _ = fleet(fleet_dir, '--output', output, '--urdf', bagdata.PANDA,
                           '--scheduler', cluster.address, '--no-plots', '--overwrite')
    assert '21 bags: 18 analysed, 0 reused (unchanged), 3 failed' in out
    assert all(p.stat().st_mtime_ns != stamps[p] for p in stamps)
    assert read_rows(output / 'fleet.parquet') == first_run['table']


def test_urdf_recorded_in_each_bag_robot_pattern_and_bag_options(cluster, fleet_dir,
                                                                 panda_model, tmp_path):
    site = tmp_path / 'site'
    fleet_bag(site / 'arm_x' / 'run_0', panda_model, bagdata.BAG_START, seed=3,
              coulomb=np.full(8, 0.3), description=bagdata.PANDA.read_text())
    output = tmp_path / 'out'
    status, out, err = fleet(site, fleet_dir / 'arm_c' / 'run_00', '--output', output,
                             '--robot-pattern', r'/(arm_\w)/run', '--window', '0.1',
                             '--no-plots', '--scheduler', cluster.address)
    assert status == 1
    rows = {r['bag']: r for r in read_rows(output / 'fleet.parquet')}
    assert rows['run_0']['robot'] == 'arm_x' and rows['run_0']['model'] == 'panda'
    assert rows['run_00'] == {**rows['run_00'], 'robot': 'arm_c', 'status': 'error', 'error': (
        "no --urdf given and the bag has no 'robot_description' topic (std_msgs/String) to "
        'take the URDF from')}
    summary = json.loads((output / 'bags' / 'run_0' / 'summary.json').read_text())
    assert summary['run']['differentiation']['window'] == 0.1
    assert summary['run']['urdf'] == 'topic /robot_description'


def test_a_worker_address_is_not_taken_for_the_scheduler(cluster, fleet_dir, tmp_path):
    worker = next(iter(cluster.client.scheduler_info()['workers']))
    status, out, err = fleet(fleet_dir / 'arm_c' / 'run_00', '--output', tmp_path / 'out',
                             '--scheduler', worker)
    assert status == 1
    assert err == (f'rnea_fleet: error: cannot connect to the Dask scheduler {worker!r}: it is '
                   'a Dask Worker, not the scheduler\n')
