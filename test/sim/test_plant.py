"""The plant without ROS: conventions of state, pushes and contacts, and tracking in a loop."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from harness.arm_motion import KD, KP, sinusoid
from harness.oracle import robot_path
import numpy as np
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


def test_substeps_hold_the_torque_over_finer_physics_steps():
    """A step of 4 substeps is 4 steps of the 4x-rate plant with the same effort, pushes held."""
    urdf = robot_path('ur5').read_text()
    fine, coarse = Plant(urdf, rate=4000.0), Plant(urdf, substeps=4)
    assert coarse.timestep == pytest.approx(1e-3) and coarse.model.opt.timestep == 2.5e-4
    rng = np.random.default_rng(3)
    q, v = _mid_range(fine), 0.3 * rng.standard_normal(fine.nv)
    wrench = np.array([5.0, -3.0, 8.0, 0.4, -0.2, 0.7])
    for plant in (fine, coarse):
        plant.reset(q, v)
        plant.apply_wrench('wrist_3_link', wrench)
    for _ in range(5):
        effort = rng.uniform(-5.0, 5.0, fine.nv)
        for _ in range(4):
            fine.step(effort)
        coarse.step(effort)
    np.testing.assert_allclose(coarse.q(), fine.q(), atol=1e-12)
    np.testing.assert_allclose(coarse.v(), fine.v(), atol=1e-10)
    np.testing.assert_allclose(coarse.acceleration(), fine.acceleration(), atol=1e-8)
    assert coarse.time == pytest.approx(0.005, abs=1e-12)


@pytest.mark.parametrize('substeps', [0, 1.5, True])
def test_substeps_must_be_a_positive_integer(substeps):
    with pytest.raises(InputError, match=f'^Plant: substeps must be an integer >= 1, got '
                                         f'{substeps!r}$'):
        Plant(robot_path('ur5').read_text(), substeps=substeps)


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

    desired = sinusoid(centre, 0.4, 2.0)

    def rms_error(feedforward: bool) -> float:
        plant.reset(*desired(0.0)[:2])
        errors = []
        for k in range(1500):
            q_d, v_d, a_d = desired(k * plant.timestep)
            tau = model.rnea(q_d, v_d, a_d)[rows] if feedforward else 0.0
            q, v = plant.q(), plant.v()
            plant.step(pd_effort(KP, KD, q_d[rows], v_d[rows], q[rows], v[rows], tau))
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


def test_base_acceleration_is_the_classical_one_in_the_base_frame():
    plant = Plant(robot_path('solo12').read_text(), floating_base=True)
    q = _mid_range(plant)
    q[3:7] = [0.1, -0.2, 0.3, 0.9] / np.linalg.norm([0.1, -0.2, 0.3, 0.9])
    v = np.linspace(-1.0, 1.0, plant.nv)
    plant.reset(q, v)
    rotation = plant.data.xmat[plant.model.body('base_link').id].reshape(3, 3).copy()
    world_before = plant.data.qvel[:3].copy()
    plant.step(np.zeros(12))
    classical = rotation.T @ (plant.data.qvel[:3] - world_before) / plant.timestep
    np.testing.assert_allclose(plant.base_acceleration()[:3], classical, atol=1e-9)
    spatial = plant.acceleration()[:3]
    np.testing.assert_allclose(spatial, classical - np.cross(v[3:6], v[:3]), atol=1e-9)


def test_in_process_loop_with_the_urdf_feedforward_beats_pd_alone_under_the_default_gap():
    """The loop the DDS tests compare with: the node's feed-forward, computed in-process."""
    from rnea_ros.sim.controller import JointController
    from rnea_ros.sim.gap import load_gap
    from rnea_ros.sim.loop import rnea_feedforward, run_in_process
    urdf = robot_path('panda').read_text()
    t = np.linspace(0.0, 3.0, 31)
    w = np.array([1.0, 1.3, 0.7, 1.1, 0.9, 1.2, 0.8])
    centre = _mid_range(Plant(urdf))[:7]
    still = np.zeros((t.size, 1))
    positions = np.hstack([centre + 0.3 * np.sin(np.outer(t, w)), still + 0.02])
    velocities = np.hstack([0.3 * w * np.cos(np.outer(t, w)), still])
    accelerations = np.hstack([-0.3 * w * w * np.sin(np.outer(t, w)), still])

    def run(feedforward: bool, gap) -> float:
        plant = Plant(urdf, gap=gap)
        lower = [plant.nominal.joint(n).lower for n in plant.joint_names]
        upper = [plant.nominal.joint(n).upper for n in plant.joint_names]
        controller = JointController(plant.joint_names, 100.0, 10.0, lower, upper,
                                     positions[0])
        plant.reset(positions[0], velocities[0])
        controller.set_trajectory(plant.joint_names, t, positions, velocities, accelerations,
                                  start=0.0)
        model = plant.nominal
        return run_in_process(plant, controller, 3.0,
                              rnea_feedforward(model, plant) if feedforward else None)
    gap = load_gap('default')
    pd_alone, with_feedforward = run(False, gap), run(True, gap)
    # Measured: 0.17 rad alone, 0.012 with the URDF's feed-forward (the gap is the rest).
    assert with_feedforward.rms_error() < 0.3 * pd_alone.rms_error()
    assert np.all(np.abs(with_feedforward.effort) <= Plant(urdf).effort_limits + 1e-9)


def test_a_mimic_joint_of_multiplier_one_never_stands_in_for_its_master():
    """panda_finger_joint2 mimics joint1 with multiplier 1: q reads the master's own dof."""
    plant = Plant(robot_path('panda').read_text())
    master = plant.model.joint('panda_finger_joint1').qposadr[0]
    mimic = plant.model.joint('panda_finger_joint2').qposadr[0]
    plant.data.qpos[master], plant.data.qpos[mimic] = 0.01, 0.03
    assert plant.q()[plant.nominal.joint('panda_finger_joint1').idx_q] == 0.01


def test_the_base_link_is_the_urdf_root_wherever_the_document_lists_it():
    urdf = robot_path('solo12').read_text()
    root = ET.fromstring(urdf)
    base = root.find("link[@name='base_link']")
    root.remove(base)
    root.append(base)  # the root link last in the document
    plant = Plant(ET.tostring(root, encoding='unicode'), floating_base=True)
    assert plant.base_link == 'base_link'


PENDULUM = """<robot name="pendulum">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.1 0 0"/><mass value="0.1"/>
    <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j" type="continuous"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit effort="1e9" velocity="10"/></joint>
</robot>"""


def test_diverging_physics_raise_instead_of_resetting_silently(tmp_path, monkeypatch):
    """A damping far too stiff for the timestep: one clear error, and no MUJOCO_LOG.TXT."""
    from rnea_ros.sim.plant import UnstableError
    monkeypatch.chdir(tmp_path)
    plant = Plant(PENDULUM)
    plant.reset(np.array([0.0]), np.array([1.0]))
    with pytest.raises(UnstableError, match=r'the simulation went unstable at t = .* lower the '
                                            'PD gains, raise the rate'):
        for _ in range(1000):
            plant.step(pd_effort(0.0, 1e4, 0.0, 0.0, plant.q(), plant.v()))
    assert list(tmp_path.iterdir()) == []
