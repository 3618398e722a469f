"""
``prediction: model`` in the loop: the node's core around the simulated robot, in lockstep.

``inprocess_law.run_law_in_process``: ``rnea_ros.sim.Plant`` with ``command_interface: effort``
(the command is the whole torque, held until the next), the demo trajectory, the node's
``ControlCore`` with ``pd_feedforward`` at Kp 100 / Kd 10 on every joint; each command applies
``late_steps`` ticks after the sample it answers (deterministic); the core takes the whole
trajectory at the start, as the node takes a JointTrajectory, and samples it at the time its
command applies. The reference: the same law applied without delay (``late_steps=0``, no
prediction). The true model (gap ``none``: the node's
URDF is the robot) and the default reality gap (the node on the URDF with the gap's armature, as
an actuation file gives it; the robot with a payload, inertias 10 % off and friction the node
does not know); the reference runs the same node parameters without prediction.
"""
from __future__ import annotations

from harness import stall
from harness.inprocess_law import run_law_in_process
from harness.least_drift import least_drift
from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.demos.closed_loop import stiff_gains as gains  # Kp 100 / Kd 10 on every joint
from rnea_ros.sim.gap import load_gap

pytestmark = pytest.mark.timeout(600)

DURATION = 3.0  # s of the demo trajectory (sim time)
TICK = 1e-3  # s: the plant's step


# The gap's reflected rotor inertia (rnea_ros/sim/gaps/default.yaml, joints.armature), given to
# the node as an actuation file would (armature.<joint>): the prediction integrates what the
# torque accelerates. The rest of the gap (a payload, 10 % inertias, friction, sensor noise) the
# node does not know.
def armature(model, gap) -> dict:
    """Return the node's armature.<joint> of ``gap`` (none for 'none')."""
    return load_gap(gap).armature_parameters(model.joint_names)


def rms(robot, gap, late_steps, params=None, **keywords):
    urdf = robot_path(robot).read_text()
    model = RobotModel.from_urdf_string(urdf)
    params = {**(params or {}), **armature(model, gap)}
    tracking, _, velocities = run_law_in_process(urdf, gap, DURATION, 'pd_feedforward',
                                                 gains(model), late_steps=late_steps,
                                                 params=params, whole=True, **keywords)
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
        params={'prediction': 'model', **armature}, whole=True)
    reference, _, _ = run_law_in_process(urdf, 'default', DURATION, 'pd_feedforward',
                                         gains(model), late_steps=0, whole=True)
    print(f'Franka gains predicted one tick late: RMS {tracking.rms:.3e} rad (Kp 100 / Kd 10 '
          f'undelayed {reference.rms:.3e}), largest speed {np.abs(velocities).max():.2f} rad/s')
    assert tracking.rms <= reference.rms, (tracking, reference)


REST_SPEED = 0.05  # rad/s: every joint below it from stall.REST_AFTER after joint_states return


def stalled(robot, gap, prediction, payload=False, estimate=False, **more) -> stall.Stall:
    """
    Return the stall's measures (``harness.stall.Stall``).

    ``payload``: the node told the gap's payload; ``estimate``: it estimates one online on the
    gap's payload link (``stall_payload_estimate``), the true model's too.
    """
    urdf = robot_path(robot).read_text()
    model = RobotModel.from_urdf_string(urdf)
    if estimate:
        more['stall_payload_estimate'] = stall.told_payload(urdf, 'default').link
    return stall.stalled(urdf, gap, {'prediction': prediction, **armature(model, gap), **more},
                         payload=payload)


