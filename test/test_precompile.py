"""
``python -m rnea_ros.precompile`` (run by the set-up command) leaves no kernel to compile.

The users' first steps run on a copy of the package whose numba cache (``__pycache__`` beside
the sources) holds what the precompile step compiled from an empty cache, nothing else: the
copy that the set-up (``scripts/_venv.sh``) kept in ``.precompiled/`` right after the step,
when its sources are the package's own; else the step runs here on a fresh copy. A fresh
process then does what users do first, on other robots and bags than the step's own: load
panda and ur5, ``mass_matrix``, ``rnea``, ``rnea_batch``, the regressor, and ``rnea_bag`` on
an MCAP bag with desired accelerations. Every numba dispatcher of the package must have loaded
from the cache: no cache miss (a miss is a compilation).
"""
from __future__ import annotations

import filecmp
import json
import os
from pathlib import Path
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

USER_FIRST_STEPS = """
import importlib, json, pkgutil, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import numba
import numpy as np
import rnea_ros
from rnea_ros import RobotModel
from rnea_ros.bag.cli import main
from harness.bagdata import PANDA, panda_bag, sample_times
from harness.oracle import robot_path

for robot in ('panda', 'ur5'):
    model = RobotModel.from_urdf_file(robot_path(robot))
    q = model.neutral_configuration()
    z = np.zeros(model.nv)
    model.mass_matrix(q)
    model.rnea(q, z, z)
    model.rnea_batch(np.tile(q, (1000, 1)), np.zeros((1000, model.nv)), np.zeros((1000, model.nv)))
    model.regressor(q, z, z)
folder = Path(sys.argv[2])
bag = panda_bag(folder / 'bag', sample_times(300), storage='mcap', desired=True,
                effort=np.ones((300, 8)))
assert main([str(bag), '--urdf', str(PANDA), '--no-plots', '--output', str(folder / 'out'),
             '--format', 'csv']) == 0
compiled = {}
for info in pkgutil.walk_packages(rnea_ros.__path__, 'rnea_ros.'):
    if info.name.endswith('__main__'):
        continue
    for name, value in vars(importlib.import_module(info.name)).items():
        if isinstance(value, numba.core.registry.CPUDispatcher):
            misses = sum(value.stats.cache_misses.values())
            if misses:
                compiled[f'{value.__module__}.{name}'] = misses
print(rnea_ros.__file__)
print(json.dumps(compiled))
"""

ROOT = Path(__file__).resolve().parents[1]
PRECOMPILED = ROOT / '.precompiled' / 'rnea_ros'  # scripts/_venv.sh's copy
NUMBA_CACHE = ('*.nbi', '*.nbc')


def same_sources(left: Path, right: Path) -> bool:
    """Whether the two package folders hold the same files, byte for byte (caches aside)."""
    compared = filecmp.dircmp(left, right, ignore=['__pycache__'])
    if compared.left_only or compared.right_only or compared.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(left, right, compared.common_files, shallow=False)
    return not (mismatch or errors) and all(
        same_sources(left / sub, right / sub) for sub in compared.common_dirs)


def precompiled_package(folder: Path) -> Path:
    """Return ``folder`` holding ``rnea_ros`` with the precompile step's cache and no other."""
    package = folder / 'rnea_ros'
    source = ROOT / 'rnea_ros'
    if (PRECOMPILED.is_dir() and any(PRECOMPILED.rglob('*.nbc'))
            and same_sources(PRECOMPILED, source)):
        # copy2 keeps the sources' times, which numba's index checks.
        shutil.copytree(PRECOMPILED, package, symlinks=True)
    else:
        shutil.copytree(source, package, ignore=shutil.ignore_patterns(*NUMBA_CACHE))
        assert not any(package.rglob('*.nbi'))
        subprocess.run([sys.executable, '-m', 'rnea_ros.precompile'], env=package_env(folder),
                       cwd=folder, check=True, capture_output=True, text=True)
    assert any(package.rglob('*.nbc'))
    return folder


def package_env(folder: Path) -> dict:
    """Import ``rnea_ros`` from ``folder``; numba's cache beside its sources."""
    env = {**os.environ, 'PYTHONPATH': str(folder)}
    env.pop('NUMBA_CACHE_DIR', None)
    return env


def test_after_precompile_the_first_user_commands_compile_nothing(tmp_path):
    folder = precompiled_package(tmp_path / 'package')
    tests = str(Path(__file__).resolve().parent)
    run = subprocess.run([sys.executable, '-c', USER_FIRST_STEPS, tests, str(tmp_path)],
                         env=package_env(folder), cwd=tmp_path, capture_output=True, text=True,
                         check=True)
    *_, imported, compiled = run.stdout.splitlines()
    assert Path(imported).is_relative_to(folder), f'rnea_ros imported from {imported}'
    compiled = json.loads(compiled)
    assert compiled == {}, f'compiled on first use despite the precompile step: {compiled}'
