"""
Jitted spatial algebra on flat float buffers, Featherstone's conventions and names.

Spatial motion and force vectors are 6 floats [angular; linear], expressed in a body frame about
its origin. A placement (parent -> child transform) is 12 floats: R (row-major 3x3, the child
frame's orientation in the parent) then p (the child origin in parent coordinates); in
Featherstone's notation E = R^T and r = p.

Every operand is passed as (buffer, offset) into a flat 1-D array, and every function writes into
an output the caller owns: nothing here slices or allocates, which keeps a full RNEA pass free of
reference counting and heap traffic. The helpers of the forward passes (``motion_to_child``,
``force_to_parent``, ``compose``) take and return scalars and are inlined, so that a body loop
stays on local scalars. ``cholesky``/``cholesky_solve``: a small SPD matrix in a buffer (the ABA's
free-flyer inertias and mimic constraints).
"""
from __future__ import annotations

import math

from numba import njit

JIT = {'cache': True, 'error_model': 'numpy'}
JIT_INLINE = {**JIT, 'inline': 'always'}


@njit(**JIT_INLINE)
def store6(out, oo, vector):
    """Write a spatial vector (a tuple of 6 floats) into out[oo:oo + 6]."""
    out[oo], out[oo + 1], out[oo + 2], out[oo + 3], out[oo + 4], out[oo + 5] = vector


@njit(**JIT_INLINE)
def motion_to_child(x, xo, m0, m1, m2, m3, m4, m5):
    """
    Transform a parent motion vector into the child frame.

    X m for the placement x[xo:xo + 12] (R, p): a parent motion vector [w; v] (parent
    coordinates) in the child frame, w_c = R^T w, v_c = R^T (v - p x w). Returns 6 floats.
    """
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = (x[xo], x[xo + 1], x[xo + 2], x[xo + 3], x[xo + 4],
                                          x[xo + 5], x[xo + 6], x[xo + 7], x[xo + 8])
    px, py, pz = x[xo + 9], x[xo + 10], x[xo + 11]
    ex = m3 - (py * m2 - pz * m1)
    ey = m4 - (pz * m0 - px * m2)
    ez = m5 - (px * m1 - py * m0)
    return (r0 * m0 + r3 * m1 + r6 * m2, r1 * m0 + r4 * m1 + r7 * m2, r2 * m0 + r5 * m1 + r8 * m2,
            r0 * ex + r3 * ey + r6 * ez, r1 * ex + r4 * ey + r7 * ez, r2 * ex + r5 * ey + r8 * ez)


@njit(**JIT_INLINE)
def compose(x, xo, r0, r1, r2, r3, r4, r5, r6, r7, r8, px, py, pz):
    """
    Return the placement x[xo:xo + 12] * (R, p) as 12 floats: R = Rx R, p = px + Rx p.

    (R, p) is given as scalars (``joints.x_up``'s), the result too.
    """
    s0, s1, s2, s3, s4, s5, s6, s7, s8 = (x[xo], x[xo + 1], x[xo + 2], x[xo + 3], x[xo + 4],
                                          x[xo + 5], x[xo + 6], x[xo + 7], x[xo + 8])
    return (s0 * r0 + s1 * r3 + s2 * r6, s0 * r1 + s1 * r4 + s2 * r7,
            s0 * r2 + s1 * r5 + s2 * r8, s3 * r0 + s4 * r3 + s5 * r6,
            s3 * r1 + s4 * r4 + s5 * r7, s3 * r2 + s4 * r5 + s5 * r8,
            s6 * r0 + s7 * r3 + s8 * r6, s6 * r1 + s7 * r4 + s8 * r7,
            s6 * r2 + s7 * r5 + s8 * r8,
            x[xo + 9] + s0 * px + s1 * py + s2 * pz,
            x[xo + 10] + s3 * px + s4 * py + s5 * pz,
            x[xo + 11] + s6 * px + s7 * py + s8 * pz)


@njit(**JIT_INLINE)
def store12(out, oo, placement):
    """Write a placement (a tuple of 12 floats) into out[oo:oo + 12]."""
    (out[oo], out[oo + 1], out[oo + 2], out[oo + 3], out[oo + 4], out[oo + 5], out[oo + 6],
     out[oo + 7], out[oo + 8], out[oo + 9], out[oo + 10], out[oo + 11]) = placement


