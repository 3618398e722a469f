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

import numpy as np
import pytest

from rnea_ros import RobotModel

RTOL = 1e-9
STANDARD_GRAVITY = 9.81


def assert_close(actual, expected, rtol: float = RTOL) -> None:
    """
    ``actual == expected`` to ``rtol`` relative to the largest entry of ``expected``.

    Entries that are exactly zero in theory (a joint with nothing to hold) are judged against
    the vector's scale, not against zero.
    """
    expected = np.asarray(expected, dtype=float)
    scale = max(float(np.max(np.abs(expected))), 1.0)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale)


def rotation_about(axis, angle: float) -> np.ndarray:
    """Rodrigues' formula: the 3x3 rotation by ``angle`` (right hand) about unit ``axis``."""
    k = np.asarray(axis, dtype=float)
    k = k / np.linalg.norm(k)
    skew = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(angle) * skew + (1.0 - np.cos(angle)) * skew @ skew


def rpy_matrix(rpy) -> np.ndarray:
    """URDF ``rpy``: R = Rz(yaw) Ry(pitch) Rx(roll), fixed axes."""
    roll, pitch, yaw = rpy
    return (rotation_about((0, 0, 1), yaw) @ rotation_about((0, 1, 0), pitch)
            @ rotation_about((1, 0, 0), roll))


def quaternion_matrix(quaternion) -> np.ndarray:
    """Rotation matrix of a unit quaternion [qx qy qz qw] (the free-flyer's q[3:7] order)."""
    x, y, z, w = quaternion
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def inertial_xml(mass: float, com, inertia) -> str:
    """
    Return an ``<inertial>`` block: ``inertia`` is the 3x3 tensor about the COM.

    Numbers are written with ``repr`` so the model sees exactly the floats the oracle uses.
    """
    com = ' '.join(repr(float(c)) for c in com)
    i = np.asarray(inertia, dtype=float)
    moments = ' '.join(f'{name}="{float(i[row, col])!r}"' for name, row, col in (
        ('ixx', 0, 0), ('ixy', 0, 1), ('ixz', 0, 2), ('iyy', 1, 1), ('iyz', 1, 2), ('izz', 2, 2)))
    return (f'<inertial><origin xyz="{com}" rpy="0 0 0"/><mass value="{float(mass)!r}"/>'
            f'<inertia {moments}/></inertial>')


def vector_xml(values) -> str:
    return ' '.join(repr(float(v)) for v in values)


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


def cross2(r, f) -> float:
    """Planar cross product: the moment of force f at lever r about the plane normal."""
    return r[0] * f[1] - r[1] * f[0]


def perp(r) -> np.ndarray:
    """Return r turned by +90 degrees in the plane (normal x r)."""
    return np.array([-r[1], r[0]])


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


# ------------------------------------------------------------------------------------------------
# 2. Foot and shank with a ground reaction force (seed 004)
# ------------------------------------------------------------------------------------------------
# Anthropometry of a 70 kg, 1.75 m subject from Winter's segment tables (Biomechanics and Motor
# Control of Human Movement, table 4.1): shank ('leg') 0.0465 of body mass, COM 0.433 of its
# length from the knee, radius of gyration 0.302 of its length about the COM; foot 0.0145 of body
# mass, radius of gyration 0.475 of its length. Seed 004 leaves its numbers symbolic.
BODY_MASS = 70.0
SHANK_LENGTH = 0.43
SHANK_MASS = 0.0465 * BODY_MASS
SHANK_COM = np.array([0.0, 0.0, -0.433 * SHANK_LENGTH])  # shank frame: origin at the knee
SHANK_INERTIA = np.diag([SHANK_MASS * (0.302 * SHANK_LENGTH) ** 2,
                         SHANK_MASS * (0.302 * SHANK_LENGTH) ** 2, 0.0064])
FOOT_LENGTH = 0.2
FOOT_MASS = 0.0145 * BODY_MASS
FOOT_COM = np.array([0.07, 0.0, -0.04])  # foot frame: origin at the ankle, x towards the toes
FOOT_INERTIA = np.diag([0.0025, FOOT_MASS * (0.475 * FOOT_LENGTH) ** 2,
                        FOOT_MASS * (0.475 * FOOT_LENGTH) ** 2 - 0.0012])
