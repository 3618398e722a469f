"""
Jitted frame kinematics on the packed model: world placements of bodies and links, Jacobians.

Same arrays as rnea.py (``model``, ``work``, ``link_body``, ``link_pose``), same canonical body
frames. Placements are 12 floats: R (row-major, the frame's orientation in the world) then p (its
origin in the world). Jacobian rows follow Pinocchio: [linear; angular].
"""
from __future__ import annotations

from numba import njit
import numpy as np

from rnea_ros.dynamics.joints import add_jacobian_columns, joint_placement
from rnea_ros.dynamics.layout import B_PARENT, BODY_WIDTH, H_NB, HEADER, W_PLACEMENT, WORK_WIDTH
from rnea_ros.dynamics.spatial import JIT, place_in_world


@njit(**JIT)
def body_placements(model, work, q, out):
    """out[12 i : 12 i + 12] = world placement of body i (canonical frame) for configuration q."""
    nb = int(model[H_NB])
    for i in range(nb):
        joint_placement(model, work, i, q)
        place_in_world(out, int(model[HEADER + i * BODY_WIDTH + B_PARENT]), work,
                       i * WORK_WIDTH + W_PLACEMENT, out, 12 * i)


@njit(**JIT)
def link_placement(bodies, body, link_pose, row, out, oo):
    """out[oo:oo + 12] = world placement of link ``row`` (its pose in ``body``; -1: the world)."""
    place_in_world(bodies, body, link_pose, 12 * row, out, oo)


@njit(**JIT)
def link_placements(model, work, bodies, q, link_body, link_pose, rows, out):
    """World placements of the links ``rows`` into out (len(rows), 12)."""
    body_placements(model, work, q, bodies)
    for k in range(rows.shape[0]):
        row = rows[k]
        link_placement(bodies, link_body[row], link_pose, row, out[k], 0)


@njit(**JIT)
def link_jacobian_world_aligned(model, work, bodies, q, link_body, link_pose, row, frame, jac):
    """
    Compute the Jacobian of link ``row`` in LOCAL_WORLD_ALIGNED.

    Jacobian of link ``row`` in LOCAL_WORLD_ALIGNED: jac (6, nv) with
    [velocity of the link origin; angular velocity], both in world axes, equal to jac @ v.

    ``frame`` (12 floats) receives the link's world placement.
    """
    body_placements(model, work, q, bodies)
    body = link_body[row]
    link_placement(bodies, body, link_pose, row, frame, 0)
    px, py, pz = frame[9], frame[10], frame[11]
    jac[:, :] = 0.0
    while body >= 0:
        b = HEADER + body * BODY_WIDTH
        o = 12 * body
        # Lever from the joint's body origin to the link origin, world axes.
        rx, ry, rz = px - bodies[o + 9], py - bodies[o + 10], pz - bodies[o + 11]
        add_jacobian_columns(model, b, bodies, o, rx, ry, rz, jac)
        body = int(model[b + B_PARENT])


def placement_matrices(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, p) arrays from 12-float placements (..., 12)."""
    flat = np.asarray(flat)
    return flat[..., :9].reshape(flat.shape[:-1] + (3, 3)).copy(), flat[..., 9:12].copy()
