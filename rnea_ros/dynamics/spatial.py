"""
Jitted spatial algebra on flat float buffers, Featherstone's conventions and names.

Spatial motion and force vectors are 6 floats [angular; linear], expressed in a body frame about
its origin. A placement (parent -> child transform) is 12 floats: R (row-major 3x3, the child
frame's orientation in the parent) then p (the child origin in parent coordinates); in
Featherstone's notation E = R^T and r = p.

Every operand is passed as (buffer, offset) into a flat 1-D array, and every function writes into
an output the caller owns: nothing here slices or allocates, which keeps a full RNEA pass free of
reference counting and heap traffic. The helpers of the RNEA forward pass (rnea.forward_pass:
``motion_to_child``, ``store6``) take and return scalars and are inlined, so that its body loop
stays on local scalars.
"""
from __future__ import annotations

from numba import njit

JIT = {'cache': True, 'error_model': 'numpy'}
JIT_INLINE = {**JIT, 'inline': 'always'}


@njit(**JIT_INLINE)
def mat3_mul(a, ao, b, bo, out, oo):
    """Multiply row-major 3x3 matrices: out = a @ b (out must not alias a or b)."""
    for r in range(3):
        a0, a1, a2 = a[ao + 3 * r], a[ao + 3 * r + 1], a[ao + 3 * r + 2]
        for c in range(3):
            out[oo + 3 * r + c] = a0 * b[bo + c] + a1 * b[bo + 3 + c] + a2 * b[bo + 6 + c]


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
def compose_placements(a, ao, b, bo, out, oo):
    """Compose 12-float placements: out = a * b, R = Ra Rb, p = pa + Ra pb (out must not alias)."""
    mat3_mul(a, ao, b, bo, out, oo)
    for r in range(3):
        out[oo + 9 + r] = a[ao + 9 + r] + a[ao + 3 * r] * b[bo + 9] \
            + a[ao + 3 * r + 1] * b[bo + 10] + a[ao + 3 * r + 2] * b[bo + 11]


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
def add_force_to_parent(x, xo, f, fo, out, oo):
    """
    Add out += X^T f: a child force vector expressed at the parent origin.

    f_p = R f,  n_p = R n + p x f_p.
    """
    px, py, pz = x[xo + 9], x[xo + 10], x[xo + 11]
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = (x[xo], x[xo + 1], x[xo + 2], x[xo + 3], x[xo + 4],
                                          x[xo + 5], x[xo + 6], x[xo + 7], x[xo + 8])
    nx, ny, nz, gx, gy, gz = f[fo], f[fo + 1], f[fo + 2], f[fo + 3], f[fo + 4], f[fo + 5]
    fx = r0 * gx + r1 * gy + r2 * gz
    fy = r3 * gx + r4 * gy + r5 * gz
    fz = r6 * gx + r7 * gy + r8 * gz
    out[oo] += r0 * nx + r1 * ny + r2 * nz + py * fz - pz * fy
    out[oo + 1] += r3 * nx + r4 * ny + r5 * nz + pz * fx - px * fz
    out[oo + 2] += r6 * nx + r7 * ny + r8 * nz + px * fy - py * fx
    out[oo + 3] += fx
    out[oo + 4] += fy
    out[oo + 5] += fz
