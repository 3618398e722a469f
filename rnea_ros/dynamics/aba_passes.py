"""
The Articulated-Body Algorithm's passes (``aba``), on the per-body records laid out here.

World coordinates about the world origin, [angular; linear] (``aba``'s docstring): pass 1
(``forward_kinematics``) places the bodies and gives their velocities, bias accelerations, rigid
inertias and bias forces; pass 2 (``backward_pass``) the articulated inertias and U, D, u; pass
3 (``forward_accelerations``) the joint accelerations. ``aba_mimic`` solves again with the
factored records (its own backward pass, then ``forward_accelerations`` on its fields).
"""
from __future__ import annotations

import math

from numba import njit

from rnea_ros.dynamics.joints import joint_dofs, world_joint_motion, x_up
from rnea_ros.dynamics.layout import B_H, B_INERTIA, B_MASS, B_PARENT, B_V, BODY_WIDTH, HEADER
from rnea_ros.dynamics.rnea import wrench_body
from rnea_ros.dynamics.spatial import (cholesky, cholesky_solve, compose, dot6,
                                       force_to_parent, JIT_INLINE, motion_to_child, store12)

# Per body in the ABA records: world placement (R row-major, p), world velocity, acceleration
# (first the bias c = v x S qd), bias force, articulated inertia (6x6 row-major; a free-flyer's
# Cholesky factor after the backward pass), S in world coordinates, U = I S, D = S^T U +
# armature, u = tau - S^T f (a free-flyer's 6: its joint force less its bias force), the joint
# acceleration; then the mimic solve's force, acceleration, u and joint acceleration.
A_M, A_V, A_A, A_F, A_I, A_S, A_U, A_D, A_UJ, A_QDD = 0, 12, 18, 24, 30, 66, 72, 78, 79, 80
A_F2, A_A2, A_U2, A_QDD2 = 81, 87, 93, 94
ABA_WIDTH = 95
# Layout of ``joint_terms``: [friction on (0/1), velocity threshold, then per v entry armature,
# Coulomb, viscous, offset (nv each)].
T_FRICTION, T_THRESHOLD, T_ROWS = 0, 1, 2


@njit(**JIT_INLINE)
def _cross_motion(w0, w1, w2, l0, l1, l2, x0, x1, x2, y0, y1, y2):
    """Return [w; l] x [x; y] = [w x x; w x y + l x x] (motion cross motion)."""
    return (w1 * x2 - w2 * x1, w2 * x0 - w0 * x2, w0 * x1 - w1 * x0,
            w1 * y2 - w2 * y1 + l1 * x2 - l2 * x1,
            w2 * y0 - w0 * y2 + l2 * x0 - l0 * x2,
            w0 * y1 - w1 * y0 + l0 * x1 - l1 * x0)


