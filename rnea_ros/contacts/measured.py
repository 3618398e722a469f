"""
Measured wrenches as ``f_ext`` entries: a force at a world point, a force plate's reading.

``ground_reaction_wrench`` turns a ground reaction force measured in the world frame (force,
centre of pressure, free moment) into the [force; torque] in the link frame about the link
origin that ``RobotModel.rnea`` and ``ContactSolver.solve`` take as ``f_ext``.
"""
from __future__ import annotations

import numpy as np

from rnea_ros.contacts.contact import finite_vector


def world_force_wrench(rotation, position, force, point, moment=None) -> np.ndarray:
    """
    Return the link wrench of a world-frame force at a world point.

    Link wrench [f; n] (link frame, about the link origin) of a world-frame ``force`` (N)
    applied at the world ``point`` (m), plus an optional free ``moment`` (N m, world axes),
    on a link whose world pose is (``rotation`` (3, 3), ``position`` (3,)).
    """
    rotation = np.asarray(rotation, dtype=np.float64)
    force = np.asarray(force, dtype=np.float64)
    torque = np.cross(np.asarray(point, dtype=np.float64) - position, force)
    if moment is not None:
        torque = torque + np.asarray(moment, dtype=np.float64)
    return np.concatenate([rotation.T @ force, rotation.T @ torque])


def ground_reaction_wrench(model, q, link: str, force, center_of_pressure,
                           free_moment=None) -> np.ndarray:
    """
    Return the ``f_ext`` entry of a ground reaction force measured in the world frame.

    ``f_ext`` entry of a ground reaction force measured in the world frame (a force plate):
    ``force`` (N, world axes) acting at the ``center_of_pressure`` (world point, m) on ``link``,
    plus the plate's optional ``free_moment`` (N m, world axes, usually about the vertical).
    Returns [f; n] in the link frame about the link origin, at configuration q.
    """
    rotation, position = model.link_placement(q, link)
    for name, value in (('force', force), ('center_of_pressure', center_of_pressure)):
        finite_vector(value, 3, name)
    if free_moment is not None:
        finite_vector(free_moment, 3, 'free_moment')
    return world_force_wrench(rotation, position, force, center_of_pressure, free_moment)