ANKLE_IN_SHANK = np.array([0.0, 0.0, -SHANK_LENGTH])
KNEE_IN_WORLD_FIXED = np.array([0.0, 0.0, 0.5])  # the knee of the fixed-knee model
ANKLE_ON_GROUND = np.array([0.1, 0.08])  # (x, z) of the ankle in the stance trajectory


@dataclass(frozen=True)
class FootShank:
    """
    Geometry and inertia of the two segments, each in its own link frame.

    The shank frame has its origin at the knee; the foot frame (the ankle joint frame) has its
    origin at the ankle, at ``ankle_xyz`` / ``ankle_rpy`` in the shank frame when the ankle angle
    is zero, and the ankle turns about ``ankle_axis`` (foot frame).
    """

    shank_mass: float = SHANK_MASS
    shank_com: tuple = tuple(SHANK_COM)
    shank_inertia: tuple = tuple(map(tuple, SHANK_INERTIA))
    ankle_xyz: tuple = tuple(ANKLE_IN_SHANK)
    ankle_rpy: tuple = (0.0, 0.0, 0.0)
    ankle_axis: tuple = (0.0, -1.0, 0.0)
    foot_mass: float = FOOT_MASS
    foot_com: tuple = tuple(FOOT_COM)
    foot_inertia: tuple = tuple(map(tuple, FOOT_INERTIA))


SAGITTAL_LEG = FootShank()


def foot_shank_urdf(leg: FootShank, *, fixed_knee: bool) -> str:
    """
    URDF with the foot as the leaf: [thigh -knee->] shank -ankle-> foot.

    ``fixed_knee``: a massless 'thigh' root fixed in the world, the knee a revolute joint about
    -y at ``KNEE_IN_WORLD_FIXED``. Otherwise the shank is the root, to be loaded with
    ``floating_base=True``: its free-flyer carries the knee, whose 'torque' tau[:6] is then the
    whole knee reaction wrench on the shank, in the shank frame about the knee.
    """
    parts = ['<robot name="foot_shank">']
    if fixed_knee:
        parts.append('<link name="thigh"/>')
        parts.append(
            '<joint name="knee" type="revolute"><parent link="thigh"/><child link="shank"/>'
            f'<origin xyz="{vector_xml(KNEE_IN_WORLD_FIXED)}" rpy="0 0 0"/>'
            '<axis xyz="0 -1 0"/><limit lower="-3" upper="3" effort="500" velocity="20"/>'
            '</joint>')
    parts.append(f'<link name="shank">'
                 f'{inertial_xml(leg.shank_mass, leg.shank_com, leg.shank_inertia)}</link>')
    parts.append(f'<link name="foot">'
                 f'{inertial_xml(leg.foot_mass, leg.foot_com, leg.foot_inertia)}</link>')
    parts.append(
        '<joint name="ankle" type="revolute"><parent link="shank"/><child link="foot"/>'
        f'<origin xyz="{vector_xml(leg.ankle_xyz)}" rpy="{vector_xml(leg.ankle_rpy)}"/>'
        f'<axis xyz="{vector_xml(leg.ankle_axis)}"/>'
        '<limit lower="-1.5" upper="1.5" effort="500" velocity="20"/></joint>')
    parts.append('</robot>')
    return ''.join(parts)


# --- the sagittal plane --------------------------------------------------------------------------
# Plane coordinates (x, z): x forward, z up; moments and angles are positive counter-clockwise in
# that picture, i.e. about -y (x cross z = -y) - the axis of both knee and ankle joints.


def rot2(angle: float) -> np.ndarray:
    return np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])


def plane_to_3d(r) -> np.ndarray:
    return np.array([r[0], 0.0, r[1]])


def sagittal_rotation(angle: float) -> np.ndarray:
    """Return the 3x3 rotation about -y by ``angle``: (x, z) turns like ``rot2(angle)``."""
    return rotation_about((0.0, -1.0, 0.0), angle)


