"""
Per joint, accelerations from the positions (two differentiations) or the velocities (one).

A joint_states message may carry the robot's velocities. Differentiating them once can give
better accelerations than differentiating the positions twice (coarse encoders, positions
sampled with timing noise), or much worse ones (a velocity low-pass filtered, hence delayed,
by the driver). ``choose`` decides per joint from the data, on up to ``STATISTICS_SAMPLES``
samples with a centred window spread over the log:

- sigma_q, sigma_v: the noise of the positions and of the velocities, from the residuals of
  the local polynomial fit (``differentiate.fit_at``): sigma^2 = sum r^2 / sum (1 - leverage).
- The positions route: its RMS acceleration error is predicted as sqrt(noise^2 + bias^2),
  noise = sigma_q x the fit's noise factor of the second derivative, bias from Richardson's
  rule: the bias of the degree-3 fit grows as the square of the window, so the RMS difference
  between the estimates over ``window`` and over 2 ``window`` is about 3 x the bias (less the
  noise).
- The velocities route: errors of the velocity field that are not white (a filter's delay, a
  scale) are invisible in its own residuals. They show against the positions: the RMS
  difference D between the two routes' accelerations holds both routes' errors (independent),
  so the velocities route's error is predicted as max(sigma_v x its noise factor,
  sqrt(D^2 - positions route's error^2)). The velocity's delay behind the positions
  (least squares of v - v_positions against the acceleration) is reported too.
- The route with the smaller predicted error wins (the positions on a tie). A joint whose
  velocity is missing or not finite in any sample uses the positions.

Window, per joint and route (``window`` None, ``--window auto``): the predictions above are
made at every candidate of ``differentiate.candidate_windows`` (a grid 2^(1/3) apart holding
``default_window``, at most a tenth of the longest gap-free segment: a short log keeps most
of its samples), with sigma_q and sigma_v
from the fits over the shortest candidate and the bias from the fits over each candidate and
twice it (the difference's noise variance taken as the difference of the two noise variances:
the wider fit is nearly efficient). Each route takes the shortest candidate whose predicted
error is within ``NEAR_BEST`` of its smallest (fewer samples lost at the ends and gaps; a joint
at rest gets the shortest); the velocities route is judged against the positions route's
estimate at the positions' window. A given window is the only candidate. ``estimate`` then
differentiates once per distinct window; the samples left out at the ends are those of the
longest.

Time base (``choose_clock``): the stamps, or the regular clock fitted to them
(``clock.regularise``) where the positions' residual variance around the local fits over it is
below ``clock.GAIN`` times that over the stamps (stamp noise, not sampling-time noise).
"""
from __future__ import annotations

from dataclasses import dataclass

from numba import njit, prange
import numpy as np

from rnea_ros.recording import clock, differentiate

STATISTICS_SAMPLES = 20_000
# With the automatic window, each candidate window is fitted at this many samples.
AUTO_STATISTICS_SAMPLES = 5_000
NEAR_BEST = 1.05
POSITIONS = 'positions'
VELOCITIES = 'velocities'
STAMPS = 'stamps'
REGULAR = 'regular clock'


@dataclass(frozen=True)
class Route:
    """
    What ``choose`` decided for one joint, and the numbers behind it.

    SI units; None where a number could not be estimated.

    ``position_noise`` [rad or m], ``velocity_noise`` [per s]; ``error_positions`` and
    ``error_velocities``: the predicted RMS acceleration error of each route, each at its own
    best window [per s^2]; ``velocity_delay`` [s]: how much the velocity field lags the
    positions' derivative; ``window`` [s]: the differentiator's window for the route taken
    (None: locked); ``window_rule``: 'auto' (chosen from the data) or 'fixed' (--window).
    """

    joint: str
    route: str
    reason: str
    position_noise: float | None = None
    velocity_noise: float | None = None
    error_positions: float | None = None
    error_velocities: float | None = None
    velocity_delay: float | None = None
    window: float | None = None
    window_rule: str | None = None

    def as_dict(self) -> dict:
        return {key: getattr(self, key) for key in self.__dataclass_fields__}


