"""
Jitted joint-torque regressor: tau = Y(q, v, a) phi, linear in the inertial parameters.

phi stacks, for each moving body in ``RobotModel.body_names`` order, its 10 standard inertial
parameters in Pinocchio's order (``PARAMETERS``): mass, first moment m c and the rotational
inertia about the body origin, all expressed in the URDF body frame (the frame of the body's
joint, which is its child link's frame), links folded in by fixed joints included.

Algorithm, on the placements and body motions of ``rnea.forward_pass`` (gravity as a base
acceleration, canonical body frames). The force body i needs, f_i = I_i a_i + v_i x* I_i v_i, is
linear in phi_i, and joint j (an ancestor of i, or i) feels S_j^T X_ji^* f_i = (X_ij S_j)^T f_i.
So each body carries the motion subspace columns of its ancestors' joints expressed in its own
frame (``axes``: one motion transform per ancestor column from the parent's list, the spatial_v2
way round), and each (column, body) pair contributes a row of 10 numbers s^T A_i(v_i, a_i):

    d tau / d m   = s_l . alpha                                   alpha = a_l + w x l
    d tau / d h   = alpha x s_w + s_l x a_w + (w . s_l) w - |w|^2 s_l
    d tau / d I_o = the coefficients of s_w^T I_o a_w + (s_w x w)^T I_o w

with s = [s_w; s_l], v_i = [w; l], a_i = [a_w; a_l]. The parameters live in the URDF frame, the
kernels in the canonical frame (``rnea.canonical_rotations``: joint axis = z): s and the body
motion are turned into the URDF body frame with the constant rotation Q_i before the products,
so Y's columns need no conversion. Cost: O(sum of depths), about 80 multiplications per pair.

Mimic joints add their rows into their master's, times the multiplier, as the RNEA does. The two
massless inner bodies of a planar joint get no columns (the third carries the joint's child link).
"""
from __future__ import annotations

import dataclasses

from numba import njit, prange
import numpy as np

from rnea_ros.dynamics.joints import FREE_FLYER, subspace_columns
from rnea_ros.dynamics.layout import (B_PARENT, BODY_WIDTH, H_NB, HEADER, W_ACC, W_PLACEMENT,
                                      W_VEL, WORK_WIDTH)
from rnea_ros.dynamics.rnea import canonical_rotations, forward_pass
from rnea_ros.dynamics.spatial import compose_placements, JIT, JIT_INLINE, motion_to_child
from rnea_ros.dynamics.tree import KinematicTree

# Pinocchio's order of a body's parameters (Inertia::toDynamicParameters).
PARAMETERS = ('m', 'mc_x', 'mc_y', 'mc_z', 'I_xx', 'I_xy', 'I_yy', 'I_xz', 'I_yz', 'I_zz')
N_PARAMETERS = len(PARAMETERS)
# The regressor table (``pack_regressor``): a header, one record per body, one per axis entry.
# T_ROOT_ROW: the first v row of a free-flyer root body (``floating_base=True``), whose six rows
# are filled by one force transform per column (``add_root_rows``), or -1.
T_NB, T_ENTRIES, T_BODIES, T_ROOT_ROW = 0, 1, 2, 3
TABLE_HEADER = 4
# Body record: Q (URDF frame <- canonical frame, row-major), parameter column (-1: none), first
# axis entry, number of axis entries (its ancestors' joint columns, then its own), 1.0 if Q = I.
R_ROTATION, R_COLUMN, R_START, R_COUNT, R_IDENTITY = 0, 9, 10, 11, 12
RECORD_WIDTH = 13
# Axis entry: the v row it adds to and (own joint columns only) the canonical motion subspace
# column times the mimic multiplier.
E_ROW, E_AXIS = 0, 1
ENTRY_WIDTH = 7


def body_columns(tree: KinematicTree) -> np.ndarray:
    """Per body, its parameter block index in phi, or -1 (the inner bodies of a planar joint)."""
    has_link = np.array([bool(link) for link in tree.body_links], dtype=bool)
    return np.where(has_link, np.cumsum(has_link) - 1, -1).astype(np.int64)


