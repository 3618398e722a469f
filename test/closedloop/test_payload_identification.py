"""
``rnea_identify --payload`` on the simulated robot: a payload the sim's gap adds, found again.

The panda in ``rnea_sim`` (lockstep, its PD alone on the demo trajectory, ``DURATION`` s) carries
a payload of known mass, centre of mass and inertia on ``panda_link8`` (the flange) that the URDF
does not have, with effort noise (the gap below; the sim merges the payload into the link,
``sim/true_urdf.py``). Its recorded bag goes to ``rnea_identify --payload panda_link8`` with the
plain URDF: the mass within 5 % and the centre of mass within 1 cm of the gap's.
"""
from __future__ import annotations

import json

from harness.loop_harness import run_loop
from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros.identify.cli import main as identify

pytestmark = pytest.mark.timeout(900)

# s of trajectory (sim time). Measured: 1.978 kg and the com 1.3 mm off, as from 30 s (1.977 kg,
# 1.3 mm); the standard deviation of the mass 3.1 g (2.2 g).
DURATION = 15.0
MASS = 2.0
COM = (0.01, -0.02, 0.08)
GAP = f"""\
payload: {{link: panda_link8, mass: {MASS}, com: {list(COM)}, inertia: [0.01, 0.012, 0.008]}}
torque_sensor: {{noise: 0.05}}
"""


def test_the_payload_of_the_sims_gap_is_identified_from_its_bag(tmp_path):
    gap = tmp_path / 'payload_gap.yaml'
    gap.write_text(GAP)
    urdf = robot_path('panda')
    run = run_loop(tmp_path, urdf.read_text(), 'pd', str(gap), DURATION)
    assert run.exit_codes['sim'] == 0, run.logs
    out = tmp_path / 'payload'
    assert identify([str(tmp_path / 'pd_bag'), '--urdf', str(urdf), '--payload', 'panda_link8',
                     '--output', str(out)]) == 0
    found = json.loads((out / 'payload.json').read_text())
    print(found['payload'], found['std'])
    assert abs(found['payload']['mass'] - MASS) < 0.05 * MASS
    assert np.linalg.norm(np.subtract(found['payload']['com'], COM)) < 0.01
