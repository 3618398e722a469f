"""
Joint-space mass matrix by the Composite Rigid Body Algorithm, on the packed model of rnea.py.

Not on the control path (it allocates its 6x6 composites); used by the analysis and the tests.
"""
from __future__ import annotations

from numba import njit
import numpy as np

from rnea_ros.dynamics.joints import joint_placement, motion_subspace
from rnea_ros.dynamics.layout import (B_H, B_INERTIA, B_MASS, B_PARENT, B_V, BODY_WIDTH, H_NB,
                                      H_NV, HEADER, W_PLACEMENT, WORK_WIDTH)
from rnea_ros.dynamics.rnea import check_inputs
from rnea_ros.dynamics.spatial import JIT


@njit(**JIT)
def _matmul(a, b):
    """Multiply small 2-D arrays, a @ b (numba's own @ needs SciPy's BLAS; this needs nothing)."""
    out = np.zeros((a.shape[0], b.shape[1]))
    for r in range(a.shape[0]):
        for k in range(a.shape[1]):
            ark = a[r, k]
            if ark != 0.0:
                for c in range(b.shape[1]):
                    out[r, c] += ark * b[k, c]
    return out


@njit(**JIT)
def _inertia_matrix(model, i, out):
    """6x6 spatial inertia of body i, [angular; linear] order."""
    b = HEADER + i * BODY_WIDTH
    mass = model[b + B_MASS]
    hx, hy, hz = model[b + B_H], model[b + B_H + 1], model[b + B_H + 2]
    out[:] = 0.0
    for r in range(3):
        for c in range(3):
            out[r, c] = model[b + B_INERTIA + 3 * r + c]
        out[3 + r, 3 + r] = mass
    # Upper right block: skew(h); lower left: skew(h)^T.
    out[0, 4], out[0, 5] = -hz, hy
    out[1, 3], out[1, 5] = hz, -hx
    out[2, 3], out[2, 4] = -hy, hx
    for r in range(3):
        for c in range(3):
            out[3 + r, c] = out[c, 3 + r]


@njit(**JIT)
def _transform_matrix(work, i, out):
    """6x6 motion transform X (parent -> child) of body i's placement (R, p) in work."""
    transform_matrix_at(work, i * WORK_WIDTH + W_PLACEMENT, out)


@njit(**JIT)
def transform_matrix_at(buffer, x, out):
    """6x6 motion transform X (parent -> child) of the placement (R, p) at ``buffer[x:]``."""
    out[:] = 0.0
    for r in range(3):
        for c in range(3):
            out[r, c] = buffer[x + 3 * c + r]
            out[3 + r, 3 + c] = buffer[x + 3 * c + r]
    # Lower left block: -E skew(p), with E = R^T.
    px, py, pz = buffer[x + 9], buffer[x + 10], buffer[x + 11]
    for r in range(3):
        e0, e1, e2 = buffer[x + r], buffer[x + 3 + r], buffer[x + 6 + r]
        out[3 + r, 0] = -(e1 * pz - e2 * py)
        out[3 + r, 1] = -(e2 * px - e0 * pz)
        out[3 + r, 2] = -(e0 * py - e1 * px)


@njit(**JIT)
def crba(model, work, q):
    """
    Joint-space mass matrix M(q) (nv x nv) by the Composite Rigid Body Algorithm.

    Mimic joints enter through their multiplier, so M is the inertia seen by the independent
    joints (M = G^T M_full G with G the mimic coupling). Allocates: not for the control path.
    """
    nb = int(model[H_NB])
    nv = int(model[H_NV])
    check_inputs(model, q, np.zeros(nv), np.zeros(nv))
    composite = np.zeros((nb, 6, 6))
    transforms = np.zeros((nb, 6, 6))
    for i in range(nb):
        joint_placement(model, work, i, q)
        _inertia_matrix(model, i, composite[i])
        _transform_matrix(work, i, transforms[i])
    for i in range(nb - 1, -1, -1):
        parent = int(model[HEADER + i * BODY_WIDTH + B_PARENT])
        if parent >= 0:
            composite[parent] += _matmul(_matmul(transforms[i].T, composite[i]), transforms[i])
    mass_matrix = np.zeros((nv, nv))
    s_i = np.zeros((6, 6))
    s_j = np.zeros((6, 6))
    for i in range(nb):
        ki = motion_subspace(model, i, s_i)
        vi = int(model[HEADER + i * BODY_WIDTH + B_V])
        force = _matmul(composite[i], s_i[:, :ki])
        mass_matrix[vi:vi + ki, vi:vi + ki] += _matmul(s_i[:, :ki].T, force)
        j = i
        while int(model[HEADER + j * BODY_WIDTH + B_PARENT]) >= 0:
            force = _matmul(transforms[j].T, force)
            j = int(model[HEADER + j * BODY_WIDTH + B_PARENT])
            kj = motion_subspace(model, j, s_j)
            vj = int(model[HEADER + j * BODY_WIDTH + B_V])
            block = _matmul(s_j[:, :kj].T, force)
            mass_matrix[vj:vj + kj, vi:vi + ki] += block
            mass_matrix[vi:vi + ki, vj:vj + kj] += block.T
    return mass_matrix
