"""The seeds' hand-derived references: a planar limb's Newton-Euler, the sagittal foot-shank."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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


def cross2(r, f) -> float:
    """Planar cross product: the moment of force f at lever r about the plane normal."""
    return r[0] * f[1] - r[1] * f[0]


def perp(r) -> np.ndarray:
    """Return r turned by +90 degrees in the plane (normal x r)."""
    return np.array([-r[1], r[0]])


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
