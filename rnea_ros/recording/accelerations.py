"""
Per joint, accelerations from the positions (two differentiations) or the velocities (one).

A joint_states message may carry the robot's velocities. Differentiating them once can give
better accelerations than differentiating the positions twice (coarse encoders, positions
sampled with timing noise), or much worse ones (a velocity low-pass filtered, hence delayed,
by the driver). ``choose`` decides per joint from the data, on up to ``STATISTICS_SAMPLES``
samples with a centred window spread over the log:

- sigma_q, sigma_v: the noise of the positions and of the velocities, from the residuals of
  the local polynomial fit (``differentiate.fit_at``): sigma^2 = sum r^2 / sum (1 - leverage).
- The positions route: its RMS acceleration error is predicted as noise + bias, noise =
  sigma_q x the fit's noise factor of the second derivative, bias from Richardson's rule: the
  bias of the degree-3 fit grows as the square of the window, so the RMS difference between
  the estimates over ``window`` and over 2 ``window`` is about 3 x the bias (less the noise).
- The velocities route: errors of the velocity field that are not white (a filter's delay, a
  scale) are invisible in its own residuals. They show against the positions: the RMS
  difference D between the two routes' accelerations holds both routes' errors (independent),
  so the velocities route's error is predicted as max(sigma_v x its noise factor,
  sqrt(D^2 - positions route's error^2)). The velocity's delay behind the positions
  (least squares of v - v_positions against the acceleration) is reported too.
- The route with the smaller predicted error wins (the positions on a tie). A joint whose
  velocity is missing or not finite in any sample uses the positions.
"""
from __future__ import annotations

from dataclasses import dataclass

from numba import njit, prange
import numpy as np

from rnea_ros.recording import differentiate

STATISTICS_SAMPLES = 20_000
POSITIONS = 'positions'
VELOCITIES = 'velocities'


@dataclass(frozen=True)
class Route:
    """
    What ``choose`` decided for one joint, and the numbers behind it.

    SI units; None where a number could not be estimated.

    ``position_noise`` [rad or m], ``velocity_noise`` [per s]; ``error_positions`` and
    ``error_velocities``: the predicted RMS acceleration error of each route [per s^2];
    ``velocity_delay`` [s]: how much the velocity field lags the positions' derivative.
    """

    joint: str
    route: str
    reason: str
    position_noise: float | None = None
    velocity_noise: float | None = None
    error_positions: float | None = None
    error_velocities: float | None = None
    velocity_delay: float | None = None

    def as_dict(self) -> dict:
        return {key: getattr(self, key) for key in self.__dataclass_fields__}


def _noise(values: np.ndarray, fit: differentiate.Fit) -> np.ndarray:
    """Per column, the white-noise standard deviation behind the fit residuals."""
    residual = values[fit.at] - fit.value
    return np.sqrt(np.sum(residual ** 2, axis=0) / max(np.sum(1.0 - fit.leverage), 1e-300))


def _rms(x: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(x * x, axis=0))