def _noise(values: np.ndarray, fit: differentiate.Fit) -> np.ndarray:
    """Per column, the white-noise standard deviation behind the fit residuals."""
    residual = values[fit.at] - fit.value
    return np.sqrt(np.sum(residual ** 2, axis=0) / max(np.sum(1.0 - fit.leverage), 1e-300))


def _rms(x: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(x * x, axis=0))


def _statistics_samples(times_ns, runs, widest: float, order: int, most: int) -> np.ndarray:
    """Up to ``most`` samples, spread over the log, with a centred window of ``widest`` s."""
    _, _, _, edge = differentiate.windows(times_ns, runs, widest, order)
    inner = np.flatnonzero(~edge)
    if inner.size > most:
        inner = inner[np.linspace(0, inner.size - 1, most).astype(np.int64)]
    return inner


def _longest_window(times_ns: np.ndarray, runs: np.ndarray) -> float:
    """Return the longest candidate window: a tenth of the longest gap-free segment."""
    if not runs.shape[0]:
        return differentiate.LONGEST_WINDOW
    spans = times_ns[runs[:, 1] - 1] - times_ns[runs[:, 0]]
    return float(spans.max()) * 1e-9 / 10.0


def _shortest_near_best(errors: np.ndarray) -> np.ndarray:
    """
    Per column of ``errors`` (K candidates, J), the first candidate within ``NEAR_BEST``.

    The shortest window whose predicted error is within ``NEAR_BEST`` x the smallest (+ 1e-9
    per s^2): a shorter window leaves fewer samples out at the ends and gaps, and a joint at
    rest (no noise, no curvature) gets the shortest.
    """
    limit = NEAR_BEST * errors.min(axis=0) + 1e-9
    return np.argmax(errors <= limit, axis=0)


