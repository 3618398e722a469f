"""
Joint types: everything a kernel does that depends on a body's joint type, in one place.

Featherstone's ``jcalc`` split into the operations the kernels need. A body's joint type is one
of the constants below, stored in its packed record (``layout.B_TYPE``). The kernels work in
canonical body frames (``rnea.canonical_rotations``): the axis of a revolute or prismatic joint
is the body's z axis, so its motion subspace is S = e_z (angular for revolute, linear for
prismatic) times the mimic multiplier. A free-flyer's v is [linear; angular] of the body in its
own frame, its q [position in the parent; quaternion x y z w], and S = [0 I; I 0]. Spatial
vectors are [angular; linear] as in ``spatial``.

Helpers, each with one branch per type (the kernels call them and branch on no type):

- ``x_up``: the body's placement in its parent for q, X_up = X_J(q) X_tree, as scalars;
  ``joint_placement`` writes it into the body's work record and refuses a bad configuration;
- ``add_joint_motion``: the forward-pass step v = v_p + S qd, a = a_p + S qdd + v x (S qd);
  ``add_subspace_motion``: m + S x for a motion m and joint rates x (no cross term);
- ``add_joint_force``: tau += S^T f; ``add_kinetic_gradient``: tau -= S^T (v x* h);
- ``motion_subspace``, ``world_motion_subspace``: S as a 6 x k matrix, in the body frame or in
  world coordinates; ``add_jacobian_columns``: S's columns of a link Jacobian;
- ``joint_dofs``: 1, or 6 for a free-flyer (whose S spans every motion);
  ``world_joint_motion``: S (one column) and S qd in world coordinates, for the ABA;
- ``integrate_joint``: q of one joint moved by its velocity over a time step;
- on the Python side (packing): ``has_axis`` and ``subspace_columns``.

A new joint type is a constant, a branch in each helper here, and the parser producing it.
"""
from __future__ import annotations

import math

from numba import njit
import numpy as np

from rnea_ros.dynamics.layout import (B_AXIS, B_MULT, B_OFFSET, B_PLACEMENT, B_Q, B_TYPE, B_V,
                                      BODY_WIDTH, HEADER, W_PLACEMENT, WORK_WIDTH)
from rnea_ros.dynamics.spatial import JIT_INLINE

# Joint types of bodies, as stored in the int table the kernels read.
REVOLUTE = 0
PRISMATIC = 1
FREE_FLYER = 2
# How far a free-flyer quaternion may be from unit norm before it is refused (it is normalised).
QUATERNION_TOLERANCE = 1e-3


def has_axis(joint_type: int) -> bool:
    """Tell whether a joint type moves along or about one axis (its canonical frame's z)."""
    return joint_type in (REVOLUTE, PRISMATIC)


def subspace_columns(joint_type: int, multiplier: float) -> np.ndarray:
    """S (6 x k) in the canonical body frame, one column per entry of the joint's v."""
    if joint_type == FREE_FLYER:  # v = [linear; angular]
        return np.vstack([np.eye(6)[3:], np.eye(6)[:3]]).T
    unit = 5 if joint_type == PRISMATIC else 2
    return multiplier * np.eye(6)[unit][:, None]


