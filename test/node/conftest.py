"""The fixtures of the node tests: a ``RosHarness`` on a domain of its own; the panda, solo12."""
from __future__ import annotations

import sys

from harness.oracle import robot_path
from harness.ros_harness import RosHarness
import pytest

from rnea_ros import RobotModel


@pytest.fixture
def ros(tmp_path):
    harness = RosHarness(tmp_path)
    yield harness
    print(harness.close(), file=sys.stderr)  # shown by pytest when the test fails


@pytest.fixture(scope='module')
def panda() -> tuple[RobotModel, str]:
    xml = robot_path('panda').read_text()
    return RobotModel.from_urdf_string(xml), xml


@pytest.fixture(scope='module')
def solo() -> tuple[RobotModel, str]:
    xml = robot_path('solo12').read_text()
    return RobotModel.from_urdf_string(xml, floating_base=True), xml
