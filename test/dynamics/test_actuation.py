"""actuation.py: the joint terms, as arrays, ROS parameters and YAML files."""
from __future__ import annotations

import math
from pathlib import Path
import re

from harness.oracle import robot_path
import numpy as np
import pytest
import yaml

from rnea_ros import InputError, RobotModel
from rnea_ros.dynamics.actuation import (
    Actuation, BOUNDS, DEFAULT_VELOCITY_THRESHOLD, FRICTION_MODELS)
from rnea_ros.params.actuation_file import actuation_yaml, read_actuation

PANDA_PARAMS = {
    'friction.panda_joint1.coulomb': 0.8, 'friction.panda_joint1.viscous': 0.5,
    'friction.panda_joint1.offset': -0.1, 'friction.panda_joint4.coulomb': 1.2,
    'friction.panda_finger_joint1.viscous': 20.0, 'armature.panda_joint2': 0.3,
    'armature.panda_finger_joint1': 0.05, 'friction_velocity_threshold': 0.02,
    'effort_bias.panda_joint2': -0.4, 'effort_bias.panda_finger_joint1': 1.5,
    'rate': 1000.0,  # another parameter of the node's file: ignored
}


@pytest.fixture(scope='module')
def panda():
    return RobotModel.from_urdf_file(robot_path('panda'))


@pytest.fixture(scope='module')
def solo():
    return RobotModel.from_urdf_file(robot_path('solo12'), floating_base=True)


def test_friction_and_armature_torques(panda):
    actuation = Actuation.from_parameters(panda, PANDA_PARAMS)
    assert actuation.velocity_threshold == 0.02
    assert actuation.joint_names == panda.joint_names
    np.testing.assert_array_equal(actuation.coulomb, [0.8, 0, 0, 1.2, 0, 0, 0, 0])
    v = np.array([0.5, 1.0, -1.0, -0.01, 0.0, 0.0, 0.0, 0.1])
    expected = np.zeros(8)
    expected[0] = 0.8 * math.tanh(0.5 / 0.02) + 0.5 * 0.5 - 0.1
    expected[3] = 1.2 * math.tanh(-0.01 / 0.02)
    expected[7] = 20.0 * 0.1
    np.testing.assert_allclose(actuation.friction_torques(v), expected, rtol=1e-15,
                               atol=1e-15)
    out = np.full(8, np.nan)
    assert actuation.friction_torques(v, out=out) is out
    np.testing.assert_allclose(out, expected, rtol=1e-15, atol=1e-15)
    V = np.array([v, -v, np.zeros(8)])
    batch = actuation.friction_torques_batch(V)
    np.testing.assert_allclose(batch[0], expected, rtol=1e-15, atol=1e-15)
    assert batch[2, 0] == pytest.approx(-0.1, abs=1e-15)  # the offset acts at rest
    # Regressor columns [s(v), v, 1] times [coulomb, viscous, offset] give the same torques.
    columns = actuation.friction_regressor(V)
    assert columns.shape == (3, 8, 3)
    coefficients = np.stack([actuation.coulomb, actuation.viscous, actuation.offset], -1)
    np.testing.assert_allclose((columns * coefficients).sum(-1), batch, rtol=1e-15, atol=1e-15)
    a = np.arange(8.0)
    np.testing.assert_allclose(actuation.armature_torques(a), [0, 0.3, 0, 0, 0, 0, 0, 0.35],
                               rtol=1e-15, atol=0)
    assert actuation.has_friction


def test_smooth_sign_is_linear_at_rest_and_saturated_in_motion(panda):
    actuation = Actuation.from_parameters(panda, {'friction.panda_joint1.coulomb': 2.0})
    assert actuation.velocity_threshold == DEFAULT_VELOCITY_THRESHOLD == 0.01
    torque = actuation.friction_torques_batch(np.array([[1e-4] + [0] * 7, [0.05] + [0] * 7]))
    assert torque[0, 0] == pytest.approx(2.0 * 1e-2, rel=1e-4)  # ~ coulomb * v / threshold
    assert torque[1, 0] == pytest.approx(2.0, rel=1e-3)  # full Coulomb friction at 0.05 rad/s


def test_friction_model_none_switches_friction_off_not_armature(panda):
    actuation = Actuation.from_parameters(panda, dict(PANDA_PARAMS, friction_model='none'))
    assert FRICTION_MODELS == ('coulomb-viscous-offset', 'none')
    assert not actuation.has_friction
    np.testing.assert_array_equal(actuation.friction_torques(np.ones(8)), np.zeros(8))
    np.testing.assert_array_equal(actuation.friction_torques_batch(np.ones((2, 8))), 0.0)
    assert actuation.armature_torques(np.ones(8))[1] == pytest.approx(0.3, rel=1e-15)