def pack_regressor(tree: KinematicTree) -> np.ndarray:
    """Pack the table the regressor kernels read beside the packed model (offsets above)."""
    nb = tree.n_bodies
    canonical = canonical_rotations(tree)
    columns = body_columns(tree)
    chains: list[list[tuple[int, np.ndarray]]] = []
    records = np.zeros((nb, RECORD_WIDTH))
    entries: list[tuple[int, np.ndarray]] = []
    root_block = nb > 0 and tree.joint_type[0] == FREE_FLYER
    for i in range(nb):
        parent = tree.parent[i]
        inherited = chains[parent] if parent >= 0 else []
        v = int(tree.v_index[i])
        if i == 0 and root_block:
            own = []  # add_root_rows fills its rows
        else:  # the joint's columns of S, in the order of its v entries
            subspace = subspace_columns(tree.joint_type[i], tree.multiplier[i])
            own = [(v + c, subspace[:, c]) for c in range(subspace.shape[1])]
        chain = [(row, np.zeros(6)) for row, _ in inherited] + own
        records[i, R_ROTATION:R_ROTATION + 9] = canonical[i].reshape(9)
        records[i, R_IDENTITY] = float(np.array_equal(canonical[i], np.eye(3)))
        records[i, R_COLUMN] = columns[i]
        records[i, R_START] = len(entries)
        records[i, R_COUNT] = len(chain)
        chains.append(chain)
        entries += chain
    table = np.zeros((len(entries), ENTRY_WIDTH))
    for row, (v_row, axis) in enumerate(entries):
        table[row, E_ROW] = v_row
        table[row, E_AXIS:E_AXIS + 6] = axis
    header = np.array([nb, len(entries), int((columns >= 0).sum()),
                       tree.v_index[0] if root_block else -1], dtype=np.float64)
    return np.concatenate([header, records.reshape(-1), table.reshape(-1)])


def inertial_parameters(tree: KinematicTree) -> np.ndarray:
    """(nb, 10) phi of the tree's bodies that have columns, in ``PARAMETERS`` order."""
    rows = body_columns(tree) >= 0
    inertia = tree.inertia_origin[rows]
    return np.column_stack([
        tree.mass[rows], tree.first_moment[rows], inertia[:, 0, 0], inertia[:, 0, 1],
        inertia[:, 1, 1], inertia[:, 0, 2], inertia[:, 1, 2], inertia[:, 2, 2]])


def with_parameters(tree: KinematicTree, phi: np.ndarray) -> KinematicTree:
    """Copy ``tree`` with the (nb, 10) parameters phi in its bodies (checked by the caller)."""
    rows = np.flatnonzero(body_columns(tree) >= 0)
    mass = tree.mass.copy()
    first_moment = tree.first_moment.copy()
    inertia = tree.inertia_origin.copy()
    mass[rows] = phi[:, 0]
    first_moment[rows] = phi[:, 1:4]
    xx, xy, yy, xz, yz, zz = phi[:, 4:10].T
    inertia[rows] = np.stack([np.stack([xx, xy, xz], -1), np.stack([xy, yy, yz], -1),
                              np.stack([xz, yz, zz], -1)], -2)
    return dataclasses.replace(tree, mass=mass, first_moment=first_moment,
                               inertia_origin=inertia)