@dataclass(frozen=True)
class SagittalFrame:
    """
    One instant of a stance phase, as a motion-capture and force-plate lab measures it.

    Knee position, velocity and acceleration in the world plane; shank angle (its -z axis from
    the vertical, counter-clockwise) with rate and acceleration; ankle angle (foot relative to
    shank) with rate and acceleration; GRF (x, z) acting at the COP (x, z) on the ground.
    """

    knee: tuple
    knee_vel: tuple
    knee_acc: tuple
    shank: tuple  # (angle, rate, acceleration)
    ankle: tuple  # (angle, rate, acceleration)
    grf: tuple
    cop: tuple


# Late stance, push-off: the knee ahead of the ankle and moving forward, the foot plantar-flexing,
# the GRF pointing up and forward under the forefoot (about 1.1 body weights vertically).
PUSH_OFF = SagittalFrame(knee=(0.02, 0.5), knee_vel=(1.2, 0.1), knee_acc=(-2.0, 3.0),
                         shank=(-0.3, -2.5, 8.0), ankle=(0.2, -4.0, -30.0),
                         grf=(150.0, 750.0), cop=(0.02, 0.0))


def sagittal_segment_kinematics(frame: SagittalFrame):
    """
    World-plane positions and accelerations of the ankle and the two COMs.

    Rigid-body kinematics in the plane: for a point at lever r from a point O of the same
    segment, a = a_O + alpha normal x r - omega^2 r. The foot's absolute angle, rate and
    acceleration are the shank's plus the ankle's.
    """
    knee, knee_acc = np.array(frame.knee), np.array(frame.knee_acc)
    phi_s, omega_s, alpha_s = frame.shank
    phi_f, omega_f, alpha_f = np.add(frame.shank, frame.ankle)
    r_ankle = rot2(phi_s) @ ANKLE_IN_SHANK[[0, 2]]
    r_shank_com = rot2(phi_s) @ SHANK_COM[[0, 2]]
    r_foot_com = rot2(phi_f) @ FOOT_COM[[0, 2]]
    ankle = knee + r_ankle
    ankle_acc = knee_acc + alpha_s * perp(r_ankle) - omega_s ** 2 * r_ankle
    shank_com = knee + r_shank_com
    shank_com_acc = knee_acc + alpha_s * perp(r_shank_com) - omega_s ** 2 * r_shank_com
    foot_com = ankle + r_foot_com
    foot_com_acc = ankle_acc + alpha_f * perp(r_foot_com) - omega_f ** 2 * r_foot_com
    return {'knee': knee, 'ankle': ankle, 'shank_com': shank_com, 'foot_com': foot_com,
            'shank_com_acc': shank_com_acc, 'foot_com_acc': foot_com_acc,
            'shank_alpha': alpha_s, 'foot_alpha': alpha_f}


def sagittal_matrix_inverse_dynamics(frame: SagittalFrame, gravity: float = STANDARD_GRAVITY):
    """
    Seed 004's matrix formalism in the sagittal plane: one 6x6 system for both segments.

    Unknowns u = [F_A (x, z), M_A, F_K (x, z), M_K]: F_A and M_A are the force and moment the
    shank applies on the foot at the ankle, F_K and M_K those the thigh applies on the shank at
    the knee (M_A and M_K about -y). Newton-Euler per segment, moments about each COM:

        foot:   F_A + GRF + m_F g = m_F a_cF
                M_A + (cop - c_F) x GRF + (A - c_F) x F_A = I_F alpha_F
        shank:  F_K - F_A + m_S g = m_S a_cS
                M_K - M_A - (A - c_S) x F_A + (K - c_S) x F_K = I_S alpha_S

    written as M acc = C + G + Q u + E, hence u = Q^-1 (M acc - C - G - E). In the plane the
    seed's rotations R_F, R_S R_F^-1 leave moments about -y unchanged (they are 1), and the
    gyroscopic terms omega x I omega vanish (C = 0). Planar r x F = S2(r) F with
    S2(r) = [-r_z, r_x]. Returns (u, Q).
    """
    kin = sagittal_segment_kinematics(frame)
    grf, cop = np.array(frame.grf), np.array(frame.cop)
    g = np.array([0.0, -gravity])
    i_foot, i_shank = FOOT_INERTIA[1, 1], SHANK_INERTIA[1, 1]

    def s2(r):
        return np.array([[-r[1], r[0]]])

    mass_matrix = np.diag([FOOT_MASS, FOOT_MASS, i_foot, SHANK_MASS, SHANK_MASS, i_shank])
    acc = np.concatenate([kin['foot_com_acc'], [kin['foot_alpha']],
                          kin['shank_com_acc'], [kin['shank_alpha']]])
    coriolis = np.zeros(6)
    weights = np.concatenate([FOOT_MASS * g, [0.0], SHANK_MASS * g, [0.0]])
    external = np.concatenate([grf, [cross2(cop - kin['foot_com'], grf)], np.zeros(3)])
    eye2, zero2, zero12, zero21 = np.eye(2), np.zeros((2, 2)), np.zeros((1, 2)), np.zeros((2, 1))
    one = np.ones((1, 1))
    joint_map = np.block([
        [eye2, zero21, zero2, zero21],
        [s2(kin['ankle'] - kin['foot_com']), one, zero12, 0 * one],
        [-eye2, zero21, eye2, zero21],
        [-s2(kin['ankle'] - kin['shank_com']), -one, s2(kin['knee'] - kin['shank_com']), one],
    ])
    unknowns = np.linalg.solve(joint_map, mass_matrix @ acc - coriolis - weights - external)
    return unknowns, joint_map


