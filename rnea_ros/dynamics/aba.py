"""
Forward dynamics by Featherstone's Articulated-Body Algorithm (ABA), jitted, O(n).

Solves, for the joint accelerations a (the model's v layout, ``RobotModel.forward_dynamics``):

    (M(q) + diag(armature)) a + h(q, v) - J^T f_ext + friction(v) = tau

with h(q, v) = rnea(q, v, 0) (Coriolis, centrifugal, gravity), so that rnea(q, v, a, f_ext) +
armature * a + friction(v) = tau; ``armature`` and ``friction`` from ``joint_terms`` (the layout
of ``pack_joint_terms``: zeros and no friction when none is given).

The passes (``aba_passes``; the mimic coupling: ``aba_mimic``) run in world coordinates about
the world origin, as Pinocchio's ``aba`` does: the articulated inertia of a body is added to its
parent's without a change of frame, so a body costs one rank-one update of a 6x6 matrix and no
6x6 transform. Spatial vectors are [angular; linear]
(``spatial``); a body's motion subspace in world coordinates is [u; p x u] (revolute) or [0; u]
(prismatic), u the world joint axis times the mimic multiplier. A free-flyer transmits only its
joint force: its articulated inertia is not passed on, and its acceleration is the solve of its
own articulated inertia (a 6x6 Cholesky factor) with its joint force less its bias force.

Mimic joints: ABA needs one degree of freedom per body, and a mimic body shares its master's.
Each body gets a coordinate of its own (in its master's units: S carries the multiplier); the
first body of a v entry (its *primary*) takes that entry's torque, the others none, and the
armature is shared equally among them (the coupled system sees the sum: a massless mimic
subtree stays solvable with an armature); then the constraints x_secondary = x_primary are
imposed with their Lagrange multipliers: one extra O(n) solve with the factored articulated
inertias per mimic body and an m x m Cholesky solve (m mimic bodies). The result is the coupled
system's, G^T M G a = G^T (...).

The state array (``new_fd_state``) holds the packed model (``rnea.pack_model``), a table
(per body its primary flag, then its share of the armature, then m and the (secondary, primary)
pairs), the per-body ABA records (``aba_passes``: ``A_*``, ``ABA_WIDTH``) and the mimic solve's
scratch: one argument to the kernel, no allocation per call. A model with a body whose
articulated inertia is singular (a joint moving no mass and no armature) gives a non-finite
result, which the entry points refuse.
"""
from __future__ import annotations

import math

from numba import njit, prange
import numpy as np

from rnea_ros.dynamics.aba_mimic import impose_mimics, mimic_pairs
from rnea_ros.dynamics.aba_passes import (A_A, A_QDD, A_U, A_UJ, ABA_WIDTH, backward_pass,
                                          forward_accelerations, forward_kinematics,
                                          subtract_wrenches, T_FRICTION, T_ROWS, T_THRESHOLD)
from rnea_ros.dynamics.layout import BODY_WIDTH, H_GRAVITY, H_NB, H_NQ, H_NV, HEADER
from rnea_ros.dynamics.rnea import NO_LINKS, NO_POSES, NO_WRENCHES
from rnea_ros.dynamics.spatial import JIT, JIT_INLINE
from rnea_ros.dynamics.tree import KinematicTree


def new_fd_state(model: np.ndarray, tree: KinematicTree) -> np.ndarray:
    """Return the kernel's one array: packed model, mimic table, records and scratch."""
    nb, nv = tree.n_bodies, tree.nv
    pairs = mimic_pairs(tree)
    m = len(pairs)
    flags = np.ones(nb)
    shares = np.ones(nb)
    for secondary, primary in pairs:
        flags[secondary] = 0.0
    for secondary, primary in pairs:
        count = 1 + sum(1 for _, other in pairs if other == primary)
        shares[secondary] = shares[primary] = 1.0 / count
    table = np.concatenate([flags, shares, [m], np.array(pairs, dtype=np.float64).reshape(-1)])
    scratch = np.zeros(nb * ABA_WIDTH + m * m + m * nv + m)
    return np.concatenate([model, table, scratch])


def pack_joint_terms(nv: int, armature=None, coulomb=None, viscous=None, offset=None,
                     velocity_threshold: float = 1.0, friction: bool = False) -> np.ndarray:
    """Return the ``joint_terms`` array of the kernels (layout ``T_*``); None: zeros."""
    terms = np.zeros(T_ROWS + 4 * nv)
    terms[T_FRICTION] = 1.0 if friction else 0.0
    terms[T_THRESHOLD] = velocity_threshold
    for k, values in enumerate((armature, coulomb, viscous, offset)):
        if values is not None:
            terms[T_ROWS + k * nv:T_ROWS + (k + 1) * nv] = values
    return terms