@njit(**JIT_INLINE)
def x_up(model, b, q):
    """
    Return the placement (R, p) of body record ``b`` in its parent for q: 12 floats.

    R = R_tree R_J(q), p = p_tree + R_tree p_J(q). A free-flyer quaternion farther than
    ``QUATERNION_TOLERANCE`` from unit norm poisons the placement with NaN rather than raising
    (a raise keeps numba from running the batch loops in parallel): the callers refuse the
    non-finite result and name the cause.
    """
    jtype = int(model[b + B_TYPE])
    qi = int(model[b + B_Q])
    t = b + B_PLACEMENT
    t0, t1, t2, t3, t4, t5, t6, t7, t8 = (model[t], model[t + 1], model[t + 2], model[t + 3],
                                          model[t + 4], model[t + 5], model[t + 6],
                                          model[t + 7], model[t + 8])
    px, py, pz = model[t + 9], model[t + 10], model[t + 11]
    if jtype == FREE_FLYER:
        x, y, z, s = q[qi + 3], q[qi + 4], q[qi + 5], q[qi + 6]
        norm = math.sqrt(x * x + y * y + z * z + s * s)
        if abs(norm - 1.0) > QUATERNION_TOLERANCE:
            norm = math.nan
        x, y, z, s = x / norm, y / norm, z / norm, s / norm
        j0, j1, j2 = 1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * s), 2.0 * (x * z + y * s)
        j3, j4, j5 = 2.0 * (x * y + z * s), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * s)
        j6, j7, j8 = 2.0 * (x * z - y * s), 2.0 * (y * z + x * s), 1.0 - 2.0 * (x * x + y * y)
        r0 = t0 * j0 + t1 * j3 + t2 * j6
        r1 = t0 * j1 + t1 * j4 + t2 * j7
        r2 = t0 * j2 + t1 * j5 + t2 * j8
        r3 = t3 * j0 + t4 * j3 + t5 * j6
        r4 = t3 * j1 + t4 * j4 + t5 * j7
        r5 = t3 * j2 + t4 * j5 + t5 * j8
        r6 = t6 * j0 + t7 * j3 + t8 * j6
        r7 = t6 * j1 + t7 * j4 + t8 * j7
        r8 = t6 * j2 + t7 * j5 + t8 * j8
        dx, dy, dz = q[qi], q[qi + 1], q[qi + 2]
        px += t0 * dx + t1 * dy + t2 * dz
        py += t3 * dx + t4 * dy + t5 * dz
        pz += t6 * dx + t7 * dy + t8 * dz
        return r0, r1, r2, r3, r4, r5, r6, r7, r8, px, py, pz
    position = model[b + B_MULT] * q[qi] + model[b + B_OFFSET]
    if jtype == REVOLUTE:
        # R = T Rz(q): the first two columns of T turn, the third stays.
        c = math.cos(position)
        sn = math.sin(position)
        return (c * t0 + sn * t1, c * t1 - sn * t0, t2, c * t3 + sn * t4, c * t4 - sn * t3, t5,
                c * t6 + sn * t7, c * t7 - sn * t6, t8, px, py, pz)
    return (t0, t1, t2, t3, t4, t5, t6, t7, t8, px + t2 * position, py + t5 * position,
            pz + t8 * position)


@njit(**JIT_INLINE)
def joint_placement(model, work, i, q):
    """Write body i's placement in its parent (R, p) into its work record, for configuration q."""
    b = HEADER + i * BODY_WIDTH
    if int(model[b + B_TYPE]) == FREE_FLYER:
        qi = int(model[b + B_Q])
        x, y, z, s = q[qi + 3], q[qi + 4], q[qi + 5], q[qi + 6]
        if abs(math.sqrt(x * x + y * y + z * z + s * s) - 1.0) > QUATERNION_TOLERANCE:
            raise ValueError('rnea: quaternion not of unit norm')
    w = i * WORK_WIDTH + W_PLACEMENT
    (work[w], work[w + 1], work[w + 2], work[w + 3], work[w + 4], work[w + 5], work[w + 6],
     work[w + 7], work[w + 8], work[w + 9], work[w + 10], work[w + 11]) = x_up(model, b, q)


@njit(**JIT_INLINE)
def add_joint_motion(model, b, v, a, w0, w1, w2, l0, l1, l2, b0, b1, b2, m0, m1, m2):
    """
    Add the joint's motion to the parent's velocity [w; l] and acceleration [b; m]: 12 floats.

    With vJ = S qd = [jw; jl]: v = v_p + vJ and a = a_p + S qdd + v x vJ, where v x vJ =
    v_p x vJ = [w x jw; w x jl + l x jw]. Each type adds only its nonzero terms.
    """
    jtype = int(model[b + B_TYPE])
    vi = int(model[b + B_V])
    if jtype == FREE_FLYER:
        jl0, jl1, jl2, jw0, jw1, jw2 = v[vi], v[vi + 1], v[vi + 2], v[vi + 3], v[vi + 4], \
            v[vi + 5]
        b0 += a[vi + 3] + w1 * jw2 - w2 * jw1
        b1 += a[vi + 4] + w2 * jw0 - w0 * jw2
        b2 += a[vi + 5] + w0 * jw1 - w1 * jw0
        m0 += a[vi] + w1 * jl2 - w2 * jl1 + l1 * jw2 - l2 * jw1
        m1 += a[vi + 1] + w2 * jl0 - w0 * jl2 + l2 * jw0 - l0 * jw2
        m2 += a[vi + 2] + w0 * jl1 - w1 * jl0 + l0 * jw1 - l1 * jw0
        return (w0 + jw0, w1 + jw1, w2 + jw2, l0 + jl0, l1 + jl1, l2 + jl2,
                b0, b1, b2, m0, m1, m2)
    mult = model[b + B_MULT]
    rate = mult * v[vi]
    accel = mult * a[vi]
    if jtype == REVOLUTE:  # vJ = [0 0 rate; 0 0 0]
        return (w0, w1, w2 + rate, l0, l1, l2,
                b0 + w1 * rate, b1 - w0 * rate, b2 + accel, m0 + l1 * rate, m1 - l0 * rate, m2)
    # PRISMATIC: vJ = [0 0 0; 0 0 rate]
    return (w0, w1, w2, l0, l1, l2 + rate,
            b0, b1, b2, m0 + w1 * rate, m1 - w0 * rate, m2 + accel)


