"""The fleet tests' fixtures: the panda, the fleet, a Dask cluster (harness.fleet_bags)."""
from __future__ import annotations

from pathlib import Path

from harness import bagdata
from harness.fleet_bags import (corrupt_bag, dask_cluster, DRIFT_JOINT, empty_bag, foreign_bag,
                                OFFSET_JOINT, robot_bags)
import numpy as np
import pytest


@pytest.fixture(scope='session')
def panda_model():
    from rnea_ros import RobotModel
    return RobotModel.from_urdf_file(str(bagdata.PANDA))


@pytest.fixture(scope='session')
def fleet_dir(tmp_path_factory, panda_model) -> Path:
    """Generate the fleet of ``harness.fleet_bags``' module docstring."""
    root = tmp_path_factory.mktemp('fleet')
    base = np.full(8, 0.3)

    def wearing(k):
        coulomb = base.copy()
        coulomb[DRIFT_JOINT] = 0.3 + 0.15 * k
        return coulomb, None

    def steady(k):
        offset = np.zeros(8)
        offset[OFFSET_JOINT] = 0.3
        if k == 6:  # a payload on one day: joints 2 and 4 loaded
            offset[[DRIFT_JOINT, OFFSET_JOINT]] += 1.5
        return np.full(8, 0.4), offset

    robot_bags(root, panda_model, 'arm_a', 8, 0, wearing)
    robot_bags(root, panda_model, 'arm_b', 8, 1, steady)
    robot_bags(root, panda_model, 'arm_c', 2, 2, lambda k: (np.full(8, 0.35), None))
    corrupt_bag(root / 'arm_c' / 'run_corrupt', panda_model)
    empty_bag(root / 'arm_c' / 'run_empty')
    foreign_bag(root / 'arm_c' / 'run_foreign')
    return root


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    """Two workers on a local scheduler, shared by a test module."""
    with dask_cluster(tmp_path_factory.mktemp('dask')) as running:
        yield running
