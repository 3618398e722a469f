"""
The textbook beside the unrolled code: a plain-numpy RNEA in the style of spatial_v2's ``ID.m``.

``reference_rnea`` is Featherstone's algorithm as the book writes it (6x6 matrices, ``plux``,
``crm``, ``crf``, one forward and one backward loop, gravity as the base's upward acceleration),
run on the same ``KinematicTree`` the kernels are packed from, with the tree's own joint axes
(the kernels rotate every joint frame so that the axis is z first: the two paths share the
parsed tree and nothing after it). Spatial vectors are [angular; linear], as in the book. Joint
types: revolute and prismatic (mimic joints: position ``multiplier * q + offset``, their torque
added to the master's times the multiplier) and the free flyer (q = [p; x y z w], v = [linear;
angular] in the body frame, Pinocchio's layout).
"""
from __future__ import annotations

from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.tree import FREE_FLYER, PRISMATIC, REVOLUTE


def skew(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def plux(E, r):
    """Return the motion transform to a frame rotated by E (parent -> child) at r (parent)."""
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = E
    X[3:, :3] = -E @ skew(r)
    return X


def crm(v):
    """Return the motion cross-product matrix v x."""
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = skew(v[:3])
    X[3:, :3] = skew(v[3:])
    return X


def crf(v):
    """Return the force cross-product matrix v x*."""
    return -crm(v).T


def rotation(axis, angle):
    """Return the rotation by ``angle`` about the unit ``axis`` (Rodrigues)."""
    K = skew(axis)
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * K @ K


def quaternion_matrix(x, y, z, w):
    n = np.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def spatial_inertia(mass, first_moment, inertia_origin):
    """Return the 6x6 inertia about the body origin from m, m c and the inertia about it."""
    I = np.zeros((6, 6))  # noqa: E741 (the book's name)
    I[:3, :3] = inertia_origin
    I[:3, 3:] = skew(first_moment)
    I[3:, :3] = skew(first_moment).T
    I[3:, 3:] = mass * np.eye(3)
    return I


def jcalc(tree, i, q, v, a):
    """Return (XJ, vJ, S qdd + cJ) of body i's joint: ``jcalc.m`` with the tree's axis."""
    kind, qi, vi = tree.joint_type[i], tree.q_index[i], tree.v_index[i]
    if kind == FREE_FLYER:
        E = quaternion_matrix(*q[qi + 3:qi + 7]).T
        swap = np.r_[3:6, 0:3]  # v = [linear; angular] -> [angular; linear]
        return plux(E, q[qi:qi + 3]), v[vi:vi + 6][swap], a[vi:vi + 6][swap]
    axis, mult = tree.axis[i], tree.multiplier[i]
    position = mult * q[qi] + tree.offset[i]
    S = np.r_[axis, 0, 0, 0] if kind == REVOLUTE else np.r_[0, 0, 0, axis]
    if kind == REVOLUTE:
        XJ = plux(rotation(axis, position).T, np.zeros(3))
    else:
        assert kind == PRISMATIC
        XJ = plux(np.eye(3), axis * position)
    return XJ, S * mult * v[vi], S * mult * a[vi]


def joint_torque(tree, i, f, tau):
    """Add S_i^T f (times the mimic multiplier) to the torques of body i's joint."""
    kind, vi = tree.joint_type[i], tree.v_index[i]
    if kind == FREE_FLYER:
        tau[vi:vi + 3] += f[3:]
        tau[vi + 3:vi + 6] += f[:3]
        return
    S = np.r_[tree.axis[i], 0, 0, 0] if kind == REVOLUTE else np.r_[0, 0, 0, tree.axis[i]]
    tau[vi] += tree.multiplier[i] * (S @ f)


def reference_rnea(tree, gravity, q, v, a):
    """Return tau of the tree for (q, v, a): ``ID.m``."""
    nb = tree.n_bodies
    a_grav = np.r_[0.0, 0.0, 0.0, gravity]
    Xup, vel, acc, f = [None] * nb, [None] * nb, [None] * nb, [None] * nb
    for i in range(nb):
        XJ, vJ, aJ = jcalc(tree, i, q, v, a)
        Xtree = plux(tree.rot_tree[i].T, tree.pos_tree[i])
        Xup[i] = XJ @ Xtree
        parent = tree.parent[i]
        if parent < 0:
            vel[i] = vJ
            acc[i] = Xup[i] @ -a_grav + aJ
        else:
            vel[i] = Xup[i] @ vel[parent] + vJ
            acc[i] = Xup[i] @ acc[parent] + aJ + crm(vel[i]) @ vJ
        inertia = spatial_inertia(tree.mass[i], tree.first_moment[i], tree.inertia_origin[i])
        f[i] = inertia @ acc[i] + crf(vel[i]) @ inertia @ vel[i]
    tau = np.zeros(tree.nv)
    for i in reversed(range(nb)):
        joint_torque(tree, i, f[i], tau)
        if tree.parent[i] >= 0:
            f[tree.parent[i]] = f[tree.parent[i]] + Xup[i].T @ f[i]
    return tau


ROBOTS = [('panda', False), ('ur5', False), ('baxter', False), ('pr2', False),
          ('double_pendulum_continuous', False), ('allegro', False), ('romeo', False),
          ('solo12', True), ('talos_reduced', True), ('anymal', True)]


@pytest.mark.filterwarnings('ignore::rnea_ros.errors.ModelWarning')  # romeo's massless thumbs
@pytest.mark.parametrize('name, floating_base', ROBOTS,
                         ids=[f'{n}-{"free" if b else "fixed"}' for n, b in ROBOTS])
def test_the_kernels_equal_the_textbook_rnea(name, floating_base):
    """model.rnea equals ID.m's loops on the same tree, at random states, to 1e-12 relative."""
    model = RobotModel.from_urdf_file(robot_path(name), floating_base=floating_base)
    tree = model.tree
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = model.neutral_configuration() + rng.uniform(-1.0, 1.0, model.nq)
        if floating_base:
            q[3:7] /= np.linalg.norm(q[3:7])
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        expected = reference_rnea(tree, np.asarray(model.gravity), q, v, a)
        tau = model.rnea(q, v, a)
        scale = 1.0 + np.max(np.abs(expected))
        assert np.max(np.abs(tau - expected)) <= 1e-12 * scale, name
