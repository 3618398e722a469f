"""Jitted RNEA split into the terms of the equation of motion, sharing one kinematics sweep.

    rnea(q, v, a) = M(q) a + C(q, v) v + g(q) = inertial + velocity_product + gravity

Three separate RNEA calls would recompute the joint placements (and their sines and cosines)
three times. Here one ``forward_pass`` with v and no gravity and no acceleration gives the
placements and the velocity-product forces; the two other terms need no velocity, so their
forward recursions are the short zero-velocity kind: a_i = X_i a_parent (+ S_i qdd), f_i = I_i a_i.
The cost of all three is about 1.7 RNEA passes instead of 3.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from rnea_ros.rnea import (
    B_H, B_INERTIA, B_MASS, B_MULT, B_PARENT, B_TYPE, B_V, BODY_WIDTH, H_NB, HEADER, W_FORCE,
    W_PLACEMENT, WORK_WIDTH, backward_pass, forward_pass)
from rnea_ros.spatial import JIT, JIT_INLINE
from rnea_ros.tree import FREE_FLYER, REVOLUTE

# Per body in ``static``: acceleration (6) then force (6) of one zero-velocity channel.
STATIC_WIDTH = 12
NO_GRAVITY = np.zeros(3)


@njit(**JIT_INLINE)
def static_pass(model, work, a, use_a, g, static):
    """Zero-velocity forward recursion on the placements ``forward_pass`` left in ``work``:
    a_i = X_i a_parent + S_i a_i (if ``use_a``), the root's parent accelerating at -g;
    f_i = I_i a_i. Writes [a_i; f_i] per body into ``static``."""
    for i in range(int(model[H_NB])):
        b = HEADER + i * BODY_WIDTH
        x = i * WORK_WIDTH + W_PLACEMENT
        o = i * STATIC_WIDTH
        parent = int(model[b + B_PARENT])
        if parent < 0:
            cw0 = cw1 = cw2 = 0.0
            cl0, cl1, cl2 = -g[0], -g[1], -g[2]
        else:
            po = parent * STATIC_WIDTH
            cw0, cw1, cw2 = static[po], static[po + 1], static[po + 2]
            cl0, cl1, cl2 = static[po + 3], static[po + 4], static[po + 5]
        r0, r1, r2, r3, r4, r5, r6, r7, r8 = (work[x], work[x + 1], work[x + 2], work[x + 3],
                                              work[x + 4], work[x + 5], work[x + 6],
                                              work[x + 7], work[x + 8])
        px, py, pz = work[x + 9], work[x + 10], work[x + 11]
        ex = cl0 - (py * cw2 - pz * cw1)
        ey = cl1 - (pz * cw0 - px * cw2)
        ez = cl2 - (px * cw1 - py * cw0)
        w0 = r0 * cw0 + r3 * cw1 + r6 * cw2
        w1 = r1 * cw0 + r4 * cw1 + r7 * cw2
        w2 = r2 * cw0 + r5 * cw1 + r8 * cw2
        l0 = r0 * ex + r3 * ey + r6 * ez
        l1 = r1 * ex + r4 * ey + r7 * ez
        l2 = r2 * ex + r5 * ey + r8 * ez
        if use_a:
            jtype = int(model[b + B_TYPE])
            vi = int(model[b + B_V])
            if jtype == FREE_FLYER:
                w0, w1, w2 = w0 + a[vi + 3], w1 + a[vi + 4], w2 + a[vi + 5]
                l0, l1, l2 = l0 + a[vi], l1 + a[vi + 1], l2 + a[vi + 2]
            elif jtype == REVOLUTE:  # canonical frames: S = e_z
                w2 += model[b + B_MULT] * a[vi]
            else:
                l2 += model[b + B_MULT] * a[vi]
        mass = model[b + B_MASS]
        hx, hy, hz = model[b + B_H], model[b + B_H + 1], model[b + B_H + 2]
        n = b + B_INERTIA
        i0, i1, i2, i4, i5, i8 = (model[n], model[n + 1], model[n + 2], model[n + 4],
                                  model[n + 5], model[n + 8])
        static[o], static[o + 1], static[o + 2] = w0, w1, w2
        static[o + 3], static[o + 4], static[o + 5] = l0, l1, l2
        static[o + 6] = i0 * w0 + i1 * w1 + i2 * w2 + hy * l2 - hz * l1
        static[o + 7] = i1 * w0 + i4 * w1 + i5 * w2 + hz * l0 - hx * l2
        static[o + 8] = i2 * w0 + i5 * w1 + i8 * w2 + hx * l1 - hy * l0
        static[o + 9] = mass * l0 - (hy * w2 - hz * w1)
        static[o + 10] = mass * l1 - (hz * w0 - hx * w2)
        static[o + 11] = mass * l2 - (hx * w1 - hy * w0)


@njit(**JIT)  # not inlined: numba would turn its array statements into nested parfors
def terms_range(model, Q, V, A, g, inertial, velocity_product, gravity, start, stop):
    """The three terms (each zeroed here) at samples start <= k < stop, with one workspace.

    Raises nothing (numba would lose an exception raised in a prange worker): sizes and
    values are checked by the caller (model.py).
    """
    nb = int(model[H_NB])
    work = np.zeros(nb * WORK_WIDTH)
    static = np.zeros(nb * STATIC_WIDTH)
    no_acceleration = np.zeros(V.shape[1])
    for k in range(start, stop):
        q, v, a = Q[k], V[k], A[k]
        inertial[k, :] = 0.0
        velocity_product[k, :] = 0.0
        gravity[k, :] = 0.0
        forward_pass(model, work, q, v, no_acceleration, NO_GRAVITY)
        backward_pass(model, work, work, W_FORCE, WORK_WIDTH, velocity_product[k])
        static_pass(model, work, a, True, NO_GRAVITY, static)
        backward_pass(model, work, static, 6, STATIC_WIDTH, inertial[k])
        static_pass(model, work, a, False, g, static)
        backward_pass(model, work, static, 6, STATIC_WIDTH, gravity[k])


@njit(cache=True, nogil=True, error_model='numpy')
def terms_serial(model, Q, V, A, g, inertial, velocity_product, gravity):
    """``terms_batch`` on the calling thread."""
    terms_range(model, Q, V, A, g, inertial, velocity_product, gravity, 0, Q.shape[0])


@njit(cache=True, nogil=True, parallel=True, error_model='numpy')
def terms_batch(model, Q, V, A, g, inertial, velocity_product, gravity, chunks):
    """The three terms for every sample (rows of Q, V, A), in ``chunks`` parallel ranges."""
    n = Q.shape[0]
    for c in prange(chunks):
        terms_range(model, Q, V, A, g, inertial, velocity_product, gravity,
                    c * n // chunks, (c + 1) * n // chunks)