@njit(**JIT_INLINE)
def _world_inertia(model, b, work, o):
    """
    Write body record b's spatial inertia about the world origin into work[o + A_I:][:36].

    With the body's world placement (R, p) at work[o + A_M:]: J = R I_o R^T, r = R h,
    I_O = J + (m |p|^2 + 2 p.r) 1 - m p p^T - r p^T - p r^T, h_w = r + m p; the matrix is
    [[I_O, [h_w]x], [[h_w]x^T, m 1]]. Returns (m, h_w, I_O's 6 distinct entries).
    """
    x = o + A_M
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = (work[x], work[x + 1], work[x + 2], work[x + 3],
                                          work[x + 4], work[x + 5], work[x + 6], work[x + 7],
                                          work[x + 8])
    px, py, pz = work[x + 9], work[x + 10], work[x + 11]
    mass = model[b + B_MASS]
    hx, hy, hz = model[b + B_H], model[b + B_H + 1], model[b + B_H + 2]
    n = b + B_INERTIA
    i0, i1, i2, i4, i5, i8 = (model[n], model[n + 1], model[n + 2], model[n + 4], model[n + 5],
                              model[n + 8])
    # R I_o: rows of R times I_o, then (R I_o) R^T.
    a0 = r0 * i0 + r1 * i1 + r2 * i2
    a1 = r0 * i1 + r1 * i4 + r2 * i5
    a2 = r0 * i2 + r1 * i5 + r2 * i8
    a3 = r3 * i0 + r4 * i1 + r5 * i2
    a4 = r3 * i1 + r4 * i4 + r5 * i5
    a5 = r3 * i2 + r4 * i5 + r5 * i8
    a6 = r6 * i0 + r7 * i1 + r8 * i2
    a7 = r6 * i1 + r7 * i4 + r8 * i5
    a8 = r6 * i2 + r7 * i5 + r8 * i8
    ux, uy, uz = r0 * hx + r1 * hy + r2 * hz, r3 * hx + r4 * hy + r5 * hz, \
        r6 * hx + r7 * hy + r8 * hz
    diagonal = mass * (px * px + py * py + pz * pz) + 2.0 * (px * ux + py * uy + pz * uz)
    j00 = a0 * r0 + a1 * r1 + a2 * r2 + diagonal - mass * px * px - 2.0 * ux * px
    j01 = a0 * r3 + a1 * r4 + a2 * r5 - mass * px * py - ux * py - px * uy
    j02 = a0 * r6 + a1 * r7 + a2 * r8 - mass * px * pz - ux * pz - px * uz
    j11 = a3 * r3 + a4 * r4 + a5 * r5 + diagonal - mass * py * py - 2.0 * uy * py
    j12 = a3 * r6 + a4 * r7 + a5 * r8 - mass * py * pz - uy * pz - py * uz
    j22 = a6 * r6 + a7 * r7 + a8 * r8 + diagonal - mass * pz * pz - 2.0 * uz * pz
    wx, wy, wz = ux + mass * px, uy + mass * py, uz + mass * pz
    i = o + A_I
    work[i], work[i + 1], work[i + 2] = j00, j01, j02
    work[i + 6], work[i + 7], work[i + 8] = j01, j11, j12
    work[i + 12], work[i + 13], work[i + 14] = j02, j12, j22
    # Upper right [h_w]x, lower left its transpose, lower right m 1.
    work[i + 3], work[i + 4], work[i + 5] = 0.0, -wz, wy
    work[i + 9], work[i + 10], work[i + 11] = wz, 0.0, -wx
    work[i + 15], work[i + 16], work[i + 17] = -wy, wx, 0.0
    work[i + 18], work[i + 19], work[i + 20] = 0.0, wz, -wy
    work[i + 24], work[i + 25], work[i + 26] = -wz, 0.0, wx
    work[i + 30], work[i + 31], work[i + 32] = wy, -wx, 0.0
    work[i + 21], work[i + 22], work[i + 23] = mass, 0.0, 0.0
    work[i + 27], work[i + 28], work[i + 29] = 0.0, mass, 0.0
    work[i + 33], work[i + 34], work[i + 35] = 0.0, 0.0, mass
    return mass, wx, wy, wz, j00, j01, j02, j11, j12, j22


@njit(**JIT_INLINE)
def forward_kinematics(model, work, nb, q, v, g):
    """
    Pass 1: world placements, velocities, biases c, rigid inertias and bias forces.

    A root's acceleration starts at c - g (gravity as the world's upward acceleration).
    """
    for i in range(nb):
        b = HEADER + i * BODY_WIDTH
        o = i * ABA_WIDTH
        parent = int(model[b + B_PARENT])
        r0, r1, r2, r3, r4, r5, r6, r7, r8, px, py, pz = x_up(model, b, q)
        if parent >= 0:  # compose with the parent's world placement
            r0, r1, r2, r3, r4, r5, r6, r7, r8, px, py, pz = compose(
                work, parent * ABA_WIDTH + A_M, r0, r1, r2, r3, r4, r5, r6, r7, r8, px, py, pz)
            u = parent * ABA_WIDTH + A_V
            w0, w1, w2, l0, l1, l2 = (work[u], work[u + 1], work[u + 2], work[u + 3],
                                      work[u + 4], work[u + 5])
        else:
            w0 = w1 = w2 = l0 = l1 = l2 = 0.0
        store12(work, o + A_M, (r0, r1, r2, r3, r4, r5, r6, r7, r8, px, py, pz))
        s = o + A_S
        (work[s], work[s + 1], work[s + 2], work[s + 3], work[s + 4], work[s + 5], jw0, jw1, jw2,
         jl0, jl1, jl2) = world_joint_motion(model, b, v, r0, r1, r2, r3, r4, r5, r6, r7, r8,
                                             px, py, pz)
        w0, w1, w2, l0, l1, l2 = w0 + jw0, w1 + jw1, w2 + jw2, l0 + jl0, l1 + jl1, l2 + jl2
        u = o + A_V
        work[u], work[u + 1], work[u + 2] = w0, w1, w2
        work[u + 3], work[u + 4], work[u + 5] = l0, l1, l2
        c = o + A_A
        (work[c], work[c + 1], work[c + 2], work[c + 3], work[c + 4],
         work[c + 5]) = _cross_motion(w0, w1, w2, l0, l1, l2, jw0, jw1, jw2, jl0, jl1, jl2)
        if parent < 0:
            for k in range(3):
                work[c + 3 + k] -= g[k]
        mass, hx, hy, hz, j00, j01, j02, j11, j12, j22 = _world_inertia(model, b, work, o)
        # Momentum I v = [I_O w + h x l; m l - h x w], bias force v x* (I v).
        n0 = j00 * w0 + j01 * w1 + j02 * w2 + hy * l2 - hz * l1
        n1 = j01 * w0 + j11 * w1 + j12 * w2 + hz * l0 - hx * l2
        n2 = j02 * w0 + j12 * w1 + j22 * w2 + hx * l1 - hy * l0
        f0 = mass * l0 - (hy * w2 - hz * w1)
        f1 = mass * l1 - (hz * w0 - hx * w2)
        f2 = mass * l2 - (hx * w1 - hy * w0)
        f = o + A_F
        work[f] = w1 * n2 - w2 * n1 + l1 * f2 - l2 * f1
        work[f + 1] = w2 * n0 - w0 * n2 + l2 * f0 - l0 * f2
        work[f + 2] = w0 * n1 - w1 * n0 + l0 * f1 - l1 * f0
        work[f + 3] = w1 * f2 - w2 * f1
        work[f + 4] = w2 * f0 - w0 * f2
        work[f + 5] = w0 * f1 - w1 * f0