def choose(times_ns: np.ndarray, position: np.ndarray, velocity: np.ndarray,
           names, window: float | None, order: int, max_gap: float,
           skip: set[str] | frozenset = frozenset(), mode: str = 'auto') -> list[Route]:
    """
    One ``Route`` per column of ``position`` and ``velocity`` (N, J), ``names`` order.

    ``window``: the differentiator's window [s], or None: per joint and route, the candidate
    (``differentiate.candidate_windows``) of the smallest predicted error (module docstring);
    ``order``, ``max_gap``: the differentiator's settings; ``skip``: joints that need no
    estimate (held by --lock), reported with route 'locked'; ``mode``: 'auto' (the rule of the
    module docstring), 'positions' or 'velocities' (where finite: the user's choice, the
    statistics still computed).
    """
    names = list(names)
    routes: list[Route | None] = [None] * len(names)
    for k, name in enumerate(names):
        if name in skip:
            routes[k] = Route(name, 'locked', 'held at a fixed position')
    runs = differentiate.segments(times_ns, max_gap)
    auto = window is None
    if auto:
        candidates = differentiate.candidate_windows(times_ns, _longest_window(times_ns, runs))
    else:
        candidates = np.array([float(window)])
    rule = differentiate.AUTO if auto else 'fixed'
    # Samples with a centred window of twice the longest candidate (for the bias estimate).
    # Such a window holds at least order + 2 samples: the full degree.
    inner = _statistics_samples(times_ns, runs, 2 * candidates[-1], order,
                                AUTO_STATISTICS_SAMPLES if auto else STATISTICS_SAMPLES)
    columns = [k for k in range(len(names)) if routes[k] is None]
    if inner.size < 10 * (order + 1) or not columns:
        fallback = float(candidates[0]) if auto else float(window)
        for k in columns:
            routes[k] = Route(names[k], POSITIONS, 'too few samples to compare the routes',
                              window=fallback, window_rule=rule)
        return routes
    # Whole arrays where every column is asked for: no (N, J) copies.
    q = position if len(columns) == position.shape[1] else position[:, columns]
    # The fits at every candidate and at twice it (Richardson: the pairs' difference).
    widths = np.unique(np.round(np.concatenate([candidates, 2 * candidates]), 12))
    pair = np.searchsorted(widths, np.round(2 * candidates, 12))
    at = np.searchsorted(widths, np.round(candidates, 12))
    fits = [differentiate.fit_at(times_ns, q, inner, w, order, max_gap) for w in widths]
    sigma_q = _noise(q, fits[at[0]])
    # (K, J): per candidate and joint, the predicted RMS error of the positions route.
    noise_q = sigma_q * np.array([_rms(fits[i].noise_second) for i in at])[:, None]
    noise_wide = sigma_q * np.array([_rms(fits[i].noise_second) for i in pair])[:, None]
    difference = np.array([_rms(fits[i].second - fits[j].second) for i, j in zip(at, pair)])
    # The wider fit is nearly efficient: the difference's noise variance is the difference
    # of the two variances.
    bias_q = np.sqrt(np.maximum(difference ** 2 - (noise_q ** 2 - noise_wide ** 2), 0.0)) / 3.0
    errors_q = np.hypot(noise_q, bias_q)
    best_q = _shortest_near_best(errors_q)
    picked = np.arange(len(columns))
    error_q = errors_q[best_q, picked]
    window_q = candidates[best_q]
    second_q = np.stack([fits[at[best_q[c]]].second[:, c] for c in picked], axis=1)
    first_q = np.stack([fits[at[best_q[c]]].first[:, c] for c in picked], axis=1)
    finite = np.isfinite(velocity).all(axis=0)
    measured = [c for c, k in enumerate(columns) if finite[k]]
    for c, k in enumerate(columns):
        if c not in measured:
            routes[k] = Route(names[k], POSITIONS, 'no finite velocity in every sample',
                              float(sigma_q[c]), error_positions=float(error_q[c]),
                              window=float(window_q[c]), window_rule=rule)
    if not measured:
        return routes
    v = velocity if len(measured) == velocity.shape[1] else \
        velocity[:, [columns[c] for c in measured]]
    fits_v = [differentiate.fit_at(times_ns, v, inner, w, order, max_gap) for w in candidates]
    sigma_v = _noise(v, fits_v[0])
    a_q = second_q[:, measured]
    # (K, M): the velocities route's error at each candidate: its noise, or what of the
    # difference to the positions route's best estimate that route's error does not explain.
    noise_v = sigma_v * np.array([_rms(fit.noise_first) for fit in fits_v])[:, None]
    between = np.array([_rms(fit.first - a_q) for fit in fits_v])
    errors_v = np.maximum(noise_v, np.sqrt(np.maximum(between ** 2 - error_q[measured] ** 2,
                                                      0.0)))
    best_v = _shortest_near_best(errors_v)
    error_v = errors_v[best_v, np.arange(len(measured))]
    lag = v[inner] - first_q[:, measured]
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
            float(delay[m]) if np.isfinite(delay[m]) else None,
            float(candidates[best_v[m]] if better else window_q[c]), rule)
    return routes


def choose_clock(times_ns: np.ndarray, position: np.ndarray, window: float, order: int,
                 max_gap: float) -> tuple[np.ndarray, dict]:
    """
    Choose the differentiator's time base: the stamps or their regular clock (``clock``).

    Returns the times [ns] and, for the summary, ``time_base`` (``STAMPS`` or ``REGULAR``) and
    ``residual_ratio``: the positions' residual variance around the local fits over the
    regular clock / over the stamps (None where the regular clock could not be fitted).
    """
    regular = clock.regularise(times_ns)
    info = {'time_base': STAMPS, 'residual_ratio': None}
    if regular is None or np.array_equal(regular, times_ns) or not position.shape[1]:
        return times_ns, info
    variances = []
    for times in (times_ns, regular):
        runs = differentiate.segments(times, max_gap)
        inner = _statistics_samples(times, runs, window, order, STATISTICS_SAMPLES)
        if inner.size < 10 * (order + 1):
            return times_ns, info
        fit = differentiate.fit_at(times, position, inner, window, order, max_gap)
        variances.append(float(np.sum(_noise(position, fit) ** 2)))
    if not variances[0] > 0:
        return times_ns, info
    ratio = variances[1] / variances[0]
    info['residual_ratio'] = ratio
    if ratio < clock.GAIN:
        info['time_base'] = REGULAR
        return regular, info
    return times_ns, info


