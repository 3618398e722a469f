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

float64 arrays take one jitted pass (``wrench_kernel``: the Jacobian, the normal equations
solved by Gaussian elimination; tens of microseconds less than numpy per call, for the node's
cycle); anything else, and a singular system (no damping, too few joint directions), takes
the checked numpy path (``lstsq``: the minimum-norm answer). Both give the same wrench.

A floating base needs more: the free-flyer's six rows of r stand for the base's own momentum
balance, so the base wrench (feet, ground) must be measured or estimated too, and q, v of the
base come from odometry; the tools estimate wrenches on fixed-base robots only.
"""
from __future__ import annotations

import math

from numba import njit
import numpy as np

from rnea_ros.dynamics import checks
from rnea_ros.dynamics.kinematics import link_jacobian_world_aligned
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.rnea import H_NQ, H_NV
from rnea_ros.errors import InputError

DEFAULT_DAMPING = 1e-3
# A pivot below this fraction of the largest diagonal entry of the normal matrix: singular (no
# damping and fewer independent joint directions than unknowns): the least-squares path decides.
PIVOT_TOLERANCE = 1e-12


@njit(cache=True, error_model='numpy')
def wrench_kernel(model, work, bodies, q, link_body, link_pose, row, residual, damping2, point,
                  has_point, frame, jac, out):
    """
    Write the damped least-squares wrench (module docstring) into out (6,); False: singular.

    Raises ValueError for wrong sizes or non-finite q or residual.
    """
    nv = residual.shape[0]
    if q.shape[0] != int(model[H_NQ]) or nv != int(model[H_NV]):
        raise ValueError('wrench: wrong argument size')
    poison = 0.0
    for k in range(q.shape[0]):
        poison += q[k] * 0.0
    for k in range(nv):
        poison += residual[k] * 0.0
    if poison != 0.0:
        raise ValueError('wrench: non-finite input')
    link_jacobian_world_aligned(model, work, bodies, q, link_body, link_pose, row, frame, jac)
    size = 3 if has_point else 6
    a = np.zeros((nv, size))  # r = a x: row c holds joint c's column of J^T (times the basis)
    for c in range(nv):
        lin = np.zeros(3)
        ang = np.zeros(3)
        for i in range(3):  # world-aligned -> link axes: R^T (R row-major in frame[:9])
            for j in range(3):
                lin[i] += frame[3 * j + i] * jac[j, c]
                ang[i] += frame[3 * j + i] * jac[3 + j, c]
        if has_point:  # r_c = lin . f + ang . (p x f) = (lin + ang x p) . f
            a[c, 0] = lin[0] + ang[1] * point[2] - ang[2] * point[1]
            a[c, 1] = lin[1] + ang[2] * point[0] - ang[0] * point[2]
            a[c, 2] = lin[2] + ang[0] * point[1] - ang[1] * point[0]
        else:
            for i in range(3):
                a[c, i] = lin[i]
                a[c, 3 + i] = ang[i]
    normal = np.zeros((size, size + 1))  # [A^T A + damping^2 I | A^T r]
    for i in range(size):
        for j in range(size):
            total = 0.0
            for c in range(nv):
                total += a[c, i] * a[c, j]
            normal[i, j] = total
        normal[i, i] += damping2
        total = 0.0
        for c in range(nv):
            total += a[c, i] * residual[c]
        normal[i, size] = total
    scale = 0.0
    for i in range(size):
        scale = max(scale, abs(normal[i, i]))
    for col in range(size):  # Gaussian elimination, partial pivoting
        pivot = col
        for i in range(col + 1, size):
            if abs(normal[i, col]) > abs(normal[pivot, col]):
                pivot = i
        if not abs(normal[pivot, col]) > PIVOT_TOLERANCE * scale:
            return False
        for j in range(size + 1):
            normal[col, j], normal[pivot, j] = normal[pivot, j], normal[col, j]
        for i in range(col + 1, size):
            factor = normal[i, col] / normal[col, col]
            for j in range(col, size + 1):
                normal[i, j] -= factor * normal[col, j]
    x = np.zeros(size)
    for i in range(size - 1, -1, -1):
        total = normal[i, size]
        for j in range(i + 1, size):
            total -= normal[i, j] * x[j]
        x[i] = total / normal[i, i]
    if has_point:  # F = [f; p x f]
        out[0], out[1], out[2] = x[0], x[1], x[2]
        out[3] = point[1] * x[2] - point[2] * x[1]
        out[4] = point[2] * x[0] - point[0] * x[2]
        out[5] = point[0] * x[1] - point[1] * x[0]
    else:
        for i in range(6):
            out[i] = x[i]
    for i in range(6):
        if not math.isfinite(out[i]):
            return False
    return True


def _fast(model: RobotModel, q, residual, link: str, damping: float, point):
    """Return the kernel's wrench, or None: the checked path then names a problem or decides."""
    try:
        row = model.link_names.index(link)
    except ValueError:
        return None
    if point is None:
        point_array, has_point = _NO_POINT, False
    else:
        point_array, has_point = point, True
    for value, size in ((q, model.nq), (residual, model.nv), (point_array, 3)):
        if not (isinstance(value, np.ndarray) and value.dtype == np.float64
                and value.shape == (size,) and value.flags.c_contiguous):
            return None
    packed = model.packed
    out = np.empty(6)
    try:
        done = wrench_kernel(packed.model, packed.new_workspace(), np.zeros(12 * packed.n_bodies),
                             q, packed.link_body, packed.link_pose, row, residual,
                             float(damping) ** 2, point_array, has_point, np.zeros(12),
                             np.zeros((6, model.nv)), out)
    except ValueError:
        return None
    return out if done else None