def sagittal_foot_wrench(frame: SagittalFrame) -> np.ndarray:
    """
    Return the GRF at the COP as f_ext on 'foot': [R_F^T GRF; R_F^T ((cop - A) x GRF)].

    R_F turns foot-frame vectors into world vectors; the foot frame's origin is the ankle A.
    """
    kin = sagittal_segment_kinematics(frame)
    rotation = sagittal_rotation(frame.shank[0] + frame.ankle[0])
    grf = plane_to_3d(frame.grf)
    lever = plane_to_3d(np.array(frame.cop) - kin['ankle'])
    return np.concatenate([rotation.T @ grf, rotation.T @ np.cross(lever, grf)])


def free_flyer_state(position, velocity, acceleration, rotation_quaternion, omega, alpha):
    """
    World-frame motion of the root link -> free-flyer (q, v, a) in Pinocchio's convention.

    v = [R^T p_dot; R^T omega] (body frame); a is the time derivative of v, so its linear part
    is R^T p_ddot - (R^T omega) x (R^T p_dot) (the classical acceleration minus the term from
    the turning frame), its angular part R^T alpha.
    """
    rotation = quaternion_matrix(rotation_quaternion)
    v_lin, v_ang = rotation.T @ velocity, rotation.T @ omega
    q = np.concatenate([position, rotation_quaternion])
    v = np.concatenate([v_lin, v_ang])
    a = np.concatenate([rotation.T @ acceleration - np.cross(v_ang, v_lin),
                        rotation.T @ alpha])
    return q, v, a


def sagittal_floating_state(frame: SagittalFrame):
    """(q, v, a) of the floating-shank model: the shank turns about -y by its angle."""
    phi, omega, alpha = frame.shank
    quaternion = np.array([0.0, -np.sin(phi / 2), 0.0, np.cos(phi / 2)])
    axis = np.array([0.0, -1.0, 0.0])
    q, v, a = free_flyer_state(plane_to_3d(frame.knee), plane_to_3d(frame.knee_vel),
                               plane_to_3d(frame.knee_acc), quaternion, omega * axis,
                               alpha * axis)
    ankle_angle, ankle_rate, ankle_acc = frame.ankle
    return np.append(q, ankle_angle), np.append(v, ankle_rate), np.append(a, ankle_acc)


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


def skew(r) -> np.ndarray:
    """Seed 004's S(r): r x w = S(r) w."""
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def rotated_inertia(principal, rpy) -> np.ndarray:
    rotation = rpy_matrix(rpy)
    return rotation @ np.diag(principal) @ rotation.T


