"""
External wrench on a link from the observer's residual: r = J^T F by damped least squares.

F = [force; torque] is the wrench the environment applies on ``link``, in the link frame about
the link origin: the frame of ``f_ext`` and of the node's ``WrenchStamped`` outputs (see the
conventions page). J is ``RobotModel.link_jacobian(q, link, 'local')``, so the joint torques of
F are J^T F (the opposite of ``external_torques``, which gives the torques that balance it).

Damped least squares,
``F = argmin |J^T F - r|^2 + damping^2 |F|^2 = (J J^T + damping^2 I)^-1 J r``: near a
singularity (or with fewer joints than 6 below the link) the directions the joints cannot feel
get a small wrench instead of an unbounded one. Joints below the link do not feel
a wrench on it at all; r there is model error and noise, and J^T F cannot explain it.
With ``point`` (3-vector, link frame) the wrench is a pure force f at that point: F = [f;
point x f], three unknowns instead of six, better determined from few joints.

A floating base needs more: the free-flyer's six rows of r stand for the base's own momentum
balance, so the base wrench (feet, ground) must be measured or estimated too, and q, v of the
base come from odometry; the tools estimate wrenches on fixed-base robots only.
"""
from __future__ import annotations

import math

import numpy as np

from rnea_ros.dynamics import checks
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import InputError

DEFAULT_DAMPING = 1e-3


def estimate_wrench(model: RobotModel, q, residual, link: str, *, damping: float =
                    DEFAULT_DAMPING, point=None) -> np.ndarray:
    """
    Return the external wrench [force; torque] (6,) on ``link`` (link frame) that explains r.

    ``residual``: the observer's r (nv,); ``damping`` (>= 0, N m): the damped least squares'
    lambda; ``point``: a contact point (3,) in the link frame for a pure force there (module
    docstring). Raises ``InputError`` naming a bad argument or an unknown link.
    """
    if not (isinstance(damping, (int, float)) and math.isfinite(damping) and damping >= 0):
        raise InputError(f'damping: expected a finite number >= 0, got {damping!r}')
    r = checks.vector(residual, model.nv, 'residual')
    jac = model.link_jacobian(q, link, 'local')
    if point is None:
        basis = np.eye(6)
    else:
        c = checks.vector(point, 3, 'point')
        # F = [f; c x f] = basis f
        basis = np.vstack([np.eye(3), [[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]],
                                       [-c[1], c[0], 0.0]]])
    a = jac.T @ basis  # r = a x
    normal = a.T @ a + damping ** 2 * np.eye(a.shape[1])
    x = np.linalg.lstsq(normal, a.T @ r, rcond=None)[0]
    return basis @ x
