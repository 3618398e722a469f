"""
The optimisation of an excitation trajectory: coefficients -> conditioning, within limits.

Objective: the weighted base regressor W of the motion over one period (``samples`` instants,
the rows of joint j divided by its effort limit, the scale of what its torque sensor sees;
columns: the base parameters of ``rnea_identify``'s model, inertial parameters, friction and
armature, ``rnea_ros.identify.base``), each column scaled to unit norm. The optimiser
maximises log det(W^T W) / p (p base parameters; a D-optimal design): with unit columns it is
0 exactly when the columns are orthogonal (condition number 1) and falls to -inf as any
combination of parameters becomes invisible. It is chosen over the condition number that
Swevers et al. minimise because it is smooth (every singular value counts, not only the two
extremes, so finite-difference gradients and SLSQP behave) and, with unit columns, does not
depend on the parameters' units; the condition number of the same W is reported, and is what
the tests and the benchmark compare.

Constraints (``rnea_ros.excite.limits``): positions, velocities and accelerations are linear
in the coefficients (``fourier``), so they enter SLSQP exactly at every sample; the torques
(RNEA of the URDF model) and the planes are nonlinear, with finite-difference Jacobians. After
the optimiser, the trajectory is checked on a grid ``DENSE`` times finer and, where it leaves
a limit, scaled down about the rest configuration until it holds with a margin for what
happens between the samples (``between_samples``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import time

import numpy as np
import scipy.optimize

from rnea_ros.excite.fourier import FourierBasis
from rnea_ros.excite.limits import Limits, Plane
from rnea_ros.identify import base, fit, inertial_layout

DENSE = 20
STEP = 1e-6  # finite-difference step of the coefficients [rad/s]
GRADIENT_BATCH = 1000  # samples per regressor call of the gradient (~5 MB for 7 DoF: in cache)


def samples_per_period(harmonics: int) -> int:
    """Instants per period the optimiser sees: 40 per period of the highest harmonic."""
    return max(100, 40 * harmonics)


@dataclass
class Problem:
    """The robot, its limits and planes, the basis, and the base parameters to excite."""

    model: object
    limits: Limits
    basis: FourierBasis
    planes: list[Plane]
    layout: inertial_layout.Layout
    base: base.BaseParameters
    rows: np.ndarray  # joints whose torques are weighted rows (a finite effort limit)
    times: np.ndarray
    _matrices: tuple | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        """Return the count of free coefficients: (2 harmonics - 2) per moving joint."""
        return self.basis.size * self.limits.moving.size

    def states(self, x: np.ndarray, times: np.ndarray | None = None):
        """(q, v, a) of every joint, (T, nv) each; the held joints at rest."""
        if times is None or times is self.times:  # the optimiser's: matrices computed once
            if self._matrices is None:
                self._matrices = self.basis.matrices(self.times)
            gq, gv, ga = self._matrices
        else:
            gq, gv, ga = self.basis.matrices(times)
        lim = self.limits
        moving = lim.moving
        coefficients = np.asarray(x, dtype=np.float64).reshape(moving.size, self.basis.size).T
        q = np.tile(lim.rest, (gq.shape[0], 1))
        v, a = np.zeros_like(q), np.zeros_like(q)
        q[:, moving] += gq @ coefficients
        v[:, moving] = gv @ coefficients
        a[:, moving] = ga @ coefficients
        return q, v, a

    def regressor(self, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                  threads: int | None = 1) -> np.ndarray:
        """Return the weighted base regressor, (T, rows, p): see the module docstring."""
        columns, n_inertial = self.base.columns, self.layout.n_inertial
        inertial_columns = columns[columns < n_inertial]
        n = inertial_columns.size
        inertial = self.model.regressor_batch(q, v, a, threads=threads)
        # np.take along one axis at a time: far cheaper than fancy indexing of two axes.
        selected = np.take(inertial, inertial_columns, axis=2)
        if self.rows.size < q.shape[1]:
            selected = np.take(selected, self.rows, axis=1)
        joint = np.zeros((q.shape[0], self.rows.size, columns.size - n))
        features = self.layout.joint_features(v, a)  # (T, nv, k): each joint's own row
        terms = len(self.layout.joint_terms)
        for c, column in enumerate(columns[n:]):
            index, term = divmod(int(column) - n_inertial, terms)
            joint[:, self.rows == index, c] = features[:, index, term, None]
        out = np.concatenate([selected, joint], axis=2)
        out /= self.limits.effort[self.rows][None, :, None]
        return out


def problem(model, limits: Limits, basis: FourierBasis, planes: list[Plane]) -> Problem:
    """Set up the design problem: the base parameters of motions within the limits."""
    lay = inertial_layout.layout(model)
    rng = np.random.default_rng(base.SEED)
    count = base.SAMPLES
    q = np.tile(limits.rest, (count, 1))
    v, a = np.zeros_like(q), np.zeros_like(q)
    moving = limits.moving
    q[:, moving] = rng.uniform(limits.lower[moving], limits.upper[moving], (count, moving.size))
    v[:, moving] = rng.standard_normal((count, moving.size))
    a[:, moving] = rng.standard_normal((count, moving.size))
    found = base.base_parameters(model, lay, states=(q, v, a))
    rows = np.flatnonzero(np.isfinite(limits.effort))
    samples = samples_per_period(basis.harmonics)
    times = np.arange(samples) * basis.period / samples
    return Problem(model, limits, basis, list(planes), lay, found, rows, times)


def log_det(w: np.ndarray) -> float:
    """Return log det(Wn^T Wn) / p of W with unit columns (0: orthogonal; -inf: singular)."""
    singular = _unit_singular_values(w)
    with np.errstate(divide='ignore'):
        return float(2.0 * np.mean(np.log(singular)))


def log_dets(w: np.ndarray) -> np.ndarray:
    """Return ``log_det`` of each of K regressors, w (K, N, p), from their Gram matrices."""
    gram = np.matmul(w.transpose(0, 2, 1), w)
    diagonal = np.einsum('kii->ki', gram)
    with np.errstate(divide='ignore', invalid='ignore'):
        sign, value = np.linalg.slogdet(gram)
        out = (value - np.log(diagonal).sum(axis=1)) / w.shape[2]
    return np.where((sign > 0) & np.all(diagonal > 0, axis=1), out, -np.inf)


def condition_number(w: np.ndarray) -> float:
    """Return the condition number of W with unit columns (inf when singular)."""
    singular = _unit_singular_values(w)
    return float(singular[0] / singular[-1]) if singular[-1] > 0 else float('inf')


def _unit_singular_values(w: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(w, axis=0)
    if np.any(norms == 0.0):
        return np.zeros(w.shape[1])
    unit = w / norms
    # From the p x p Gram matrix: much cheaper than the SVD of the tall W, and accurate enough
    # for condition numbers far beyond those of a usable design.
    eigenvalues = np.linalg.eigvalsh(unit.T @ unit)[::-1]
    return np.sqrt(np.maximum(eigenvalues, 0.0))


def conditioning(prob: Problem, x: np.ndarray) -> tuple[float, float]:
    """(condition number, log det / p) of the design ``x`` on the dense grid of one period."""
    w = prob.regressor(*prob.states(x, dense_times(prob))).reshape(-1, prob.base.size)
    return condition_number(w), log_det(w)


def dense_times(prob: Problem) -> np.ndarray:
    """Instants of one period, ``DENSE`` times finer than the optimiser's."""
    count = DENSE * prob.times.size
    return np.arange(count) * prob.basis.period / count


