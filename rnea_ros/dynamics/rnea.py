"""
Jitted Recursive Newton-Euler kernels on the packed model arrays. No ROS, no names.

The model is one flat float64 array (``pack_model``: a header [nb, nq, nv, gravity] then one
``BODY_WIDTH`` record per body, offsets ``B_*``), the scratch one flat array (``new_workspace``,
offsets ``W_*``), both laid out in ``layout``; what depends on a joint's type is in ``joints``.
Few arguments keep numba's call overhead small, and flat (buffer, offset) addressing keeps the
passes free of slicing. Links: ``link_body`` (body of each URDF link, -1 for
the world) and ``link_pose`` (12 floats per link: its placement in that body).

External wrenches ``fext`` are (nl, 6) rows [fx fy fz tx ty tz] in each link's own frame about the
link origin; an empty (0, 6) array means none. Gravity ``g`` is a world-frame 3-vector.

Invalid inputs (wrong size, non-finite value, quaternion far from unit norm, non-finite result,
an output array sharing memory with an input) raise ``ValueError`` from the kernel; the caller
(model.py) turns that into a precise message, or computes on copies.
"""
from __future__ import annotations

import math

from numba import njit, prange
import numpy as np

from rnea_ros.dynamics.joints import add_joint_force, add_joint_motion, has_axis, x_up
from rnea_ros.dynamics.joints import QUATERNION_TOLERANCE  # noqa: F401 (re-exported)
from rnea_ros.dynamics.layout import (B_AXIS, B_H, B_INERTIA, B_MASS, B_MULT, B_OFFSET,
                                      B_PARENT, B_PLACEMENT, B_Q, B_TYPE, B_V, BODY_WIDTH,
                                      H_GRAVITY, H_NB, H_NQ, H_NV, HEADER, W_ACC, W_FORCE,
                                      W_PLACEMENT, W_TMP, W_VEL, WORK_WIDTH)
from rnea_ros.dynamics.spatial import (add_force_to_parent, JIT, JIT_INLINE, motion_to_child,
                                       store6)
from rnea_ros.dynamics.tree import KinematicTree


def canonical_rotations(tree: KinematicTree) -> np.ndarray:
    """
    Per body, the constant rotation Q from the URDF body frame to the kernels' body frame.

    The kernels turn every revolute and prismatic body frame about its origin so that the joint
    axis is its z axis (Q e_z = u): then R(q) = T' Rz(q) and S = e_z, which saves about a third
    of the arithmetic of a general axis. Free-flyer bodies keep their frame (Q = I), so their
    v and tau conventions are untouched. Every quantity tied to a body frame (tree placements,
    inertia, link poses) is re-expressed with Q when packed.
    """
    rotations = np.tile(np.eye(3), (tree.n_bodies, 1, 1))
    for i in range(tree.n_bodies):
        if not has_axis(tree.joint_type[i]):
            continue
        axis = tree.axis[i]
        b1 = np.array([1.0, 0.0, 0.0]) - axis[0] * axis
        if np.linalg.norm(b1) < 0.5:
            b1 = np.array([0.0, 1.0, 0.0]) - axis[1] * axis
        b1 /= np.linalg.norm(b1)
        rotations[i] = np.column_stack([b1, np.cross(axis, b1), axis])
    return rotations


