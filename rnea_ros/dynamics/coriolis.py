"""
Jitted Coriolis terms on the packed model of rnea.py: C^T(q, v) v, the momentum terms, C(q, v).

C(q, v) is the factorisation of the velocity torques C(q, v) v (``RobotModel.velocity_product``)
that Pinocchio's ``computeCoriolisMatrix`` returns, the one from the Christoffel symbols: dM/dt =
C + C^T, so dM/dt - 2 C is skew-symmetric. The momentum observer needs only C^T(q, v) v, which is
then dM/dt v - C v, and for joint coordinates the gradient of the kinetic energy T = v^T M v / 2:

    (C^T v)_k = dT/dq_k = -S_k^T (v_k x* H_k),

where v_k is body k's spatial velocity, H_k = sum of I_i v_i over the subtree of body k (the
subtree's spatial momentum) and S_k its joint's motion subspace, all in body k's frame; a mimic
joint adds its multiplier times its term to its master's row. Turning joint k by dq_k moves the
subtree rigidly while the velocity of its parent stays: the kinetic energy changes by
-H_k . (v_parent x S_k) dq_k = -H_k . (v_k x S_k) dq_k. For the free-flyer (v in its own frame)
the same expression is the Euler-Poincare term -v x* (I v) of a free body, which makes dM/dt =
C + C^T hold there as in Pinocchio. One pass over the bodies, like RNEA: ``momentum_terms``
gives p = M v, C^T v and g(q) together, everything the observer takes from the model per sample.

The full matrix ``coriolis_matrix`` (allocates, O(n^3): for analysis and tests, not the control
path) follows Pinocchio's body-level factorisation (Echeandia and Wensing 2021): in world
coordinates C = sum_i J_i^T (I_i dJ_i/dt + B_i J_i), with dJ_i/dt column j = v_j x S_j and
B_i = ((v_i x*) I_i - I_i (v_i x) + (I_i v_i) xbar) / 2, where (f xbar) v = v x* f.
"""
from __future__ import annotations

from numba import njit
import numpy as np

from rnea_ros.dynamics.crba import _inertia_matrix, _matmul, transform_matrix_at
from rnea_ros.dynamics.joints import (add_joint_force, add_kinetic_gradient, add_subspace_motion,
                                      joint_placement, world_motion_subspace)
from rnea_ros.dynamics.layout import (B_PARENT, B_V, BODY_WIDTH, H_GRAVITY, H_NB, H_NV, HEADER,
                                      W_ACC, W_FORCE, W_PLACEMENT, W_TMP, W_VEL, WORK_WIDTH)
from rnea_ros.dynamics.rnea import check_finite, check_inputs, inertia_times, parent_motion
from rnea_ros.dynamics.spatial import add_force_to_parent, JIT, place_in_world, store6
from rnea_ros.errors import InputError


@njit(**JIT)
def momentum_terms(model, work, q, v, p, ctv, grav):
    """
    Write p = M(q) v, ctv = C^T(q, v) v and grav = g(q) (model gravity), each (nv,).

    One forward pass (placements, body velocities, gravity accelerations) and one backward pass
    (subtree momenta and gravity forces). Raises ValueError for wrong sizes, non-finite inputs
    or results, as the RNEA entry points do.
    """
    nv = int(model[H_NV])
    if p.shape[0] != nv or ctv.shape[0] != nv or grav.shape[0] != nv:
        raise ValueError('momentum_terms: wrong output size')
    check_inputs(model, q, v, v)
    nb = int(model[H_NB])
    g0, g1, g2 = model[H_GRAVITY], model[H_GRAVITY + 1], model[H_GRAVITY + 2]
    for k in range(nv):
        p[k] = 0.0
        ctv[k] = 0.0
        grav[k] = 0.0
    for i in range(nb):
        b = HEADER + i * BODY_WIDTH
        w = i * WORK_WIDTH
        joint_placement(model, work, i, q)
        w0, w1, w2, l0, l1, l2, b0, b1, b2, m0, m1, m2 = parent_motion(model, work, i, g0, g1, g2)
        w0, w1, w2, l0, l1, l2 = add_subspace_motion(model, b, v, w0, w1, w2, l0, l1, l2)
        store6(work, w + W_VEL, (w0, w1, w2, l0, l1, l2))
        store6(work, w + W_ACC, (b0, b1, b2, m0, m1, m2))
        # Momentum I v into W_TMP, gravity force I a_g into W_FORCE.
        store6(work, w + W_TMP, inertia_times(model, b, w0, w1, w2, l0, l1, l2))
        store6(work, w + W_FORCE, inertia_times(model, b, b0, b1, b2, m0, m1, m2))
    for i in range(nb - 1, -1, -1):
        w = i * WORK_WIDTH
        o = w + W_VEL
        w0, w1, w2, l0, l1, l2 = (work[o], work[o + 1], work[o + 2], work[o + 3], work[o + 4],
                                  work[o + 5])
        o = w + W_TMP
        n0, n1, n2, f0, f1, f2 = (work[o], work[o + 1], work[o + 2], work[o + 3], work[o + 4],
                                  work[o + 5])
        b = HEADER + i * BODY_WIDTH
        # (C^T v)_i = -S_i^T (v_i x* H_i), H_i the subtree momentum (module docstring).
        add_kinetic_gradient(model, b, ctv, w0, w1, w2, l0, l1, l2, n0, n1, n2, f0, f1, f2)
        add_joint_force(model, i, work, w + W_TMP, p)
        add_joint_force(model, i, work, w + W_FORCE, grav)
        parent = int(model[b + B_PARENT])
        if parent >= 0:
            o = parent * WORK_WIDTH
            add_force_to_parent(work, w + W_PLACEMENT, work, w + W_TMP, work, o + W_TMP)
            add_force_to_parent(work, w + W_PLACEMENT, work, w + W_FORCE, work, o + W_FORCE)
    check_finite(p)
    check_finite(ctv)
    check_finite(grav)