@njit(**JIT)
def fd_core(state, q, v, tau, g, link_body, link_pose, fext, terms, out):
    """
    Write out = ABA(q, v, tau, fext) with gravity g; raises nothing (see ``fd_checked``).

    Compiled on its own, not inlined: the passes inlined into each of its callers (the entry
    points, the batch, the predictor's four RK4 stages) made numba type and LLVM optimise the
    whole ABA once per call site, minutes of the first run's compilation.
    """
    nb = int(state[H_NB])
    size = HEADER + nb * BODY_WIDTH
    model = state[:size]
    m = int(state[size + 2 * nb])
    work_start = size + 2 * nb + 1 + 2 * m
    table = state[size:work_start]
    work = state[work_start:work_start + nb * ABA_WIDTH]
    scratch = state[work_start + nb * ABA_WIDTH:]
    forward_kinematics(model, work, nb, q, v, g)
    subtract_wrenches(work, link_body, link_pose, fext)
    backward_pass(model, table, work, nb, tau, v, terms)
    forward_accelerations(model, table, work, nb, out, A_A, A_U, A_UJ, A_QDD)
    impose_mimics(model, table, work, scratch, nb, out)


@njit(**JIT_INLINE)
def fd_checked(state, q, v, tau, g, link_body, link_pose, fext, terms, out):
    """``fd_core`` with sizes, finite inputs and a finite result checked (ValueError)."""
    nq, nv = int(state[H_NQ]), int(state[H_NV])
    if q.shape[0] != nq or v.shape[0] != nv or tau.shape[0] != nv or out.shape[0] != nv \
            or terms.shape[0] != T_ROWS + 4 * nv or g.shape[0] != 3:
        raise ValueError('forward_dynamics: wrong argument size')
    poison = 0.0
    for k in range(nq):
        poison += q[k] * 0.0
    for k in range(nv):
        poison += v[k] * 0.0 + tau[k] * 0.0
    if poison != 0.0:
        raise ValueError('forward_dynamics: non-finite input')
    fd_core(state, q, v, tau, g, link_body, link_pose, fext, terms, out)
    for k in range(nv):
        if not math.isfinite(out[k]):
            raise ValueError('forward_dynamics: non-finite result')


@njit(**JIT)
def fd_default(state, q, v, tau, terms, out):
    """
    Write out = ABA(q, v, tau) with the model's gravity and no external wrench.

    ``out`` may be q, v or tau (or share memory with them): it is written after they are read.
    """
    fd_checked(state, q, v, tau, state[H_GRAVITY:H_GRAVITY + 3], NO_LINKS, NO_POSES,
               NO_WRENCHES, terms, out)


@njit(**JIT)
def fd_general(state, q, v, tau, g, link_body, link_pose, fext, terms, out):
    """Write out = ABA(q, v, tau, fext) with explicit gravity and (nl, 6) link wrenches."""
    fd_checked(state, q, v, tau, g, link_body, link_pose, fext, terms, out)


@njit(**JIT)  # not inlined: numba would turn its array statements into nested parfors
def _batch_range(state, Q, V, T, g, link_body, link_pose, F, terms, out, start, stop):
    """Write out[k] = ABA(Q[k], V[k], T[k], F[k]), start <= k < stop; F (N, nl, 6) or (1, 0, 6)."""
    n = Q.shape[0]
    for k in range(start, stop):
        fext = F[k] if F.shape[0] == n else F[0]
        fd_core(state, Q[k], V[k], T[k], g, link_body, link_pose, fext, terms, out[k])


@njit(cache=True, nogil=True, error_model='numpy')
def fd_batch_serial(state, Q, V, T, g, link_body, link_pose, F, terms, out):
    """``fd_batch`` on the calling thread (on a copy of ``state``)."""
    _batch_range(state.copy(), Q, V, T, g, link_body, link_pose, F, terms, out, 0, Q.shape[0])


@njit(cache=True, nogil=True, parallel=True, error_model='numpy')
def fd_batch(state, Q, V, T, g, link_body, link_pose, F, terms, out, chunks):
    """
    Write out[k] = ABA(Q[k], V[k], T[k], F[k]) for every sample, in ``chunks`` parallel ranges.

    Each chunk works on its own copy of ``state``; the caller validates the samples first and
    checks the result after (numba loses an exception raised in a prange worker).
    """
    n = Q.shape[0]
    for c in prange(chunks):
        _batch_range(state.copy(), Q, V, T, g, link_body, link_pose, F, terms, out,
                     c * n // chunks, (c + 1) * n // chunks)
