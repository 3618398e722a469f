"""
Physically consistent standard parameters near the URDF: one convex SDP per robot.

The least-squares base parameters say nothing about the combinations the torques cannot see,
and may even belong to no rigid body. This step finds standard parameters theta (every body's
10 inertial parameters and the joint terms) that

- reproduce the data as the base fit does: (E theta - beta)^T A (E theta - beta), with beta
  the least-squares base parameters and A = H / inflation (``fit.weighted_fit``,
  ``covariance.Correlation.inflation``): the increase of the weighted residual sum of squares
  over the least-squares optimum, in units of the base parameters' honest variances (the
  residuals are correlated); the data's own metric, so well-excited combinations are kept and
  poorly excited ones are free;
- stay near the URDF where the data say nothing: + sum_k ((theta_k - theta_urdf_k) / s_k)^2,
  the prior scales s of ``parameters.prior``. The sum is twice the negative log posterior of a
  Gaussian prior around the URDF: a maximum a posteriori estimate that the data overrule
  wherever they are informative;
- are physically consistent (Wensing, Kim and Slotine 2017): each body's 4x4 pseudo-inertia
  positive semi-definite with a margin ``MARGIN`` (relative to its prior scales), so its mass
  is positive and a mass density exists; armature, Coulomb and viscous friction >= 0.

This is a small semidefinite program (about 100 variables and one 4x4 LMI per body for an arm)
solved by cvxpy with Clarabel, or SCS when Clarabel fails.
"""
from __future__ import annotations

from dataclasses import dataclass
import warnings

import numpy as np

from rnea_ros.errors import RneaError
from rnea_ros.identify.inertial_layout import MASS_PRIOR

MARGIN = 1e-7
SOLVERS = ('CLARABEL', 'SCS')


class IdentificationError(RneaError):
    """The identification cannot produce a result (e.g. the convex solver failed)."""


@dataclass(frozen=True)
class PhysicalSolution:
    """theta, the solver that found it and the smallest pseudo-inertia eigenvalue per body."""

    theta: np.ndarray
    solver: str
    status: str
    min_eigenvalues: np.ndarray


def pseudo_inertia_expression(phi):
    """Return the 4x4 pseudo-inertia of one body's 10 parameters as a cvxpy expression."""
    import cvxpy as cp
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = (phi[k] for k in range(10))
    half = 0.5 * (ixx + iyy + izz)
    return cp.bmat([[half - ixx, -ixy, -ixz, hx],
                    [-ixy, half - iyy, -iyz, hy],
                    [-ixz, -iyz, half - izz, hz],
                    [hx, hy, hz, m]])


def solve(lay, base, H: np.ndarray, beta: np.ndarray, theta_prior: np.ndarray,
          scale: np.ndarray, fixed_inertial: bool = False) -> PhysicalSolution:
    """
    Solve the SDP of the module docstring; ``fixed_inertial`` keeps the URDF's bodies.

    ``H``: the metric A of the data term.
    """
    import cvxpy as cp
    values, vectors = np.linalg.eigh(H)
    keep = values > 1e-12 * max(values.max(), 0.0)
    root = np.sqrt(values[keep])[:, None] * vectors[:, keep].T  # root^T root = H (range)
    target = root @ beta
    theta = cp.Variable(lay.size)
    normalised = cp.multiply(1.0 / scale, theta - theta_prior)
    objective = cp.sum_squares(root @ base.E @ theta - target) + cp.sum_squares(normalised)
    constraints = []
    for term in lay.joint_terms:
        if term in ('coulomb', 'viscous', 'armature'):
            index = [lay.joint_index(j, term) for j in range(len(lay.joint_names))]
            constraints.append(theta[index] >= 0)
    if fixed_inertial:
        constraints.append(theta[:lay.n_inertial] == theta_prior[:lay.n_inertial])
    else:
        for i in range(len(lay.body_links)):
            body = theta[10 * i:10 * i + 10]
            m_s = scale[10 * i] / MASS_PRIOR
            l_s2 = scale[10 * i + 4] / m_s
            margin = MARGIN * m_s * np.diag([l_s2, l_s2, l_s2, 1.0])
            constraints.append(pseudo_inertia_expression(body) - margin >> 0)
    problem = cp.Problem(cp.Minimize(objective), constraints)
    value, solver = solve_sdp(problem, theta, 'the physical-consistency SDP',
                              '; try --inertial base')
    from rnea_ros.identify.inertial_layout import pseudo_inertia
    eigen = np.array([np.linalg.eigvalsh(pseudo_inertia(value[10 * i:10 * i + 10])).min()
                      for i in range(len(lay.body_links))])
    return PhysicalSolution(value, solver, problem.status, eigen)


def solve_sdp(problem, theta, what: str, hint: str = '') -> tuple[np.ndarray, str]:
    """
    Solve the cvxpy ``problem`` with the first of ``SOLVERS`` that gives an optimal ``theta``.

    Return its value and the solver's name; raise ``IdentificationError`` naming ``what`` (and
    ``hint``) when none does. An inaccurate solution is its status, not a printed warning.
    """
    import cvxpy as cp
    status = 'not run'
    for solver in SOLVERS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore', UserWarning)
                problem.solve(solver=solver)
        except cp.SolverError:
            status = 'solver error'
            continue
        status = problem.status
        if status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) and theta.value is not None:
            return np.asarray(theta.value, dtype=np.float64), solver
    raise IdentificationError(f'{what} failed with {SOLVERS} (last status: {status}){hint}')