@njit(**JIT)
def momentum_terms_batch(model, Q, V, P, CTV, G):
    """``momentum_terms`` for every sample: Q (N, nq), V (N, nv) -> P, CTV, G (N, nv)."""
    work = np.zeros(int(model[H_NB]) * WORK_WIDTH)
    for k in range(Q.shape[0]):
        momentum_terms(model, work, Q[k], V[k], P[k], CTV[k], G[k])


@njit(**JIT)
def _cross_motion(v, out):
    """6x6 matrix of v x (motion cross product), v = [w; l]: [[w x, 0], [l x, w x]]."""
    out[:] = 0.0
    for a, b, src in ((0, 0, 0), (3, 0, 3), (3, 3, 0)):
        x, y, z = v[src], v[src + 1], v[src + 2]
        out[a, b + 1], out[a, b + 2] = -z, y
        out[a + 1, b], out[a + 1, b + 2] = z, -x
        out[a + 2, b], out[a + 2, b + 1] = -y, x


@njit(**JIT)
def _cross_force_bar(f, out):
    """6x6 matrix F with F v = v x* f for f = [n; f]: [[-n x, -f x], [-f x, 0]]."""
    out[:] = 0.0
    for a, b, src in ((0, 0, 0), (0, 3, 3), (3, 0, 3)):
        x, y, z = f[src], f[src + 1], f[src + 2]
        out[a, b + 1], out[a, b + 2] = z, -y
        out[a + 1, b], out[a + 1, b + 2] = -z, x
        out[a + 2, b], out[a + 2, b + 1] = y, -x


@njit(**JIT)
def coriolis_matrix(model, work, q, v):
    """C(q, v) (nv, nv) in Pinocchio's factorisation (module docstring). Allocates."""
    nb = int(model[H_NB])
    nv = int(model[H_NV])
    check_inputs(model, q, v, v)
    world = np.zeros(12 * nb)  # world placements (R, p) of every body
    columns = np.zeros((nb, 6, 6))
    counts = np.zeros(nb, dtype=np.int64)
    velocity = np.zeros((nb, 6))
    inertia = np.zeros((nb, 6, 6))
    jac = np.zeros((nb, 6, nv))  # each body's own columns (J_i, restricted to its joint)
    djac = np.zeros((nb, 6, nv))
    body = np.zeros((6, 6))
    transform = np.zeros((6, 6))
    cross = np.zeros((6, 6))
    for i in range(nb):
        b = HEADER + i * BODY_WIDTH
        joint_placement(model, work, i, q)
        parent = int(model[b + B_PARENT])
        place_in_world(world, parent, work, i * WORK_WIDTH + W_PLACEMENT, world, 12 * i)
        if parent >= 0:
            velocity[i] = velocity[parent]
        counts[i] = world_motion_subspace(model, world, i, columns[i])
        vi = int(model[b + B_V])
        for c in range(counts[i]):
            rate = v[vi + c]  # a free-flyer's columns: linear, then angular, as its v
            velocity[i] += columns[i][:, c] * rate
        _inertia_matrix(model, i, body)
        transform_matrix_at(world, 12 * i, transform)  # world -> body motion transform
        inertia[i] = _matmul(_matmul(transform.T, body), transform)
    for i in range(nb):
        b = HEADER + i * BODY_WIDTH
        vi = int(model[b + B_V])
        _cross_motion(velocity[i], cross)
        own = _matmul(cross, columns[i])
        for c in range(counts[i]):
            jac[i][:, vi + c] += columns[i][:, c]
            djac[i][:, vi + c] += own[:, c]
    out = np.zeros((nv, nv))
    full_jac = np.zeros((6, nv))
    full_djac = np.zeros((6, nv))
    bbar = np.zeros((6, 6))
    for i in range(nb):
        full_jac[:] = 0.0
        full_djac[:] = 0.0
        j = i
        while j >= 0:
            full_jac += jac[j]
            full_djac += djac[j]
            j = int(model[HEADER + j * BODY_WIDTH + B_PARENT])
        _cross_motion(velocity[i], cross)
        momentum = np.zeros(6)
        for r in range(6):
            for c in range(6):
                momentum[r] += inertia[i][r, c] * velocity[i][c]
        _cross_force_bar(momentum, bbar)
        # B = ((v x*) I - I (v x) + (I v) xbar) / 2, with v x* = -(v x)^T.
        coupling = 0.5 * (_matmul(-cross.T, inertia[i]) - _matmul(inertia[i], cross) + bbar)
        force = _matmul(inertia[i], full_djac) + _matmul(coupling, full_jac)
        out += _matmul(full_jac.T, force)
    check_finite(out.reshape(-1))
    return out


def transpose_velocity(model: np.ndarray, work: np.ndarray, q: np.ndarray, v: np.ndarray
                       ) -> np.ndarray:
    """C^T(q, v) v (nv,) for checked q, v; ``InputError`` if it is not finite."""
    p, ctv, grav = np.empty((3, int(model[H_NV])))
    try:
        momentum_terms(model, work, q, v, p, ctv, grav)
    except ValueError:
        raise InputError('coriolis_transpose_velocity: the result is not finite (inputs too '
                         'large?)') from None
    return ctv


def matrix(model: np.ndarray, work: np.ndarray, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """C(q, v) (nv, nv) for checked q, v; ``InputError`` if it is not finite."""
    try:
        return coriolis_matrix(model, work, q, v)
    except ValueError:
        raise InputError('coriolis_matrix: the result is not finite (inputs too large?)') \
            from None