def choose(times_ns: np.ndarray, position: np.ndarray, velocity: np.ndarray,
           names, window: float, order: int, max_gap: float,
           skip: set[str] | frozenset = frozenset(), mode: str = 'auto') -> list[Route]:
    """
    One ``Route`` per column of ``position`` and ``velocity`` (N, J), ``names`` order.

    ``window``, ``order``, ``max_gap``: the differentiator's settings; ``skip``: joints that
    need no estimate (held by --lock), reported with route 'locked'; ``mode``: 'auto' (the
    rule of the module docstring), 'positions' or 'velocities' (where finite: the user's
    choice, the statistics still computed).
    """
    names = list(names)
    routes: list[Route | None] = [None] * len(names)
    for k, name in enumerate(names):
        if name in skip:
            routes[k] = Route(name, 'locked', 'held at a fixed position')
    runs = differentiate.segments(times_ns, max_gap)
    # Samples with a centred window of twice the span (for the bias estimate). Such a window
    # holds at least order + 2 samples: the full degree.
    _, _, _, edge = differentiate.windows(times_ns, runs, 2 * window, order)
    inner = np.flatnonzero(~edge)
    if inner.size > STATISTICS_SAMPLES:
        inner = inner[np.linspace(0, inner.size - 1, STATISTICS_SAMPLES).astype(np.int64)]
    columns = [k for k in range(len(names)) if routes[k] is None]
    if inner.size < 10 * (order + 1) or not columns:
        for k in columns:
            routes[k] = Route(names[k], POSITIONS, 'too few samples to compare the routes')
        return routes
    # Whole arrays where every column is asked for: no (N, J) copies.
    q = position if len(columns) == position.shape[1] else position[:, columns]
    fit = differentiate.fit_at(times_ns, q, inner, window, order, max_gap)
    wide = differentiate.fit_at(times_ns, q, inner, 2 * window, order, max_gap)
    sigma_q = _noise(q, fit)
    noise_q = sigma_q * _rms(fit.noise_second)
    difference = _rms(fit.second - wide.second)
    bias_q = np.sqrt(np.maximum(difference ** 2 - noise_q ** 2, 0.0)) / 3.0
    error_q = np.hypot(noise_q, bias_q)
    finite = np.isfinite(velocity).all(axis=0)
    measured = [c for c, k in enumerate(columns) if finite[k]]
    for c, k in enumerate(columns):
        if c not in measured:
            routes[k] = Route(names[k], POSITIONS, 'no finite velocity in every sample',
                              float(sigma_q[c]), error_positions=float(error_q[c]))
    if not measured:
        return routes
    v = velocity if len(measured) == velocity.shape[1] else \
        velocity[:, [columns[c] for c in measured]]
    fit_v = differentiate.fit_at(times_ns, v, inner, window, order, max_gap)
    sigma_v = _noise(v, fit_v)
    noise_v = sigma_v * _rms(fit_v.noise_first)
    a_q = fit.second[:, measured]
    between = _rms(fit_v.first - a_q)
    error_v = np.maximum(noise_v, np.sqrt(np.maximum(between ** 2 - error_q[measured] ** 2,
                                                     0.0)))
    lag = v[inner] - fit.first[:, measured]
    power = np.sum(a_q * a_q, axis=0)
    # Only where the joint's acceleration stands out of its own estimation error.
    moving = _rms(a_q) > 3.0 * error_q[measured]
    delay = np.where(moving, -np.sum(lag * a_q, axis=0) / np.where(moving, power, 1.0), np.nan)
    for m, c in enumerate(measured):
        k = columns[c]
        better = error_v[m] < error_q[c] if mode == 'auto' else mode == VELOCITIES
        reason = ('smaller predicted error' if better else 'the velocities are not better '
                  '(noise, filter delay or scale)') if mode == 'auto' else \
            f'--accelerations-from {mode}'
        routes[k] = Route(
            names[k], VELOCITIES if better else POSITIONS, reason,
            float(sigma_q[c]), float(sigma_v[m]), float(error_q[c]), float(error_v[m]),
            float(delay[m]) if np.isfinite(delay[m]) else None)
    return routes


