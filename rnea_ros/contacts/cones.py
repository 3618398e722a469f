"""
Linearised friction cones: the constraint rows of point and surface contacts.

Each function returns rows R with ``R @ w <= 0`` for the admissible contact forces or wrenches
w, in the contact's own frame (tangent axes t1, t2 and the normal n). Friction is linearised as
the 4-facet pyramid inscribed in the circular Coulomb cone (an inner approximation: whatever the
rows accept, the true cone accepts too).
"""
from __future__ import annotations

import math

import numpy as np


def tangent_frame(normal) -> np.ndarray:
    """
    Return the contact frame: columns (t1, t2, n).

    Columns (t1, t2, n): n the unit normal, t1 the world x axis projected on the plane
    normal to n (the y axis if x is nearly parallel to n), t2 = n x t1.
    """
    n = np.asarray(normal, dtype=np.float64)
    n = n / np.linalg.norm(n)
    axis = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t1 = axis - (axis @ n) * n
    t1 /= np.linalg.norm(t1)
    return np.column_stack([t1, np.cross(n, t1), n])


def friction_pyramid(mu: float) -> np.ndarray:
    """
    Return the rows of the 4-facet friction pyramid inscribed in the cone of coefficient mu.

    Rows P (4, 3) with P f <= 0 <=> |f_t1|, |f_t2| <= mu / sqrt(2) f_n, f = (t1, t2, n)
    components: the 4-facet pyramid inscribed in the cone of coefficient mu.
    """
    m = mu / math.sqrt(2.0)
    return np.array([[1.0, 0.0, -m], [-1.0, 0.0, -m], [0.0, 1.0, -m], [0.0, -1.0, -m]])


def contact_wrench_cone(mu: float, half_length: float, half_width: float) -> np.ndarray:
    """
    Return the rows of the contact wrench cone of a rectangular sole.

    Rows (16, 6) with rows @ [f; tau] <= 0 <=> the sole-centre wrench [f; tau] (sole axes)
    is produced by forces at the four corners (+-X, +-Y, 0), each in the 4-facet pyramid of
    mu' = mu / sqrt(2) (Caron, Pham, Nakamura 2015, with their square pyramid at mu'):

        |f_x| <= mu' f_z, |f_y| <= mu' f_z,   |tau_x| <= Y f_z, |tau_y| <= X f_z,
        tau_min <= tau_z <= tau_max,
        tau_min = -mu'(X + Y) f_z + |Y f_x - mu' tau_x| + |X f_y - mu' tau_y|,
        tau_max = +mu'(X + Y) f_z - |Y f_x + mu' tau_x| - |X f_y + mu' tau_y|.
    """
    m, x, y = mu / math.sqrt(2.0), half_length, half_width
    rows = [[1, 0, -m, 0, 0, 0], [-1, 0, -m, 0, 0, 0], [0, 1, -m, 0, 0, 0], [0, -1, -m, 0, 0, 0],
            [0, 0, -y, 1, 0, 0], [0, 0, -y, -1, 0, 0], [0, 0, -x, 0, 1, 0], [0, 0, -x, 0, -1, 0]]
    for s1 in (1.0, -1.0):
        for s2 in (1.0, -1.0):
            rows.append([s1 * y, s2 * x, -m * (x + y), -s1 * m, -s2 * m, -1.0])  # tau_min
            rows.append([s1 * y, s2 * x, -m * (x + y), s1 * m, s2 * m, 1.0])  # tau_max
    return np.array(rows, dtype=np.float64)
