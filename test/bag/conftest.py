"""The bag tests' shared fixture: ``quiet``, the panda's collision-free observer recording."""
from __future__ import annotations

from harness.observer_bags import recording
import pytest


@pytest.fixture(scope='module')
def quiet(tmp_path_factory):
    return recording(tmp_path_factory.mktemp('quiet'), 3, push=False)