def pack_model(tree: KinematicTree, gravity) -> np.ndarray:
    """Pack a tree into the flat model array, in canonical body frames."""
    nb = tree.n_bodies
    canonical = canonical_rotations(tree)
    model = np.zeros(HEADER + nb * BODY_WIDTH)
    model[H_NB], model[H_NQ], model[H_NV] = nb, tree.nq, tree.nv
    model[H_GRAVITY:H_GRAVITY + 3] = gravity
    bodies = model[HEADER:].reshape(nb, BODY_WIDTH)
    bodies[:, B_PARENT] = tree.parent
    bodies[:, B_TYPE] = tree.joint_type
    bodies[:, B_Q] = tree.q_index
    bodies[:, B_V] = tree.v_index
    bodies[:, B_MULT] = tree.multiplier
    bodies[:, B_OFFSET] = tree.offset
    bodies[:, B_MASS] = tree.mass
    for i in range(nb):
        parent = tree.parent[i]
        to_parent = canonical[parent].T if parent >= 0 else np.eye(3)
        rot = canonical[i]
        bodies[i, B_PLACEMENT:B_PLACEMENT + 9] = (to_parent @ tree.rot_tree[i] @ rot).reshape(9)
        bodies[i, B_PLACEMENT + 9:B_PLACEMENT + 12] = to_parent @ tree.pos_tree[i]
        bodies[i, B_AXIS:B_AXIS + 3] = rot.T @ tree.axis[i]  # e_z, or 0 for a free-flyer
        bodies[i, B_H:B_H + 3] = rot.T @ tree.first_moment[i]
        bodies[i, B_INERTIA:B_INERTIA + 9] = (rot.T @ tree.inertia_origin[i] @ rot).reshape(9)
    return model


def pack_links(tree: KinematicTree) -> tuple[np.ndarray, np.ndarray]:
    """
    Pack the links: body of each link and its placement in that body's frame.

    (link_body, link_pose): body of each link and its placement (12 floats) in that body's
    canonical frame (``canonical_rotations``).
    """
    canonical = canonical_rotations(tree)
    link_body = np.array([link.body for link in tree.links], dtype=np.int64)
    link_pose = np.zeros((len(tree.links), 12))
    for row, link in enumerate(tree.links):
        to_body = canonical[link.body].T if link.body >= 0 else np.eye(3)
        link_pose[row, :9] = (to_body @ link.rotation).reshape(9)
        link_pose[row, 9:] = to_body @ link.translation
    return link_body, link_pose.reshape(-1)


def new_workspace(model: np.ndarray) -> np.ndarray:
    """Scratch memory for one RNEA pass at a time on ``model``."""
    return np.zeros(int(model[H_NB]) * WORK_WIDTH)


