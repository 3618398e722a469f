"""The robot's joint controller without ROS: the PD, trajectories, stale and bad commands."""
from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.sim.controller import CommandError, JointController
from rnea_ros.sim.trajectory import TrajectoryError

NAMES = ('a', 'b')


def _controller(timeout: float = 0.1, interface: str = 'drive_pd') -> JointController:
    return JointController(NAMES, kp=10.0, kd=[1.0, 2.0], lower=[-1.0, -2.0], upper=[1.0, 2.0],
                           initial_position=[0.1, -0.2], command_joints=('b', 'a'),
                           command_timeout=timeout, command_interface=interface)


def test_pd_holds_the_initial_position_and_commands_add_in_joints_order():
    controller = _controller()
    effort = controller.effort(0.0, np.array([0.0, 0.0]), np.array([1.0, 1.0]))
    np.testing.assert_allclose(effort, [10 * 0.1 - 1.0, 10 * -0.2 - 2.0])
    controller.set_command([5.0, 7.0], 0.0)  # command_joints = (b, a)
    effort = controller.effort(0.05, np.array([0.1, -0.2]), np.zeros(2))
    np.testing.assert_allclose(effort, [7.0, 5.0])


def test_a_stale_command_goes_to_zero_and_is_counted():
    controller = _controller(timeout=0.1)
    controller.set_command([5.0, 7.0], 1.0)
    at_rest = (np.array([0.1, -0.2]), np.zeros(2))
    np.testing.assert_allclose(controller.effort(1.09, *at_rest), [7.0, 5.0])  # still fresh
    np.testing.assert_allclose(controller.effort(1.11, *at_rest), [0.0, 0.0])
    assert controller.stale_ticks == 1
    held = _controller(timeout=0.0)  # 0: held forever, as forward_command_controller
    held.set_command([5.0, 7.0], 1.0)
    np.testing.assert_allclose(held.effort(100.0, *at_rest), [7.0, 5.0])


@pytest.mark.parametrize('interface', ['drive_pd', 'effort'])
@pytest.mark.parametrize('values, reason', [([1.0], 'wrong_length'),
                                            ([1.0, np.nan], 'non_finite'),
                                            ([np.inf, 0.0], 'non_finite')])
def test_a_bad_command_is_refused_and_the_previous_one_stays(values, reason, interface):
    # effort: as ros2_controllers' ForwardCommandController, which drops a message with a
    # non-finite value and keeps writing the last one (forward_controllers_base.cpp).
    controller = _controller(timeout=0.0, interface=interface)
    controller.set_command([5.0, 7.0], 0.0)
    with pytest.raises(CommandError) as error:
        controller.set_command(values, 0.5)
    assert error.value.reason == reason
    effort = controller.effort(1.0, np.array([0.1, -0.2]), np.zeros(2))
    np.testing.assert_allclose(effort, [7.0, 5.0])


def test_a_quintic_trajectory_is_sampled_exactly_and_held_after_its_end():
    """Points with positions, velocities and accelerations of a quintic: its exact samples."""
    controller = _controller()
    t = np.array([0.0, 0.5, 1.0])
    coefficients = [0.1, 0.2, -0.3, 0.4, -0.2, 0.05]

    def poly(x, derivative=0):
        p = np.polynomial.Polynomial(coefficients).deriv(derivative)
        return p(x)
    positions = np.stack([poly(t), -0.2 + 0 * t], axis=1)
    velocities = np.stack([poly(t, 1), 0 * t], axis=1)
    accelerations = np.stack([poly(t, 2), 0 * t], axis=1)
    efforts = np.stack([t, 2 * t], axis=1)
    controller.set_trajectory(['a', 'b'], t, positions, velocities, accelerations, efforts,
                              start=2.0)
    reference = controller.sample(2.3)
    assert reference.position[0] == pytest.approx(poly(0.3), abs=1e-12)
    assert reference.velocity[0] == pytest.approx(poly(0.3, 1), abs=1e-12)
    assert reference.acceleration[0] == pytest.approx(poly(0.3, 2), abs=1e-12)
    np.testing.assert_allclose(reference.effort, [0.3, 0.6])  # linear between the points
    after = controller.sample(5.0)
    np.testing.assert_allclose(after.position, positions[-1])
    np.testing.assert_allclose(after.velocity, 0.0)
    np.testing.assert_allclose(after.effort, efforts[-1])