def test_zeros_and_free_flyer_rows(solo):
    actuation = Actuation.zeros(solo)
    assert actuation.joint_names[:6] == ('',) * 6
    assert actuation.joint_names[6:] == solo.joint_names[1:]
    assert not actuation.has_friction
    params = {'friction.FL_KFE.coulomb': 0.3, 'armature.FL_KFE': 0.01}
    actuation = Actuation.from_parameters(solo, params)
    row = solo.joint('FL_KFE').idx_v
    V = np.full((2, 18), 2.0)
    torques = actuation.friction_torques_batch(V)
    assert np.flatnonzero(torques[0]).tolist() == [row]
    assert np.flatnonzero(actuation.friction_regressor(V)[0, :, 2]).tolist() == \
        list(range(6, 18))


def test_parameters_and_yaml_round_trip(panda, tmp_path):
    actuation = Actuation.from_parameters(panda, PANDA_PARAMS)
    params = actuation.to_parameters()
    assert params['friction.panda_joint1.offset'] == -0.1
    assert params['armature.panda_joint7'] == 0.0
    assert params['friction_velocity_threshold'] == 0.02
    assert params['friction_model'] == 'coulomb-viscous-offset'
    assert params['effort_bias.panda_joint2'] == -0.4 and params['effort_bias.panda_joint1'] == 0
    again = Actuation.from_parameters(panda, params)
    text = actuation_yaml(actuation)
    document = yaml.safe_load(text)
    section = document['/**']['ros__parameters']
    assert section['friction']['panda_joint1']['coulomb'] == 0.8
    assert section['armature']['panda_finger_joint1'] == 0.05
    assert isinstance(section['armature']['panda_joint1'], float)  # a ROS double, not an int
    assert section['effort_bias']['panda_finger_joint1'] == 1.5
    path = tmp_path / 'actuation.yaml'
    path.write_text(text)
    loaded = read_actuation(path, panda)
    for model in (again, loaded):
        for name in ('coulomb', 'viscous', 'offset', 'armature', 'effort_bias'):
            np.testing.assert_array_equal(getattr(model, name), getattr(actuation, name))
        assert model.velocity_threshold == actuation.velocity_threshold


def test_yaml_with_flat_names_and_several_sections(panda, tmp_path):
    path = tmp_path / 'params.yaml'
    path.write_text('/**:\n  ros__parameters:\n    friction.panda_joint2.viscous: 1.5\n'
                    '    publish_rate: 100.0\n'
                    'rnea:\n  ros__parameters:\n    armature:\n      panda_joint3: 0.25\n')
    actuation = read_actuation(path, panda)
    assert actuation.viscous[1] == 1.5
    assert actuation.armature[2] == 0.25


