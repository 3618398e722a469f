"""Shared test fixtures: the example-robot-data corpus and the Pinocchio oracle."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from oracle import ROBOTS_DIR, robot_path  # noqa: E402


@pytest.fixture(scope='session')
def robots_dir() -> Path:
    """Folder of the example-robot-data URDFs (installed by the pip package)."""
    if not ROBOTS_DIR.is_dir():
        pytest.fail(f'example-robot-data not installed: {ROBOTS_DIR} missing')
    return ROBOTS_DIR


@pytest.fixture(scope='session')
def ur5_path() -> Path:
    return robot_path('ur5')
