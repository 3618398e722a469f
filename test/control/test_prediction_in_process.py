"""
``prediction: model`` in the loop: the node's core around the simulated robot, in lockstep.

``inprocess_law.run_law_in_process``: ``rnea_ros.sim.Plant`` with ``command_interface: effort``
(the command is the whole torque, held until the next), the demo trajectory, the node's
``ControlCore`` with ``pd_feedforward`` at Kp 100 / Kd 10 on every joint; each command applies
``late_steps`` ticks after the sample it answers (deterministic). The reference: the same law
applied without delay (``late_steps=0``, no prediction). The true model (gap ``none``: the node's
URDF is the robot) and the default reality gap (the node on the URDF, the robot with a payload,
armature and friction the node does not know).
"""
from __future__ import annotations

from inprocess_law import run_law_in_process
import numpy as np
from oracle import robot_path
import pytest

from rnea_ros import RobotModel

pytestmark = pytest.mark.timeout(600)

DURATION = 3.0  # s of the demo trajectory (sim time)
TICK = 1e-3  # s: the plant's step


def gains(model, kp=100.0, kd=10.0) -> dict:
    values = {f'kp.{name}': kp for name in model.joint_names}
    values.update({f'kd.{name}': kd for name in model.joint_names})
    return values


def rms(robot, gap, late_steps, params=None, **keywords):
    urdf = robot_path(robot).read_text()
    model = RobotModel.from_urdf_string(urdf)
    tracking, _, velocities = run_law_in_process(urdf, gap, DURATION, 'pd_feedforward',
                                                 gains(model), late_steps=late_steps,
                                                 params=params, **keywords)
    return tracking.rms, np.abs(velocities).max()


@pytest.mark.parametrize('robot, gap, within', [
    ('panda', 'none', 1.2), ('ur5', 'none', 1.2), ('panda', 'default', 1.3),
    ('ur5', 'default', 1.3)])
def test_one_tick_late_with_prediction_tracks_as_the_law_without_delay(robot, gap, within):
    undelayed, _ = rms(robot, gap, 0)
    predicted, _ = rms(robot, gap, 1, {'prediction': 'model'})
    print(f'{robot} gap {gap}: RMS {predicted:.3e} rad predicted one tick late, '
          f'{undelayed:.3e} undelayed: {predicted / undelayed:.3f}x')
    assert predicted <= within * undelayed, (predicted, undelayed)


@pytest.mark.parametrize('robot', ['panda', 'ur5'])
def test_two_ticks_late_with_command_delay_set_tracks_within_one_and_a_half(robot):
    undelayed, _ = rms(robot, 'default', 0)
    predicted, _ = rms(robot, 'default', 2, {'prediction': 'model', 'command_delay': 2 * TICK})
    print(f'{robot}: RMS {predicted:.3e} rad predicted two ticks late, {undelayed:.3e} '
          f'undelayed: {predicted / undelayed:.3f}x')
    assert predicted <= 1.5 * undelayed, (predicted, undelayed)


# Franka's joint-impedance example gains (libfranka examples/joint_impedance_control.cpp): on
# the default gap's panda (armature 0.1 kg m^2), the node given a smaller armature (0.01: the
# check is on the node's model) refuses them one tick late without prediction
# (test_gain_check_prediction) and holds them with it.
FRANKA_KP = (600.0, 600.0, 600.0, 600.0, 250.0, 150.0, 50.0, 0.0)
FRANKA_KD = (30.0, 30.0, 30.0, 30.0, 10.0, 10.0, 5.0, 0.0)
FRANKA_ARMATURE = 0.01


def test_frankas_example_gains_hold_with_prediction():
    urdf = robot_path('panda').read_text()
    model = RobotModel.from_urdf_string(urdf)
    names = model.joint_names
    franka = {f'kp.{name}': kp for name, kp in zip(names, FRANKA_KP)}
    franka.update({f'kd.{name}': kd for name, kd in zip(names, FRANKA_KD)})
    armature = {f'armature.{name}': FRANKA_ARMATURE for name in names[:7]}
    tracking, _, velocities = run_law_in_process(
        urdf, 'default', DURATION, 'pd_feedforward', franka, late_steps=1,
        params={'prediction': 'model', **armature})
    reference, _, _ = run_law_in_process(urdf, 'default', DURATION, 'pd_feedforward',
                                         gains(model), late_steps=0)
    print(f'Franka gains predicted one tick late: RMS {tracking.rms:.3e} rad (Kp 100 / Kd 10 '
          f'undelayed {reference.rms:.3e}), largest speed {np.abs(velocities).max():.2f} rad/s')
    assert tracking.rms <= reference.rms, (tracking, reference)


STALL = 1.0  # s: every input goes silent (the demo motion: ~2 rad/s on the fastest joint)
SILENT = 0.5  # s without joint_states (the desired motion does not come back)
REST_AFTER = 0.5  # s after joint_states return: every joint below REST_SPEED from then on
REST_SPEED = 0.05  # rad/s


@pytest.mark.parametrize('robot, gap, drift', [
    ('panda', 'default', 0.1), ('panda', 'none', 0.05), ('ur5', 'default', 0.1)])
def test_a_stall_is_carried_through_to_a_damped_rest(robot, gap, drift):
    urdf = robot_path(robot).read_text()
    model = RobotModel.from_urdf_string(urdf)
    duration = STALL + SILENT + 2 * REST_AFTER
    _, positions, velocities = run_law_in_process(
        urdf, gap, duration, 'pd_feedforward', gains(model), stall_at=STALL,
        silent=(STALL, STALL + SILENT), late_steps=1, params={'prediction': 'model'})
    start, back = int(round(STALL / TICK)), int(round((STALL + SILENT) / TICK))
    speed = np.abs(velocities[start]).max()
    largest = np.abs(positions[start:] - positions[start]).max()
    settled = np.abs(velocities[back + int(round(REST_AFTER / TICK)):]).max()
    print(f'{robot} gap {gap}: {speed:.2f} rad/s at the stall, drift {largest:.3f} rad, '
          f'{settled:.4f} rad/s from {REST_AFTER} s after joint_states return')
    assert speed >= 1.5, speed
    assert largest <= drift, largest
    assert settled < REST_SPEED, settled
