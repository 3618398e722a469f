"""
Jitted RNEA split into the terms of the equation of motion, sharing one kinematics sweep.

    rnea(q, v, a) = M(q) a + C(q, v) v + g(q) = inertial + velocity_product + gravity

Three separate RNEA calls would recompute the joint placements (and their sines and cosines)
three times. Here one ``forward_pass`` with v and no gravity and no acceleration gives the
placements and the velocity-product forces; the two other terms need no velocity, so their
forward recursions are the short zero-velocity kind: a_i = X_i a_parent (+ S_i qdd), f_i = I_i a_i.
The cost of all three is about 1.7 RNEA passes instead of 3.
"""
from __future__ import annotations

from numba import njit, prange
import numpy as np

from rnea_ros.dynamics.joints import add_subspace_motion
from rnea_ros.dynamics.layout import (B_PARENT, BODY_WIDTH, H_NB, HEADER, W_FORCE, W_PLACEMENT,
                                      WORK_WIDTH)
from rnea_ros.dynamics.rnea import backward_pass, forward_pass, inertia_times
from rnea_ros.dynamics.spatial import JIT, JIT_INLINE, motion_to_child

# Per body in ``static``: acceleration (6) then force (6) of one zero-velocity channel.
STATIC_WIDTH = 12
NO_GRAVITY = np.zeros(3)


@njit(**JIT_INLINE)
def static_pass(model, work, a, use_a, g, static):
    """
    Run the zero-velocity forward recursion.

    Zero-velocity forward recursion on the placements ``forward_pass`` left in ``work``:
    a_i = X_i a_parent + S_i a_i (if ``use_a``), the root's parent accelerating at -g;
    f_i = I_i a_i. Writes [a_i; f_i] per body into ``static``.
    """
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
        w0, w1, w2, l0, l1, l2 = motion_to_child(work, x, cw0, cw1, cw2, cl0, cl1, cl2)
        if use_a:
            w0, w1, w2, l0, l1, l2 = add_subspace_motion(model, b, a, w0, w1, w2, l0, l1, l2)
        static[o], static[o + 1], static[o + 2] = w0, w1, w2
        static[o + 3], static[o + 4], static[o + 5] = l0, l1, l2
        (static[o + 6], static[o + 7], static[o + 8], static[o + 9], static[o + 10],
         static[o + 11]) = inertia_times(model, b, w0, w1, w2, l0, l1, l2)


@njit(**JIT)  # not inlined: numba would turn its array statements into nested parfors
def terms_range(model, Q, V, A, g, inertial, velocity_product, gravity, start, stop):
    """
    Compute the three terms (each zeroed here) at samples start <= k < stop.

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
    """Compute the three terms for every sample (rows of Q, V, A), in parallel ranges."""
    n = Q.shape[0]
    for c in prange(chunks):
        terms_range(model, Q, V, A, g, inertial, velocity_product, gravity,
                    c * n // chunks, (c + 1) * n // chunks)