def new_state(model: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(state, model view, workspace view): the model and its workspace in one array."""
    state = np.concatenate([model, new_workspace(model)])
    return state, state[:model.size], state[model.size:]


@njit(**JIT_INLINE)
def check_sizes(model, q, v, a):
    """Raise ValueError unless q, v, a have the model's sizes."""
    if q.shape[0] != int(model[H_NQ]) or v.shape[0] != int(model[H_NV]) \
            or a.shape[0] != int(model[H_NV]):
        raise ValueError('rnea: wrong argument size')


@njit(**JIT_INLINE)
def check_inputs(model, q, v, a):
    """Raise ValueError unless q, v, a have the model's sizes and finite values."""
    check_sizes(model, q, v, a)
    # x * 0 is 0 for finite x and NaN for NaN or inf (the compiler may not fold it: no
    # fastmath), so one comparison after branch-free loops tests every entry.
    poison = 0.0
    for k in range(q.shape[0]):
        poison += q[k] * 0.0
    for k in range(v.shape[0]):
        poison += v[k] * 0.0 + a[k] * 0.0
    if poison != 0.0:
        raise ValueError('rnea: non-finite input')


@njit(**JIT_INLINE)
def forward_pass(model, work, q, v, a, g, forces=True):
    """
    Placements, velocities, accelerations and inertial forces of every body, into work.

    ``forces=False`` (a constant at the call site, so the branch compiles away) stops at the
    accelerations, for callers that need only the motion (the regressor).

    One body per iteration, on local scalars: the flat buffers may alias as far as the compiler
    knows, so reading each input once and writing each output once keeps it in registers.
    """
    nb = int(model[H_NB])
    for i in range(nb):
        b = HEADER + i * BODY_WIDTH
        w = i * WORK_WIDTH
        r0, r1, r2, r3, r4, r5, r6, r7, r8, px, py, pz = x_up(model, b, q)
        work[w + 0], work[w + 1], work[w + 2] = r0, r1, r2
        work[w + 3], work[w + 4], work[w + 5] = r3, r4, r5
        work[w + 6], work[w + 7], work[w + 8] = r6, r7, r8
        work[w + 9], work[w + 10], work[w + 11] = px, py, pz
        # The parent's motion in this frame, gravity as the root's upward acceleration.
        w0, w1, w2, l0, l1, l2, b0, b1, b2, m0, m1, m2 = parent_motion(model, work, i, g[0], g[1],
                                                                       g[2])
        w0, w1, w2, l0, l1, l2, b0, b1, b2, m0, m1, m2 = add_joint_motion(
            model, b, v, a, w0, w1, w2, l0, l1, l2, b0, b1, b2, m0, m1, m2)
        store6(work, w + W_VEL, (w0, w1, w2, l0, l1, l2))
        store6(work, w + W_ACC, (b0, b1, b2, m0, m1, m2))
        if not forces:
            continue
        # f = I a + v x* (I v), and v x* f' = [w x n' + l x f'; w x f'].
        n0, n1, n2, f0, f1, f2 = inertia_times(model, b, w0, w1, w2, l0, l1, l2)
        c0, c1, c2, c3, c4, c5 = inertia_times(model, b, b0, b1, b2, m0, m1, m2)
        o = w + W_FORCE
        work[o] = c0 + w1 * n2 - w2 * n1 + l1 * f2 - l2 * f1
        work[o + 1] = c1 + w2 * n0 - w0 * n2 + l2 * f0 - l0 * f2
        work[o + 2] = c2 + w0 * n1 - w1 * n0 + l0 * f1 - l1 * f0
        work[o + 3] = c3 + w1 * f2 - w2 * f1
        work[o + 4] = c4 + w2 * f0 - w0 * f2
        work[o + 5] = c5 + w0 * f1 - w1 * f0


@njit(**JIT_INLINE)
def parent_motion(model, work, i, g0, g1, g2):
    """
    Return the parent's velocity [w; l] and acceleration [b; m] of body ``i`` in its frame.

    w_c = R^T w, v_c = R^T (v - p x w) with body i's placement (R, p) in its work record. The
    world does not move; gravity (g0, g1, g2) enters as a fictitious upward base acceleration.
    """
    x = i * WORK_WIDTH + W_PLACEMENT
    parent = int(model[HEADER + i * BODY_WIDTH + B_PARENT])
    if parent < 0:
        return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                -(work[x] * g0 + work[x + 3] * g1 + work[x + 6] * g2),
                -(work[x + 1] * g0 + work[x + 4] * g1 + work[x + 7] * g2),
                -(work[x + 2] * g0 + work[x + 5] * g1 + work[x + 8] * g2))
    o = parent * WORK_WIDTH
    w0, w1, w2, l0, l1, l2 = motion_to_child(
        work, x, work[o + W_VEL], work[o + W_VEL + 1], work[o + W_VEL + 2],
        work[o + W_VEL + 3], work[o + W_VEL + 4], work[o + W_VEL + 5])
    b0, b1, b2, m0, m1, m2 = motion_to_child(
        work, x, work[o + W_ACC], work[o + W_ACC + 1], work[o + W_ACC + 2],
        work[o + W_ACC + 3], work[o + W_ACC + 4], work[o + W_ACC + 5])
    return w0, w1, w2, l0, l1, l2, b0, b1, b2, m0, m1, m2


