"""The flake8 check of a ROS 2 ament_python package, with the project's configuration."""
from pathlib import Path

from ament_flake8.main import main_with_errors
import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = Path(__file__).resolve().parent / 'flake8.ini'


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    rc, errors = main_with_errors(argv=['--config', str(CONFIG), str(ROOT)])
    assert rc == 0, f'Found {len(errors)} code style errors / warnings:\n' + '\n'.join(errors)