@njit(**JIT_INLINE)
def subtract_wrenches(work, link_body, link_pose, fext):
    """Take each link's wrench [f; t] (link frame, about its origin) off its body's bias force."""
    for link in range(fext.shape[0]):
        body = wrench_body(link_body, fext, link)
        if body < 0:
            continue
        # Link -> body -> world, each step f' = R f, n' = R n + p x f'.
        tx, ty, tz, fx, fy, fz = force_to_parent(
            link_pose, 12 * link, fext[link, 3], fext[link, 4], fext[link, 5], fext[link, 0],
            fext[link, 1], fext[link, 2])
        tx, ty, tz, fx, fy, fz = force_to_parent(work, body * ABA_WIDTH + A_M, tx, ty, tz, fx,
                                                 fy, fz)
        f = body * ABA_WIDTH + A_F
        work[f] -= tx
        work[f + 1] -= ty
        work[f + 2] -= tz
        work[f + 3] -= fx
        work[f + 4] -= fy
        work[f + 5] -= fz


@njit(**JIT_INLINE)
def _joint_torque(terms, primary, vi, tau, v):
    """Return the torque on a body's coordinate: tau less friction (primary body), else 0."""
    if primary == 0.0:
        return 0.0
    value = tau[vi]
    if terms[T_FRICTION] != 0.0:
        nv = tau.shape[0]
        rate = v[vi]
        value -= (terms[T_ROWS + nv + vi] * math.tanh(rate / terms[T_THRESHOLD])
                  + terms[T_ROWS + 2 * nv + vi] * rate + terms[T_ROWS + 3 * nv + vi])
    return value