def test_a_trajectory_starts_from_the_held_reference_and_names_a_subset():
    controller = _controller()
    controller.set_trajectory(['a'], np.array([1.0]), np.array([[0.5]]), start=0.0)
    np.testing.assert_allclose(controller.sample(0.0).position, [0.1, -0.2])
    np.testing.assert_allclose(controller.sample(0.5).position, [0.3, -0.2])  # linear
    np.testing.assert_allclose(controller.sample(2.0).position, [0.5, -0.2])


def test_a_trajectory_stamped_to_start_later_moves_off_from_the_held_reference():
    """
    Before its start it goes from the reference held at its arrival to its first point.

    joint_trajectory_controller (``Trajectory::sample``) interpolates from the state before the
    message to the first point: the first point's acceleration is reached at the start, not
    commanded from the arrival on (it pushed a held arm 0.3 rad off before the motion began).
    """
    controller = _controller()
    t = np.array([0.0, 0.5])
    positions = np.array([[0.1, -0.2], [0.4, -0.2]])
    velocities = np.array([[0.0, 0.0], [1.0, 0.0]])
    accelerations = np.array([[3.0, 0.0], [0.0, 0.0]])
    controller.set_trajectory(['a', 'b'], t, positions, velocities, accelerations,
                              start=2.0, arrival=1.0)
    at_arrival = controller.sample(1.0)
    np.testing.assert_allclose(at_arrival.position, [0.1, -0.2], atol=1e-12)
    np.testing.assert_allclose(at_arrival.velocity, 0.0, atol=1e-12)
    np.testing.assert_allclose(at_arrival.acceleration, 0.0, atol=1e-12)
    just_before = controller.sample(2.0 - 1e-6)  # continuous into the first point
    assert just_before.acceleration[0] == pytest.approx(3.0, abs=1e-3)
    at_start = controller.sample(2.0)
    np.testing.assert_allclose(at_start.position, positions[0], atol=1e-12)
    np.testing.assert_allclose(at_start.acceleration, accelerations[0], atol=1e-12)
    np.testing.assert_allclose(controller.sample(2.5).position, positions[1], atol=1e-12)


@pytest.mark.parametrize('names, times, positions, reason, message', [
    (['a', 'c'], [1.0], [[0.0, 0.0]], 'unknown_joint',
     "unknown joint 'c'; expected names of a, b"),
    (['a', 'a'], [1.0], [[0.0, 0.0]], 'bad_names', 'joint_names is empty or repeats a name'),
    (['a'], [1.0, 1.0], [[0.0], [0.1]], 'time_not_increasing',
     'time_from_start must increase strictly from 0 or later'),
    (['a', 'b'], [1.0], [[0.0, 2.5]], 'outside_limits',
     'point 0 puts b at 2.5, beyond its limit 2'),
    (['a'], [1.0], [[np.nan]], 'non_finite', 'a point has non-finite positions'),
    (['a', 'b'], [1.0], np.zeros((1, 1)), 'length_mismatch',
     'a point has positions of another length than joint_names (2)'),
])
def test_a_bad_trajectory_is_refused_with_its_reason(names, times, positions, reason, message):
    controller = _controller()
    with pytest.raises(TrajectoryError) as error:
        controller.set_trajectory(names, np.array(times), np.array(positions), start=0.0)
    assert (error.value.reason, str(error.value)) == (reason, message)
    assert controller.trajectory is None


@pytest.mark.parametrize('derivatives', [1, 2, 3])
def test_the_trajectory_polynomials_are_scipys_hermite_interpolants(derivatives):
    """
    The closed-form interpolants equal ``BPoly.from_derivatives`` (the oracle) on uneven times.

    Regression: the sim built them per interval through scipy, 0.4 s for a 1000-point
    trajectory on the thread that steps the physics (a 400-step stall at 1 kHz).
    """
    from scipy.interpolate import BPoly
    from rnea_ros.sim.trajectory import _stack
    rng = np.random.default_rng(7)
    times = np.cumsum(rng.uniform(0.005, 0.05, 40))
    fields = [rng.normal(size=(40, 3)) for _ in range(derivatives)]
    ours = _stack(times, fields)
    samples = np.linspace(times[0], times[-1], 997)
    for j in range(3):
        oracle = BPoly.from_derivatives(times, np.stack([f[:, j] for f in fields], axis=1))
        for order in range(3):
            expected = oracle.derivative(order)(samples) if order else oracle(samples)
            got = ours.derivative(order)(samples)[:, j] if order else ours(samples)[:, j]
            scale = np.max(np.abs(expected)) + 1.0
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9 * scale)
