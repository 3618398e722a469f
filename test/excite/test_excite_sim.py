"""
On the simulated robot, identification from the designed motion beats ordinary sines.

``bench/bench_excite_sim.py`` on the 3-DoF arm (``arm.py``): the MuJoCo plant with the default
reality gap (a 0.5 kg payload on ``tip``, mass and inertia errors, friction, armature, torque
noise, encoders), stepped in lockstep in the process at 1 kHz, tracks 10 s of the designed
motion, of random sines of the same harmonics scaled to the same limits, and of other random
sines for validation; ``rnea_identify``'s pipeline fits each of the first two. The designed
motion must give the better conditioned fit and the smaller validation residual on every joint,
on the rows the fit uses (not where a joint is nearly at rest: there the plant's stiction holds
it with any torque within its dry friction, for both fits alike).
"""
from __future__ import annotations

from pathlib import Path
import re
import sys

from harness.excite_arm import write_arm
from harness.grouped import run_grouped
import numpy as np
import pytest

from rnea_ros.sim.gap import load_gap

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(600)


def test_identification_from_the_designed_motion_beats_random_sines(tmp_path):
    urdf = write_arm(tmp_path)
    done = run_grouped([sys.executable, str(ROOT / 'bench' / 'bench_excite_sim.py'),
                        '--urdf', str(urdf), '--duration', '10', '--harmonics', '3',
                        '--base-frequency', '0.2'], cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {}
    for name in ('rnea_excite', 'random sines'):
        match = re.search(rf'^\| {name} \| (\S+) \| ([^|]+) \| (\S+) \| (\d+) \|$',
                          done.stdout, re.M)
        assert match, done.stdout
        rows[name] = (float(match[1]), [float(x) for x in match[2].split()], float(match[3]),
                      int(match[4]))
    designed, sines = rows['rnea_excite'], rows['random sines']
    assert designed[0] < 0.5 * sines[0]  # condition number of the fit
    assert designed[3] == 0 and sines[3] == 0  # every joint moves: every parameter determined
    assert len(designed[1]) == 3
    assert all(d < s for d, s in zip(designed[1], sines[1])), rows  # validation RMS per joint
    # On the rows the fit uses both are near the sensor noise (0.0509 and 0.0534 N m mean): what
    # is beyond the noise, sqrt(rms^2 - noise^2), 0.0095 against 0.0187 N m.
    noise = load_gap('default').torque_noise
    designed_excess, sines_excess = (np.sqrt(max(rms ** 2 - noise ** 2, 0.0))
                                     for rms in (designed[2], sines[2]))
    assert designed_excess < 0.6 * sines_excess, rows
