"""
The robot's command interfaces in lockstep (no ROS): each law against a truth known exactly.

The panda without a gap, so that ``Plant.inverse_dynamics`` is the plant's exact inverse
dynamics; the loop is ``rnea_ros.sim.loop.run_in_process``, which steps as ``rnea_sim`` does in
lockstep.
"""
from __future__ import annotations

import numpy as np
from oracle import robot_path
import pytest

from rnea_ros.sim.controller import JointController
from rnea_ros.sim.loop import run_in_process
from rnea_ros.sim.plant import Plant
from rnea_ros.sim.settings import PARAMETERS, read_settings

URDF = robot_path('panda').read_text()
START = np.array([0.0, 0.0, 0.0, -1.5, 0.0, 1.5, 0.0, 0.02])  # the arm bent, off its rest
TIMES = np.linspace(0.0, 2.0, 41)
OMEGA = np.array([1.0, 1.3, 0.7, 1.1, 0.9, 1.2, 0.8])


def _motion() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Points (positions, velocities, accelerations) of a smooth 2 s motion of the 7 joints."""
    still = np.zeros((TIMES.size, 1))
    phase = np.outer(TIMES, OMEGA)
    positions = np.hstack([START[:7] + 0.3 * np.sin(phase), still + START[7]])
    velocities = np.hstack([0.3 * OMEGA * np.cos(phase), still])
    accelerations = np.hstack([-0.3 * OMEGA**2 * np.sin(phase), still])
    return positions, velocities, accelerations


def _robot(interface: str, timeout: float = 0.1, kp=100.0, kd=10.0, **options):
    plant = Plant(URDF)
    names = plant.joint_names
    lower = [plant.nominal.joint(n).lower for n in names]
    upper = [plant.nominal.joint(n).upper for n in names]
    controller = JointController(names, kp, kd, lower, upper, START, command_timeout=timeout,
                                 command_interface=interface, **options)
    plant.reset(START)
    return plant, controller


def _inverse_dynamics(plant: Plant):
    """Return the command of a perfect model: the plant's inverse dynamics, measured state."""
    def command(position, velocity, reference):
        q = plant.nominal.neutral_configuration()
        v, a = np.zeros(plant.nv), np.zeros(plant.nv)
        q[plant.actuated_q], v[plant.actuated_v] = position, velocity
        a[plant.actuated_v] = reference.acceleration
        return plant.inverse_dynamics(q, v, a)[plant.actuated_v]
    return command


def test_effort_the_plants_inverse_dynamics_as_command_makes_the_arm_follow_the_motion():
    """No PD: the command is the whole torque, so the exact torques alone track (and none fall)."""
    positions, velocities, accelerations = _motion()
    runs = {}
    for name, command in (('exact', True), ('none', False)):
        plant, controller = _robot('effort')
        plant.reset(positions[0], velocities[0])
        controller.set_trajectory(plant.joint_names, TIMES, positions, velocities,
                                  accelerations, start=0.0)
        runs[name] = run_in_process(plant, controller, 2.0,
                                    _inverse_dynamics(plant) if command else None)
    # Measured: 6.4e-4 rad at worst over 2 s (the integrator's error, uncorrected), against
    # 3.2 rad for the arm given no torque: no PD holds it.
    assert runs['exact'].max_error() < 2e-3
    assert runs['none'].max_error() > 1.0
    np.testing.assert_array_equal(runs['none'].effort, 0.0)  # zero before any command


def test_effort_holds_a_stale_command_as_a_forward_command_controller_does():
    """
    One command, g(q) of the start, then silence: the torque stays, the arm with it.

    The drive's PD (kp = kd = 0, to compare) drops the same command once stale and lets the arm
    fall: the difference the interface makes.
    """
    results = {}
    for interface in ('effort', 'drive_pd'):
        plant, controller = _robot(interface, timeout=0.1, kp=0.0, kd=0.0)
        gravity = plant.inverse_dynamics(plant.q(), np.zeros(plant.nv), np.zeros(plant.nv))
        controller.set_command(gravity[plant.actuated_v], 0.0)
        run = run_in_process(plant, controller, 1.0)
        results[interface] = (run, controller.stale_ticks)
    run, stale = results['effort']
    np.testing.assert_allclose(run.effort, np.tile(run.effort[0], (run.effort.shape[0], 1)),
                               rtol=0, atol=0)
    assert np.max(np.abs(run.position - START)) < 1e-6
    assert stale == 1000 - 101  # counted past command_timeout (0.1 s), applied all the same
    dropped, _ = results['drive_pd']
    np.testing.assert_array_equal(dropped.effort[-1], 0.0)
    assert np.max(np.abs(dropped.position - START)) > 0.05


def test_effort_is_the_command_alone_clipped_to_the_urdf_limit():
    plant, controller = _robot('effort')
    target = START.copy()
    target[0] = 0.1
    controller.set_trajectory(plant.joint_names, np.array([0.5]), target[None], start=0.0)
    command = np.zeros(8)
    command[0], command[1] = 1e6, -3.0
    controller.set_command(command, 0.0)
    effort = controller.effort(0.2, START - 0.2, np.ones(8))  # far from the reference: no PD
    np.testing.assert_array_equal(effort, command)
    plant.step(effort)
    assert plant.applied_effort[0] == plant.effort_limits[0] == 87.0
    assert plant.applied_effort[1] == -3.0


def _values(**changes) -> dict:
    values = {name: default for name, (default, _) in PARAMETERS.items()}
    values.update(changes)
    return values


@pytest.mark.parametrize('changes, message', [
    ({'command_interface': 'torque'},
     "parameter 'command_interface' is 'torque': expected one of drive_pd, effort"),
])
def test_a_bad_interface_setting_is_one_line(changes, message):
    with pytest.raises(ValueError) as error:
        read_settings(_values(**changes))
    assert str(error.value) == message


def test_drive_pd_is_the_default_interface():
    assert read_settings(_values()).command_interface == 'drive_pd'
