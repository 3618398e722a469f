"""
Mimic joints in the ABA: the coupling imposed by Lagrange multipliers (``aba``'s docstring).

Each body has its own coordinate; x_secondary = x_primary is imposed with the factored
articulated inertias that ``aba_passes`` left in the records.
"""
from __future__ import annotations

from numba import njit

from rnea_ros.dynamics.aba_passes import (A_A2, A_D, A_F2, A_QDD, A_QDD2, A_S, A_U, A_U2,
                                          ABA_WIDTH, forward_accelerations)
from rnea_ros.dynamics.joints import has_axis, joint_dofs
from rnea_ros.dynamics.layout import B_PARENT, BODY_WIDTH, HEADER
from rnea_ros.dynamics.spatial import cholesky, cholesky_solve, dot6, JIT_INLINE
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

    No velocity, no gravity: the bias forces and accelerations start at zero. The backward
    pass is ``backward_pass``'s without the inertias (factored already); the forward pass is
    ``forward_accelerations`` on the unit solve's fields. x at each body's own coordinate goes
    to its ``A_QDD2``; at the v entries (primary bodies and free-flyers) into ``column`` (nv).
    """
    for i in range(nb):
        f = i * ABA_WIDTH + A_F2
        a = i * ABA_WIDTH + A_A2
        for k in range(6):
            work[f + k] = 0.0
            work[a + k] = 0.0
    for i in range(nb - 1, -1, -1):
        b = HEADER + i * BODY_WIDTH
        o = i * ABA_WIDTH
        f = o + A_F2
        if joint_dofs(model, b) == 6:  # no joint force: nothing passes to the parent
            for k in range(6):
                work[f + k] = -work[f + k]  # the right-hand side of its solve, 0 - p
            continue
        x = (1.0 if i == secondary else 0.0) - (1.0 if i == primary else 0.0)
        u = x - dot6(work, f, work, o + A_S)
        work[o + A_U2] = u
        parent = int(model[b + B_PARENT])
        if parent >= 0:
            scale = u / work[o + A_D]
            pf = parent * ABA_WIDTH + A_F2
            for k in range(6):
                work[pf + k] += work[f + k] + work[o + A_U + k] * scale
    forward_accelerations(model, flags, work, nb, column, A_A2, A_F2, A_U2, A_QDD2)


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
    cholesky(scratch, w, m)
    cholesky_solve(scratch, w, m, scratch, rhs, scratch, rhs)
    for k in range(m):
        multiplier = scratch[rhs + k]
        for j in range(nv):
            out[j] += scratch[y + k * nv + j] * multiplier