@njit(**JIT_INLINE)
def inertia_times(model, b, w0, w1, w2, l0, l1, l2):
    """
    Multiply body ``b``'s spatial inertia by a motion vector.

    I m for body record ``b``'s spatial inertia and the motion m = [w; l]:
    [I_o w + h x l; mass l - h x w] (h = mass * com, I_o about the body origin).
    """
    mass = model[b + B_MASS]
    hx, hy, hz = model[b + B_H], model[b + B_H + 1], model[b + B_H + 2]
    n = b + B_INERTIA
    i0, i1, i2, i4, i5, i8 = (model[n], model[n + 1], model[n + 2], model[n + 4], model[n + 5],
                              model[n + 8])
    return (i0 * w0 + i1 * w1 + i2 * w2 + hy * l2 - hz * l1,
            i1 * w0 + i4 * w1 + i5 * w2 + hz * l0 - hx * l2,
            i2 * w0 + i5 * w1 + i8 * w2 + hx * l1 - hy * l0,
            mass * l0 - (hy * w2 - hz * w1),
            mass * l1 - (hz * w0 - hx * w2),
            mass * l2 - (hx * w1 - hy * w0))


@njit(**JIT_INLINE)
def wrench_body(link_body, fext, link):
    """Return the body of ``link`` if its wrench fext[link] is nonzero, else -1 (or no body)."""
    for k in range(6):
        if fext[link, k] != 0.0:
            return link_body[link]
    return -1


@njit(**JIT)
def rnea_core(model, work, q, v, a, g, link_body, link_pose, fext, tau):
    """
    Add tau += RNEA(q, v, a, fext) with gravity g (tau is zeroed by the caller).

    Nothing here raises (numba loses exceptions raised in prange workers, and a raise keeps it
    from running a loop in parallel): the serial entry points check the inputs and the result,
    the batch callers check in model.py. The inputs need their own check: not every entry
    reaches tau (the root position of a floating base does not enter the dynamics at all).
    """
    forward_pass(model, work, q, v, a, g)
    for link in range(fext.shape[0]):
        body = wrench_body(link_body, fext, link)
        if body < 0:
            continue
        # Link wrench [f; n] -> body force [n; f], subtracted (the environment pushes the body).
        w = body * WORK_WIDTH
        for k in range(3):
            work[w + W_TMP + k] = -fext[link, 3 + k]
            work[w + W_TMP + 3 + k] = -fext[link, k]
        add_force_to_parent(link_pose, 12 * link, work, w + W_TMP, work, w + W_FORCE)
    backward_pass(model, work, work, W_FORCE, WORK_WIDTH, tau)


@njit(**JIT_INLINE)
def backward_pass(model, work, forces, offset, stride, tau):
    """
    From the leaves to the root: tau += S_i^T f_i, then f_parent += X_i^T f_i.

    Body i's force is ``forces[i * stride + offset:][:6]``; placements are read from ``work``
    (left there by ``forward_pass``).
    """
    for i in range(int(model[H_NB]) - 1, -1, -1):
        f = i * stride + offset
        add_joint_force(model, i, forces, f, tau)
        parent = int(model[HEADER + i * BODY_WIDTH + B_PARENT])
        if parent >= 0:
            add_force_to_parent(work, i * WORK_WIDTH + W_PLACEMENT, forces, f, forces,
                                parent * stride + offset)


@njit(**JIT_INLINE)
def overlaps(x, y):
    """Tell whether the 1-D contiguous arrays x and y share memory (one may view the other)."""
    if x.shape[0] == 0 or y.shape[0] == 0:
        return False
    x_start = x.ctypes.data
    y_start = y.ctypes.data
    return x_start < y_start + y.shape[0] * y.itemsize and \
        y_start < x_start + x.shape[0] * x.itemsize


@njit(**JIT_INLINE)
def check_output(tau, q, v, a):
    """Raise ValueError if tau shares memory with q, v or a: it is zeroed before they are read."""
    if overlaps(tau, q) or overlaps(tau, v) or overlaps(tau, a):
        raise ValueError('rnea: the output overlaps an input')


