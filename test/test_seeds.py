"""
The seeds' worked examples (``../shared/seeds/``) solved independently and compared with RNEA.

Two mechanisms, each with its own oracle written here from first principles (plain vectors and
rotation matrices, nothing from ``rnea_ros``):

1. A planar serial limb (seed 003, 'The N-segment piglet limb', and the textbook two-link
   manipulator): revolute joints about one axis, point masses (or thin rods) at given centres of
   mass. Oracles: the textbook closed-form two-link equations M(q) qdd + C(q, qd) + g(q) = tau,
   and the planar Newton-Euler recursion (joint accelerations outward, joint forces inward).
2. A foot-shank pair (seed 004, 'Matrix formalism of the Newton-Euler equations') loaded by a
   ground reaction force (GRF) at a centre of pressure (COP). Oracle: the seed's ONE stacked
   linear system, whose unknowns are the joint reaction forces and moments at ankle and knee,
   solved with ``np.linalg.solve`` - in the sagittal plane (6 unknowns) and in 3-D (12).

Sign conventions shared by the oracles and RNEA: a joint torque is the moment about the joint
axis that the proximal body (parent) applies on the distal body (child); a joint force likewise
acts on the child. f_ext is the wrench the environment applies on a link, [force; torque] in the
link frame about the link origin. Every comparison uses a relative tolerance of 1e-9.
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.seeds import (assert_close, cross2, FOOT_MASS, foot_shank_urdf, inertial_xml,
                           KNEE_IN_WORLD_FIXED, OBLIQUE_GRAVITY, OBLIQUE_LEG, oblique_leg_cases,
                           perp, plane_to_3d, PUSH_OFF, RTOL, sagittal_floating_state,
                           sagittal_foot_wrench, SAGITTAL_LEG, sagittal_matrix_inverse_dynamics,
                           sagittal_rotation, sagittal_segment_kinematics, SagittalFrame,
                           SHANK_LENGTH, SHANK_MASS, STANDARD_GRAVITY)
import numpy as np
import pytest

from rnea_ros import RobotModel


# ------------------------------------------------------------------------------------------------
# 1. Planar serial limb
# ------------------------------------------------------------------------------------------------
# A plane of motion: the URDF joint axis and the two world axes (e1, e2) spanning the plane, with
# e1 x e2 = axis so that a positive joint angle turns e1 towards e2 (counter-clockwise in a
# picture with e1 to the right and e2 up). Segments lie along their link's x axis (= e1 at q = 0).
PLANES = {
    'xy': ('0 0 1', (0, 1)),   # axis +z; gravity must be given in the plane (e.g. -y)
    'xz': ('0 -1 0', (0, 2)),  # axis -y (x cross z = -y); the default gravity -z lies in it
}


@dataclass(frozen=True)
class PlanarLimb:
    """
    A planar limb of rigid segments.

    Segment i: length l_i from joint i to joint i+1, mass m_i at fraction c_i of the length,
    rotational inertia I_i about its COM for rotation in the plane (0 = point mass).
    """

    lengths: tuple[float, ...]
    masses: tuple[float, ...]
    com_fractions: tuple[float, ...]
    com_inertias: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.lengths)


# Seed 003 (Falk Mielke, 'The N-segment piglet limb'): three segments, point masses halfway.
PIGLET_LIMB = PlanarLimb(lengths=(0.8, 0.6, 0.4), masses=(0.7, 0.5, 0.3),
                         com_fractions=(0.5, 0.5, 0.5), com_inertias=(0.0, 0.0, 0.0))
# Seed 003's steady motion: each joint turns at 2 pi / T_i with periods (2 pi, pi, pi / 2).
PIGLET_JOINT_RATES = (1.0, 2.0, 4.0)


def planar_limb_urdf(limb: PlanarLimb, axis: str) -> str:
    """
    URDF of a serial limb on a fixed base: 'base' -> seg0 -> ... -> seg{n-1} -> 'tip'.

    Joint i sits at the distal end of segment i-1 (x = l_{i-1} in its frame) and turns about
    ``axis``; each segment's COM is at x = c_i l_i. The rotational inertia is a thin rod's,
    diag(0, I, I): I about both axes perpendicular to the segment, so it is the in-plane inertia
    for either plane. A fixed 'tip' link marks the distal end, where the tip force acts.
    """
    links = ['<link name="base"/>']
    joints = []
    for i in range(limb.n):
        com = (limb.com_fractions[i] * limb.lengths[i], 0.0, 0.0)
        inertia = np.diag([0.0, limb.com_inertias[i], limb.com_inertias[i]])
        links.append(f'<link name="seg{i}">{inertial_xml(limb.masses[i], com, inertia)}</link>')
        parent = 'base' if i == 0 else f'seg{i - 1}'
        offset = 0.0 if i == 0 else limb.lengths[i - 1]
        joints.append(
            f'<joint name="joint{i}" type="revolute"><parent link="{parent}"/>'
            f'<child link="seg{i}"/><origin xyz="{float(offset)!r} 0 0" rpy="0 0 0"/>'
            f'<axis xyz="{axis}"/><limit lower="-10" upper="10" effort="100" velocity="50"/>'
            '</joint>')
    links.append('<link name="tip"/>')
    joints.append(f'<joint name="tip_joint" type="fixed"><parent link="seg{limb.n - 1}"/>'
                  f'<child link="tip"/><origin xyz="{float(limb.lengths[-1])!r} 0 0"/></joint>')
    return '<robot name="planar_limb">' + ''.join(links + joints) + '</robot>'


def planar_newton_euler(limb: PlanarLimb, q, qd, qdd, gravity, tip_force=(0.0, 0.0)):
    """
    Joint torques of the planar limb by the Newton-Euler recursion, in plane coordinates.

    Outward: absolute angle phi_i = sum of q up to i (likewise rates and accelerations), joint
    positions p_{i+1} = p_i + l_i e_i with e_i = (cos phi_i, sin phi_i), and accelerations of
    points on segment i by the rigid-body formula a_P = a_{p_i} + alpha_i normal x r - omega_i^2 r.
    Inward, with F_i the force and tau_i the moment (about p_i) that segment i-1 applies on
    segment i, and the tip force applied by the environment at the distal end:

        F_i   = m_i (a_ci - g) + F_{i+1}                     (F_n = -tip_force)
        tau_i = I_i alpha_i + (c_i - p_i) x m_i (a_ci - g) + (p_{i+1} - p_i) x F_{i+1}
                + tau_{i+1}                                  (tau_n = 0)
    """
    phi, omega, alpha = np.cumsum(q), np.cumsum(qd), np.cumsum(qdd)
    gravity = np.asarray(gravity, dtype=float)
    joint_pos, joint_acc = [np.zeros(2)], [np.zeros(2)]
    com_pos, com_acc = [], []
    for i in range(limb.n):
        e = np.array([np.cos(phi[i]), np.sin(phi[i])])

        def point(r, i=i):
            return (joint_pos[i] + r,
                    joint_acc[i] + alpha[i] * perp(r) - omega[i] ** 2 * r)

        c, a_c = point(limb.com_fractions[i] * limb.lengths[i] * e)
        com_pos.append(c)
        com_acc.append(a_c)
        p, a_p = point(limb.lengths[i] * e)
        joint_pos.append(p)
        joint_acc.append(a_p)
    force = -np.asarray(tip_force, dtype=float)
    torque = 0.0
    tau = np.zeros(limb.n)
    for i in reversed(range(limb.n)):
        inertial_force = limb.masses[i] * (com_acc[i] - gravity)
        torque = (limb.com_inertias[i] * alpha[i]
                  + cross2(com_pos[i] - joint_pos[i], inertial_force)
                  + cross2(joint_pos[i + 1] - joint_pos[i], force) + torque)
        force = inertial_force + force
        tau[i] = torque
    return tau


def two_link_textbook(limb: PlanarLimb, q, qd, qdd, g: float) -> np.ndarray:
    """
    Compute the textbook two-link planar arm (Spong, Hutchinson & Vidyasagar, section 7.4).

    Angles from e1, gravity g along -e2, lc_i the COM distance from joint i:

        tau = M(q) qdd + C(q, qd) qd + g(q),  h = -m2 l1 lc2 sin q2
        M11 = m1 lc1^2 + m2 (l1^2 + lc2^2 + 2 l1 lc2 cos q2) + I1 + I2
        M12 = m2 (lc2^2 + l1 lc2 cos q2) + I2,      M22 = m2 lc2^2 + I2
        C qd = [h qd2^2 + 2 h qd1 qd2, -h qd1^2]
        g(q) = [(m1 lc1 + m2 l1) g cos q1 + m2 lc2 g cos(q1 + q2), m2 lc2 g cos(q1 + q2)]
    """
    (l1, _), (m1, m2), (i1, i2) = limb.lengths, limb.masses, limb.com_inertias
    lc1, lc2 = (f * length for f, length in zip(limb.com_fractions, limb.lengths))
    q1, q2 = q
    m11 = m1 * lc1 ** 2 + m2 * (l1 ** 2 + lc2 ** 2 + 2 * l1 * lc2 * np.cos(q2)) + i1 + i2
    m12 = m2 * (lc2 ** 2 + l1 * lc2 * np.cos(q2)) + i2
    m22 = m2 * lc2 ** 2 + i2
    h = -m2 * l1 * lc2 * np.sin(q2)
    g1 = (m1 * lc1 + m2 * l1) * g * np.cos(q1) + m2 * lc2 * g * np.cos(q1 + q2)
    g2 = m2 * lc2 * g * np.cos(q1 + q2)
    return np.array([
        m11 * qdd[0] + m12 * qdd[1] + h * qd[1] ** 2 + 2 * h * qd[0] * qd[1] + g1,
        m12 * qdd[0] + m22 * qdd[1] - h * qd[0] ** 2 + g2,
    ])


def world_gravity(plane: str, in_plane, out_of_plane: float = 0.0) -> np.ndarray:
    """World 3-vector with components ``in_plane`` along (e1, e2) and the rest along the axis."""
    _, (i1, i2) = PLANES[plane]
    g = np.full(3, out_of_plane)
    g[i1], g[i2] = in_plane
    return g


def random_states(rng, n_joints: int, count: int):
    """``count`` (q, qd, qdd) triples spread over the whole circle and brisk motions."""
    for _ in range(count):
        yield (rng.uniform(-np.pi, np.pi, n_joints), rng.uniform(-4.0, 4.0, n_joints),
               rng.uniform(-20.0, 20.0, n_joints))


TWO_LINK = PlanarLimb(lengths=(0.45, 0.38), masses=(2.1, 1.3), com_fractions=(0.42, 0.47),
                      com_inertias=(0.036, 0.017))


@pytest.mark.parametrize('plane', sorted(PLANES))
def test_two_link_arm_matches_textbook_equations(plane):
    """
    RNEA of a two-link arm (thin rods, COMs off-centre) equals the textbook M qdd + C + g.

    Gravity acts along -e2 in the plane ('xz': the model's default gravity, -z; 'xy': passed
    explicitly). The Newton-Euler recursion is checked against the same equations, so the two
    oracles of this module vouch for each other.
    """
    axis, _ = PLANES[plane]
    model = RobotModel.from_urdf_string(planar_limb_urdf(TWO_LINK, axis))
    gravity = world_gravity(plane, (0.0, -STANDARD_GRAVITY))
    rng = np.random.default_rng(3)
    for q, qd, qdd in random_states(rng, 2, 6):
        expected = two_link_textbook(TWO_LINK, q, qd, qdd, STANDARD_GRAVITY)
        assert_close(planar_newton_euler(TWO_LINK, q, qd, qdd, (0.0, -STANDARD_GRAVITY)),
                     expected)
        tau = (model.rnea(q, qd, qdd) if plane == 'xz'
               else model.rnea(q, qd, qdd, gravity=gravity))
        assert_close(tau, expected)


def test_two_link_arm_gravity_torques_at_textbook_poses():
    """
    Static holding torques at poses where the textbook g(q) is obvious by hand.

    Arm stretched along e1 (q = 0): tau1 = (m1 lc1 + m2 l1 + m2 lc2) g, tau2 = m2 lc2 g; arm
    hanging straight down (q1 = -pi/2, q2 = 0): no torque at all.
    """
    model = RobotModel.from_urdf_string(planar_limb_urdf(TWO_LINK, PLANES['xz'][0]))
    (l1, _), (m1, m2) = TWO_LINK.lengths, TWO_LINK.masses
    lc1, lc2 = (f * length for f, length in zip(TWO_LINK.com_fractions, TWO_LINK.lengths))
    g = STANDARD_GRAVITY
    assert_close(model.gravity_torques([0.0, 0.0]),
                 [(m1 * lc1 + m2 * l1 + m2 * lc2) * g, m2 * lc2 * g])
    hanging = model.gravity_torques([-np.pi / 2, 0.0])
    assert np.max(np.abs(hanging)) < RTOL * (m1 + m2) * g * (l1 + lc2)


@pytest.mark.parametrize('t', [0.0, 0.3, 1.1, 2.5])
def test_piglet_limb_steady_rotation_seed_003(t):
    """
    Seed 003's three-segment limb in its own motion: q_i = w_i t, constant rates, no gravity.

    Masses (0.7, 0.5, 0.3) kg, lengths (0.8, 0.6, 0.4) m, point masses halfway, joint rates
    (1, 2, 4) rad/s (absolute rates 1, 3, 7). The seed measures angles from its frames' y axis;
    here segments lie along x: a rotation of the whole picture, which changes nothing without
    gravity. With constant rates every torque comes from centripetal accelerations; even the
    distal joint, whose point mass lies on the line through the joint, needs torque, because
    that joint itself accelerates.
    """
    model = RobotModel.from_urdf_string(planar_limb_urdf(PIGLET_LIMB, PLANES['xy'][0]))
    q = np.array(PIGLET_JOINT_RATES) * t
    qd = np.array(PIGLET_JOINT_RATES)
    qdd = np.zeros(3)
    expected = planar_newton_euler(PIGLET_LIMB, q, qd, qdd, (0.0, 0.0))
    assert_close(model.rnea(q, qd, qdd, gravity=np.zeros(3)), expected)
    assert_close(model.velocity_product(q, qd), expected)


def test_piglet_limb_seed_003_printed_torques_drop_the_joint_acceleration():
    """
    Why seed 003's printed joint moments are not expected values here.

    The seed closes with the joint moments (about the joint axis, each in the segment's
    proximal frame) of its steady motion:

        tau_1 = -441/250 sin 4t,
        tau_0 = -27/25 sin 2t - 441/250 sin 4t - 294/125 sin 6t,   tau_2 = 0.

    Its dynamic force is m_i times the acceleration of the COM *relative to the segment's
    proximal joint*; the acceleration of that joint itself (nonzero for every joint but the
    shoulder) never enters. This test reproduces the printed formulas with the inward
    recursion written out with that term dropped - confirming the reading - and checks that
    RNEA, which keeps it, agrees with the full recursion and differs from the printed numbers.
    """
    model = RobotModel.from_urdf_string(planar_limb_urdf(PIGLET_LIMB, PLANES['xy'][0]))
    rates = np.array(PIGLET_JOINT_RATES)
    for t in (0.3, 1.1):
        printed = [-27 / 25 * np.sin(2 * t) - 441 / 250 * np.sin(4 * t)
                   - 294 / 125 * np.sin(6 * t), -441 / 250 * np.sin(4 * t), 0.0]
        # Each segment alone with its proximal joint held still in the world, turning at its
        # absolute rate, carrying the distal segments' reaction computed the same way.
        omega = np.cumsum(rates)
        phi = np.cumsum(rates * t)
        force = np.zeros(2)
        torque = 0.0
        seed_reading = np.zeros(3)
        for i in reversed(range(3)):
            e = np.array([np.cos(phi[i]), np.sin(phi[i])])
            com = PIGLET_LIMB.com_fractions[i] * PIGLET_LIMB.lengths[i] * e
            inertial_force = PIGLET_LIMB.masses[i] * (-omega[i] ** 2 * com)
            torque = (cross2(com, inertial_force)
                      + cross2(PIGLET_LIMB.lengths[i] * e, force) + torque)
            force = inertial_force + force
            seed_reading[i] = torque
        assert_close(seed_reading, printed)
        tau = model.rnea(rates * t, rates, np.zeros(3), gravity=np.zeros(3))
        assert_close(tau, planar_newton_euler(PIGLET_LIMB, rates * t, rates, np.zeros(3),
                                              (0.0, 0.0)))
        assert np.max(np.abs(tau - printed)) > 0.1


@pytest.mark.parametrize('plane', sorted(PLANES))
def test_three_segment_limb_with_gravity_and_tip_force(plane):
    """
    Seed 003's limb given rod inertias, off-centre COMs, gravity and a tip force, any state.

    Gravity has an in-plane part (tilted, not along e2) and a part along the joint axis; the
    latter only loads the joints' constraint moments, so the joint torques are those of the
    in-plane part alone. The tip force (a foot or paw on the ground, seed 003's 'tip wrench')
    is given in the plane in world axes and passed to RNEA as f_ext on the 'tip' link: rotated
    into that link's frame (its x axis is the last segment, e_n = (cos phi_n, sin phi_n)), with
    no moment since it acts at the link origin.
    """
    axis, (i1, i2) = PLANES[plane]
    limb = PlanarLimb(lengths=PIGLET_LIMB.lengths, masses=PIGLET_LIMB.masses,
                      com_fractions=(0.45, 0.52, 0.38), com_inertias=(0.037, 0.015, 0.004))
    model = RobotModel.from_urdf_string(planar_limb_urdf(limb, axis))
    g_plane = STANDARD_GRAVITY * np.array([np.sin(0.4), -np.cos(0.4)])
    gravity = world_gravity(plane, g_plane, out_of_plane=2.5)
    tip_force = np.array([3.5, 7.25])
    rng = np.random.default_rng(2003)
    for q, qd, qdd in random_states(rng, 3, 6):
        phi = np.sum(q)
        e = np.array([np.cos(phi), np.sin(phi)])
        wrench = np.zeros(6)
        wrench[i1], wrench[i2] = tip_force @ e, tip_force @ perp(e)
        tau = model.rnea(q, qd, qdd, f_ext={'tip': wrench}, gravity=gravity)
        assert_close(tau, planar_newton_euler(limb, q, qd, qdd, g_plane, tip_force))


ANKLE_ON_GROUND = np.array([0.1, 0.08])  # (x, z) of the ankle in the stance trajectory


# --- the sagittal plane --------------------------------------------------------------------------
# Plane coordinates (x, z): x forward, z up; moments and angles are positive counter-clockwise in
# that picture, i.e. about -y (x cross z = -y) - the axis of both knee and ankle joints.


def test_sagittal_matrix_system_is_well_posed():
    """
    The stacked system's matrix Q is unit lower block-triangular: always solvable.

    And the solution satisfies every Newton-Euler equation: the total external force on the
    two segments (GRF, weights, knee force) equals the sum of m a_com, whatever the ankle does.
    """
    unknowns, joint_map = sagittal_matrix_inverse_dynamics(PUSH_OFF)
    assert abs(np.linalg.det(joint_map) - 1.0) < 1e-12
    kin = sagittal_segment_kinematics(PUSH_OFF)
    total = (np.array(PUSH_OFF.grf) + unknowns[3:5]
             + (FOOT_MASS + SHANK_MASS) * np.array([0.0, -STANDARD_GRAVITY]))
    assert_close(total, FOOT_MASS * kin['foot_com_acc'] + SHANK_MASS * kin['shank_com_acc'])


def test_foot_shank_floating_shank_push_off_seed_004():
    """
    Floating shank (the knee as a free-flyer), foot as the leaf loaded by the GRF at the COP.

    RNEA's tau for this tree: tau[:6] is the wrench the free-flyer applies on the shank, in the
    shank frame about the shank origin - the knee. No other body touches the shank there, so it
    is the knee reaction: [R_S^T F_K; M_K about -y] = [R_S^T F_K; (0, -M_K, 0)]. tau[6] is the
    moment the shank applies on the foot projected on the ankle axis (-y): M_A. All six numbers
    must equal the stacked system's F_K, M_K and M_A.
    """
    model = RobotModel.from_urdf_string(foot_shank_urdf(SAGITTAL_LEG, fixed_knee=False),
                                        floating_base=True)
    assert model.joint_names == ('root_joint', 'ankle')
    unknowns, _ = sagittal_matrix_inverse_dynamics(PUSH_OFF)
    force_ankle, moment_ankle = unknowns[0:2], unknowns[2]
    force_knee, moment_knee = unknowns[3:5], unknowns[5]
    assert np.linalg.norm(force_ankle) > 100.0 and abs(moment_ankle) > 10.0  # a real load
    q, v, a = sagittal_floating_state(PUSH_OFF)
    tau = model.rnea(q, v, a, f_ext={'foot': sagittal_foot_wrench(PUSH_OFF)})
    shank_rotation = sagittal_rotation(PUSH_OFF.shank[0])
    expected = np.concatenate([shank_rotation.T @ plane_to_3d(force_knee),
                               [0.0, -moment_knee, 0.0], [moment_ankle]])
    assert_close(tau, expected)


def test_foot_shank_fixed_knee_seed_004():
    """
    Fixed thigh, knee and ankle both revolute about -y: tau = [M_K, M_A] from the system.

    The knee is the world-fixed point K0 (zero velocity and acceleration); the knee angle is
    the shank's absolute angle and the ankle angle the foot's relative one.
    """
    model = RobotModel.from_urdf_string(foot_shank_urdf(SAGITTAL_LEG, fixed_knee=True))
    assert model.joint_names == ('knee', 'ankle')
    knee = tuple(KNEE_IN_WORLD_FIXED[[0, 2]])
    for shank, ankle, grf, cop in [((-0.3, -2.5, 8.0), (0.2, -4.0, -30.0), (150.0, 750.0),
                                    (0.0, 0.0)),
                                   ((0.25, 1.5, -6.0), (-0.25, 2.0, 12.0), (-90.0, 620.0),
                                    (0.05, 0.0)),
                                   ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0), (0.0, 0.0))]:
        frame = SagittalFrame(knee=knee, knee_vel=(0.0, 0.0), knee_acc=(0.0, 0.0), shank=shank,
                              ankle=ankle, grf=grf, cop=cop)
        unknowns, _ = sagittal_matrix_inverse_dynamics(frame)
        q, v, a = np.transpose([shank, ankle])
        tau = model.rnea(q, v, a, f_ext={'foot': sagittal_foot_wrench(frame)})
        assert_close(tau, [unknowns[5], unknowns[2]])


def stance_trajectory(times: np.ndarray) -> list[SagittalFrame]:
    """
    Make a smooth synthetic stance phase with exact derivatives.

    The ankle stays at ANKLE_ON_GROUND while the shank rotates forward over it (angle
    phi(t) = 0.35 - 1.1 t + 0.05 sin wt), so the knee follows K = A - L (sin phi, -cos phi)
    with K' = -L phi' (cos phi, sin phi) and K'' = L phi'^2 (sin phi, -cos phi)
    - L phi'' (cos phi, sin phi). The foot dorsiflexes then plantar-flexes relative to the
    shank, the vertical GRF has the double hump of walking, the COP rolls from behind the
    ankle to the forefoot.
    """
    frames = []
    w = 2 * np.pi / 0.6  # a 0.6 s stance
    for t in times:
        phi = 0.35 - 1.1 * t + 0.05 * np.sin(w * t)
        rate = -1.1 + 0.05 * w * np.cos(w * t)
        accel = -0.05 * w ** 2 * np.sin(w * t)
        along = np.array([np.cos(phi), np.sin(phi)])
        across = np.array([np.sin(phi), -np.cos(phi)])
        knee = ANKLE_ON_GROUND - SHANK_LENGTH * across
        knee_vel = -SHANK_LENGTH * rate * along
        knee_acc = SHANK_LENGTH * (rate ** 2 * across - accel * along)
        ankle = (0.15 * np.sin(w * t), 0.15 * w * np.cos(w * t), -0.15 * w ** 2 * np.sin(w * t))
        grf = (120.0 * np.sin(w * t + np.pi), 690.0 + 120.0 * np.cos(2 * w * t + np.pi))
        cop = (ANKLE_ON_GROUND[0] - 0.05 + 0.25 * t / 0.6, 0.0)
        frames.append(SagittalFrame(tuple(knee), tuple(knee_vel), tuple(knee_acc),
                                    (phi, rate, accel), ankle, grf, cop))
    return frames


def test_foot_shank_stance_batch_seed_004():
    """
    ``rnea_batch`` over a stance phase, GRF as an (N, 6) f_ext, against the 6x6 system.

    The stacked system, given only the knee and segment angles, also finds the ankle at rest.
    """
    model = RobotModel.from_urdf_string(foot_shank_urdf(SAGITTAL_LEG, fixed_knee=False),
                                        floating_base=True)
    frames = stance_trajectory(np.linspace(0.0, 0.6, 25))
    states = [sagittal_floating_state(frame) for frame in frames]
    Q, V, A = (np.array(column) for column in zip(*states))
    wrenches = np.array([sagittal_foot_wrench(frame) for frame in frames])
    taus = model.rnea_batch(Q, V, A, f_ext={'foot': wrenches})
    assert taus.shape == (len(frames), 7)
    for frame, tau in zip(frames, taus):
        assert_close(sagittal_segment_kinematics(frame)['ankle'], ANKLE_ON_GROUND)
        unknowns, _ = sagittal_matrix_inverse_dynamics(frame)
        rotation = sagittal_rotation(frame.shank[0])
        assert_close(tau, np.concatenate([rotation.T @ plane_to_3d(unknowns[3:5]),
                                          [0.0, -unknowns[5], 0.0], [unknowns[2]]]))


# --- three dimensions ----------------------------------------------------------------------------


def test_foot_shank_3d_oblique_ankle_seed_004():
    """
    Seed 004's full 3-D system against the floating-shank model, oblique ankle axis.

    Gravity is not the default (tilted, as on a slope). tau[:3] = rot_s^T F_K^G,
    tau[3:6] = M_K^S, and tau[6] = u . M_A^F (the ankle torque is the foot-frame moment the
    shank applies on the foot, projected on the ankle axis u, which is given in the foot frame).
    """
    for model, state, unknowns, q, v, a in oblique_leg_cases(4, 8):
        force_knee, moment_knee = unknowns[6:9], unknowns[9:12]
        moment_ankle = unknowns[3:6]
        foot_to_world = state['rot_f']
        wrench = np.concatenate([
            foot_to_world.T @ state['grf'],
            foot_to_world.T @ np.cross(state['cop'] - state['ankle'], state['grf'])])
        tau = model.rnea(q, v, a, f_ext={'foot': wrench}, gravity=OBLIQUE_GRAVITY)
        expected = np.concatenate([state['rot_s'].T @ force_knee, moment_knee,
                                   [np.array(OBLIQUE_LEG.ankle_axis) @ moment_ankle]])
        assert_close(tau, expected)
