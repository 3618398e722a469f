"""
``rnea_identify --effort current`` on the simulated robot: the effort gains recovered.

The plant (``rnea_ros.sim.plant.Plant``, MuJoCo) is the UR5 with a gap whose torque sensor
reads like a motor current: effort = (torque + offset + noise) / gain, a gain per joint from
0.8 to 1.3 (``GAINS``), with the default gap's link errors, armature and friction. It follows
the six sines of ``sine_log`` in lockstep (``sim_sines``): ``DURATION`` s without a payload
(training), then as long with a payload of known mass ``MASS`` on ``wrist_3_link`` (the anchor
bag; its centre of mass and inertia are not given to the tool). The truth: the gap's gains,
which ``rnea_identify`` writes as ``effort_gain.<joint>`` in actuation.yaml, each gain checked
against the last 30 % of the training bag (``--holdout``'s default): with the fitted gains the
identified model predicts the effort better than with gain 1.
"""
from __future__ import annotations

import json

from harness import bagdata
from harness import sine_log
from harness.sim_sines import follow_sines
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.identify.cli import main as rnea_identify
from rnea_ros.identify.gain_check import MARGIN
from rnea_ros.params.actuation_file import read_actuation
from rnea_ros.sim.gap import parse_gap
from rnea_ros.sim.plant import Plant

DURATION = 5.0  # s of each recording
RATE = 1000.0
JOINTS = ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint',
          'wrist_2_joint', 'wrist_3_joint')
GAINS = dict(zip(JOINTS, (0.8, 1.3, 1.1, 0.9, 1.2, 1.05)))
MASS = 2.0  # kg: the anchor payload, known
LINK = 'wrist_3_link'
GAP = f"""
seed: 3
inertia_errors: {{mass: 0.05, com: 0.005, inertia: 0.1}}
joints: {{armature: 0.1, coulomb: 0.5, viscous: 0.2}}
torque_sensor:
  noise: 0.05
  offset: 0.2
  gain: {{{', '.join(f'{joint}: {gain}' for joint, gain in GAINS.items())}}}
encoder_resolution: 1.2e-5
"""
PAYLOAD = f"""
payload: {{link: {LINK}, mass: {MASS}, com: [0.06, -0.04, 0.05], inertia: [0.004, 0.005, 0.003]}}
"""
RELATIVE = 0.03  # each gain within 3 % of the truth
SIGMAS = 3.0  # and within 3 standard deviations


def record(path, gap_text: str, seed: int):
    """Record ``DURATION`` s of the sines on the plant of ``gap_text``; return the bag."""
    plant = Plant(sine_log.UR5.read_text(), gap=parse_gap(gap_text), rate=RATE)
    q, v, effort = follow_sines(plant, DURATION, RATE, np.random.default_rng(seed))
    n = q.shape[0]
    times = bagdata.BAG_START + np.round(np.arange(n) / RATE * 1e9).astype(np.int64)
    return bagdata.joint_states_bag(path, times, plant.joint_names, q, v, effort)


@pytest.fixture(scope='module')
def bags(tmp_path_factory):
    folder = tmp_path_factory.mktemp('current')
    return (record(folder / 'training', GAP, 0), record(folder / 'anchor', GAP + PAYLOAD, 1),
            folder)


def test_the_effort_gains_are_recovered_within_3_percent_and_3_sigma(bags):
    training, anchor, folder = bags
    out = folder / 'identified'
    code = rnea_identify([str(training), '--urdf', str(sine_log.UR5), '--output', str(out),
                          '--no-plots', '--offset', 'sensor-bias', '--effort-delay', '0.0005',
                          '--inertial', 'base', '--effort', 'current',
                          '--anchor-payload', f'{LINK}={MASS}', '--anchor-bags', str(anchor)])
    assert code == 0
    checked = json.loads((out / 'identification.json').read_text())['effort_gain']
    data = checked['joints']
    truth = np.array([GAINS[joint] for joint in JOINTS])
    gain = np.array([data[joint]['gain'] for joint in JOINTS])
    std = np.array([data[joint]['std'] for joint in JOINTS])
    table = [(joint, t, g, s) for joint, t, g, s in zip(JOINTS, truth, gain, std)]
    assert all(data[joint]['determined'] for joint in JOINTS), table
    assert np.all(np.abs(gain - truth) <= RELATIVE * truth), table
    assert np.all(np.abs(gain - truth) <= SIGMAS * std), table
    assert checked['validation_checked']
    for joint in JOINTS:  # the validation favours every fitted gain
        rms = data[joint]['validation_rms']
        assert rms['fitted_gain'] <= (1 - MARGIN) * rms['gain_1'], (joint, rms)
        assert data[joint]['reason'] is None, data[joint]
    model = RobotModel.from_urdf_file(sine_log.UR5)
    written = read_actuation(out / 'actuation.yaml', model)
    assert written.effort_gain == pytest.approx(gain, rel=1e-12)
