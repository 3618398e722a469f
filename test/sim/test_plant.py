"""The plant without ROS: conventions of state, pushes and contacts, and tracking in a loop."""
from __future__ import annotations

import numpy as np
from oracle import robot_path
import pytest

from rnea_ros.errors import InputError
from rnea_ros.sim.gap import ContactSphere, Gap
from rnea_ros.sim.plant import pd_effort, Plant

SOLO_FEET = ('FL_FOOT', 'FR_FOOT', 'HL_FOOT', 'HR_FOOT')


def _mid_range(plant: Plant) -> np.ndarray:
    q = plant.nominal.neutral_configuration()
    for joint in plant.nominal.joints:
        if joint.nv == 1:
            q[joint.idx_q] = 0.5 * (max(joint.lower, -1.0) + min(joint.upper, 1.0))
    return q


def test_state_round_trips_through_mujoco_on_a_free_base():
    plant = Plant(robot_path('solo12').read_text(), floating_base=True)
    rng = np.random.default_rng(5)
    q = _mid_range(plant)
    q[:3] = [0.1, -0.2, 0.5]
    quaternion = rng.standard_normal(4)
    q[3:7] = quaternion / np.linalg.norm(quaternion)
    v = rng.standard_normal(plant.nv)
    plant.reset(q, v)
    np.testing.assert_allclose(plant.q(), q, atol=1e-12)
    np.testing.assert_allclose(plant.v(), v, atol=1e-12)


def test_one_step_obeys_rnea_with_the_pushing_wrench():
    """The effort is rnea(q, v, a, f_ext) at the step start: the wrench convention holds."""
    plant = Plant(robot_path('ur5').read_text())
    rng = np.random.default_rng(2)
    q, v = _mid_range(plant), 0.3 * rng.standard_normal(plant.nv)
    plant.reset(q, v)
    wrench = np.array([5.0, -3.0, 8.0, 0.4, -0.2, 0.7])
    plant.apply_wrench('wrist_3_link', wrench)
    effort = rng.uniform(-5.0, 5.0, plant.nv)
    plant.step(effort)
    expected = plant.nominal.rnea(q, v, plant.acceleration(), f_ext={'wrist_3_link': wrench})
    np.testing.assert_allclose(expected, effort, atol=1e-8)
    assert set(plant.applied_wrenches) == {'wrist_3_link'}
    plant.clear_wrench()
    assert plant.applied_wrenches == {}


def test_contact_truth_balances_the_free_base_dynamics():
    """rnea(q, v, a, f_ext=contacts) gives zero base wrench and the applied joint torques."""
    gap = Gap(contact_spheres={foot: ContactSphere(radius=0.015) for foot in SOLO_FEET})
    plant = Plant(robot_path('solo12').read_text(), floating_base=True, gap=gap)
    q = _mid_range(plant)
    q[2] = 0.35
    plant.reset(q)
    for _ in range(800):  # fall onto the floor and settle
        q, v = plant.q(), plant.v()
        plant.step(pd_effort(3.0, 0.1, 0.0, 0.0, q[7:], v[6:]))
    q, v = plant.q(), plant.v()
    effort = pd_effort(3.0, 0.1, 0.0, 0.0, q[7:], v[6:])
    plant.step(effort)
    contacts = plant.contact_wrenches()
    assert set(contacts) == set(SOLO_FEET)
    tau = plant.nominal.rnea(q, v, plant.acceleration(), f_ext=contacts)
    weight = plant.model.body_subtreemass[0] * 9.81
    np.testing.assert_allclose(tau[:6], 0.0, atol=1e-6 * weight)
    np.testing.assert_allclose(tau[6:], effort, atol=1e-6 * weight)
    total = sum(plant.data.xmat[plant.model.body(f).id].reshape(3, 3) @ w[:3]
                for f, w in contacts.items())
    assert abs(total[2] - weight) < 0.05 * weight  # nearly at rest: the floor holds the weight


