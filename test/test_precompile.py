"""
``python -m rnea_ros.precompile`` (run by the set-up command) leaves no kernel to compile.

The precompile step runs with an empty numba cache (``NUMBA_CACHE_DIR``: nothing left by other
tests helps); then a fresh process does what users do first, on other robots and bags than the
step's own: load panda and ur5, ``mass_matrix``, ``rnea``, ``rnea_batch``, the regressor, and
``rnea_bag`` on an MCAP bag with desired accelerations. Every numba dispatcher of the package
must have loaded from the cache: no cache miss (a miss is a compilation).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
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
from bagdata import PANDA, panda_bag, sample_times
from oracle import robot_path

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
print(json.dumps(compiled))
"""


def test_after_precompile_the_first_user_commands_compile_nothing(tmp_path):
    env = {**os.environ, 'NUMBA_CACHE_DIR': str(tmp_path / 'numba_cache')}
    subprocess.run([sys.executable, '-m', 'rnea_ros.precompile'], env=env, check=True,
                   capture_output=True, text=True)
    assert any((tmp_path / 'numba_cache').rglob('*.nbc'))
    tests = str(Path(__file__).resolve().parent)
    run = subprocess.run([sys.executable, '-c', USER_FIRST_STEPS, tests, str(tmp_path)], env=env,
                         capture_output=True, text=True, check=True)
    compiled = json.loads(run.stdout.splitlines()[-1])
    assert compiled == {}, f'compiled on first use despite the precompile step: {compiled}'
