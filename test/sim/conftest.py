"""The simulated robot's DDS tests use the node tests' harness (test/harness/ros_harness.py)."""
from __future__ import annotations

import sys

from harness.ros_harness import RosHarness
import pytest


@pytest.fixture
def ros(tmp_path):
    harness = RosHarness(tmp_path)
    yield harness
    print(harness.close(), file=sys.stderr)  # shown by pytest when the test fails
