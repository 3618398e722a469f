"""Shared test fixtures: the example-robot-data corpus and the Pinocchio oracle."""
from __future__ import annotations

from pathlib import Path

# pytest puts this folder (rootdir conftest, no __init__.py) on sys.path: the helpers import.
from oracle import robot_path, ROBOTS_DIR
import pytest


@pytest.fixture(scope='session')
def robots_dir() -> Path:
    """Folder of the example-robot-data URDFs (installed by the pip package)."""
    if not ROBOTS_DIR.is_dir():
        pytest.fail(f'example-robot-data not installed: {ROBOTS_DIR} missing')
    return ROBOTS_DIR


@pytest.fixture(scope='session')
def ur5_path() -> Path:
    return robot_path('ur5')
