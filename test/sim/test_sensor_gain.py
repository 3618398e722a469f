"""
The gap's ``torque_sensor.gain``: an effort read as motor current, (torque + offset) / gain.

Parsed per joint or for every joint, bounded and named in its errors; the plant's reading is
the torque divided by it, which the actuation model's ``effort_gain`` takes back to the torque.
"""
from __future__ import annotations

from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.errors import InputError
from rnea_ros.sim.gap import Gap, parse_gap
from rnea_ros.sim.plant import Plant

GAINS = {'shoulder_pan_joint': 0.8, 'elbow_joint': 1.3, 'wrist_3_joint': 1.1}


def test_the_gain_parses_per_joint_or_for_every_joint():
    gap = parse_gap('torque_sensor: {gain: {panda_joint1: 0.8, panda_joint4: 1.3}}')
    assert (gap.torque_gain, gap.torque_gains) == (1.0, {'panda_joint1': 0.8, 'panda_joint4': 1.3})
    gap = parse_gap('torque_sensor: {gain: 2.5}')
    assert (gap.torque_gain, gap.torque_gains) == (2.5, {})
    assert parse_gap('seed: 1').torque_gain == 1.0


@pytest.mark.parametrize('text, line', [
    ('torque_sensor: {gain: 0}', "gap 'g.yaml': torque_sensor.gain is 0: expected a number > 0"),
    ('torque_sensor: {gain: {panda_joint1: -1}}',
     "gap 'g.yaml': torque_sensor.gain.panda_joint1 is -1: expected a number > 0"),
    ('torque_sensor: {gain: {panda_joint1: 5000}}',
     "gap 'g.yaml': torque_sensor.gain.panda_joint1 is 5000: expected a number > 0 and <= 1000 "
     '[N m or N per unit of the reading]'),
    ('torque_sensor: {gain: [1, 2]}',
     "gap 'g.yaml': torque_sensor.gain is [1, 2]: expected a finite number"),
])
def test_a_bad_gain_is_one_line_naming_it(text, line):
    with pytest.raises(InputError) as error:
        parse_gap(text, "'g.yaml'")
    assert str(error.value) == line


def test_a_gain_on_a_joint_the_robot_lacks_is_refused():
    with pytest.raises(InputError) as error:
        Plant(robot_path('ur5').read_text(),
              gap=parse_gap('torque_sensor: {gain: {elbow: 2}}', "'g.yaml'"))
    assert str(error.value).startswith(
        "gap 'g.yaml': torque_sensor.gain: no actuated joint 'elbow'; joints: ")


def test_the_reading_is_the_torque_over_the_gain():
    gap = Gap(seed=3, torque_offset=0.5, torque_gains=GAINS)
    plant = Plant(robot_path('ur5').read_text(), gap=gap)
    gain = np.array([GAINS.get(name, 1.0) for name in plant.joint_names])
    np.testing.assert_array_equal(plant.effort_gain, gain)
    plant.step(np.linspace(-3.0, 3.0, plant.nv))
    torque = plant.applied_effort + plant.torque_offset
    reading = plant.measured_effort()
    np.testing.assert_allclose(reading, torque / gain, rtol=1e-15, atol=0)
    # The actuation model with the same gains and the offsets as bias gives the torque back.
    bias = dict(zip(plant.joint_names, plant.torque_offset.tolist()))
    actuation = Actuation.from_parameters(plant.nominal, {
        **{f'effort_gain.{name}': value for name, value in GAINS.items()},
        **{f'effort_bias.{name}': value for name, value in bias.items()}})
    np.testing.assert_allclose(actuation.corrected_effort(reading), plant.applied_effort,
                               rtol=0, atol=1e-12)
