"""
Mimic joints in the ABA: the coupling imposed by Lagrange multipliers (``aba``'s docstring).

Each body has its own coordinate; x_secondary = x_primary is imposed with the factored
articulated inertias that ``aba_passes`` left in the records.
"""
from __future__ import annotations

import math

from numba import njit

from rnea_ros.dynamics.aba_passes import (A_A2, A_D, A_F2, A_QDD, A_QDD2, A_S, A_U, A_U2,
                                          ABA_WIDTH, free_flyer_acceleration,
                                          joint_acceleration)
from rnea_ros.dynamics.joints import has_axis, joint_dofs
from rnea_ros.dynamics.layout import B_PARENT, B_V, BODY_WIDTH, HEADER
from rnea_ros.dynamics.spatial import JIT_INLINE
from rnea_ros.dynamics.tree import KinematicTree


def mimic_pairs(tree: KinematicTree) -> list[tuple[int, int]]:
    """(secondary, primary) bodies: each 1-DoF body after the first one of its v entry."""
    primary = {}
    pairs = []
    for body in range(tree.n_bodies):
        if not has_axis(tree.joint_type[body]):
            continue
        column = int(tree.v_index[body])
        if column in primary:
            pairs.append((body, primary[column]))
        else:
            primary[column] = body
    return pairs


@njit(**JIT_INLINE)
def _unit_solve(model, flags, work, nb, secondary, primary, column):
    """
    One solve with the factored articulated inertias: x = M_f^-1 (e_secondary - e_primary).

    No velocity, no gravity. x at each body's own coordinate goes to its ``A_QDD2``; at the v
    entries (primary bodies and free-flyers) into ``column`` (nv).
    """
    for i in range(nb):
        f = i * ABA_WIDTH + A_F2
        for k in range(6):
            work[f + k] = 0.0
    for i in range(nb - 1, -1, -1):
        b = HEADER + i * BODY_WIDTH
        o = i * ABA_WIDTH
        if joint_dofs(model, b) == 6:
            continue  # no joint force: nothing passes to the parent
        f = o + A_F2
        s = o + A_S
        x = (1.0 if i == secondary else 0.0) - (1.0 if i == primary else 0.0)
        u = x - (work[f] * work[s] + work[f + 1] * work[s + 1] + work[f + 2] * work[s + 2]
                 + work[f + 3] * work[s + 3] + work[f + 4] * work[s + 4]
                 + work[f + 5] * work[s + 5])
        work[o + A_U2] = u
        parent = int(model[b + B_PARENT])
        if parent >= 0:
            scale = u / work[o + A_D]
            pf = parent * ABA_WIDTH + A_F2
            for k in range(6):
                work[pf + k] += work[f + k] + work[o + A_U + k] * scale
    for i in range(nb):
        b = HEADER + i * BODY_WIDTH
        o = i * ABA_WIDTH
        parent = int(model[b + B_PARENT])
        vi = int(model[b + B_V])
        a = o + A_A2
        for k in range(6):
            work[a + k] = work[parent * ABA_WIDTH + A_A2 + k] if parent >= 0 else 0.0
        if joint_dofs(model, b) == 6:
            f = o + A_F2
            for k in range(6):
                work[f + k] = -work[f + k]
            free_flyer_acceleration(work, o, a, f, column, vi)  # a = I^-1 (0 - p)
            continue
        qdd = joint_acceleration(work, o, a, o + A_U2)
        work[o + A_QDD2] = qdd
        if flags[i] != 0.0:
            column[vi] = qdd


@njit(**JIT_INLINE)
def impose_mimics(model, table, work, scratch, nb, out):
    """Correct out by the mimic constraints' multipliers (see the module docstring)."""
    m = int(table[2 * nb])
    if m == 0:
        return
    nv = out.shape[0]
    w = 0  # W (m x m), then the columns y_k (m x nv), then the right-hand side (m)
    y = m * m
    rhs = y + m * nv
    for k in range(m):
        secondary, primary = int(table[2 * nb + 1 + 2 * k]), int(table[2 * nb + 2 + 2 * k])
        column = scratch[y + k * nv:y + (k + 1) * nv]
        _unit_solve(model, table, work, nb, secondary, primary, column)
        for j in range(m):
            sj, pj = int(table[2 * nb + 1 + 2 * j]), int(table[2 * nb + 2 + 2 * j])
            scratch[w + j * m + k] = work[sj * ABA_WIDTH + A_QDD2] - \
                work[pj * ABA_WIDTH + A_QDD2]
        scratch[rhs + k] = work[primary * ABA_WIDTH + A_QDD] - \
            work[secondary * ABA_WIDTH + A_QDD]
    # W lambda = rhs by Cholesky (W = C M_f^-1 C^T is symmetric positive definite).
    for j in range(m):
        s = scratch[w + j * m + j]
        for k in range(j):
            s -= scratch[w + j * m + k] * scratch[w + j * m + k]
        d = math.sqrt(s) if s > 0.0 else math.nan
        scratch[w + j * m + j] = d
        for r in range(j + 1, m):
            s = scratch[w + r * m + j]
            for k in range(j):
                s -= scratch[w + r * m + k] * scratch[w + j * m + k]
            scratch[w + r * m + j] = s / d
    for r in range(m):
        s = scratch[rhs + r]
        for k in range(r):
            s -= scratch[w + r * m + k] * scratch[rhs + k]
        scratch[rhs + r] = s / scratch[w + r * m + r]
    for r in range(m - 1, -1, -1):
        s = scratch[rhs + r]
        for k in range(r + 1, m):
            s -= scratch[w + k * m + r] * scratch[rhs + k]
        scratch[rhs + r] = s / scratch[w + r * m + r]
    for k in range(m):
        multiplier = scratch[rhs + k]
        for j in range(nv):
            out[j] += scratch[y + k * nv + j] * multiplier
