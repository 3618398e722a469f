"""
``effort_gain.<joint>`` of the actuation model: the effort sensor's gain (N m per A of a current).

measured torque = effort_gain * effort - effort_bias (``Actuation.corrected_effort``); the
gain is a parameter and a line of actuation.yaml, checked, and never a torque.
``test/bag/test_bag_effort_gain.py`` follows it into rnea_bag and the observers.
"""
from __future__ import annotations

from harness.bagdata import PANDA
from harness.current_sensor import BIAS, GAINS, PARAMETERS, vector
import numpy as np
import pytest
import yaml

from rnea_ros import InputError, RobotModel
from rnea_ros.dynamics.actuation import Actuation, MAX_EFFORT_GAIN
from rnea_ros.params.actuation_file import actuation_yaml, read_actuation


@pytest.fixture(scope='module')
def panda() -> RobotModel:
    return RobotModel.from_urdf_file(PANDA)


def test_the_gain_scales_the_effort_and_round_trips(panda, tmp_path):
    actuation = Actuation.from_parameters(panda, PARAMETERS)
    gain, bias = vector(panda, GAINS, 1.0), vector(panda, BIAS, 0.0)
    np.testing.assert_array_equal(actuation.effort_gain, gain)
    effort = np.linspace(-2.0, 3.0, panda.nv)
    np.testing.assert_array_equal(actuation.corrected_effort(effort), gain * effort - bias)
    efforts = np.stack([effort, 2 * effort])
    np.testing.assert_array_equal(actuation.corrected_effort(efforts), gain * efforts - bias)
    out = np.empty(panda.nv)
    assert actuation.corrected_effort(effort, out=out) is out
    np.testing.assert_array_equal(out, gain * effort - bias)
    # Never a torque: friction and armature as without it.
    plain = Actuation.zeros(panda)
    v = np.linspace(-1.0, 1.0, panda.nv)
    np.testing.assert_array_equal(actuation.friction_torques(v), plain.friction_torques(v))
    np.testing.assert_array_equal(actuation.armature_torques(v), plain.armature_torques(v))
    # Parameters and file: written, read back the same; a model without gains has none listed.
    assert actuation.to_parameters()['effort_gain.panda_joint1'] == 12.5
    assert actuation.to_parameters()['effort_gain.panda_joint3'] == 1.0
    path = tmp_path / 'actuation.yaml'
    path.write_text(actuation_yaml(actuation))
    np.testing.assert_array_equal(read_actuation(path, panda).effort_gain, gain)
    section = yaml.safe_load(path.read_text())['/**']['ros__parameters']
    assert section['effort_gain']['panda_joint2'] == 0.8
    assert 'effort_gain' not in yaml.safe_load(actuation_yaml(plain))['/**']['ros__parameters']


@pytest.mark.parametrize('value, message', [
    (0.0, "parameter 'effort_gain.panda_joint1': expected a number from 1e-06 to 1e+06, got 0.0"),
    (-1.0, "parameter 'effort_gain.panda_joint1': expected a number from 1e-06 to 1e+06, got "
           '-1.0'),
    (2 * MAX_EFFORT_GAIN, "parameter 'effort_gain.panda_joint1': expected a number from 1e-06 "
                          'to 1e+06, got 2000000.0'),
    (float('nan'), "parameter 'effort_gain.panda_joint1': expected a number from 1e-06 to 1e+06, "
                   'got nan'),
    ('2', "parameter 'effort_gain.panda_joint1': expected a number, got '2'"),
])
def test_a_bad_gain_names_the_parameter(panda, value, message):
    with pytest.raises(InputError) as caught:
        Actuation.from_parameters(panda, {'effort_gain.panda_joint1': value})
    assert str(caught.value) == message


def test_the_gain_is_refused_on_a_joint_that_takes_none(panda):
    with pytest.raises(InputError, match=r"^parameter 'effort_gain.panda_hand': unknown joint"):
        Actuation.from_parameters(panda, {'effort_gain.panda_hand': 2.0})
    with pytest.raises(InputError, match=r'^Actuation.effort_gain: expected numbers from 1e-06'):
        Actuation(Actuation.zeros(panda).joint_names, *(np.zeros(panda.nv),) * 4,
                  effort_gain=np.zeros(panda.nv))