@njit(**JIT)
def regressor_sample(model, table, work, axes, q, v, a, g, y):
    """
    Write Y(q, v, a) with gravity g into y (nv, 10 nb), overwriting it.

    Returns 0.0, or NaN when an entry is not finite. Raises nothing (it runs in prange
    workers): the caller checks the inputs.
    """
    forward_pass(model, work, q, v, a, g, False)
    y[:, :] = 0.0
    poison = 0.0
    entries = TABLE_HEADER + int(table[T_NB]) * RECORD_WIDTH
    root_row = int(table[T_ROOT_ROW])
    frames = 6 * int(table[T_ENTRIES])  # in axes after the entries: placements in the root
    for i in range(int(model[H_NB])):
        r = TABLE_HEADER + i * RECORD_WIDTH
        start = int(table[r + R_START])
        count = int(table[r + R_COUNT])
        parent = int(model[HEADER + i * BODY_WIDTH + B_PARENT])
        column = int(table[r + R_COLUMN])
        x = i * WORK_WIDTH + W_PLACEMENT  # placement in the parent, from forward_pass
        inherited = src = 0
        if parent >= 0:
            inherited = int(table[TABLE_HEADER + parent * RECORD_WIDTH + R_COUNT])
            src = 6 * int(table[TABLE_HEADER + parent * RECORD_WIDTH + R_START]) - 6 * start
        if root_row >= 0:
            if parent < 0:
                for k in range(12):
                    axes[frames + k] = 1.0 if k in (0, 4, 8) else 0.0
            else:
                compose_placements(axes, frames + 12 * parent, work, x, axes, frames + 12 * i)
        # Q: canonical -> URDF body frame; skipped where it is the identity (joint axis +z).
        rotate = table[r + R_IDENTITY] == 0.0
        q0, q1, q2, q3, q4, q5, q6, q7, q8 = (
            table[r], table[r + 1], table[r + 2], table[r + 3], table[r + 4], table[r + 5],
            table[r + 6], table[r + 7], table[r + 8])
        # Body motion in the URDF body frame: v = [w; l], a = [b; al], alpha = a_l + w x l.
        o = i * WORK_WIDTH + W_VEL
        w0, w1, w2, l0, l1, l2 = (work[o], work[o + 1], work[o + 2], work[o + 3], work[o + 4],
                                  work[o + 5])
        o = i * WORK_WIDTH + W_ACC
        b0, b1, b2, al0, al1, al2 = (work[o], work[o + 1], work[o + 2], work[o + 3],
                                     work[o + 4], work[o + 5])
        if rotate:
            w0, w1, w2 = rotated(q0, q1, q2, q3, q4, q5, q6, q7, q8, w0, w1, w2)
            l0, l1, l2 = rotated(q0, q1, q2, q3, q4, q5, q6, q7, q8, l0, l1, l2)
            b0, b1, b2 = rotated(q0, q1, q2, q3, q4, q5, q6, q7, q8, b0, b1, b2)
            al0, al1, al2 = rotated(q0, q1, q2, q3, q4, q5, q6, q7, q8, al0, al1, al2)
        al0 += w1 * l2 - w2 * l1
        al1 += w2 * l0 - w0 * l2
        al2 += w0 * l1 - w1 * l0
        ww = w0 * w0 + w1 * w1 + w2 * w2
        col = N_PARAMETERS * column
        if root_row >= 0 and column >= 0:
            poison += add_root_rows(y, root_row, col, axes, frames + 12 * i, rotate, q0, q1, q2,
                                    q3, q4, q5, q6, q7, q8, w0, w1, w2, b0, b1, b2, al0, al1,
                                    al2, ww)
        for e in range(count):
            d = 6 * (start + e)
            if e < inherited:
                # An ancestor's column into this body's frame: s = X s_parent.
                c0, c1, c2, c3, c4, c5 = motion_to_child(
                    work, x, axes[src + d], axes[src + d + 1], axes[src + d + 2],
                    axes[src + d + 3], axes[src + d + 4], axes[src + d + 5])
            else:  # the body's own joint column (times the mimic multiplier), from the table
                t = entries + (start + e) * ENTRY_WIDTH + E_AXIS
                c0, c1, c2, c3, c4, c5 = (table[t], table[t + 1], table[t + 2], table[t + 3],
                                          table[t + 4], table[t + 5])
            axes[d], axes[d + 1], axes[d + 2], axes[d + 3], axes[d + 4], axes[d + 5] = \
                c0, c1, c2, c3, c4, c5
            if column < 0:
                continue
            if rotate:
                c0, c1, c2 = rotated(q0, q1, q2, q3, q4, q5, q6, q7, q8, c0, c1, c2)
                c3, c4, c5 = rotated(q0, q1, q2, q3, q4, q5, q6, q7, q8, c3, c4, c5)
            # s = [c0 c1 c2; c3 c4 c5] in the URDF body frame: the row of 10 coefficients.
            wn = w0 * c3 + w1 * c4 + w2 * c5
            d0 = c1 * w2 - c2 * w1  # s_w x w
            d1 = c2 * w0 - c0 * w2
            d2 = c0 * w1 - c1 * w0
            ym = c3 * al0 + c4 * al1 + c5 * al2
            yh0 = al1 * c2 - al2 * c1 + c4 * b2 - c5 * b1 + wn * w0 - ww * c3
            yh1 = al2 * c0 - al0 * c2 + c5 * b0 - c3 * b2 + wn * w1 - ww * c4
            yh2 = al0 * c1 - al1 * c0 + c3 * b1 - c4 * b0 + wn * w2 - ww * c5
            ixx = c0 * b0 + d0 * w0
            ixy = c0 * b1 + c1 * b0 + d0 * w1 + d1 * w0
            iyy = c1 * b1 + d1 * w1
            ixz = c0 * b2 + c2 * b0 + d0 * w2 + d2 * w0
            iyz = c1 * b2 + c2 * b1 + d1 * w2 + d2 * w1
            izz = c2 * b2 + d2 * w2
            row = int(table[entries + (start + e) * ENTRY_WIDTH + E_ROW])
            y[row, col] += ym
            y[row, col + 1] += yh0
            y[row, col + 2] += yh1
            y[row, col + 3] += yh2
            y[row, col + 4] += ixx
            y[row, col + 5] += ixy
            y[row, col + 6] += iyy
            y[row, col + 7] += ixz
            y[row, col + 8] += iyz
            y[row, col + 9] += izz
            poison += (ym + yh0 + yh1 + yh2 + ixx + ixy + iyy + ixz + iyz + izz) * 0.0
    return poison


