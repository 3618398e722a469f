"""
A young fleet end to end: two robots with three bags each, one shoulder's friction wearing.

``rnea_fleet`` on a local cluster over generated panda bags (``conftest.fleet_bag``): robot
``arm_a``'s ``panda_joint2`` Coulomb friction 0.3 -> 1.05 -> 1.8 N·m, ``arm_b`` constant. The
worn joint is judged drifting and every other joint stable, and the console, fleet.md,
fleet.json and report.html say what was judged and what the words mean.
"""
from __future__ import annotations

import json

from harness import bagdata
from harness.fleet_bags import DRIFT_JOINT, robot_bags
from harness.fleet_runs import fleet
import numpy as np
import pyarrow.parquet as pq
import pytest

HEADLINE = '1 joint drifting, 15 judged stable'


@pytest.fixture(scope='module')
def small_fleet(tmp_path_factory, panda_model):
    root = tmp_path_factory.mktemp('small_fleet')

    def wearing(k):
        coulomb = np.full(8, 0.3)
        coulomb[DRIFT_JOINT] = 0.3 + 0.75 * k
        return coulomb, None

    robot_bags(root, panda_model, 'arm_a', 3, 0, wearing)
    robot_bags(root, panda_model, 'arm_b', 3, 1, lambda k: (np.full(8, 0.3), None))
    output = tmp_path_factory.mktemp('small_fleet_out')
    status, out, err = fleet(root, '--output', output, '--urdf', bagdata.PANDA, '--no-plots',
                             '--workers', '1')
    return {'status': status, 'out': out, 'err': err, 'output': output}


def test_the_worn_shoulder_of_a_three_bag_robot_is_drifting(small_fleet):
    assert small_fleet['status'] == 0, small_fleet['err']
    assert 'rnea_fleet: drift: arm_a / panda_joint2: residual RMS' in small_fleet['err']
    assert small_fleet['out'].startswith(
        f'rnea_fleet: drift: {HEADLINE} (drifting: beyond the bag-to-bag scatter at '
        'false-alarm rate 0.05 and above the threshold; stable: judged, not drifting; not '
        'judged: fewer than 3 bags)\n')
    rows = pq.read_table(small_fleet['output'] / 'fleet.parquet').to_pylist()
    verdicts = {(r['robot'], r['joint']): (r['verdict'], r['drift']) for r in rows}
    assert verdicts.pop(('arm_a', 'panda_joint2')) == ('drifting', True)
    assert set(verdicts.values()) == {('stable', False)} and len(verdicts) == 15


def test_fleet_json_carries_verdict_statistic_p_value_and_bags_needed(small_fleet):
    drift = json.loads((small_fleet['output'] / 'fleet.json').read_text())['drift']
    assert drift['headline'] == HEADLINE
    assert drift['rule']['alpha'] == 0.05 and drift['rule']['min_bags'] == 3
    assert drift['rule']['correction'] == 'holm'
    worn = next(j for j in drift['joints']
                if (j['robot'], j['joint']) == ('arm_a', 'panda_joint2'))
    assert worn['verdict'] == 'drifting' and worn['bags'] == 3 and worn['bags_needed'] == 0
    assert worn['p_adjusted'] <= worn['alpha'] == 0.05
    assert worn['scatter'] > 0 and worn['statistic'] > 3
    assert worn['current'] > worn['threshold'] > worn['baseline']
    assert worn['ratio'] == pytest.approx(worn['current'] / worn['baseline'], rel=1e-12)


def test_fleet_md_and_the_report_explain_the_words(small_fleet):
    text = (small_fleet['output'] / 'fleet.md').read_text()
    assert f'**{HEADLINE}.**' in text
    for words in ('It is **drifting** when', 'false-alarm rate 0.05 over all judged joints',
                  '**stable** when judged and not drifting',
                  '**not judged: needs N more bags** when it has fewer bags'):
        assert words in text
    page = (small_fleet['output'] / 'report.html').read_text()
    assert f'<strong>Drift: {HEADLINE}.</strong>' in page
    for term in ('drifting', 'stable', 'not judged: needs N more bags'):
        assert f'<dt>{term}</dt>' in page
    assert page.count('<tr class="drift">') == 1 and page.count('<tr class="stable">') == 15