@njit(**JIT_INLINE)
def compose_placements(a, ao, b, bo, out, oo):
    """Compose 12-float placements: out = a * b, R = Ra Rb, p = pa + Ra pb (out may alias)."""
    store12(out, oo, compose(a, ao, b[bo], b[bo + 1], b[bo + 2], b[bo + 3], b[bo + 4],
                             b[bo + 5], b[bo + 6], b[bo + 7], b[bo + 8], b[bo + 9], b[bo + 10],
                             b[bo + 11]))


@njit(**JIT_INLINE)
def place_in_world(world, parent, x, xo, out, oo):
    """
    Write the world placement of a frame placed at x[xo:xo + 12] in body ``parent``.

    out[oo:oo + 12] = world[12 parent:12 parent + 12] * x (``parent`` < 0: x, the frame is
    placed in the world; out must not alias).
    """
    if parent < 0:
        for k in range(12):
            out[oo + k] = x[xo + k]
    else:
        compose_placements(world, 12 * parent, x, xo, out, oo)


@njit(**JIT_INLINE)
def force_to_parent(x, xo, nx, ny, nz, gx, gy, gz):
    """
    Return X^T [n; g] for the placement x[xo:xo + 12]: the child force at the parent origin.

    f_p = R g,  n_p = R n + p x f_p; 6 floats [n_p; f_p].
    """
    px, py, pz = x[xo + 9], x[xo + 10], x[xo + 11]
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = (x[xo], x[xo + 1], x[xo + 2], x[xo + 3], x[xo + 4],
                                          x[xo + 5], x[xo + 6], x[xo + 7], x[xo + 8])
    fx = r0 * gx + r1 * gy + r2 * gz
    fy = r3 * gx + r4 * gy + r5 * gz
    fz = r6 * gx + r7 * gy + r8 * gz
    return (r0 * nx + r1 * ny + r2 * nz + py * fz - pz * fy,
            r3 * nx + r4 * ny + r5 * nz + pz * fx - px * fz,
            r6 * nx + r7 * ny + r8 * nz + px * fy - py * fx, fx, fy, fz)


@njit(**JIT_INLINE)
def add_force_to_parent(x, xo, f, fo, out, oo):
    """Add out += X^T f: a child force vector expressed at the parent origin (may alias f)."""
    n0, n1, n2, f0, f1, f2 = force_to_parent(x, xo, f[fo], f[fo + 1], f[fo + 2], f[fo + 3],
                                             f[fo + 4], f[fo + 5])
    out[oo] += n0
    out[oo + 1] += n1
    out[oo + 2] += n2
    out[oo + 3] += f0
    out[oo + 4] += f1
    out[oo + 5] += f2


@njit(**JIT_INLINE)
def dot6(a, ao, b, bo):
    """Return a[ao:ao + 6] . b[bo:bo + 6], summed in order."""
    return (a[ao] * b[bo] + a[ao + 1] * b[bo + 1] + a[ao + 2] * b[bo + 2]
            + a[ao + 3] * b[bo + 3] + a[ao + 4] * b[bo + 4] + a[ao + 5] * b[bo + 5])


@njit(**JIT_INLINE)
def cholesky(work, o, n):
    """Factor the SPD n x n matrix work[o:o + n n] in place: its lower triangle becomes L."""
    for j in range(n):
        s = work[o + (n + 1) * j]
        for k in range(j):
            s -= work[o + n * j + k] * work[o + n * j + k]
        d = math.sqrt(s) if s > 0.0 else math.nan
        work[o + (n + 1) * j] = d
        for r in range(j + 1, n):
            s = work[o + n * r + j]
            for k in range(j):
                s -= work[o + n * r + k] * work[o + n * j + k]
            work[o + n * r + j] = s / d


@njit(**JIT_INLINE)
def cholesky_solve(work, o, n, rhs, ro, out, oo):
    """out[oo:oo + n] = A^-1 rhs[ro:ro + n] with L at work[o:o + n n] (out may be rhs)."""
    for r in range(n):
        s = rhs[ro + r]
        for k in range(r):
            s -= work[o + n * r + k] * out[oo + k]
        out[oo + r] = s / work[o + (n + 1) * r]
    for r in range(n - 1, -1, -1):
        s = out[oo + r]
        for k in range(r + 1, n):
            s -= work[o + n * k + r] * out[oo + k]
        out[oo + r] = s / work[o + (n + 1) * r]