# ---------------------------------------------------------------- constraints
def _linear(prob: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Return (A, c): positions, velocities, accelerations within limits as A x + c >= 0."""
    lim, size = prob.limits, prob.basis.size
    gq, gv, ga = prob.basis.matrices(prob.times)
    blocks, offsets = [], []
    for m, j in enumerate(lim.moving):
        for g, low, high in ((gq, lim.lower[j] - lim.rest[j], lim.upper[j] - lim.rest[j]),
                             (gv, -lim.velocity[j], lim.velocity[j]),
                             (ga, -lim.acceleration[j], lim.acceleration[j])):
            for sign, bound in ((-1.0, high), (1.0, -low)):
                block = np.zeros((g.shape[0], prob.size))
                block[:, m * size:(m + 1) * size] = sign * g
                blocks.append(block)
                offsets.append(np.full(g.shape[0], bound))
    return np.vstack(blocks), np.concatenate(offsets)


def _torque_margins(prob: Problem, x: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Torque margins (>= 0 where the effort limits hold), per sample and weighted joint."""
    tau = prob.model.rnea_batch(*prob.states(x, times), threads=1)[:, prob.rows] \
        / prob.limits.effort[prob.rows]
    return np.concatenate([(1.0 - tau).ravel(), (1.0 + tau).ravel()])


def _plane_margins(prob: Problem, x: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Height of each plane's link above it [m], per plane and sample."""
    q, _, _ = prob.states(x, times)
    return np.concatenate([[prob.model.link_placement(qk, plane.link)[1][2] - plane.height
                            for qk in q] for plane in prob.planes])


def _jacobian(margins, prob: Problem, x: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Forward differences of ``margins(prob, x, times)`` in every coefficient."""
    value = margins(prob, x, times)
    out = np.empty((value.size, x.size))
    for k in range(x.size):
        step = np.zeros_like(x)
        step[k] = STEP
        out[:, k] = (margins(prob, x + step, times) - value) / STEP
    return out


def peak_use(prob: Problem, x: np.ndarray, times: np.ndarray | None = None) -> dict:
    """Per joint, the largest fraction of each limit the motion uses (1: at the limit)."""
    times = dense_times(prob) if times is None else times
    q, v, a = prob.states(x, times)
    lim = prob.limits
    rest = lim.rest
    with np.errstate(divide='ignore', invalid='ignore'):
        upper = np.where(lim.upper > rest, (q.max(axis=0) - rest) / (lim.upper - rest), 0.0)
        lower = np.where(lim.lower < rest, (rest - q.min(axis=0)) / (rest - lim.lower), 0.0)
        tau = np.abs(prob.model.rnea_batch(q, v, a, threads=1)) / lim.effort
    out = {'position': np.maximum(upper, lower),
           'velocity': np.abs(v).max(axis=0) / lim.velocity,
           'acceleration': np.abs(a).max(axis=0) / lim.acceleration,
           'effort': np.where(np.isfinite(lim.effort), tau.max(axis=0), 0.0)}
    if prob.planes:
        heights = [np.array([prob.model.link_placement(qk, p.link)[1][2] for qk in q])
                   for p in prob.planes]
        out['planes'] = [float(z.min() - p.height) for z, p in zip(heights, prob.planes)]
        # Between two samples a height can dip below both by |z''| dt^2 / 8 at most.
        out['planes_between'] = [float(np.abs(np.diff(z, 2)).max(initial=0.0))
                                 for z in heights]
    return out


def between_samples(prob: Problem, times: np.ndarray) -> float:
    """
    Return the relative margin kept below each limit for what happens between ``times``.

    A harmonic of angular frequency w sampled every dt peaks at most (w dt)^2 / 8 of its
    amplitude above its samples; (w dt)^2 of the highest harmonic leaves room for their sum.
    """
    step = float(np.max(np.diff(times))) if times.size > 1 else prob.basis.period
    return float((prob.basis.omegas[-1] * step) ** 2)


def fit_to_limits(prob: Problem, x: np.ndarray, times: np.ndarray, grow: bool = True
                  ) -> np.ndarray:
    """
    Scale x about the rest configuration as much as the limits allow at ``times``.

    ``grow``: also scale up a motion that stays inside them (else only down, when needed).
    """
    use = peak_use(prob, x, times)
    linear = max(float(np.max(use[kind])) for kind in ('position', 'velocity', 'acceleration'))
    scale = (1.0 - between_samples(prob, times)) / linear if linear > 0 else 1.0
    if not grow:
        scale = min(scale, 1.0)
    if _holds(prob, scale * x, times):
        return scale * x
    low, high = 0.0, scale  # at 0 the robot rests where the limits hold (limits.py checks)
    for _ in range(30):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if _holds(prob, middle * x, times) else (low, middle)
    return low * x


def _holds(prob: Problem, x: np.ndarray, times: np.ndarray) -> bool:
    use = peak_use(prob, x, times)
    limit = 1.0 - between_samples(prob, times) + 1e-12
    within = all(float(np.max(use[kind])) <= limit
                 for kind in ('position', 'velocity', 'acceleration', 'effort'))
    return within and all(margin >= dip for margin, dip in
                          zip(use.get('planes', []), use.get('planes_between', [])))


# ---------------------------------------------------------------- the optimiser
@dataclass(frozen=True)
class Design:
    """An optimised excitation: coefficients, conditioning, the random baseline, the run."""

    x: np.ndarray
    condition_number: float
    log_det: float
    random_x: np.ndarray
    random_condition_number: float
    iterations: int
    status: str
    seconds: float


def random_coefficients(prob: Problem, seed: int) -> np.ndarray:
    """Random coefficients scaled to the limits: ordinary random sines of the same limits."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(prob.size) / np.repeat(
        np.arange(2, prob.basis.harmonics + 1, dtype=np.float64), 2)[None].repeat(
            prob.limits.moving.size, axis=0).ravel()
    return fit_to_limits(prob, x, dense_times(prob))


def optimise(prob: Problem, seed: int = 0, max_iterations: int = 100,
             progress=None) -> Design:
    """
    Maximise log det of the weighted base regressor within the limits (SLSQP).

    ``progress``: called with (iteration, log det / p) after each SLSQP iteration.
    """
    with fit.one_blas_thread():  # many small products: BLAS threads only stall them
        return _optimise(prob, seed, max_iterations, progress)


def _optimise(prob: Problem, seed: int, max_iterations: int, progress) -> Design:
    begin = time.perf_counter()
    random_x = random_coefficients(prob, seed)
    start = 0.7 * fit_to_limits(prob, random_x, prob.times)
    a_matrix, offset = _linear(prob)
    times = prob.times
    plane_times = times[::4]

    def objective(x):
        w = prob.regressor(*prob.states(x))
        return -log_dets(w.reshape(1, -1, prob.base.size))[0]

    def gradient(x):
        return _objective_gradient(prob, x)

    def nonlinear(x):
        planes = _plane_margins(prob, x, plane_times) if prob.planes else np.empty(0)
        return np.concatenate([_torque_margins(prob, x, times), planes])

    def nonlinear_jacobian(x):
        torque = _jacobian(_torque_margins, prob, x, times)
        if not prob.planes:
            return torque
        return np.vstack([torque, _jacobian(_plane_margins, prob, x, plane_times)])

    constraints = [{'type': 'ineq', 'fun': lambda x: a_matrix @ x + offset,
                    'jac': lambda x: a_matrix},
                   {'type': 'ineq', 'fun': nonlinear, 'jac': nonlinear_jacobian}]
    iterations = []

    def iterated(intermediate_result):  # the name SciPy passes an OptimizeResult to
        iterations.append(None)
        if progress is not None:
            progress(len(iterations), -float(intermediate_result.fun))

    result = scipy.optimize.minimize(objective, start, jac=gradient, method='SLSQP',
                                     constraints=constraints, callback=iterated,
                                     options={'maxiter': max_iterations, 'ftol': 1e-6})
    x = result.x if np.all(np.isfinite(result.x)) else start
    if objective(x) > objective(start):  # the optimiser may stop at a worse point
        x = start
    x = fit_to_limits(prob, x, dense_times(prob), grow=False)
    cond, det = conditioning(prob, x)
    random_cond, _ = conditioning(prob, random_x)
    return Design(x, cond, det, random_x, random_cond, int(result.nit), str(result.message),
                  time.perf_counter() - begin)


def _objective_gradient(prob: Problem, x: np.ndarray) -> np.ndarray:
    """Forward differences of -log det, the perturbed designs' regressors in large batches."""
    designs = np.vstack([x, x + STEP * np.eye(x.size)])
    per_batch = max(1, GRADIENT_BATCH // prob.times.size)
    values = []
    for begin in range(0, designs.shape[0], per_batch):
        states = [prob.states(d) for d in designs[begin:begin + per_batch]]
        q, v, a = (np.concatenate([s[k] for s in states]) for k in range(3))
        w = prob.regressor(q, v, a, threads=1)
        values.append(-log_dets(w.reshape(len(states), -1, prob.base.size)))
    values = np.concatenate(values)
    return (values[1:] - values[0]) / STEP