def test_bad_parameters(panda, solo, tmp_path):
    cases = [
        (panda, {'friction.elbow.coulomb': 1.0},
         r"^parameter 'friction.elbow.coulomb': unknown joint 'elbow'; expected one of "
         r"\['panda_joint1', "),
        (panda, {'armature.panda_finger_joint2': 1.0},
         r"^parameter 'armature.panda_finger_joint2': unknown joint 'panda_finger_joint2'"),
        (solo, {'armature.root_joint': 1.0},
         r"^parameter 'armature.root_joint': joint 'root_joint' is a free-flyer joint; "
         r'friction, armature, effort bias and gain apply to revolute, continuous and '
         r'prismatic joints$'),
        (panda, {'effort_bias.panda_hand': 1.0},
         r"^parameter 'effort_bias.panda_hand': unknown joint 'panda_hand'"),
        (panda, {'effort_bias.panda_joint1': math.inf},
         r"^parameter 'effort_bias.panda_joint1': expected a number from -1e\+06 to 1e\+06, "
         r'got inf$'),
        (panda, {'effort_bias.panda_joint1': 1e300},  # the observer's torques: inf
         r"^parameter 'effort_bias.panda_joint1': expected a number from -1e\+06 to 1e\+06, "
         r'got 1e\+300$'),
        (panda, {'armature.panda_joint1': 1e300},  # the inertial torques: inf
         r"^parameter 'armature.panda_joint1': expected a number from 0 to 1e\+06, got "
         r'1e\+300$'),
        (panda, {'armature.panda_joint1': 10 ** 400},  # no float holds it
         r"^parameter 'armature.panda_joint1': expected a number from 0 to 1e\+06, got "
         r'100000000000000000...0000000000000000000$'),
        (panda, {'friction.panda_joint1.stiction': 1.0},
         r"^parameter 'friction.panda_joint1.stiction': expected "
         r'friction.<joint>.\{coulomb,viscous,offset\}$'),
        (panda, {'friction.panda_joint1.viscous': -1.0},
         r"^parameter 'friction.panda_joint1.viscous': expected a number from 0 to 1e\+06, got "
         r'-1.0$'),
        (panda, {'armature.panda_joint1': 'heavy'},
         r"^parameter 'armature.panda_joint1': expected a number, got 'heavy'$"),
        (panda, {'friction.panda_joint1.offset': math.nan},
         r"^parameter 'friction.panda_joint1.offset': expected a number from -1e\+06 to 1e\+06, "
         r'got nan$'),
        (panda, {'friction_velocity_threshold': 0.0},
         r'^friction_velocity_threshold: expected a positive number \(rad/s\), got 0.0$'),
        (panda, {'friction_model': 'lugre'},
         r"^friction_model: expected one of \('coulomb-viscous-offset', 'none'\), got 'lugre'$"),
    ]
    for model, params, message in cases:
        with pytest.raises(InputError, match=message):
            Actuation.from_parameters(model, params)
    actuation = Actuation.zeros(panda)
    for call, message in [
            (lambda: actuation.friction_torques(np.zeros(7)),
             r'^v: expected shape \(8,\), got \(7,\)$'),
            (lambda: actuation.friction_torques_batch(np.full((2, 8), np.nan)),
             r'^V: values must be finite$'),
            (lambda: actuation.friction_torques(np.zeros(8), out=np.zeros(8, np.int64)),
             r'^out: expected a writeable float64 array of shape \(8,\)$'),
            (lambda: actuation.armature_torques(np.zeros((2, 2, 8))),
             r'^a: expected shape \(8,\) or \(N, 8\), got \(2, 2, 8\)$')]:
        with pytest.raises(InputError, match=message):
            call()
    bad = tmp_path / 'bad.yaml'
    for text, message in [('joint_states: [1, 2\n', 'cannot read the actuation model'),
                          ('friction: 1\n', 'expected a ROS 2 parameters file'),
                          ('/**:\n  ros__parameters:\n    armature:\n      wrist: 1.0\n',
                           "parameter 'armature.wrist': unknown joint 'wrist'")]:
        bad.write_text(text)
        with pytest.raises(InputError, match=f'^{re.escape(str(bad))}: .*{re.escape(message)}'):
            read_actuation(bad, panda)


def test_the_effort_bias_is_taken_out_of_the_measured_effort_and_never_a_torque(panda):
    """effort_bias: corrected_effort = measured - bias; the model's torques do not see it."""
    biased = Actuation.from_parameters(panda, PANDA_PARAMS)
    plain = Actuation.from_parameters(panda, {key: value for key, value in PANDA_PARAMS.items()
                                              if not key.startswith('effort_bias.')})
    bias = np.zeros(8)
    bias[1], bias[7] = -0.4, 1.5
    np.testing.assert_array_equal(biased.effort_bias, bias)
    np.testing.assert_array_equal(plain.effort_bias, np.zeros(8))
    effort = np.linspace(-2.0, 3.0, 8)
    np.testing.assert_array_equal(biased.corrected_effort(effort), effort - bias)
    out = np.empty(8)
    assert biased.corrected_effort(effort, out=out) is out
    efforts = np.stack([effort, 2 * effort])
    np.testing.assert_array_equal(biased.corrected_effort(efforts), efforts - bias)
    np.testing.assert_array_equal(plain.corrected_effort(effort), effort)
    v = np.linspace(-1.0, 1.0, 8)
    np.testing.assert_array_equal(biased.friction_torques(v), plain.friction_torques(v))
    np.testing.assert_array_equal(biased.friction_torques_batch(v[None]),
                                  plain.friction_torques_batch(v[None]))
    np.testing.assert_array_equal(biased.armature_torques(v), plain.armature_torques(v))
    with pytest.raises(InputError, match=r'^Actuation.effort_bias: expected 8 finite numbers'):
        Actuation(biased.joint_names, *(np.zeros(8),) * 4, effort_bias=np.full(8, np.nan))


def test_the_node_docs_state_the_bounds_of_the_terms():
    page = Path(__file__).parents[2] / 'docs' / 'node' / 'parameters.md'
    text = ' '.join(page.read_text().split())
    low, high = BOUNDS['armature']
    assert BOUNDS['coulomb'] == BOUNDS['viscous'] == (low, high)
    assert f'Coulomb, viscous and armature are from {low:g} to {high:g}' in text
    low, high = BOUNDS['offset']
    assert BOUNDS['effort_bias'] == (low, high)
    assert f'the offset and the bias from {low:g} to {high:g}' in text
    low, high = BOUNDS['effort_gain']
    assert f'default 1, from {low:g} to {high:g}' in text