@njit(**JIT_INLINE)
def add_subspace_motion(model, b, x, w0, w1, w2, l0, l1, l2):
    """Return the motion [w; l] + S x for the joint rates x[v_i:] (a velocity or acceleration)."""
    jtype = int(model[b + B_TYPE])
    vi = int(model[b + B_V])
    if jtype == FREE_FLYER:
        return (w0 + x[vi + 3], w1 + x[vi + 4], w2 + x[vi + 5], l0 + x[vi], l1 + x[vi + 1],
                l2 + x[vi + 2])
    if jtype == REVOLUTE:
        return w0, w1, w2 + model[b + B_MULT] * x[vi], l0, l1, l2
    return w0, w1, w2, l0, l1, l2 + model[b + B_MULT] * x[vi]


@njit(**JIT_INLINE)
def add_joint_force(model, i, f, fo, tau):
    """Add tau += S_i^T f (times the mimic multiplier): project body i's force on its joint."""
    b = HEADER + i * BODY_WIDTH
    jtype = int(model[b + B_TYPE])
    vi = int(model[b + B_V])
    if jtype == FREE_FLYER:
        for k in range(3):
            tau[vi + k] += f[fo + 3 + k]
            tau[vi + 3 + k] += f[fo + k]
        return
    tau[vi] += model[b + B_MULT] * f[fo + 2 if jtype == REVOLUTE else fo + 5]


@njit(**JIT_INLINE)
def add_kinetic_gradient(model, b, tau, w0, w1, w2, l0, l1, l2, n0, n1, n2, f0, f1, f2):
    """Add tau -= S^T (v x* h) for the body velocity v = [w; l] and a momentum h = [n; f]."""
    jtype = int(model[b + B_TYPE])
    vi = int(model[b + B_V])
    if jtype == REVOLUTE:  # only the z component of the torque counts
        tau[vi] -= model[b + B_MULT] * (w0 * n1 - w1 * n0 + l0 * f1 - l1 * f0)
    elif jtype == PRISMATIC:
        tau[vi] -= model[b + B_MULT] * (w0 * f1 - w1 * f0)
    else:  # v x* h = [w x n + l x f; w x f], v ordered [linear; angular]
        tau[vi] += -(w1 * f2 - w2 * f1)
        tau[vi + 1] += -(w2 * f0 - w0 * f2)
        tau[vi + 2] += -(w0 * f1 - w1 * f0)
        tau[vi + 3] += -(w1 * n2 - w2 * n1 + l1 * f2 - l2 * f1)
        tau[vi + 4] += -(w2 * n0 - w0 * n2 + l2 * f0 - l0 * f2)
        tau[vi + 5] += -(w0 * n1 - w1 * n0 + l0 * f1 - l1 * f0)


@njit(**JIT_INLINE)
def motion_subspace(model, i, out):
    """Motion subspace S_i (6 x k, times the mimic multiplier) into out[:, :k]; returns k."""
    b = HEADER + i * BODY_WIDTH
    jtype = int(model[b + B_TYPE])
    out[:] = 0.0
    if jtype == FREE_FLYER:
        for k in range(3):
            out[3 + k, k] = 1.0
            out[k, 3 + k] = 1.0
        return 6
    base = 0 if jtype == REVOLUTE else 3
    for k in range(3):
        out[base + k, 0] = model[b + B_MULT] * model[b + B_AXIS + k]
    return 1


