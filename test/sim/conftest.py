"""The simulated robot's DDS tests use the node tests' harness (test/node/ros_harness.py)."""
from __future__ import annotations

from pathlib import Path
import sys

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'node'))
from ros_harness import RosHarness  # noqa: E402 (after the path that finds it)


@pytest.fixture
def ros(tmp_path):
    harness = RosHarness(tmp_path)
    yield harness
    print(harness.close(), file=sys.stderr)  # shown by pytest when the test fails
