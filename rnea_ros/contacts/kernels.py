"""
Jitted per-cycle kernels of the contact solver (``contacts.ContactSolver``).

They work on the packed model arrays of ``rnea.py`` / ``kinematics.py`` and on the solver's
contact tables: ``rows`` (link row of each contact), ``kinds`` (POINT_CODE, SURFACE_CODE),
``offsets`` (first QP unknown of each contact), ``points`` (k, 3) (contact point or sole centre,
link frame) and ``frames`` (k, 12) (world placements of the contact links: R row-major, p).
QP unknowns: a point contact's world force; a sole's [force; moment about its centre], link axes.
"""
from __future__ import annotations

import math

from numba import njit
import numpy as np

from rnea_ros.dynamics.kinematics import body_placements, link_placement
from rnea_ros.dynamics.rnea import rnea_core
from rnea_ros.dynamics.spatial import JIT, JIT_INLINE

POINT_CODE, SURFACE_CODE = 0, 1
# Below this normal force (N) a sole's centre of pressure is undefined (NaN).
COP_MIN_FORCE = 1e-9


@njit(**JIT)
def contact_problem(model, work, bodies, q, v, a, g, link_body, link_pose, fext, tau, rows,
                    kinds, offsets, points, frames, con, upper, lower):
    """
    Set up the contact QP of one instant.

    RNEA without contacts into tau, world placements of the contact links into frames
    (k, 12), and the equality rows: con[:6] = A, upper[:6] = lower[:6] = b (world axes, about
    the root-body origin). Returns False if tau is not finite.
    """
    if not finite_rnea(model, work, q, v, a, g, link_body, link_pose, fext, tau):
        return False
    body_placements(model, work, q, bodies)
    # Body 0 is the free-flyer, its frame is the root link's: tau[:6] is in that frame.
    for r in range(3):
        f = bodies[3 * r] * tau[0] + bodies[3 * r + 1] * tau[1] + bodies[3 * r + 2] * tau[2]
        n = bodies[3 * r] * tau[3] + bodies[3 * r + 1] * tau[4] + bodies[3 * r + 2] * tau[5]
        upper[r] = lower[r] = f
        upper[3 + r] = lower[3 + r] = n
    for r in range(6):
        for j in range(con.shape[1]):
            con[r, j] = 0.0
    flat = frames.reshape(-1)
    for c in range(rows.shape[0]):
        row = rows[c]
        o = 12 * c
        link_placement(bodies, link_body[row], link_pose, row, flat, o)
        # Lever d from the root origin to the contact point (or sole centre), world axes.
        ox, oy, oz = points[c, 0], points[c, 1], points[c, 2]
        d0 = flat[o + 9] + flat[o] * ox + flat[o + 1] * oy + flat[o + 2] * oz - bodies[9]
        d1 = flat[o + 10] + flat[o + 3] * ox + flat[o + 4] * oy + flat[o + 5] * oz - bodies[10]
        d2 = flat[o + 11] + flat[o + 6] * ox + flat[o + 7] * oy + flat[o + 8] * oz - bodies[11]
        j = offsets[c]
        for i in range(3):
            # Unit force along e (world axis i for a point, link axis i for a sole): [e; d x e].
            if kinds[c] == POINT_CODE:
                e0 = 1.0 if i == 0 else 0.0
                e1 = 1.0 if i == 1 else 0.0
                e2 = 1.0 if i == 2 else 0.0
            else:
                e0, e1, e2 = flat[o + i], flat[o + 3 + i], flat[o + 6 + i]
                con[3, j + 3 + i] = e0  # unit moment about link axis i
                con[4, j + 3 + i] = e1
                con[5, j + 3 + i] = e2
            con[0, j + i] = e0
            con[1, j + i] = e1
            con[2, j + i] = e2
            con[3, j + i] = d1 * e2 - d2 * e1
            con[4, j + i] = d2 * e0 - d0 * e2
            con[5, j + i] = d0 * e1 - d1 * e0
    return True


@njit(**JIT)
def contact_wrenches(x, kinds, offsets, points, frames, wrenches, world, cop):
    """
    Turn the QP unknowns into contact wrenches and centres of pressure.

    QP unknowns -> link-frame wrenches (k, 6) about the link origins, the same in world
    axes, and the world centres of pressure (k, 3).
    """
    for c in range(kinds.shape[0]):
        j = offsets[c]
        rot = frames[c]
        ox, oy, oz = points[c, 0], points[c, 1], points[c, 2]
        if kinds[c] == POINT_CODE:
            # World force at a point: link-frame force R^T f_w, moment o x f about the origin.
            fx = rot[0] * x[j] + rot[3] * x[j + 1] + rot[6] * x[j + 2]
            fy = rot[1] * x[j] + rot[4] * x[j + 1] + rot[7] * x[j + 2]
            fz = rot[2] * x[j] + rot[5] * x[j + 1] + rot[8] * x[j + 2]
            tx, ty, tz = 0.0, 0.0, 0.0
            px, py, pz = ox, oy, oz
        else:
            fx, fy, fz = x[j], x[j + 1], x[j + 2]
            tx, ty, tz = x[j + 3], x[j + 4], x[j + 5]
            # Centre of pressure on the sole plane (link frame): moment about it is along z.
            if fz > COP_MIN_FORCE:
                px, py, pz = ox - ty / fz, oy + tx / fz, oz
            else:
                px = py = pz = np.nan
        wrenches[c, 0], wrenches[c, 1], wrenches[c, 2] = fx, fy, fz
        wrenches[c, 3] = tx + oy * fz - oz * fy
        wrenches[c, 4] = ty + oz * fx - ox * fz
        wrenches[c, 5] = tz + ox * fy - oy * fx
        for r in range(3):
            world[c, r] = rot[3 * r] * fx + rot[3 * r + 1] * fy + rot[3 * r + 2] * fz
            world[c, 3 + r] = (rot[3 * r] * wrenches[c, 3] + rot[3 * r + 1] * wrenches[c, 4]
                               + rot[3 * r + 2] * wrenches[c, 5])
            cop[c, r] = rot[9 + r] + rot[3 * r] * px + rot[3 * r + 1] * py + rot[3 * r + 2] * pz


@njit(**JIT)
def contact_torques(model, work, q, v, a, g, link_body, link_pose, fext, fext_total, tau, x,
                    rows, kinds, offsets, points, frames, wrenches, world, cop):
    """
    Compute the contact wrenches from the QP unknowns, then the torques with them.

    Contact wrenches from the QP unknowns x, then tau = RNEA(q, v, a, fext + contacts).
    Returns False if tau is not finite.
    """
    contact_wrenches(x, kinds, offsets, points, frames, wrenches, world, cop)
    fext_total[:, :] = fext
    for c in range(rows.shape[0]):
        for k in range(6):
            fext_total[rows[c], k] += wrenches[c, k]
    return finite_rnea(model, work, q, v, a, g, link_body, link_pose, fext_total, tau)


@njit(**JIT_INLINE)
def finite_rnea(model, work, q, v, a, g, link_body, link_pose, fext, tau):
    """Compute tau = RNEA(q, v, a, fext); False (no raise) if tau is not finite."""
    for k in range(tau.shape[0]):
        tau[k] = 0.0
    rnea_core(model, work, q, v, a, g, link_body, link_pose, fext, tau)
    for k in range(tau.shape[0]):
        if not math.isfinite(tau[k]):
            return False
    return True
