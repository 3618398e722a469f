"""
Loading a model is linear in memory: what only identification needs is built when it asks.

The regressor's table lists, per body, the joints of all its ancestors: it grows with the
square of the depth (250 MB for a 3000-link chain, 2.8 GB for 10 000 links), and so did the
warm-up's (nv, 10 nb) regressor. A model is loaded here in a fresh process and the growth of
its peak resident memory measured, and its pickle (what the node's description worker sends
back) sized.
"""
from __future__ import annotations

import json
import subprocess
import sys

from harness.corpus import chain_urdf
import numpy as np

from rnea_ros import RobotModel

LINKS = 3000
# The model of a 3000-link chain takes ~30 MB (the URDF text, the tree, the packed arrays);
# with the regressor table and the warm-up's regressor it took 1.8 GB.
PEAK_GROWTH_BOUND_MB = 300
PICKLE_BOUND_MB = 20  # 6.8 MB; 250 MB with the table

PROBE = """
import json, pickle, resource, sys
from rnea_ros import RobotModel
RobotModel.from_urdf_string(sys.argv[2])  # imports and kernels: not counted
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
model = RobotModel.from_urdf_file(sys.argv[1])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps([model.nv, (after - before) / 1024, len(pickle.dumps(model)) / 2**20]))
"""


def test_a_3000_link_model_loads_in_linear_memory(tmp_path):
    path = tmp_path / 'chain.urdf'
    path.write_text(chain_urdf(LINKS + 1))
    run = subprocess.run([sys.executable, '-c', PROBE, str(path), chain_urdf(3)],
                         capture_output=True, text=True, check=True)
    nv, growth_mb, pickle_mb = json.loads(run.stdout.splitlines()[-1])
    assert nv == LINKS
    assert growth_mb < PEAK_GROWTH_BOUND_MB, f'peak memory grew by {growth_mb:.0f} MB'
    assert pickle_mb < PICKLE_BOUND_MB, f'the pickled model takes {pickle_mb:.1f} MB'


def test_the_regressor_table_is_built_when_asked_and_not_pickled():
    import pickle
    model = RobotModel.from_urdf_string(chain_urdf(8))
    rng = np.random.default_rng(3)
    q, v, a = rng.uniform(-1, 1, (3, model.nv))
    Y = model.regressor(q, v, a)
    np.testing.assert_allclose(Y @ model.inertial_parameters().reshape(-1), model.rnea(q, v, a),
                               rtol=1e-10, atol=1e-12)
    shipped = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(shipped.regressor(q, v, a), Y)
