"""
The node's gain check (``gain_check.verdict``) with ``prediction`` and ``command_delay``.

The sim's own PD gains (Kp 100, Kd 10 on every joint) and Franka's joint-impedance example gains
on the package's panda, one tick late: refused without prediction (the line names
panda_joint7), held with it (the loop is the undelayed one); ``command_delay`` counts in whole
periods, rounded up.
"""
from __future__ import annotations

from harness.oracle import robot_path
import pytest

from rnea_ros import RobotModel
from rnea_ros.control import gain_check
from rnea_ros.control.settings import Settings

# Franka's joint impedance example (libfranka examples/joint_impedance_control.cpp).
FRANKA_KP = (600.0, 600.0, 600.0, 600.0, 250.0, 150.0, 50.0, 0.0)  # the finger: no gains
FRANKA_KD = (30.0, 30.0, 30.0, 30.0, 10.0, 10.0, 5.0, 0.0)
# The reflected rotor inertia [kg m^2] the node's model is given (armature.<joint> on the arm's
# joints): a lower bound, far below the default reality gap's 0.1 (with which both sets hold even
# one tick late). Without any, panda_joint7's link alone (M_77 ~ 0.007) is too light for Kd 10
# even undelayed at 1 kHz: the check refuses the set with prediction too.
ARMATURE = 0.005


def panda() -> RobotModel:
    return RobotModel.from_urdf_file(robot_path('panda'))


def gains(model, kp, kd) -> dict:
    names = model.joint_names
    values = {f'kp.{name}': value for name, value in zip(names, kp)}
    values.update({f'kd.{name}': value for name, value in zip(names, kd)})
    return values


def settings(model, kp, kd, **values) -> Settings:
    return Settings(rate=0.0, control_law='pd_feedforward', gains=gains(model, kp, kd)).updated(
        values, model.joint_names).validate()


def arm_armature(model) -> list:
    return [ARMATURE if name != 'panda_finger_joint1' else 0.0 for name in model.joint_names]


def test_the_sims_gains_are_refused_one_tick_late_and_held_with_prediction():
    model = panda()
    late_settings = settings(model, (100.0,) * 8, (10.0,) * 8)
    late = gain_check.verdict(model, late_settings, arm_armature(model))
    assert not late.held and late.delay == 1, late
    refused = gain_check.refusal(late, late_settings)
    assert refused.startswith('kd.panda_joint7 = 10 is more than the loop can hold on '
                              'panda_joint7'), refused
    predicted_settings = settings(model, (100.0,) * 8, (10.0,) * 8, prediction='model')
    predicted = gain_check.verdict(model, predicted_settings, arm_armature(model))
    assert predicted.held and predicted.prediction and predicted.delay == 0, predicted
    assert gain_check.refusal(predicted, predicted_settings) is None
    assert 'with prediction (undelayed)' in predicted.describe()


def test_the_ur5_holds_the_sims_gains_with_prediction():
    model = RobotModel.from_urdf_file(robot_path('ur5'))
    margin = gain_check.verdict(model, settings(model, (100.0,) * 6, (10.0,) * 6,
                                                prediction='model'))
    assert margin.held, margin


def test_frankas_example_gains_are_refused_without_prediction_and_held_with_it():
    model = panda()
    late = gain_check.verdict(model, settings(model, FRANKA_KP, FRANKA_KD), arm_armature(model))
    assert not late.held, late
    predicted = gain_check.verdict(model, settings(model, FRANKA_KP, FRANKA_KD,
                                                   prediction='model'), arm_armature(model))
    assert predicted.held, predicted


@pytest.mark.parametrize('delay, rate, ticks', [
    (0.0, 0.0, 1), (0.002, 0.0, 2), (0.0015, 0.0, 2), (0.002, 500.0, 1), (0.001, 1000.0, 1)])
def test_command_delay_is_checked_in_whole_periods_rounded_up(delay, rate, ticks):
    model = panda()
    values = settings(model, (10.0,) * 8, (1.0,) * 8, command_delay=delay)
    values = values.updated({'rate': rate})
    margin = gain_check.verdict(model, values)
    assert margin.delay == ticks and not margin.prediction, margin
    assert f'{ticks} tick{"" if ticks == 1 else "s"} late' in margin.describe()


def test_a_change_of_prediction_or_command_delay_is_checked_again():
    assert gain_check.concerns(['prediction'])
    assert gain_check.concerns(['command_delay'])
    assert not gain_check.concerns(['prediction_horizon'])


def test_prediction_needs_a_feedback_law():
    with pytest.raises(ValueError, match="^parameter 'prediction' is 'model' but control_law "
                                         "is 'feedforward': the node predicts with its own "
                                         "torques, the robot's only ones under a feedback "
                                         'law$'):
        Settings(prediction='model').validate()
