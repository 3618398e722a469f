"""The pep257 (docstring) check of a ROS 2 ament_python package, ament convention."""
from pathlib import Path

from ament_pep257.main import main
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257():
    rc = main(argv=[str(ROOT / 'rnea_ros'), str(ROOT / 'test'), str(ROOT / 'bench'),
                    str(ROOT / 'launch'), str(ROOT / 'setup.py')])
    assert rc == 0, 'Found code style errors / warnings'