@njit(**JIT_INLINE)
def world_motion_subspace(model, world, i, out):
    """Body i's motion subspace (times the mimic multiplier) in world coordinates; returns k."""
    b = HEADER + i * BODY_WIDTH
    jtype = int(model[b + B_TYPE])
    x = 12 * i
    px, py, pz = world[x + 9], world[x + 10], world[x + 11]
    out[:] = 0.0
    count = 6 if jtype == FREE_FLYER else 1
    for c in range(count):
        # Local direction: z for revolute and prismatic (canonical frames), e_c for a free-flyer.
        local = 2 if count == 1 else c % 3
        scale = 1.0 if count == 6 else model[b + B_MULT]
        ux = world[x + local] * scale
        uy = world[x + 3 + local] * scale
        uz = world[x + 6 + local] * scale
        angular = jtype == REVOLUTE or (count == 6 and c >= 3)
        if angular:  # rotation about an axis through the body origin: [u; p x u]
            out[0, c], out[1, c], out[2, c] = ux, uy, uz
            out[3, c], out[4, c], out[5, c] = py * uz - pz * uy, pz * ux - px * uz, \
                px * uy - py * ux
        else:
            out[3, c], out[4, c], out[5, c] = ux, uy, uz
    return count


@njit(**JIT_INLINE)
def add_jacobian_columns(model, b, bodies, o, rx, ry, rz, jac):
    """
    Add body record ``b``'s joint columns to a LOCAL_WORLD_ALIGNED Jacobian jac (6, nv).

    The body's world placement is bodies[o:o + 12]; (rx, ry, rz) the lever from its origin to
    the link origin in world axes. Rows: [velocity of the link origin; angular velocity].
    """
    jtype = int(model[b + B_TYPE])
    vi = int(model[b + B_V])
    if jtype == FREE_FLYER:
        # v[vi:vi+3]: linear velocity of the body origin, v[vi+3:vi+6]: angular, body axes.
        for k in range(3):
            ax, ay, az = bodies[o + k], bodies[o + 3 + k], bodies[o + 6 + k]
            jac[0, vi + k] += ax
            jac[1, vi + k] += ay
            jac[2, vi + k] += az
            jac[0, vi + 3 + k] += ay * rz - az * ry
            jac[1, vi + 3 + k] += az * rx - ax * rz
            jac[2, vi + 3 + k] += ax * ry - ay * rx
            jac[3, vi + 3 + k] += ax
            jac[4, vi + 3 + k] += ay
            jac[5, vi + 3 + k] += az
        return
    # Canonical frames: the joint axis is the body's z axis (third column of R).
    mult = model[b + B_MULT]
    ax, ay, az = mult * bodies[o + 2], mult * bodies[o + 5], mult * bodies[o + 8]
    if jtype == REVOLUTE:
        jac[0, vi] += ay * rz - az * ry
        jac[1, vi] += az * rx - ax * rz
        jac[2, vi] += ax * ry - ay * rx
        jac[3, vi] += ax
        jac[4, vi] += ay
        jac[5, vi] += az
    else:
        jac[0, vi] += ax
        jac[1, vi] += ay
        jac[2, vi] += az


@njit(**JIT_INLINE)
def joint_dofs(model, b):
    """Return the degrees of freedom of body record ``b``'s joint: 6 (free-flyer) or 1."""
    return 6 if int(model[b + B_TYPE]) == FREE_FLYER else 1


