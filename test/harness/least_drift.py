"""
The least drift any torques within the effort limits reach when an arm's inputs stall.

The bound a stall's brake is judged against (test/control/test_prediction_in_process.py,
bench/bench_stall.py): from the plant's true state where the stall began, with the plant's true
dynamics (the gap's URDF, its armature), the arm coasts ``coast`` s (the node cannot tell a stall
before ``input_timeout``), then any torque within each joint's effort limit may act, known in
advance, as no real controller does. The least over those torques of the largest drift of any
joint from where the stall began, until the arm is at rest, is a linear programme once the
dynamics are taken along a path: q'' = M(q)^-1 (tau - b(q, v)), M with the armature, b = C(q,
v) v + g(q), taken along the previous solution's states (the stall's state at first), solved
again until the bound moves by less than ``tolerance`` (sequential linearisation; it converges in
two or three solves). Solved with cvxpy and Clarabel (a dependency of the package already: the
identification's constrained fits), to its default accuracy: the bound holds to about 1e-4 rad.

Why our own: no library gives a time-optimal stop of a coupled arm within box torque limits
for this measure (the largest joint drift); the programme is ten lines of cvxpy.
"""
from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.sparse as sparse

from rnea_ros import RobotModel


def least_drift(model: RobotModel, armature: np.ndarray, upper: np.ndarray, q0: np.ndarray,
                v0: np.ndarray, coast: float = 0.003, step: float = 1e-3,
                horizon: float = 0.3, tolerance: float = 1e-4) -> float:
    """
    Return the least largest drift [rad] from (q0, v0) (module docstring), fixed base.

    ``model``: the plant's true dynamics; ``armature``, ``upper``: per joint (v order);
    ``coast``: s before any torque but the bias acts (the arm keeps its velocity); ``step``:
    the programme's time step; ``horizon``: s by which the arm is at rest.
    """
    steps, idle = int(round(horizon / step)), int(round(coast / step))
    q_path, v_path = np.tile(q0, (steps, 1)), np.tile(v0, (steps, 1))
    bound = np.inf
    for _ in range(8):
        value, q_path, v_path = _solve(model, armature, upper, q0, v0, q_path, v_path,
                                       step, idle)
        if abs(value - bound) < tolerance:
            return value
        bound = value
    return bound


def _solve(model, armature, upper, q0, v0, q_path, v_path, step, idle):
    """Return (bound, positions, velocities) of the programme linearised along a path."""
    n, steps = model.nv, q_path.shape[0]
    inverses, biases = [], np.empty((steps, n))
    zeros = np.zeros(n)
    for k in range(steps):
        inverses.append(np.linalg.inv(model.mass_matrix(q_path[k]) + np.diag(armature)))
        model.rnea(q_path[k], v_path[k], zeros, out=biases[k])
    tau = cp.Variable(steps * n)
    drift, largest = cp.Variable((steps + 1, n)), cp.Variable()
    velocity = cp.Variable((steps + 1, n))
    acting = np.repeat(np.arange(steps) >= idle, n).astype(float)
    # the acceleration of step k: M_k^-1 (tau_k - b_k) once acting, zero while coasting
    blocks = sparse.block_diag(inverses, format='csr')
    acceleration = cp.reshape(blocks @ cp.multiply(acting, tau - biases.ravel()), (steps, n),
                              order='C')
    constraints = [drift[0] == 0.0, velocity[0] == v0, velocity[steps] == 0.0,
                   velocity[1:] == velocity[:-1] + step * acceleration,
                   drift[1:] == drift[:-1] + step * velocity[:-1],
                   cp.abs(cp.reshape(tau, (steps, n), order='C')) <= upper[None, :],
                   cp.abs(drift) <= largest]
    cp.Problem(cp.Minimize(largest), constraints).solve(solver='CLARABEL')
    if largest.value is None:
        raise RuntimeError('least_drift: the programme has no solution (horizon too short?)')
    return float(largest.value), q0 + drift.value[:-1], velocity.value[:-1]
