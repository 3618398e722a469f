"""
``rnea_bag --actuation``: friction and armature in the decomposition and the prediction.

The bag's effort is made with a known actuation model (test/harness/bagdata.py's panda trajectory,
the exact accelerations of a desired_accelerations topic, the velocities in the messages):
rnea + armature * a + friction(v) + the effort sensor's bias + Gaussian noise of 0.05 N·m.
With that actuation model the residual is the noise; without it, the friction, armature and bias
remain in the residual.
"""
from __future__ import annotations

import json

from harness.bagdata import BAG_START, PANDA, panda_bag, sample_times, trajectory
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.bag.cli import main
from rnea_ros.bag.report import read_table
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.params.actuation_file import actuation_yaml

NOISE = 0.05  # N·m
PARAMETERS = {
    'friction.panda_joint1.coulomb': 0.9, 'friction.panda_joint1.viscous': 0.6,
    'friction.panda_joint2.coulomb': 1.4, 'friction.panda_joint2.offset': -0.3,
    'friction.panda_joint4.viscous': 1.1, 'friction.panda_joint6.coulomb': 0.5,
    'armature.panda_joint1': 0.4, 'armature.panda_joint3': 0.25, 'armature.panda_joint5': 0.1,
    'friction_velocity_threshold': 0.02,
    'effort_bias.panda_joint2': 0.7, 'effort_bias.panda_joint3': -0.5,
}


@pytest.fixture(scope='module')
def recording(tmp_path_factory):
    """(model, actuation model, its YAML file, the bag, times, analytic q v a)."""
    model = RobotModel.from_urdf_file(PANDA)
    actuation = Actuation.from_parameters(model, PARAMETERS)
    directory = tmp_path_factory.mktemp('actuation')
    path = directory / 'actuation.yaml'
    path.write_text(actuation_yaml(actuation))
    times = sample_times(1500, jitter=0.2, seed=3)
    t = (times - BAG_START) * 1e-9
    q, v, a = trajectory(t), trajectory(t, 1), trajectory(t, 2)
    noise = np.random.default_rng(7).normal(0.0, NOISE, (t.size, model.nv))
    effort = model.rnea_batch(q, v, a) + actuation.armature_torques(a) \
        + actuation.friction_torques_batch(v) + actuation.effort_bias + noise
    bag = panda_bag(directory / 'bag', times, desired=True, effort=effort)
    return model, actuation, path, bag, (q, v, a)