@dataclass(frozen=True)
class Estimate:
    """
    Velocities and accelerations (N, J) for the dynamics, how they were obtained.

    ``diff``: the ``differentiate.Derivatives`` of the positions of the joints that need them
    (the positions route, or a velocity missing somewhere: ``first`` and ``second`` hold only
    those columns, in joint order; gains, edges and segments hold for every joint);
    ``routes``: one ``Route`` per joint (with its window); ``edge`` (N,): samples whose
    estimate comes from a one-sided fit (near a segment end) for any joint's window, to be
    left out; ``clock``: the time base (``choose_clock``). With several windows, ``diff``'s
    ``window``, ``samples`` and gains are those of the longest.
    """

    velocity: np.ndarray
    acceleration: np.ndarray
    diff: differentiate.Derivatives
    routes: list[Route]
    edge: np.ndarray
    clock: dict | None = None

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


def estimate(series, kinds, desired: np.ndarray | None, window: float | str | None,
             order: int, max_gap: float | None, mode: str = 'auto') -> Estimate:
    """
    Estimate v and a of a ``replay.JointSeries`` (``kinds``: each column's URDF joint type).

    Velocities: the messages' where finite, else the positions' derivative. Accelerations:
    ``desired`` where finite, 0 for locked joints, else per joint the route ``choose`` picks,
    over the time base ``choose_clock`` picks. ``window``: seconds, or None / 'auto': per
    joint from the data (``choose``); ``max_gap`` None: half the window (half the default
    window with 'auto').
    """
    from rnea_ros.recording import series as replay
    continuous = [k for k, kind in enumerate(kinds) if kind == 'continuous']
    position = replay.unwrap_columns(series.position, continuous) if continuous \
        else series.position
    auto = window is None or window == differentiate.AUTO
    fixed, max_gap = differentiate.resolve(series.times_ns, None if auto else window, order,
                                           max_gap)
    free = [k for k, name in enumerate(series.names) if name not in series.locked]
    times_ns, time_base = choose_clock(series.times_ns, _columns(position, free), fixed,
                                       order, max_gap)
    # The routes first (from <= STATISTICS_SAMPLES fits), then one pass over the whole series
    # per window: the positions' derivatives and the first derivative of the velocities that
    # route.
    routes = choose(times_ns, position, series.velocity, series.names,
                    None if auto else fixed, order, max_gap, skip=set(series.locked),
                    mode=mode)
    by_velocity = [k for k, route in enumerate(routes) if route.route == VELOCITIES]
    measured = np.isfinite(series.velocity)
    # The positions' derivatives only of the joints that use them: the positions route, or a
    # velocity missing somewhere.
    missing = ~measured.all(axis=0)
    needed = [k for k, route in enumerate(routes) if route.route == POSITIONS or missing[k]]
    diff, first, second, rate = _differentiate(times_ns, position, series.velocity, routes,
                                               needed, by_velocity, fixed, order, max_gap)
    velocity = series.velocity
    if missing.any():
        velocity = velocity.copy()
        for c, k in enumerate(needed):
            if missing[k]:
                velocity[:, k] = np.where(measured[:, k], velocity[:, k], first[:, c])
    locked = [k for k, route in enumerate(routes) if route.route == 'locked']
    by_position = [k for k, route in enumerate(routes) if route.route == POSITIONS]
    # Whole arrays shared where one route serves every joint, else assembled (locked: 0).
    if len(by_velocity) == len(routes):
        acceleration = rate
    elif len(by_position) == len(routes) == len(needed):
        acceleration = second
    else:
        acceleration = np.zeros_like(series.velocity)
        for c, k in enumerate(by_velocity):
            acceleration[:, k] = rate[:, c]
        for c, k in enumerate(needed):
            if routes[k].route == POSITIONS:
                acceleration[:, k] = second[:, c]
    free_mask = np.ones(len(routes), dtype=bool)
    free_mask[locked] = False
    # A sample needs an estimate where a velocity is missing or a free joint's acceleration
    # does not come from the desired accelerations.
    estimated = ~measured.all(axis=1)
    if desired is None:
        estimated |= free_mask.any()
    else:
        acceleration = np.where(np.isfinite(desired), desired, acceleration)
        estimated |= ~np.isfinite(desired[:, free_mask]).all(axis=1)
    return Estimate(velocity, acceleration, diff, routes, diff.edge & estimated, time_base)