_NO_POINT = np.zeros(3)


class WrenchEstimator:
    """
    ``estimate_wrench`` on one ``link`` (and ``point``) of ``model``, its scratch made once.

    For a caller that estimates at every sample (the node): ``estimate`` runs the kernel on
    arrays allocated here and returns the same wrench as ``estimate_wrench``, in ``out`` (the
    estimator's array, overwritten by the next call); whatever the kernel leaves (an argument
    it does not take, a singular system, an unknown link) goes the checked path as there.
    """

    def __init__(self, model: RobotModel, link: str, *, damping: float = DEFAULT_DAMPING,
                 point=None):
        if not (isinstance(damping, (int, float)) and math.isfinite(damping) and damping >= 0):
            raise InputError(f'damping: expected a finite number >= 0, got {damping!r}')
        self.model, self.link, self.damping = model, link, damping
        self.point = None if point is None else np.array(point, dtype=np.float64)
        names = model.link_names
        self._row = names.index(link) if link in names else -1
        packed = model.packed
        self._packed = packed
        self._work, self._bodies = packed.new_workspace(), np.zeros(12 * packed.n_bodies)
        self._frame, self._jac = np.zeros(12), np.zeros((6, model.nv))
        self._point = _NO_POINT if point is None else self.point
        self.out = np.zeros(6)

    def estimate(self, q, residual) -> np.ndarray:
        """Return the wrench on the link that explains ``residual`` at ``q`` (``out``)."""
        packed, out = self._packed, self.out
        try:
            done = self._row >= 0 and wrench_kernel(
                packed.model, self._work, self._bodies, q, packed.link_body, packed.link_pose,
                self._row, residual, float(self.damping) ** 2, self._point,
                self.point is not None, self._frame, self._jac, out)
        except (TypeError, ValueError):
            done = False
        if not done:
            out[:] = estimate_wrench(self.model, q, residual, self.link, damping=self.damping,
                                     point=self.point)
        return out


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
    fast = _fast(model, q, residual, link, damping, point)
    if fast is not None:
        return fast
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