@njit(**JIT_INLINE)
def world_joint_motion(model, b, v, r0, r1, r2, r3, r4, r5, r6, r7, r8, px, py, pz):
    """
    Return S and vJ = S qd in world coordinates (12 floats), for the body's world placement.

    (R, p) is the body's placement in the world. A 1-DoF joint's S (times the mimic multiplier)
    is [u; p x u] (revolute) or [0; u] (prismatic), u its axis (the body's z) in world axes; a
    free-flyer's S is not one column: zeros, and vJ its v = [linear; angular] (body axes).
    """
    jtype = int(model[b + B_TYPE])
    vi = int(model[b + B_V])
    if jtype == FREE_FLYER:
        bl0, bl1, bl2, bw0, bw1, bw2 = v[vi], v[vi + 1], v[vi + 2], v[vi + 3], v[vi + 4], \
            v[vi + 5]
        jw0 = r0 * bw0 + r1 * bw1 + r2 * bw2
        jw1 = r3 * bw0 + r4 * bw1 + r5 * bw2
        jw2 = r6 * bw0 + r7 * bw1 + r8 * bw2
        return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, jw0, jw1, jw2,
                r0 * bl0 + r1 * bl1 + r2 * bl2 + py * jw2 - pz * jw1,
                r3 * bl0 + r4 * bl1 + r5 * bl2 + pz * jw0 - px * jw2,
                r6 * bl0 + r7 * bl1 + r8 * bl2 + px * jw1 - py * jw0)
    mult = model[b + B_MULT]
    ax, ay, az = mult * r2, mult * r5, mult * r8
    rate = v[vi]
    if jtype == REVOLUTE:
        s3, s4, s5 = py * az - pz * ay, pz * ax - px * az, px * ay - py * ax
        return (ax, ay, az, s3, s4, s5, ax * rate, ay * rate, az * rate, s3 * rate, s4 * rate,
                s5 * rate)
    return 0.0, 0.0, 0.0, ax, ay, az, 0.0, 0.0, 0.0, ax * rate, ay * rate, az * rate


@njit(**JIT_INLINE)
def integrate_joint(model, b, q, v, dt, out):
    """
    Write body record ``b``'s joint entries of q moved by v over dt into ``out`` (nq).

    A 1-DoF joint: q + v dt (a mimic body's q is its master's: call it for primaries only). A
    free-flyer: the quaternion turns by exp(w dt) on the right (w in the body frame), the
    position moves by R v_linear dt with R the orientation halfway through that turn (second
    order in dt); ``out`` may be q.
    """
    qi = int(model[b + B_Q])
    vi = int(model[b + B_V])
    if int(model[b + B_TYPE]) != FREE_FLYER:
        out[qi] = q[qi] + v[vi] * dt
        return
    x, y, z, s = q[qi + 3], q[qi + 4], q[qi + 5], q[qi + 6]
    lx, ly, lz = v[vi] * dt, v[vi + 1] * dt, v[vi + 2] * dt
    wx, wy, wz = v[vi + 3] * dt, v[vi + 4] * dt, v[vi + 5] * dt
    # The position moves along the orientation halfway through the turn (second order).
    hx, hy, hz, hs = _turned(x, y, z, s, 0.5 * wx, 0.5 * wy, 0.5 * wz)
    px = q[qi] + (1.0 - 2.0 * (hy * hy + hz * hz)) * lx + 2.0 * (hx * hy - hz * hs) * ly \
        + 2.0 * (hx * hz + hy * hs) * lz
    py = q[qi + 1] + 2.0 * (hx * hy + hz * hs) * lx + (1.0 - 2.0 * (hx * hx + hz * hz)) * ly \
        + 2.0 * (hy * hz - hx * hs) * lz
    pz = q[qi + 2] + 2.0 * (hx * hz - hy * hs) * lx + 2.0 * (hy * hz + hx * hs) * ly \
        + (1.0 - 2.0 * (hx * hx + hy * hy)) * lz
    nx, ny, nz, ns = _turned(x, y, z, s, wx, wy, wz)
    out[qi], out[qi + 1], out[qi + 2] = px, py, pz
    out[qi + 3], out[qi + 4], out[qi + 5], out[qi + 6] = nx, ny, nz, ns


@njit(**JIT_INLINE)
def _turned(x, y, z, s, wx, wy, wz):
    """Return the unit quaternion (x, y, z, s) * exp(w / 2): turned by the rotation vector w."""
    angle = math.sqrt(wx * wx + wy * wy + wz * wz)
    half = 0.5 * angle
    # sin(half) / angle, by its series near zero (no 0 / 0).
    scale = math.sin(half) / angle if angle > 1e-8 else 0.5 - angle * angle / 48.0
    ex, ey, ez, es = wx * scale, wy * scale, wz * scale, math.cos(half)
    nx = s * ex + x * es + y * ez - z * ey
    ny = s * ey - x * ez + y * es + z * ex
    nz = s * ez + x * ey - y * ex + z * es
    ns = s * es - x * ex - y * ey - z * ez
    norm = math.sqrt(nx * nx + ny * ny + nz * nz + ns * ns)
    return nx / norm, ny / norm, nz / norm, ns / norm