def _differentiate(times_ns, position, velocity, routes, needed, by_velocity, fixed, order,
                   max_gap):
    """
    Differentiate once per window of the joints in ``needed`` and ``by_velocity``.

    Returns the combined ``Derivatives``, the positions' first and second derivatives
    (``needed`` columns) and the velocities' first derivatives (``by_velocity`` columns).
    """
    def window_of(k):
        return routes[k].window if routes[k].window is not None else fixed

    groups = sorted({window_of(k) for k in needed + by_velocity}) or [fixed]
    if len(groups) == 1:
        diff, rate = differentiate.derivatives_and_first(
            times_ns, _columns(position, needed), _columns(velocity, by_velocity), groups[0],
            order, max_gap)
        return diff, diff.first, diff.second, rate
    n = times_ns.size
    first, second = np.empty((n, len(needed))), np.empty((n, len(needed)))
    rate = np.empty((n, len(by_velocity)))
    edge = np.zeros(n, dtype=bool)
    valid = np.ones(n, dtype=bool)
    for w in groups:
        cq = [c for c, k in enumerate(needed) if window_of(k) == w]
        cv = [c for c, k in enumerate(by_velocity) if window_of(k) == w]
        diff, part = differentiate.derivatives_and_first(
            times_ns, position[:, [needed[c] for c in cq]],
            velocity[:, [by_velocity[c] for c in cv]], w, order, max_gap)
        first[:, cq], second[:, cq], rate[:, cv] = diff.first, diff.second, part
        edge |= diff.edge
        valid &= diff.valid
    # The longest window's settings and gains; every window's edges.
    combined = differentiate.Derivatives(
        first, second, diff.gain_first, diff.gain_second, diff.segments, diff.samples, valid,
        edge, diff.window, diff.max_gap)
    return combined, first, second, rate


def _columns(values: np.ndarray, columns: list[int]) -> np.ndarray:
    """Return values[:, columns]: the array itself if that is every column, no copy."""
    return values if columns == list(range(values.shape[1])) else values[:, columns]


def settings(estimate: Estimate, order: int) -> dict:
    """
    Describe the differentiation for the summary.

    ``differentiate.settings`` of the longest window, the rule, the window of each joint and
    the time base.
    """
    windows = {r.joint: r.window for r in estimate.routes if r.window is not None}
    rules = {r.window_rule for r in estimate.routes if r.window_rule}
    clock_info = estimate.clock or {'time_base': STAMPS, 'residual_ratio': None}
    return dict(differentiate.settings(estimate.diff, order),
                window_rule=rules.pop() if len(rules) == 1 else None, windows=windows,
                time_base=clock_info['time_base'],
                clock_residual_ratio=clock_info['residual_ratio'])


def describe(routes: list[Route]) -> str:
    """Say where the estimated accelerations come from, for the summary."""
    count = {kind: sum(r.route == kind for r in routes) for kind in (POSITIONS, VELOCITIES)}
    if not count[VELOCITIES]:
        return 'estimated from the positions'
    return (f'estimated from the positions for {count[POSITIONS]} joint(s), from the '
            f'velocities for {count[VELOCITIES]}')
