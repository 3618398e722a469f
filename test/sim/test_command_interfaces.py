"""
The robot's command interfaces in lockstep (no ROS): each law against a truth known exactly.

The panda without a gap, so that ``Plant.inverse_dynamics`` is the plant's exact inverse
dynamics; the loop is ``rnea_ros.sim.loop.run_in_process``, which steps as ``rnea_sim`` does in
lockstep.
"""
from __future__ import annotations

from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros.errors import InputError
from rnea_ros.sim.controller import CommandError, JointController
from rnea_ros.sim.loop import run_in_process
from rnea_ros.sim.plant import Plant
from rnea_ros.sim.settings import DEFAULTS, read_settings

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


def test_trajectory_effort_is_jtcs_pid_on_the_sampled_point_plus_the_next_points_effort():
    """
    Positions and efforts at 0.5 s and 1 s from the start held: both linear in between.

    Computed by hand at every step (1.2 s, past the end): e = q_d(t) - q, the integral
    ki dt sum(e), and the effort of the point one period ahead (t + dt), against the torque the
    plant applied.
    """
    kp, ki, kd = np.linspace(60.0, 20.0, 8), 5.0, 4.0
    plant, controller = _robot('trajectory_effort', kp=kp, kd=kd, ki=ki, period=1e-3)
    times = np.array([0.0, 0.5, 1.0])  # the held start, then the trajectory's two points
    positions = np.vstack([START, START + [0.2, -0.1, 0.1, 0.2, 0.1, -0.1, 0.3, 0.0],
                           START + [0.1, 0.1, -0.1, 0.1, 0.0, 0.0, 0.1, 0.01]])
    efforts = np.array([np.zeros(8), np.linspace(-5.0, 5.0, 8), np.linspace(3.0, -4.0, 8)])
    controller.set_trajectory(plant.joint_names, times[1:], positions[1:], efforts=efforts[1:],
                              start=0.0)
    integral = np.zeros(8)
    for k in range(1200):
        t = k * 1e-3
        q, v = plant.measured_position(), plant.measured_velocity()
        q_d = np.array([np.interp(t, times, positions[:, j]) for j in range(8)])
        segment = min(np.searchsorted(times, t, side='right'), 2)
        v_d = (positions[segment] - positions[segment - 1]) / 0.5 if t < 1.0 else np.zeros(8)
        effort_next = np.array([np.interp(t + 1e-3, times, efforts[:, j]) for j in range(8)])
        integral += ki * 1e-3 * (q_d - q)
        expected = kp * (q_d - q) + integral + kd * (v_d - v) + effort_next
        effort = controller.effort(t, q, v)
        np.testing.assert_allclose(effort, expected, rtol=0, atol=1e-9, err_msg=f'step {k}')
        plant.step(effort)
        np.testing.assert_allclose(plant.applied_effort, expected, rtol=0, atol=1e-9)
    assert np.all(np.abs(integral) > 0)  # the integral did act


def test_trajectory_effort_refuses_effort_commands():
    _, controller = _robot('trajectory_effort')
    with pytest.raises(CommandError) as error:
        controller.set_command(np.ones(8), 0.0)
    assert (error.value.reason, str(error.value)) == (
        'not_this_interface', 'the command interface is trajectory_effort: its PID and '
        'joint_trajectory give the torque')


def test_trajectory_effort_with_the_exact_point_efforts_tracks_better_than_its_pid_alone():
    """The points' effort is feed-forward: the plant's inverse dynamics at them cut the error."""
    positions, velocities, accelerations = _motion()
    errors = {}
    for with_effort in (True, False):
        plant, controller = _robot('trajectory_effort', kp=100.0, kd=10.0, ki=10.0)
        plant.reset(positions[0], velocities[0])
        efforts = np.array([plant.inverse_dynamics(*point)[plant.actuated_v] for point in
                            zip(positions, velocities, accelerations)]) if with_effort else None
        controller.set_trajectory(plant.joint_names, TIMES, positions, velocities,
                                  accelerations, efforts, start=0.0)
        errors[with_effort] = run_in_process(plant, controller, 2.0).rms_error()
    assert errors[True] < 0.1 * errors[False]


@pytest.mark.parametrize('interface', ['effort', 'drive_pd', 'trajectory_effort'])
def test_a_robot_compensating_gravity_holds_the_arm_still_under_a_zero_command(interface):
    """g(q) of the plant added by the robot: nothing to command to hold (and no PD error)."""
    held = {}
    for compensated in (True, False):
        plant, controller = _robot(interface, kp=100.0, kd=10.0)
        if compensated:
            controller.gravity = plant.gravity_torques
        if interface == 'effort':
            controller.set_command(np.zeros(8), 0.0)
        run = run_in_process(plant, controller, 1.0)
        held[compensated] = np.max(np.abs(run.position - START))
        if compensated:
            rest = np.zeros(plant.nv)
            gravity = plant.inverse_dynamics(START, rest, rest)[plant.actuated_v]
            np.testing.assert_allclose(run.effort[0], gravity, rtol=0, atol=1e-9)
    assert held[True] < 1e-6
    assert held[False] > 0.1  # measured: 0.55 rad of sag for the PDs (100, 10), 2.9 for effort


def test_with_gravity_compensated_by_the_robot_a_command_including_gravity_drifts():
    """The setting matters: g(q) in the command as well is gravity twice, and the arm moves."""
    moved = {}
    for compensated in (True, False):
        plant, controller = _robot('effort')
        if compensated:
            controller.gravity = plant.gravity_torques
        controller.set_command(plant.gravity_torques(START[:8]), 0.0)
        moved[compensated] = np.max(np.abs(run_in_process(plant, controller, 0.5).position
                                           - START))
    assert moved[False] < 1e-6
    assert moved[True] > 0.05


def test_gravity_compensation_needs_a_fixed_base():
    with pytest.raises(ValueError) as error:
        read_settings(_values(gravity_compensated_by_robot=True, floating_base=True))
    assert str(error.value) == ("parameter 'gravity_compensated_by_robot' is True: expected "
                                'false with floating_base (the robots that compensate gravity '
                                'have a fixed base)')
    plant = Plant(robot_path('solo12').read_text(), floating_base=True)
    with pytest.raises(InputError, match='Plant.gravity_torques: a fixed base only'):
        plant.gravity_torques(np.zeros(len(plant.joint_names)))


def _values(**changes) -> dict:
    values = dict(DEFAULTS)
    values.update(changes)
    return values


@pytest.mark.parametrize('changes, message', [
    ({'command_interface': 'torque'},
     "parameter 'command_interface' is 'torque': expected one of drive_pd, effort, "
     'trajectory_effort'),
    ({'ki': [1.0]}, "parameter 'ki' is [1.0]: expected 0 with command_interface drive_pd (only "
                    'trajectory_effort has an integral term)'),
    ({'gravity_compensated_by_robot': 1},
     "parameter 'gravity_compensated_by_robot' is 1: expected true or false"),
    ({'ki': [-1.0], 'command_interface': 'trajectory_effort'},
     "parameter 'ki' is [-1.0]: expected one or more numbers >= 0"),
])
def test_a_bad_interface_setting_is_one_line(changes, message):
    with pytest.raises(ValueError) as error:
        read_settings(_values(**changes))
    assert str(error.value) == message


def test_drive_pd_is_the_default_interface():
    settings = read_settings(_values())
    assert (settings.command_interface, settings.gravity_compensated_by_robot) == (
        'drive_pd', False)
