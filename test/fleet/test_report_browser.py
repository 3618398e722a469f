"""
The fleet's report.html in a real headless browser (chromium, ``test/harness/browser.py``).

The page is written from made-up outcomes (three robots, one drifting joint, a failed bag):
it must load from the file with no JavaScript error and no request leaving the file, its
figure must render every trend with data, and the selector's 'drifting' entry must show the
drifting joint and its threshold only. Skipped, with the reason, without chromium (or without
``test/harness/browser.py``).
"""
from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.fleet import drift
from rnea_ros.fleet.run import write_outputs
from rnea_ros.fleet.task import JointStats, Outcome

# test/harness/browser.py, the headless-chromium helper shared with the bag report's test.
browser = pytest.importorskip('harness.browser', reason='test/harness/browser.py (the headless '
                              'chromium helper of the report tests) is not in this tree')
DAY = 24 * 3600 * 10**9
JOINTS = ('j1', 'j2')


def outcomes() -> list[Outcome]:
    """Return the outcomes of the module docstring."""
    result = []
    rng = np.random.default_rng(0)
    for robot, bags in (('arm_a', 8), ('arm_b', 8), ('arm_c', 2)):
        for k in range(bags):
            residual = 0.5 + rng.normal(0, 0.02, len(JOINTS))
            if robot == 'arm_a':
                residual[1] += 0.15 * k  # j2 wears
            joints = tuple(JointStats(j, 'N·m', 10.0, 30.0, float(r), float(3 * r))
                           for j, r in zip(JOINTS, residual))
            result.append(Outcome(f'{robot}.run_{k}', f'/fleet/{robot}/run_{k}', robot, 'ok',
                                  model='arm', start_ns=k * DAY, duration=60.0, samples=60000,
                                  joints=joints))
    result.append(Outcome('run_bad', '/fleet/arm_c/run_bad', 'arm_c', 'error',
                          error='no /joint_states messages in the bag'))
    return result


@pytest.mark.skipif(browser.chromium() is None, reason=browser.SKIP_REASON)
def test_fleet_report_loads_offline_renders_and_selects(tmp_path):
    result = write_outputs(tmp_path, outcomes(), drift.Thresholds(), {})
    assert [c.robot + '/' + c.joint for c in result.checks if c.flagged] == ['arm_a/j2']
    report = browser.load_page(tmp_path / 'report.html', select_option=1)
    assert report.errors == [] and report.external_requests == []
    (figure,) = report.figures
    # 6 trends, and a threshold for each of the 4 judged ones (arm_c's 2 bags are not judged)
    assert figure['traces'] == 10 and figure['visible'] == 6 and figure['paths'] >= 6
    assert figure['points'] == 2 * (8 + 8 + 2)
    # all, drifting, 3 robots, 6 robot/joint pairs
    assert figure['buttons'] == 11
    (drifting,) = report.after_selection
    assert drifting['visible'] == 2 and drifting['points'] == 8 + 2