def test_feedforward_of_the_exact_model_tracks_far_better_than_pd_alone():
    plant = Plant(robot_path('panda').read_text(), gap=Gap.none())
    model, rows = plant.nominal, plant.actuated_v
    centre = _mid_range(plant)

    def desired(t):
        q, v, a = centre.copy(), np.zeros(plant.nv), np.zeros(plant.nv)
        q[:7] += 0.4 * np.sin(2.0 * t + np.arange(7))
        v[:7] = 0.8 * np.cos(2.0 * t + np.arange(7))
        a[:7] = -1.6 * np.sin(2.0 * t + np.arange(7))
        return q, v, a

    def rms_error(feedforward: bool) -> float:
        plant.reset(*desired(0.0)[:2])
        errors = []
        for k in range(1500):
            q_d, v_d, a_d = desired(k * plant.timestep)
            tau = model.rnea(q_d, v_d, a_d)[rows] if feedforward else 0.0
            q, v = plant.q(), plant.v()
            plant.step(pd_effort(100.0, 10.0, q_d[rows], v_d[rows], q[rows], v[rows], tau))
            errors.append(desired((k + 1) * plant.timestep)[0][:7] - plant.q()[:7])
        return float(np.sqrt(np.mean(np.square(errors))))
    pd_alone, with_feedforward = rms_error(False), rms_error(True)
    assert pd_alone > 0.05  # the PD alone sags under gravity (rad)
    assert with_feedforward < 0.02 * pd_alone


def test_sensors_read_through_the_gap():
    gap = Gap(seed=3, torque_noise=0.1, torque_offset=0.5, encoder_resolution=1e-3)
    plant = Plant(robot_path('ur5').read_text(), gap=gap)
    plant.reset(_mid_range(plant) + 0.00042)
    position = plant.measured_position()
    np.testing.assert_allclose(position / 1e-3, np.round(position / 1e-3), atol=1e-9)
    assert np.max(np.abs(position - plant.q())) <= 0.5e-3 + 1e-12
    plant.step(np.zeros(plant.nv))
    readings = np.array([plant.measured_effort() for _ in range(400)])
    np.testing.assert_allclose(readings.mean(axis=0), plant.torque_offset, atol=0.03)
    assert np.all(np.abs(readings.std(axis=0) - 0.1) < 0.02)
    assert np.any(np.abs(plant.torque_offset) > 0.1)


def test_efforts_are_clipped_to_the_urdf_limits_and_nan_is_refused():
    plant = Plant(robot_path('ur5').read_text())
    plant.step(np.full(plant.nv, 1e6))
    np.testing.assert_allclose(plant.applied_effort, plant.effort_limits)
    before = plant.q()
    with pytest.raises(InputError, match='expected 6 finite efforts'):
        plant.step(np.array([0, 0, np.nan, 0, 0, 0.0]))
    np.testing.assert_array_equal(plant.q(), before)  # nothing stepped


def test_true_urdf_gives_the_plants_rigid_body_dynamics():
    """The default gap changes the inertias; the true URDF is what MuJoCo simulates."""
    from rnea_ros import RobotModel
    from rnea_ros.sim.gap import load_gap
    plant = Plant(robot_path('panda').read_text(), gap=load_gap('default'))
    true_model = RobotModel.from_urdf_string(plant.true_urdf)
    q, v = _mid_range(plant), np.linspace(-0.5, 0.5, plant.nv)
    a = np.linspace(1.0, -1.0, plant.nv)
    joint = plant.gap.joint_terms('panda_joint1')
    expected = true_model.rnea(q, v, a) + joint['armature'] * a + joint['viscous'] * v
    np.testing.assert_allclose(plant.inverse_dynamics(q, v, a), expected, atol=1e-8)
    nominal = plant.nominal.rnea(q, v, a)
    assert np.max(np.abs(true_model.rnea(q, v, a) - nominal)) > 0.3  # the gap is real (N m)