# A leg with an oblique ankle (talocrural) axis and COMs and principal axes off the segment axes.
OBLIQUE_AXIS = np.array([0.12, -1.0, 0.21]) / np.linalg.norm([0.12, -1.0, 0.21])
OBLIQUE_LEG = FootShank(
    shank_com=(0.006, -0.004, -0.433 * SHANK_LENGTH),
    shank_inertia=tuple(map(tuple, rotated_inertia(
        (SHANK_INERTIA[0, 0], SHANK_INERTIA[1, 1] * 0.93, 0.0064), (0.05, -0.08, 0.3)))),
    ankle_xyz=(0.004, 0.01, -SHANK_LENGTH), ankle_rpy=(0.03, -0.05, 0.1),
    ankle_axis=tuple(OBLIQUE_AXIS),
    foot_com=(0.07, 0.008, -0.04),
    foot_inertia=tuple(map(tuple, rotated_inertia(
        (0.0025, FOOT_INERTIA[1, 1], FOOT_INERTIA[2, 2]), (0.1, 0.2, -0.15)))),
)
OBLIQUE_GRAVITY = np.array([0.7, -0.4, -9.78])  # tilted, as on a slope


def spatial_matrix_inverse_dynamics(leg: FootShank, state: dict, gravity) -> np.ndarray:
    """
    Seed 004's 3-D matrix formalism: one 12x12 system for [F_A^G, M_A^F, F_K^G, M_K^S].

    Superscripts name the basis: G world, F foot, S shank. ``rot_f``/``rot_s`` turn foot/shank
    vectors into world vectors (the seed's R_F, R_S are their transposes: world -> segment).
    Body-frame angular velocity omega^F = rot_f^T omega_F, its derivative rot_f^T alpha_F.

        F_A + GRF + m_F g = m_F a_cF
        M_A^F + R_F (r_cop/cF x GRF) + R_F (r_A/cF x F_A) = I_F wdot^F + w^F x I_F w^F
        F_K - F_A + m_S g = m_S a_cS
        M_K^S - R_S R_F^-1 M_A^F - R_S (r_A/cS x F_A) + R_S (r_K/cS x F_K)
                                                      = I_S wdot^S + w^S x I_S w^S

    r_X/cY is the lever from COM Y to point X, in world axes.
    """
    world_to_foot, world_to_shank = state['rot_f'].T, state['rot_s'].T
    i_foot, i_shank = np.array(leg.foot_inertia), np.array(leg.shank_inertia)
    w_f, wd_f = world_to_foot @ state['omega_f'], world_to_foot @ state['alpha_f']
    w_s, wd_s = world_to_shank @ state['omega_s'], world_to_shank @ state['alpha_s']
    eye, zero = np.eye(3), np.zeros((3, 3))
    mass_matrix = np.block([[leg.foot_mass * eye, zero, zero, zero],
                            [zero, i_foot, zero, zero],
                            [zero, zero, leg.shank_mass * eye, zero],
                            [zero, zero, zero, i_shank]])
    acc = np.concatenate([state['foot_com_acc'], wd_f, state['shank_com_acc'], wd_s])
    coriolis = np.concatenate([np.zeros(3), -np.cross(w_f, i_foot @ w_f),
                               np.zeros(3), -np.cross(w_s, i_shank @ w_s)])
    weights = np.concatenate([leg.foot_mass * gravity, np.zeros(3),
                              leg.shank_mass * gravity, np.zeros(3)])
    grf = state['grf']
    external = np.concatenate([
        grf, world_to_foot @ np.cross(state['cop'] - state['foot_com'], grf), np.zeros(6)])
    joint_map = np.block([
        [eye, zero, zero, zero],
        [world_to_foot @ skew(state['ankle'] - state['foot_com']), eye, zero, zero],
        [-eye, zero, eye, zero],
        [-world_to_shank @ skew(state['ankle'] - state['shank_com']),
         -world_to_shank @ world_to_foot.T,
         world_to_shank @ skew(state['knee'] - state['shank_com']), eye],
    ])
    return np.linalg.solve(joint_map, mass_matrix @ acc - coriolis - weights - external)