def run(capsys, bag, out, *extra):
    code = main([str(bag), '--output', str(out), '--no-plots', '--urdf', str(PANDA), *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads((out / 'summary.json').read_text())


def rms_residuals(summary) -> np.ndarray:
    return np.array([joint['rms_residual'] for joint in summary['joints']])


def test_residual_is_the_noise_with_the_actuation_only(tmp_path, capsys, recording):
    model, actuation, path, bag, _ = recording
    with_model = rms_residuals(run(capsys, bag, tmp_path / 'with', '--actuation', str(path)))
    without = rms_residuals(run(capsys, bag, tmp_path / 'without'))
    np.testing.assert_allclose(with_model, NOISE, rtol=0.15)
    # Joints with friction or armature keep them in the residual without the actuation model.
    for k in (0, 1, 2, 3, 4, 5):
        assert without[k] > 4 * NOISE, (model.joint_names[k], without[k])
    np.testing.assert_allclose(without[[6, 7]], NOISE, rtol=0.15)  # no terms on these


def test_decomposition_has_friction_and_armature(tmp_path, capsys, recording):
    model, actuation, path, bag, (q, v, a) = recording
    out = tmp_path / 'out'
    summary = run(capsys, bag, out, '--actuation', str(path), '--format', 'csv')
    table = read_table(out / 'decomposition.csv')
    torques = read_table(out / 'torques.csv')
    friction = actuation.friction_torques_batch(v)
    inertial = model.rnea_batch(q, np.zeros_like(v), a, gravity=(0, 0, 0)) \
        + actuation.armature_torques(a)
    for k, name in enumerate(model.joint_names):
        np.testing.assert_allclose(table[f'friction/{name}'], friction[:, k], rtol=0,
                                   atol=1e-9)
        np.testing.assert_allclose(table[f'inertial/{name}'], inertial[:, k], rtol=0, atol=1e-9)
        terms = sum(table[f'{term}/{name}'] for term in (
            'inertial', 'velocity_product', 'gravity', 'external', 'friction'))
        np.testing.assert_allclose(terms, torques[name], rtol=0, atol=1e-9)
    # The measured column is the bag's effort less the sensor's bias: the prediction + noise.
    residual = read_table(out / 'residual.csv')
    for name in ('panda_joint2', 'panda_joint3'):
        np.testing.assert_allclose(residual[f'measured/{name}'] - torques[name],
                                   residual[f'residual/{name}'], rtol=0, atol=1e-9)
        assert abs(np.mean(residual[f'residual/{name}'])) < 0.01  # noise mean: 0.0013 N m
    used = summary['actuation']
    assert used['file'] == str(path)
    assert used['friction_model'] == 'coulomb-viscous-offset'
    assert used['velocity_threshold'] == pytest.approx(0.02, rel=1e-15)
    assert used['friction_joints'] == ['panda_joint1', 'panda_joint2', 'panda_joint4',
                                       'panda_joint6']
    assert used['armature_joints'] == ['panda_joint1', 'panda_joint3', 'panda_joint5']
    assert used['effort_bias_joints'] == ['panda_joint2', 'panda_joint3']
    assert used['parameters']['armature.panda_joint3'] == pytest.approx(0.25, rel=1e-15)
    assert summary['joints'][0]['rms_terms']['friction'] > 0.5
    markdown = (out / 'summary.md').read_text()
    assert f'- actuation model: `{path}`, friction coulomb-viscous-offset' in markdown
    assert 'effort bias on `panda_joint2`, `panda_joint3`' in markdown
    assert '| RMS friction |' in markdown


def test_without_actuation_no_friction_term(tmp_path, capsys, recording):
    _, _, _, bag, _ = recording
    summary = run(capsys, bag, tmp_path / 'out', '--format', 'csv')
    assert 'actuation' not in summary
    assert not any(name.startswith('friction/')
                   for name in read_table(tmp_path / 'out' / 'decomposition.csv'))
    assert 'friction' not in summary['joints'][0]['rms_terms']


def test_bad_actuation_file_is_named(tmp_path, capsys, recording):
    _, _, _, bag, _ = recording
    path = tmp_path / 'actuation.yaml'
    path.write_text('/**:\n  ros__parameters:\n    armature:\n      wrist: 0.1\n')
    code = main([str(bag), '--output', str(tmp_path / 'out'), '--urdf', str(PANDA),
                 '--actuation', str(path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"rnea_bag: error: {path}: parameter 'armature.wrist': unknown "
                          "joint 'wrist'; expected one of ['panda_joint1', ")
    assert not (tmp_path / 'out').exists()


def test_the_observer_takes_the_effort_bias_out(tmp_path, capsys, recording):
    """--observer --actuation: the sensor's bias is no external torque (motor effort)."""
    model, actuation, path, bag, _ = recording
    out = tmp_path / 'out'
    run(capsys, bag, out, '--observer', '--measured-effort', 'motor', '--actuation',
        str(path), '--format', 'csv')
    table = read_table(out / 'external_torques.csv')
    settled = table['time'] >= table['time'][0] + 0.3  # 15 time constants of the gain 50 1/s
    for name in ('panda_joint2', 'panda_joint3'):
        # Without the bias taken out r would settle at -0.7 and +0.5 N m; the filtered noise
        # is about 0.008 N m.
        assert np.abs(table[name][settled]).max() < 0.05, name