@njit(**JIT_INLINE)
def add_root_rows(y, row, col, frame, fo, rotate, q0, q1, q2, q3, q4, q5, q6, q7, q8, w0, w1,
                  w2, b0, b1, b2, al0, al1, al2, ww):
    """
    Add a body's block of the six rows of a free-flyer root: X_root<-body^* A(v, a).

    A (6 x 10) maps the body's parameters to its force [n; f] in its URDF frame (v = [w; l],
    a = [b; .], alpha = (al0, al1, al2) and ww = |w|^2 as in ``regressor_sample``); each
    column is carried to the root as a force: f_0 = M f, n_0 = M n + p x f_0, with (R, p) =
    frame[fo:fo + 12] the body's canonical frame in the root and M = R Q^T. Rows row..row+2
    take f_0, row+3..row+5 n_0 (the free-flyer's [force; torque]). Returns the poison sum.
    """
    m0, m1, m2, m3, m4, m5, m6, m7, m8 = (frame[fo], frame[fo + 1], frame[fo + 2],
                                          frame[fo + 3], frame[fo + 4], frame[fo + 5],
                                          frame[fo + 6], frame[fo + 7], frame[fo + 8])
    if rotate:  # M = R Q^T
        m0, m1, m2 = rotated(q0, q1, q2, q3, q4, q5, q6, q7, q8, m0, m1, m2)
        m3, m4, m5 = rotated(q0, q1, q2, q3, q4, q5, q6, q7, q8, m3, m4, m5)
        m6, m7, m8 = rotated(q0, q1, q2, q3, q4, q5, q6, q7, q8, m6, m7, m8)
    px, py, pz = frame[fo + 9], frame[fo + 10], frame[fo + 11]
    poison = 0.0
    # mass: n = 0, f = alpha
    poison += root_column(y, row, col, m0, m1, m2, m3, m4, m5, m6, m7, m8, px, py, pz,
                          0.0, 0.0, 0.0, al0, al1, al2)
    # first moment h_k: n = e_k x alpha, f = b x e_k + (w . e_k) w - |w|^2 e_k
    poison += root_column(y, row, col + 1, m0, m1, m2, m3, m4, m5, m6, m7, m8, px, py, pz,
                          0.0, -al2, al1, w0 * w0 - ww, b2 + w1 * w0, w2 * w0 - b1)
    poison += root_column(y, row, col + 2, m0, m1, m2, m3, m4, m5, m6, m7, m8, px, py, pz,
                          al2, 0.0, -al0, w0 * w1 - b2, w1 * w1 - ww, b0 + w2 * w1)
    poison += root_column(y, row, col + 3, m0, m1, m2, m3, m4, m5, m6, m7, m8, px, py, pz,
                          -al1, al0, 0.0, b1 + w0 * w2, w1 * w2 - b0, w2 * w2 - ww)
    # rotational inertia: n = L(b) + w x L(w) for the entry's pattern L, f = 0
    poison += root_column(y, row, col + 4, m0, m1, m2, m3, m4, m5, m6, m7, m8, px, py, pz,
                          b0, w2 * w0, -w1 * w0, 0.0, 0.0, 0.0)
    poison += root_column(y, row, col + 5, m0, m1, m2, m3, m4, m5, m6, m7, m8, px, py, pz,
                          b1 - w2 * w0, b0 + w2 * w1, w0 * w0 - w1 * w1, 0.0, 0.0, 0.0)
    poison += root_column(y, row, col + 6, m0, m1, m2, m3, m4, m5, m6, m7, m8, px, py, pz,
                          -w2 * w1, b1, w0 * w1, 0.0, 0.0, 0.0)
    poison += root_column(y, row, col + 7, m0, m1, m2, m3, m4, m5, m6, m7, m8, px, py, pz,
                          b2 + w0 * w1, w2 * w2 - w0 * w0, b0 - w1 * w2, 0.0, 0.0, 0.0)
    poison += root_column(y, row, col + 8, m0, m1, m2, m3, m4, m5, m6, m7, m8, px, py, pz,
                          w1 * w1 - w2 * w2, b2 - w0 * w1, b1 + w0 * w2, 0.0, 0.0, 0.0)
    poison += root_column(y, row, col + 9, m0, m1, m2, m3, m4, m5, m6, m7, m8, px, py, pz,
                          w1 * w2, -w0 * w2, b2, 0.0, 0.0, 0.0)
    return poison