@njit(**JIT_INLINE)
def check_finite(tau):
    """Raise ValueError if tau has a non-finite entry (inputs too large)."""
    for k in range(tau.shape[0]):
        if not math.isfinite(tau[k]):
            raise ValueError('rnea: non-finite result')


# Empty link tables: "no external wrench" for the default entry point.
NO_LINKS = np.zeros(0, dtype=np.int64)
NO_POSES = np.zeros(0)
NO_WRENCHES = np.zeros((0, 6))


@njit(**JIT)
def rnea_default(state, q, v, a, tau):
    """
    Compute tau = RNEA(q, v, a) with the model's default gravity and no external wrench.

    ``state`` is the model array followed by its workspace (``new_state``): one argument fewer
    is ~50 ns less numba dispatch on the path the control loop calls.
    """
    size = HEADER + int(state[H_NB]) * BODY_WIDTH
    model = state[:size]
    if tau.shape[0] != int(model[H_NV]):  # tau may be the caller's ``out`` array
        raise ValueError('rnea: wrong output size')
    check_inputs(model, q, v, a)
    check_output(tau, q, v, a)
    for k in range(tau.shape[0]):
        tau[k] = 0.0
    rnea_core(model, state[size:], q, v, a, model[H_GRAVITY:H_GRAVITY + 3], NO_LINKS, NO_POSES,
              NO_WRENCHES, tau)
    check_finite(tau)


@njit(**JIT)
def rnea_general(model, work, q, v, a, g, link_body, link_pose, fext, tau):
    """Compute tau = RNEA(q, v, a, fext) with explicit gravity and (nl, 6) link wrenches."""
    if tau.shape[0] != int(model[H_NV]) or g.shape[0] != 3:  # tau may be the caller's out
        raise ValueError('rnea: wrong output or gravity size')
    check_inputs(model, q, v, a)
    check_output(tau, q, v, a)
    for k in range(tau.shape[0]):
        tau[k] = 0.0
    rnea_core(model, work, q, v, a, g, link_body, link_pose, fext, tau)
    check_finite(tau)


@njit(**JIT)  # not inlined: numba would turn its array statements into nested parfors
def _batch_range(model, work, Q, V, A, g, link_body, link_pose, F, tau, start, stop):
    """tau[k] = RNEA(Q[k], V[k], A[k], F[k]) for start <= k < stop (F: (N, nl, 6) or (1, 0, 6))."""
    n = Q.shape[0]
    for k in range(start, stop):
        fext = F[k] if F.shape[0] == n else F[0]
        tau[k, :] = 0.0
        rnea_core(model, work, Q[k], V[k], A[k], g, link_body, link_pose, fext, tau[k])


@njit(cache=True, nogil=True, error_model='numpy')
def rnea_batch_serial(model, Q, V, A, g, link_body, link_pose, F, tau):
    """``rnea_batch`` on the calling thread: no thread pool to wake for short batches."""
    work = np.zeros(int(model[H_NB]) * WORK_WIDTH)
    _batch_range(model, work, Q, V, A, g, link_body, link_pose, F, tau, 0, Q.shape[0])


@njit(cache=True, nogil=True, parallel=True, error_model='numpy')
def rnea_batch(model, Q, V, A, g, link_body, link_pose, F, tau, chunks):
    """
    tau[k] = RNEA(Q[k], V[k], A[k], F[k]) for every sample, in ``chunks`` parallel ranges.

    F is (N, nl, 6), or (1, 0, 6) for no external wrench. Each chunk owns one workspace, so the
    per-sample loop allocates nothing. The caller validates the samples first and checks tau
    after: an exception raised in a prange worker thread is lost by numba (the call returns
    and the next call of the function fails with SystemError).
    """
    n = Q.shape[0]
    for c in prange(chunks):
        work = np.zeros(int(model[H_NB]) * WORK_WIDTH)
        _batch_range(model, work, Q, V, A, g, link_body, link_pose, F, tau,
                     c * n // chunks, (c + 1) * n // chunks)