def spatial_leg_state(leg: FootShank, rng) -> dict:
    """
    Make a random 3-D instant, world-frame kinematics computed by hand.

    Shank: orientation rot_s, angular velocity omega_s and acceleration alpha_s (world), knee
    position, velocity, acceleration. Ankle: angle theta about axis u (world: u_w = rot_s R0 u,
    R0 the joint origin's rotation), so rot_f = rot_s R0 Rot(u, theta),
    omega_f = omega_s + theta_dot u_w and
    alpha_f = alpha_s + theta_ddot u_w + omega_s x theta_dot u_w.
    Points P of a segment with origin O: a_P = a_O + alpha x r + omega x (omega x r).
    """
    quaternion = rng.normal(size=4)
    quaternion /= np.linalg.norm(quaternion)
    rot_s = quaternion_matrix(quaternion)
    omega_s, alpha_s = rng.uniform(-3, 3, 3), rng.uniform(-20, 20, 3)
    knee, knee_vel, knee_acc = rng.uniform(-1, 1, 3), rng.uniform(-2, 2, 3), rng.uniform(-5, 5, 3)
    theta, theta_dot, theta_ddot = rng.uniform(-0.6, 0.6), rng.uniform(-4, 4), rng.uniform(-30, 30)
    joint_origin = rpy_matrix(leg.ankle_rpy)
    axis = np.array(leg.ankle_axis)
    axis_world = rot_s @ joint_origin @ axis
    rot_f = rot_s @ joint_origin @ rotation_about(axis, theta)
    omega_f = omega_s + theta_dot * axis_world
    alpha_f = alpha_s + theta_ddot * axis_world + np.cross(omega_s, theta_dot * axis_world)

    def rigid(origin, origin_acc, rotation, omega, alpha, local):
        r = rotation @ local
        return origin + r, origin_acc + np.cross(alpha, r) + np.cross(omega, np.cross(omega, r))

    ankle, ankle_acc = rigid(knee, knee_acc, rot_s, omega_s, alpha_s, np.array(leg.ankle_xyz))
    shank_com, shank_com_acc = rigid(knee, knee_acc, rot_s, omega_s, alpha_s,
                                     np.array(leg.shank_com))
    foot_com, foot_com_acc = rigid(ankle, ankle_acc, rot_f, omega_f, alpha_f,
                                   np.array(leg.foot_com))
    grf = np.array([rng.uniform(-150, 150), rng.uniform(-80, 80), rng.uniform(300, 900)])
    cop = ankle + np.array([rng.uniform(-0.05, 0.2), rng.uniform(-0.05, 0.05), 0.0])
    cop[2] = 0.0  # on the force plate
    return {'quaternion': quaternion, 'rot_s': rot_s, 'rot_f': rot_f, 'omega_s': omega_s,
            'alpha_s': alpha_s, 'omega_f': omega_f, 'alpha_f': alpha_f, 'knee': knee,
            'knee_vel': knee_vel, 'knee_acc': knee_acc, 'theta': (theta, theta_dot, theta_ddot),
            'ankle': ankle, 'shank_com': shank_com, 'shank_com_acc': shank_com_acc,
            'foot_com': foot_com, 'foot_com_acc': foot_com_acc, 'grf': grf, 'cop': cop}


def oblique_leg_cases(seed: int, count: int):
    """
    Yield ``count`` random 3-D instants of the oblique-ankle leg under tilted gravity.

    Each as (model, state, unknowns, q, v, a): the floating-shank model, ``spatial_leg_state``,
    seed 004's 12 unknowns (``spatial_matrix_inverse_dynamics``) and the model's q, v, a.
    """
    leg = OBLIQUE_LEG
    model = RobotModel.from_urdf_string(foot_shank_urdf(leg, fixed_knee=False),
                                        floating_base=True)
    rng = np.random.default_rng(seed)
    for _ in range(count):
        state = spatial_leg_state(leg, rng)
        unknowns = spatial_matrix_inverse_dynamics(leg, state, OBLIQUE_GRAVITY)
        q, v, a = free_flyer_state(state['knee'], state['knee_vel'], state['knee_acc'],
                                   state['quaternion'], state['omega_s'], state['alpha_s'])
        q, v, a = (np.append(x, value) for x, value in zip((q, v, a), state['theta']))
        yield model, state, unknowns, q, v, a


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