@njit(**JIT_INLINE)
def root_column(y, row, col, m0, m1, m2, m3, m4, m5, m6, m7, m8, px, py, pz, n0, n1, n2, f0,
                f1, f2):
    """Add the force [n; f] carried to the root (f_0 = M f, n_0 = M n + p x f_0) to column col."""
    g0, g1, g2 = rotated(m0, m1, m2, m3, m4, m5, m6, m7, m8, f0, f1, f2)
    t0, t1, t2 = rotated(m0, m1, m2, m3, m4, m5, m6, m7, m8, n0, n1, n2)
    t0 += py * g2 - pz * g1
    t1 += pz * g0 - px * g2
    t2 += px * g1 - py * g0
    y[row, col] += g0
    y[row + 1, col] += g1
    y[row + 2, col] += g2
    y[row + 3, col] += t0
    y[row + 4, col] += t1
    y[row + 5, col] += t2
    return (g0 + g1 + g2 + t0 + t1 + t2) * 0.0


@njit(**JIT_INLINE)
def rotated(q0, q1, q2, q3, q4, q5, q6, q7, q8, x0, x1, x2):
    """Q x for the row-major 3x3 matrix Q = (q0 .. q8)."""
    return (q0 * x0 + q1 * x1 + q2 * x2, q3 * x0 + q4 * x1 + q5 * x2,
            q6 * x0 + q7 * x1 + q8 * x2)


@njit(**JIT)  # not inlined: numba would turn its array statements into nested parfors
def regressor_range(model, table, Q, V, A, g, Y, status, start, stop):
    """Y[k] = Y(Q[k], V[k], A[k]) for start <= k < stop; status[k] NaN where not finite."""
    work = np.zeros(int(model[H_NB]) * WORK_WIDTH)
    axes = np.zeros(6 * int(table[T_ENTRIES]) + 12 * int(table[T_NB]))
    for k in range(start, stop):
        status[k] = regressor_sample(model, table, work, axes, Q[k], V[k], A[k], g, Y[k])


@njit(cache=True, nogil=True, error_model='numpy')
def regressor_serial(model, table, Q, V, A, g, Y, status):
    """``regressor_batch`` on the calling thread: no thread pool to wake for short batches."""
    regressor_range(model, table, Q, V, A, g, Y, status, 0, Q.shape[0])


@njit(cache=True, nogil=True, parallel=True, error_model='numpy')
def regressor_batch(model, table, Q, V, A, g, Y, status, chunks):
    """
    Y[k] = Y(Q[k], V[k], A[k]) for every sample, in ``chunks`` parallel ranges.

    Y is (N, nv, 10 nb), status (N,): 0 where Y[k] is finite, NaN where not. The caller
    validates the samples first (an exception in a prange worker is lost by numba).
    """
    n = Q.shape[0]
    for c in prange(chunks):
        regressor_range(model, table, Q, V, A, g, Y, status,
                        c * n // chunks, (c + 1) * n // chunks)