@dataclass(frozen=True)
class Estimate:
    """
    Velocities and accelerations (N, J) for the dynamics, how they were obtained.

    ``diff``: the ``differentiate.Derivatives`` of the positions of the joints that need them
    (the positions route, or a velocity missing somewhere: ``first`` and ``second`` hold only
    those columns, in joint order; gains, edges and segments hold for every joint);
    ``routes``: one ``Route`` per joint; ``edge`` (N,): samples whose estimate comes from a
    one-sided fit (near a segment end), to be left out.
    """

    velocity: np.ndarray
    acceleration: np.ndarray
    diff: differentiate.Derivatives
    routes: list[Route]
    edge: np.ndarray

    def model_arrays(self, position: np.ndarray, effort: np.ndarray, qi, vi, nq: int, nv: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """
        Return q (N, nq), v, a (N, nv), effort (N, nv) of the model and the finite rows (N,).

        ``position``, ``effort`` (N, J): the series' columns; ``qi``, ``vi`` (J,): their
        model indices. The other columns are 0 (effort: NaN, not measured); a row is finite
        where its q, v and a are. One parallel pass instead of numpy's column scatters.
        """
        n = position.shape[0]
        q, v, a = np.empty((n, nq)), np.empty((n, nv)), np.empty((n, nv))
        full_effort, finite = np.empty((n, nv)), np.empty(n, dtype=np.bool_)
        _model_arrays(np.asarray(qi, dtype=np.int64), np.asarray(vi, dtype=np.int64),
                      position, self.velocity, self.acceleration, effort, q, v, a, full_effort,
                      finite)
        return q, v, a, full_effort, finite


@njit(cache=True, parallel=True)
def _model_arrays(qi, vi, position, velocity, acceleration, effort, q, v, a, full, finite):
    """Fill q, v, a, full (effort) and finite row by row; see ``Estimate.model_arrays``."""
    n = position.shape[0]
    chunks = 8
    size = (n + chunks - 1) // chunks
    for chunk in prange(chunks):
        for r in range(chunk * size, min(n, (chunk + 1) * size)):
            q[r, :] = 0.0
            v[r, :] = 0.0
            a[r, :] = 0.0
            full[r, :] = np.nan
            ok = True
            for k in range(qi.size):
                x = position[r, k]
                q[r, qi[k]] = x
                ok &= np.isfinite(x)
            for k in range(vi.size):
                x = velocity[r, k]
                y = acceleration[r, k]
                v[r, vi[k]] = x
                a[r, vi[k]] = y
                full[r, vi[k]] = effort[r, k]
                ok &= np.isfinite(x) & np.isfinite(y)
            finite[r] = ok


def estimate(series, kinds, desired: np.ndarray | None, window: float | None, order: int,
             max_gap: float | None, mode: str = 'auto') -> Estimate:
    """
    Estimate v and a of a ``replay.JointSeries`` (``kinds``: each column's URDF joint type).

    Velocities: the messages' where finite, else the positions' derivative. Accelerations:
    ``desired`` where finite, 0 for locked joints, else per joint the route ``choose`` picks.
    """
    from rnea_ros.recording import series as replay
    continuous = [k for k, kind in enumerate(kinds) if kind == 'continuous']
    position = replay.unwrap_columns(series.position, continuous) if continuous \
        else series.position
    times_ns = series.times_ns
    window, max_gap = differentiate.resolve(times_ns, window, order, max_gap)
    # The routes first (from <= STATISTICS_SAMPLES fits), then one pass over the whole series:
    # the positions' derivatives and the first derivative of the velocities that route.
    routes = choose(times_ns, position, series.velocity, series.names, window, order, max_gap,
                    skip=set(series.locked), mode=mode)
    by_velocity = [k for k, route in enumerate(routes) if route.route == VELOCITIES]
    measured = np.isfinite(series.velocity)
    # The positions' derivatives only of the joints that use them: the positions route, or a
    # velocity missing somewhere.
    missing = ~measured.all(axis=0)
    needed = [k for k, route in enumerate(routes) if route.route == POSITIONS or missing[k]]
    diff, rate = differentiate.derivatives_and_first(
        times_ns, _columns(position, needed), _columns(series.velocity, by_velocity),
        window, order, max_gap)
    velocity = series.velocity
    if missing.any():
        velocity = velocity.copy()
        for c, k in enumerate(needed):
            if missing[k]:
                velocity[:, k] = np.where(measured[:, k], velocity[:, k], diff.first[:, c])
    locked = [k for k, route in enumerate(routes) if route.route == 'locked']
    by_position = [k for k, route in enumerate(routes) if route.route == POSITIONS]
    # Whole arrays shared where one route serves every joint, else assembled (locked: 0).
    if len(by_velocity) == len(routes):
        acceleration = rate
    elif len(by_position) == len(routes) == len(needed):
        acceleration = diff.second
    else:
        acceleration = np.zeros_like(series.velocity)
        for c, k in enumerate(by_velocity):
            acceleration[:, k] = rate[:, c]
        for c, k in enumerate(needed):
            if routes[k].route == POSITIONS:
                acceleration[:, k] = diff.second[:, c]
    free = np.ones(len(routes), dtype=bool)
    free[locked] = False
    # A sample needs an estimate where a velocity is missing or a free joint's acceleration
    # does not come from the desired accelerations.
    estimated = ~measured.all(axis=1)
    if desired is None:
        estimated |= free.any()
    else:
        acceleration = np.where(np.isfinite(desired), desired, acceleration)
        estimated |= ~np.isfinite(desired[:, free]).all(axis=1)
    return Estimate(velocity, acceleration, diff, routes, diff.edge & estimated)


def _columns(values: np.ndarray, columns: list[int]) -> np.ndarray:
    """Return values[:, columns]: the array itself if that is every column, no copy."""
    return values if columns == list(range(values.shape[1])) else values[:, columns]


def describe(routes: list[Route]) -> str:
    """Say where the estimated accelerations come from, for the summary."""
    count = {kind: sum(r.route == kind for r in routes) for kind in (POSITIONS, VELOCITIES)}
    if not count[VELOCITIES]:
        return 'estimated from the positions'
    return (f'estimated from the positions for {count[POSITIONS]} joint(s), from the '
            f'velocities for {count[VELOCITIES]}')