# Measured: 0.047 rad (panda), 0.105 (ur5) on the true model: the braking as hard as the
# weakest joint's effort limit allows (the panda's shoulder carrying its weight, panda_joint2:
# 44 N m of room at 1.7 rad/s). With the default gap and the node told its armature only, 0.276
# (panda), 0.232 (ur5): the braking itself drifts 0.06-0.09 rad, the rest is the blind hold, open
# loop, at the model's g(q) and after a brake on the model's inertia, of an arm carrying a
# payload the node does not know (0.5 kg: the payload alone 0.31 rad, the inertia errors alone
# 0.20, friction alone 0.046). Told the payload too (payload.*, as a user gives it), 0.053
# (panda), 0.109 (ur5: its braking's, as on the true model). After joint_states return the
# stop's hold about the first pose known again brings every joint below REST_SPEED within
# stall.REST_AFTER (the default gap's panda: 0.15 s; the law's damped rest g(q) - D v, which held
# no pose, let it sag on at 0.5 rad/s). With the payload estimated online
# (stall_payload_estimate, not told): 0.065 (panda), 0.126 (ur5); on the true model the gate
# leaves no estimate (-2e-4 kg, -1e-3 kg) and the drift is the true model's.
# least: the drift is within this factor of the least drift any torques within the plant's effort
# limits reach from the stall's state (stall.least: known in advance, as no controller knows
# them), where the node knows the dynamics (the true model, the payload told or estimated); None:
# not judged (the default gap, nothing told: the blind hold of an unknown payload). The ur5's
# braking is that least, to 2 %: from 1.8 rad/s on every joint no torque within its limits stops
# it within 0.05 rad (0.102 rad on the true model, 0.123 with the default gap). The panda's is
# 1.3x its least (0.047 against 0.036 rad): the brake scales the acceleration of every joint by
# the weakest joint's room, where the least plans every joint's torque over the whole stop,
# using the coupling (each joint braking as hard as its own room allows drifts more).
@pytest.mark.parametrize('robot, gap, payload, estimate, drift, least', [
    ('panda', 'none', False, False, 0.05, 1.35), ('ur5', 'none', False, False, 0.12, 1.05),
    ('panda', 'default', False, False, 0.3, None), ('ur5', 'default', False, False, 0.25, None),
    ('panda', 'default', True, False, 0.1, 1.35), ('ur5', 'default', True, False, 0.12, 1.05),
    ('panda', 'none', False, True, 0.05, 1.35), ('ur5', 'none', False, True, 0.12, 1.05),
    ('panda', 'default', False, True, 0.1, 1.35), ('ur5', 'default', False, True, 0.13, 1.05)])
def test_a_stall_is_carried_through_to_rest(robot, gap, payload, estimate, drift, least):
    run = stalled(robot, gap, 'model', payload, estimate)
    bound = stall.least(robot_path(robot).read_text(), gap, run.q, run.v)
    print(f'{robot} gap {gap}{" (payload told)" if payload else ""}'
          f'{" (payload estimated)" if estimate else ""}: {run.speed:.2f} rad/s at the '
          f'stall, drift {run.drift:.3f} rad ({run.drift / bound:.2f}x the least, '
          f'{bound:.3f}), {run.settled:.4f} rad/s from {stall.REST_AFTER} s after '
          'joint_states return')
    assert run.speed >= 1.5, run.speed
    assert run.drift <= drift, run.drift
    assert least is None or run.drift <= least * bound, (run.drift, bound)
    assert run.settled < REST_SPEED, run.settled


def test_the_payload_is_estimated_when_the_trajectory_came_whole():
    """
    The estimate is fitted whether the core took the trajectory whole or point by point.

    Regression: run_law_in_process did not call its ``each`` (the refit) with ``whole``, and
    bench_stall's lockstep rows with ``--estimate`` showed the drift without it (0.275 rad).
    """
    urdf = robot_path('panda').read_text()
    model = RobotModel.from_urdf_string(urdf)
    run = stall.stalled(urdf, 'default', {
        'prediction': 'model', **armature(model, 'default'),
        'stall_payload_estimate': stall.told_payload(urdf, 'default').link}, whole=True)
    assert run.speed >= 1.5 and run.drift <= 0.1, run


# One joint about the vertical (no gravity torque), inertia I about it with armature A, effort
# limit u: from v0 the least drift is the coast's v0 c and the hardest stop's v0^2 (I + A) / 2u.
WHEEL = """<robot name="wheel"><link name="base"/><link name="wheel"><inertial>
<mass value="2"/><inertia ixx="0.15" iyy="0.15" izz="0.3" ixy="0" ixz="0" iyz="0"/></inertial>
</link><joint name="spin" type="revolute"><parent link="base"/><child link="wheel"/>
<axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="{effort}" velocity="10"/></joint></robot>"""


@pytest.mark.parametrize('effort, v0', [(6.0, 2.0), (20.0, -1.5)])
def test_the_least_drift_is_the_hardest_stop_of_one_joint(effort, v0):
    model = RobotModel.from_urdf_string(WHEEL.format(effort=effort))
    armature, coast = 0.1, 0.003
    expected = abs(v0) * coast + v0 * v0 * (0.3 + armature) / (2.0 * effort)
    bound = least_drift(model, np.array([armature]), np.array([effort]), np.zeros(1),
                        np.array([v0]), coast=coast)
    # the programme's explicit steps of 1 ms: within v0 * 1 ms of the continuous stop
    assert bound == pytest.approx(expected, abs=abs(v0) * 1e-3), (bound, expected)


def test_without_prediction_a_stall_throws_the_arm():
    """
    The fault output g(q) at the last measured pose, undamped: the arm goes on (> 1 rad).

    One tick late without prediction these gains oscillate on panda_joint7: the loop watch's
    ``report`` lets the motion go on to the stall (its ``stop`` would have stopped it before).
    """
    speed, largest, *_ = stalled('panda', 'none', 'none', unstable_reaction='report')
    print(f'without prediction: {speed:.2f} rad/s at the stall, drift {largest:.3f} rad')
    assert largest > 1.0, largest