@njit(**JIT_INLINE)
def backward_pass(model, flags, work, nb, tau, v, terms):
    """Pass 2, leaves to root: U, D, u per body; articulated inertia and bias to the parent."""
    for i in range(nb - 1, -1, -1):
        b = HEADER + i * BODY_WIDTH
        o = i * ABA_WIDTH
        parent = int(model[b + B_PARENT])
        vi = int(model[b + B_V])
        ia = o + A_I
        f = o + A_F
        if joint_dofs(model, b) == 6:
            # Joint force [torque; force] from tau = [force; torque] (body frame) to world.
            nx, ny, nz, fx, fy, fz = force_to_parent(work, o + A_M, tau[vi + 3], tau[vi + 4],
                                                     tau[vi + 5], tau[vi], tau[vi + 1],
                                                     tau[vi + 2])
            u = o + A_U
            work[u], work[u + 1], work[u + 2] = nx - work[f], ny - work[f + 1], nz - work[f + 2]
            work[u + 3], work[u + 4], work[u + 5] = (fx - work[f + 3], fy - work[f + 4],
                                                     fz - work[f + 5])
            cholesky(work, ia, 6)
            if parent >= 0:
                g = parent * ABA_WIDTH + A_F
                work[g], work[g + 1], work[g + 2] = (work[g] + nx, work[g + 1] + ny,
                                                     work[g + 2] + nz)
                work[g + 3], work[g + 4], work[g + 5] = (work[g + 3] + fx, work[g + 4] + fy,
                                                         work[g + 5] + fz)
            continue
        s = o + A_S
        us = o + A_U
        for r in range(6):
            work[us + r] = dot6(work, ia + 6 * r, work, s)
        d = dot6(work, us, work, s) + flags[nb + i] * terms[T_ROWS + vi]
        u = _joint_torque(terms, flags[i], vi, tau, v) - dot6(work, f, work, s)
        work[o + A_D] = d
        work[o + A_UJ] = u
        if parent < 0:
            continue
        # I^a = I^A - U U^T / D, added to the parent's; p^a = p + I^a c + U u / D likewise.
        pia = parent * ABA_WIDTH + A_I
        pf = parent * ABA_WIDTH + A_F
        c = o + A_A
        inverse = 1.0 / d
        scale = u * inverse
        for r in range(6):
            ur = work[us + r] * inverse
            row = ia + 6 * r
            prow = pia + 6 * r
            total = work[f + r] + work[us + r] * scale
            for k in range(6):
                value = work[row + k] - ur * work[us + k]
                work[prow + k] += value
                total += value * work[c + k]
            work[pf + r] += total


@njit(**JIT_INLINE)
def free_flyer_acceleration(work, o, a, rhs, out, vi):
    """
    Solve a free-flyer's body acceleration: a = I^-1 work[rhs:rhs + 6] into work[a:a + 6].

    I is its factored articulated inertia; a' (the parent's acceleration plus the bias, in
    work[a:] on entry) gives its joint acceleration S^-1 (a - a') into out[vi:vi + 6], in its
    body frame [linear; angular].
    """
    d0, d1, d2, d3, d4, d5 = (work[a], work[a + 1], work[a + 2], work[a + 3], work[a + 4],
                              work[a + 5])
    cholesky_solve(work, o + A_I, 6, work, rhs, work, a)
    w0, w1, w2, l0, l1, l2 = motion_to_child(
        work, o + A_M, work[a] - d0, work[a + 1] - d1, work[a + 2] - d2, work[a + 3] - d3,
        work[a + 4] - d4, work[a + 5] - d5)
    out[vi], out[vi + 1], out[vi + 2] = l0, l1, l2
    out[vi + 3], out[vi + 4], out[vi + 5] = w0, w1, w2


@njit(**JIT_INLINE)
def joint_acceleration(work, o, a, u):
    """Return qdd = (u - U^T a') / D of the 1-DoF record o, and add S qdd to a' at work[a:]."""
    qdd = (work[u] - dot6(work, o + A_U, work, a)) / work[o + A_D]
    for k in range(6):
        work[a + k] += work[o + A_S + k] * qdd
    return qdd


@njit(**JIT_INLINE)
def forward_accelerations(model, flags, work, nb, out, acc, rhs, u, qdd):
    """
    Pass 3, root to leaves: the joint accelerations into out, the body accelerations.

    The records' fields it reads and writes, by offset: ``acc`` the body acceleration (its bias
    on entry, a root's with gravity), ``rhs`` a free-flyer's force (the right-hand side of its
    solve), ``u`` a 1-DoF body's, ``qdd`` its joint acceleration. The ABA's solve
    (``A_A``, ``A_U``, ``A_UJ``, ``A_QDD``) and the mimic coupling's unit solves (``A_A2``,
    ``A_F2``, ``A_U2``, ``A_QDD2``: no bias) share it.
    """
    for i in range(nb):
        b = HEADER + i * BODY_WIDTH
        o = i * ABA_WIDTH
        parent = int(model[b + B_PARENT])
        vi = int(model[b + B_V])
        a = o + acc
        if parent >= 0:
            pa = parent * ABA_WIDTH + acc
            for k in range(6):
                work[a + k] += work[pa + k]
        if joint_dofs(model, b) == 6:
            free_flyer_acceleration(work, o, a, o + rhs, out, vi)  # a = I^-1 (f_J - p)
            continue
        x = joint_acceleration(work, o, a, o + u)
        work[o + qdd] = x
        if flags[i] != 0.0:
            out[vi] = x
