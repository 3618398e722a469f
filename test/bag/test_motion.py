"""
The motion of a bag in summary.json: per joint RMS speed and the share of samples moving.

``rnea_fleet`` compares residuals only between bags whose motions are alike: these are the
numbers it compares (``rnea_ros.fleet.comparable``).
"""
from __future__ import annotations

import json

from harness.bagdata import BAG_START, PANDA, panda_bag, PANDA_JOINTS, sample_times, trajectory
import numpy as np
import pytest

from rnea_ros.bag.cli import main
from rnea_ros.bag.motion import joint_motion, MOVING_SPEED


def test_speed_rms_and_moving_share_of_each_column():
    velocity = np.array([[0.0, 1.0, np.nan], [0.02, -1.0, np.nan], [0.04, 1.0, np.nan],
                         [-0.5, -1.0, np.nan]])
    speed_rms, moving_share = joint_motion(velocity)
    np.testing.assert_allclose(speed_rms[:2], [np.sqrt((0.02**2 + 0.04**2 + 0.25) / 4), 1.0],
                               rtol=1e-12)
    np.testing.assert_array_equal(moving_share[:2], [0.5, 1.0])  # 0.02 < 0.03 < 0.04
    assert np.isnan(speed_rms[2]) and np.isnan(moving_share[2])  # never measured
    assert MOVING_SPEED == pytest.approx(0.03)


def test_summary_json_gives_the_motion_of_every_joint(tmp_path, capsys):
    times = sample_times(600)
    bag = panda_bag(tmp_path / 'bag', times, effort=np.zeros((600, 8)), desired=True)
    code = main([str(bag), '--urdf', str(PANDA), '--output', str(tmp_path / 'out'),
                 '--no-plots'])
    assert code == 0, capsys.readouterr().err
    summary = json.loads((tmp_path / 'out' / 'summary.json').read_text())
    v = trajectory((times - BAG_START) * 1e-9, 1)  # every sample analysed (desired a)
    joints = {j['joint']: j for j in summary['joints']}
    assert list(joints) == PANDA_JOINTS
    for k, name in enumerate(PANDA_JOINTS):
        # The velocities of the messages are the analytic ones: 1e-9 of the RMS.
        assert joints[name]['speed_rms'] == pytest.approx(np.sqrt(np.mean(v[:, k] ** 2)),
                                                          rel=1e-9)
        assert joints[name]['moving_share'] == pytest.approx(
            np.mean(np.abs(v[:, k]) > MOVING_SPEED), abs=1e-12)
