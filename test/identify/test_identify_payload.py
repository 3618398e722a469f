"""
``rnea_identify --payload`` on a synthetic UR5 carrying a 2 kg payload on ``tool0``.

The generator: the example-robot-data UR5 (its URDF is the robot's model, exactly) with a
payload of ``MASS`` kg at ``COM`` (tool0 frame) and a physical inertia about it, the joint
friction, offset, armature and effort noise of ``test_identify``'s generator, a Fourier
excitation at 500 Hz with jittered stamps for ``DURATION`` s. The tool estimates the
accelerations itself. Tolerances: the mass within 5 %, the centre of mass within 1 cm (the
task's), and each within 4 of the standard deviations the tool reports (they must be honest).
"""
from __future__ import annotations

import json
from pathlib import Path

from harness import bagdata
from harness.identify_bags import ARMATURE, COULOMB, NOISE, OFFSET, RATE, VISCOUS
from harness.oracle import robot_path
import numpy as np
import pytest
import yaml

from rnea_ros import RobotModel
from rnea_ros.dynamics.payload import Payload
from rnea_ros.identify.cli import build_parser, main

UR5 = robot_path('ur5')
LINK = 'tool0'
MASS = 2.0
COM = (0.01, -0.02, 0.06)
INERTIA = (0.004, 0.0, 0.0, 0.005, 0.0, 0.003)
DURATION = 10.0


def payload_bag(path: Path, model: RobotModel, seed: int = 5, duration: float = DURATION,
                mass: float = MASS, drift: float = 0.0) -> Path:
    """
    Write the generator's bag at ``path``.

    ``drift`` [N m]: add a slowly varying torque error of that RMS per joint (first-order
    low-passed noise, 0.1 s time constant: what a model misses lasts as long as the motion
    causing it, unlike sensor noise).
    """
    truth = model.with_payload(LINK, mass, COM, INERTIA)
    times = bagdata.sample_times(int(RATE * duration), rate=RATE, jitter=0.05, seed=seed)
    t = (times - bagdata.BAG_START) * 1e-9
    lower = np.array([j.lower for j in model.joints])
    upper = np.array([j.upper for j in model.joints])
    q, v, a = bagdata.fourier_excitation(lower, upper, t, seed=seed)
    tau = truth.rnea_batch(q, v, a) + COULOMB * np.tanh(v / 0.01) + VISCOUS * v + OFFSET \
        + ARMATURE * a
    tau += np.random.default_rng(seed + 100).standard_normal(tau.shape) * NOISE
    if drift:
        keep = np.exp(-1.0 / (0.1 * RATE))
        white = np.random.default_rng(seed + 200).standard_normal(tau.shape)
        slow = np.zeros_like(tau)
        for k in range(1, len(tau)):
            slow[k] = keep * slow[k - 1] + np.sqrt(1.0 - keep ** 2) * white[k]
        tau += drift * slow
    return bagdata.joint_states_bag(path, times, model.joint_names, q, v, tau)


@pytest.fixture(scope='module')
def ur5() -> RobotModel:
    return RobotModel.from_urdf_file(UR5)


@pytest.fixture(scope='module')
def identified(tmp_path_factory, ur5):
    bag = payload_bag(tmp_path_factory.mktemp('payload') / 'bag', ur5)
    out = tmp_path_factory.mktemp('identified')
    assert main([str(bag), '--urdf', str(UR5), '--payload', LINK, '--output', str(out)]) == 0
    return out


def test_mass_and_centre_of_mass_are_recovered(identified):
    data = json.loads((identified / 'payload.json').read_text())
    payload, std = data['payload'], data['std']
    assert payload['link'] == LINK
    assert abs(payload['mass'] - MASS) < 0.05 * MASS
    assert np.linalg.norm(np.subtract(payload['com'], COM)) < 0.01
    # The reported standard deviations are honest: the errors are within 4 of them.
    assert abs(payload['mass'] - MASS) < 4 * std['mass']
    assert np.all(np.abs(np.subtract(payload['com'], COM)) < 4 * np.array(std['com']))
    assert 0 < std['mass'] < 0.02 * MASS
    # The payload explains the residual: what is left is the noise.
    rms = data['rms']
    with_payload = np.array([rms[j]['with_payload'] for j in rms])
    without = np.array([rms[j]['robot_model'] for j in rms])
    assert np.all(with_payload < 1.1 * NOISE)
    assert np.all(without[:3] > 3 * NOISE[:3])


@pytest.mark.parametrize('seed', [11, 12, 13])
def test_the_standard_deviations_hold_for_a_torque_error_correlated_in_time(tmp_path, ur5, seed):
    """
    A slow torque error (0.3 N m RMS, 0.1 s correlation): the mass within 3 reported std.

    Regression: the std were those of white noise (H^-1); with this error they came out about
    8x too small (0.002 kg) and the mass error was up to 6 of them.
    """
    bag = payload_bag(tmp_path / 'bag', ur5, seed=seed, drift=0.3)
    out = tmp_path / 'out'
    assert main([str(bag), '--urdf', str(UR5), '--payload', LINK, '--output', str(out)]) == 0
    data = json.loads((out / 'payload.json').read_text())
    error = abs(data['payload']['mass'] - MASS)
    print(f'seed {seed}: mass error {error:.4f} kg, std {data["std"]["mass"]:.4f} kg')
    assert error < 3 * data['std']['mass']


def test_payload_yaml_is_a_node_parameters_file_of_a_physical_payload(identified, ur5):
    text = (identified / 'payload.yaml').read_text()
    params = yaml.safe_load(text)['/**']['ros__parameters']
    assert set(params) == {'payload.link', 'payload.mass', 'payload.com', 'payload.inertia'}
    assert params['payload.link'] == LINK
    assert len(params['payload.com']) == 3 and len(params['payload.inertia']) == 6
    # RobotModel.with_payload checks the payload as the node does: it is physical.
    ur5.with_payload(params['payload.link'], params['payload.mass'], params['payload.com'],
                     params['payload.inertia'])
    payload = Payload(**{k.split('.')[1]: v for k, v in params.items()})
    assert np.linalg.eigvalsh(payload.inertia_matrix).min() >= -1e-9
    assert '# Payload identified by' in text and '#   mass [' in text


def test_unknown_and_world_links_are_refused_in_one_line(tmp_path, capsys, ur5):
    bag = payload_bag(tmp_path / 'bag', ur5, duration=1.0)
    for link, words in (('nowhere', "--payload: unknown link 'nowhere'"),
                        ('base_link', "--payload: link 'base_link' is fixed to the world: a "
                                      'payload there changes no joint torque')):
        code = main([str(bag), '--urdf', str(UR5), '--payload', link, '--output',
                     str(tmp_path / 'out')])
        err = capsys.readouterr().err
        assert code == 2 and err == f'rnea_identify: error: {words}\n'
        assert not (tmp_path / 'out').exists()


def test_help_lists_the_option():
    assert '--payload LINK' in build_parser().format_help()
