"""
The ``rnea_identify`` pipeline: bags -> regressor -> base parameters -> fit -> outputs.

1. The model from ``--urdf`` (fixed base only) and the layout of theta
   (``rnea_ros.identify.inertial_layout``: inertial parameters, friction, armature).
2. The base parameters from random states (``rnea_ros.identify.base``).
3. Each bag's samples (``rnea_ros.identify.samples``); training and validation: the last
   ``--holdout`` fraction of each bag's time is held out, or ``--validate BAG`` is the
   validation data and every sample of the bags trains.
4. One pass over the samples in chunks of ``CHUNK``: the regressor
   (``RobotModel.regressor_batch``) with the joint columns, added to the normal equations of
   training or validation (``rnea_ros.identify.fit``).
5. The weighted least-squares fit of the base parameters, then per ``--inertial``:
   ``physical`` (default) the standard parameters of ``rnea_ros.identify.physical``,
   ``base`` the base parameters only (the URDF's inertias are kept in identified.urdf: base
   parameters are combinations, not link inertias), ``none`` the URDF's inertias with the
   joint terms fitted (the same SDP with the inertias fixed).
6. Residuals of three models per joint on training and validation data: the URDF, the URDF
   with the joint terms fitted to it, the identified model; and on the validation rows the fit
   would use (``validation_moving``: without a joint's rows where it is nearly at rest,
   ``rnea_ros.identify.filtering``); outputs (``rnea_ros.identify.report``).

``--effort current``: the gains are fitted after step 3 (``rnea_ros.identify.current``), and
steps 4-6 run on the efforts times them, and with validation data also with every gain 1 and,
when the validation demotes a gain, once more with the final gains
(``rnea_ros.identify.gain_check``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
import time

import numpy as np

from rnea_ros.description.loading import read_file_option, urdf_model
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import InputError
from rnea_ros.identify import base as base_params
from rnea_ros.identify import covariance, current, filtering, fit, gain_check, inertial_layout, \
    physical, samples, trust

CHUNK = 20_000
MIN_SAMPLES_PER_PARAMETER = 2  # training samples (each one row per joint) per base parameter
INERTIAL_MODES = ('physical', 'base', 'none')
HOLDOUT = (0.0, 0.9)  # the fraction of each bag's time held out for validation
MODELS = ('urdf', 'urdf+friction', 'identified')
SNAP = 1e-9  # of the prior scale: changes below it (solver round-off) are set to zero
HELD = 0.05  # rad or m: a still joint whose position spreads less is held in the base


@dataclass
class Identification:
    """Everything the report needs; arrays in theta / beta order (see ``parameters``)."""

    model: RobotModel
    urdf_xml: str
    layout: inertial_layout.Layout
    base: base_params.BaseParameters
    theta_urdf: np.ndarray
    scale: np.ndarray
    theta: np.ndarray
    theta_friction: np.ndarray
    fit: fit.Fit
    betas: dict[str, np.ndarray]
    rms: dict[str, dict[str, np.ndarray]]
    counts: dict[str, int]
    dropped_nan_effort: int
    inertial: str
    solver: str | None
    min_eigenvalues: np.ndarray | None
    validation: samples.Samples | None
    warnings: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    # Standard deviations of each link's mass (nb,) and centre of mass (nb, 3): ``trust``.
    uncertainty: tuple[np.ndarray, np.ndarray] | None = None
    differentiation: dict = field(default_factory=dict)
    gains: current.GainFit | None = None  # ``--effort current``: the effort gains
    at_limit: int = 0  # samples with a joint at a position or effort limit: rows not fitted


def _split(bags: list[samples.Samples], holdout: float):
    train, validation = [], []
    for data in bags:
        if holdout <= 0 or len(data) == 0:
            train.append(data)
            continue
        cut = data.seconds[-1] * (1.0 - holdout)
        train.append(data.select(data.seconds < cut))
        validation.append(data.select(data.seconds >= cut))
    return train, validation


def equations(model, lay, base) -> fit.NormalEquations:
    """Empty normal equations of the base regressor of ``model``."""
    inertial_columns = base.columns[base.columns < lay.n_inertial]
    q, v, a = base_params.random_states(model)
    return fit.NormalEquations(model.nv, base.size,
                               *fit.rows_of(model.regressor_batch(q, v, a), inertial_columns))


def sweep(model, lay, base, sets: list[samples.Samples], consumers, threads=None) -> None:
    """
    One pass over ``sets`` in chunks of at most ``CHUNK`` samples (none much shorter).

    Each chunk's regressor, joint columns and effort go to ``consumer.add(Y, joint, effort,
    transform)`` for every (consumer, transform) of ``consumers``; a transform (a
    ``filtering.LowPass``) first leaves out the rows it leaves out.
    """
    buffer = None
    with fit.one_blas_thread():
        for data in sets:
            pieces = max(1, -(-len(data) // CHUNK))
            edges = np.linspace(0, len(data), pieces + 1).astype(np.int64)
            for start, stop in zip(edges[:-1], edges[1:]):
                if stop <= start:
                    continue
                q, v, a = (x[start:stop] for x in (data.q, data.v, data.a))
                if buffer is None or buffer.shape[0] != stop - start:
                    buffer = np.empty((stop - start, model.nv, lay.n_inertial))
                Y = model.regressor_batch(q, v, a, threads=threads, out=buffer)
                features = lay.joint_features(v, a)
                effort = data.effort[start:stop]
                for consumer, transform in consumers:
                    consumer.add(Y, features, effort if transform is None else
                                 transform.leave_out(effort, v), transform)


def accumulate(model, lay, base, sets: list[samples.Samples], threads=None
               ) -> fit.NormalEquations:
    """Accumulate the normal equations of the base regressor over ``sets``, in chunks."""
    out = equations(model, lay, base)
    sweep(model, lay, base, sets, [(out, None)], threads)
    return out


def predict(model, lay, base, betas: dict[str, np.ndarray], data: samples.Samples
            ) -> dict[str, np.ndarray]:
    """Predict the torques W beta (N, nv) of the samples for each named beta."""
    out = {name: np.empty_like(data.effort) for name in betas}
    inertial_columns = base.columns[base.columns < lay.n_inertial]
    for start in range(0, len(data), CHUNK):
        stop = min(start + CHUNK, len(data))
        q, v, a = (x[start:stop] for x in (data.q, data.v, data.a))
        Y = model.regressor_batch(q, v, a)
        rows = np.concatenate([Y[:, :, inertial_columns], lay.joint_columns(v, a)], axis=2)
        for name, beta in betas.items():
            out[name][start:stop] = rows @ beta
    return out


def read_robot(urdf: str | Path, friction: str) -> tuple[str, RobotModel]:
    """Check ``--friction``, read ``--urdf``: (its text, its fixed-base model); or InputError."""
    if friction not in inertial_layout.FRICTION_MODELS:
        raise InputError(f'--friction must be one of {tuple(inertial_layout.FRICTION_MODELS)}, '
                         f'got {friction!r}')
    urdf_xml = read_file_option('--urdf', urdf)
    model = urdf_model(urdf_xml, f'--urdf {str(urdf)!r}')
    samples.check_fixed_base(model)
    return urdf_xml, model


def identify(bags, urdf: str | Path, *, joint_states: str = 'joint_states',
             holdout: float = 0.3, validate: str | None = None,
             friction: str = inertial_layout.DEFAULT_FRICTION,
             inertial: str = 'physical', threads: int | None = None,
             reading: dict | None = None, effort: str = 'torque',
             anchor_payload: str | None = None, anchor_bags=(),
             anchor_prior: float | None = None) -> Identification:
    """
    Run steps 1-6 of the module docstring (``RneaError`` on bad input).

    ``reading``: the options of ``samples.load`` (clock, lock, lock_missing, ignore_extra,
    window, effort_delay). ``effort`` 'current': the effort gains are fitted first, anchored
    by ``anchor_payload`` (LINK=KG) in ``anchor_bags`` and/or ``anchor_prior``
    (``rnea_ros.identify.current``), and the rest identified from the efforts times them.
    """
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    if not HOLDOUT[0] <= holdout <= HOLDOUT[1]:
        raise InputError(f'--holdout must be from {HOLDOUT[0]:g} to {HOLDOUT[1]:g}, got '
                         f'{holdout}')
    if inertial not in INERTIAL_MODES:
        raise InputError(f'--inertial must be one of {INERTIAL_MODES}, got {inertial!r}')
    current.check_options(effort, anchor_payload, anchor_bags, anchor_prior)
    urdf_xml, model = read_robot(urdf, friction)
    anchor = None if effort == 'torque' else \
        current.parse_anchor(anchor_payload, anchor_bags, model, anchor_prior)
    lay = inertial_layout.layout(model, friction)
    theta_urdf, scale = inertial_layout.prior(model, lay)
    base = base_params.base_parameters(model, lay)
    timings['model'] = time.perf_counter() - clock

    clock = time.perf_counter()
    reading = {**(reading or {}), 'torque_effort': effort == 'torque'}
    loaded = [samples.load(bag, model, urdf_xml, joint_states, **reading) for bag in bags]
    warnings = [f'{data.bag}: {w}' for data in loaded for w in data.warnings]
    if validate is not None:
        check = samples.load(validate, model, urdf_xml, joint_states, **reading)
        warnings += [f'{check.bag}: {w}' for w in check.warnings]
        train, validation = loaded, [check]
    else:
        check = None
        train, validation = _split(loaded, holdout)
    dropped = sum(d.dropped_nan_effort for d in loaded + ([check] if check else []))
    at_limit = sum(d.at_limit for d in loaded + ([check] if check else []))
    differentiation = {d.bag: d.differentiation for d in loaded + ([check] if check else [])}
    del loaded, check  # the split copied the samples: keep one copy of a long log
    if dropped:
        warnings.append(f'{dropped} samples with a NaN effort were dropped')
    n_train = sum(len(d) for d in train)
    needed = MIN_SAMPLES_PER_PARAMETER * base.size
    if n_train < needed:
        raise InputError(f'too few samples: {n_train} training samples for {base.size} base '
                         f'parameters (at least {needed} needed)')
    anchor_sets = [samples.load(bag, model, urdf_xml, joint_states, **reading)
                   for bag in (anchor.bags if anchor else ())]
    warnings += [f'{data.bag}: {w}' for data in anchor_sets for w in data.warnings]
    timings['reading'] = time.perf_counter() - clock

    clock = time.perf_counter()
    low_pass = filtering.design(train, lay.velocity_threshold if lay.friction_terms else 0.0)
    still = low_pass.still
    if still is not None and still.all():
        raise InputError(f'no joint moves faster than {filtering.REST * lay.velocity_threshold:g} '
                         f'rad/s (m/s) in {100 * filtering.MIN_MOVING:g} % of the training '
                         'samples: the robot is held still, its torques are stiction, there is '
                         'nothing to identify')
    if still is not None and still.any():
        held, base = _held_base(model, lay, train, still, base)
        warnings += _still_warnings(lay, low_pass, held)
    timings['regressor'] = time.perf_counter() - clock
    gains, run = None, None
    if anchor is not None:  # the rest is identified from the efforts times the gains
        gains = current.fit_gains(model, lay, base, train, anchor_sets, anchor, low_pass,
                                  threads, (theta_urdf, scale))

        def fit_with(k: np.ndarray) -> _Robot:
            return _fit_robot(model, lay, base, current.scaled(train, k),
                              current.scaled(validation, k), low_pass, inertial, theta_urdf,
                              scale, threads, timings)
        gains, run = gain_check.check(gains, lay.joint_names, fit_with)
        warnings += gains.warnings + current.prior_warnings(gains, lay.joint_names)
    if run is None:
        run = _fit_robot(model, lay, base, train, validation, low_pass, inertial, theta_urdf,
                         scale, threads, timings)
    warnings += run.warnings
    plot_data = validation[0] if validation and len(validation[0]) else None
    if gains is not None and plot_data is not None:
        plot_data = current.scaled([plot_data], gains.gains)[0]
    return Identification(model, urdf_xml, lay, base, theta_urdf, scale, run.theta,
                          run.theta_friction, run.result, run.betas, run.rms,
                          {'training': n_train, 'validation': run.validation_count},
                          dropped, inertial, run.solver, run.eigen, plot_data, warnings,
                          timings, run.uncertainty, differentiation, gains, at_limit)


@dataclass
class _Robot:
    """What ``_fit_robot`` gives: the fit, the models, their RMS and its warnings."""

    result: fit.Fit
    theta: np.ndarray
    theta_friction: np.ndarray
    betas: dict[str, np.ndarray]
    rms: dict[str, dict[str, np.ndarray]]
    validation_count: int
    solver: str | None
    eigen: np.ndarray | None
    uncertainty: tuple[np.ndarray, np.ndarray] | None
    warnings: list[str]


def _fit_robot(model, lay, base, train, validation, low_pass, inertial, theta_urdf, scale,
               threads, timings) -> _Robot:
    """Run steps 4-6 of the module docstring on ``train`` and ``validation`` (torques)."""
    clock = time.perf_counter()
    n_train = sum(len(d) for d in train)
    train_eq, filtered_eq = equations(model, lay, base), equations(model, lay, base)
    sweep(model, lay, base, train, [(train_eq, None), (filtered_eq, low_pass)], threads)
    # The validation residual on every row, and on the rows the fit models: without the rows
    # the low-pass leaves out (a joint nearly at rest, where its friction is stiction).
    validation_eq, moving_eq = (equations(model, lay, base) for _ in range(2))
    moving = filtering.LowPass(None, low_pass.rate, None, low_pass.rest)
    sweep(model, lay, base, validation, [(validation_eq, None), (moving_eq, moving)], threads)
    timings['regressor'] += time.perf_counter() - clock  # summed over the fits

    clock = time.perf_counter()
    result = fit.weighted_fit(filtered_eq, train_eq)
    scores = covariance.Scores(filtered_eq, result.beta, result.sigma, n_train)
    sweep(model, lay, base, train, [(scores, low_pass)], threads)
    honest = scores.result(result.H)
    result = dataclasses.replace(result, std=honest.std, white_std=result.std,
                                 covariance=honest.covariance,
                                 correlation_time=honest.time, lag=honest.lag,
                                 cutoff=low_pass.cutoff)
    metric = result.H / honest.inflation(result.white_std)
    beta_urdf = base.E @ theta_urdf
    free = base.columns >= lay.n_inertial
    # The URDF with its joint terms fitted: the SDP with the URDF's bodies held, so the same
    # prior toward zero and friction, armature >= 0 as the identified model (a short log
    # leaves armature, offset and friction nearly collinear: unregularised, they explode).
    joint_terms = physical.solve(lay, base, metric, result.beta, theta_urdf, scale,
                                 fixed_inertial=True)
    theta_friction = theta_urdf.copy()
    theta_friction[lay.n_inertial:] = joint_terms.theta[lay.n_inertial:]
    untold = _still_terms(lay, low_pass.still)
    theta_friction[untold] = theta_urdf[untold]
    beta_friction = base.E @ theta_friction
    solver, eigen = None, None
    if inertial == 'base':
        beta = result.beta
        theta = theta_urdf.copy()
        theta[lay.n_inertial:] = beta[free] - beta_urdf[free]
    else:
        solution = joint_terms if inertial == 'none' else physical.solve(
            lay, base, metric, result.beta, theta_urdf, scale)
        theta, solver = solution.theta, solution.solver
        eigen = solution.min_eigenvalues if inertial == 'physical' else None
        # The solver's round-off on parameters the data leave alone is no change to write.
        unchanged = np.abs(theta - theta_urdf) <= SNAP * scale
        unchanged[lay.n_inertial:] = False
        theta[unchanged] = theta_urdf[unchanged]
        if eigen is not None:
            eigen = np.array([np.linalg.eigvalsh(inertial_layout.pseudo_inertia(body)).min()
                              for body in theta[:lay.n_inertial].reshape(-1, 10)])
    # A still joint's terms have no row (``filtering``): no data set the solver's value for
    # them (0.0007 N for the held panda finger's friction); they keep the prior, zero, as the
    # warning says and as their infinite standard deviation means.
    theta[untold] = theta_urdf[untold]
    if inertial != 'base':
        beta = base.E @ theta
    betas = {'urdf': beta_urdf, 'urdf+friction': beta_friction, 'identified': beta}
    rms = {name: {'training': train_eq.rms(b), 'validation': validation_eq.rms(b),
                  'validation_moving': moving_eq.rms(b)} for name, b in betas.items()}
    timings['fit'] = timings.get('fit', 0.0) + time.perf_counter() - clock
    warnings = _excitation_warnings(base, result, scale,
                                    lay.n_inertial if inertial == 'none' else 0)
    if inertial == 'physical':
        warnings += trust.departure_warnings(base.names, result.beta, result.std, beta)
        warnings += trust.validation_warnings(rms, result.sigma, validation_eq.joint_count)
    uncertainty = trust.link_uncertainty(lay, base, metric, scale, theta) \
        if inertial == 'physical' else None
    return _Robot(result, theta, theta_friction, betas, rms, validation_eq.count, solver, eigen,
                  uncertainty, warnings)


def _still_terms(lay, still: np.ndarray | None) -> np.ndarray:
    """Return the theta indices of the joint terms of the ``still`` joints (none: empty)."""
    if still is None:
        return np.zeros(0, dtype=np.int64)
    return np.array([lay.joint_index(j, term) for j in np.flatnonzero(still)
                     for term in lay.joint_terms], dtype=np.int64)


def _held_base(model, lay, train: list[samples.Samples], still: np.ndarray, base):
    """
    Return (the joints held, the base parameters with them held at their median).

    A still joint is held when its position spreads less than ``HELD`` (1st to 99th
    percentile): then its bodies and the one it hangs from are one (its terms left in the
    base, their columns empty). One that creeps further keeps ``base``: its moving bodies
    tell themselves apart, and holding it would be a model error.
    """
    q = np.concatenate([data.q for data in train if len(data)])
    spread = np.percentile(q, 99, axis=0) - np.percentile(q, 1, axis=0)
    held = still & (spread <= HELD)
    if not held.any():
        return held, base
    states = base_params.held_states(model, held, np.median(q[:, held], axis=0))
    return held, base_params.base_parameters(model, lay, states=states, rows=~still,
                                             all_joint_terms=True)


def _still_warnings(lay, low_pass: filtering.LowPass, held: np.ndarray) -> list[str]:
    """Name the joints whose friction and armature the data cannot tell (``filtering``)."""
    speed = filtering.REST * lay.velocity_threshold
    named = ', '.join(f'{name} ({100 * fraction:.1f} %)' for name, fraction, still in zip(
        lay.joint_names, low_pass.moving_fraction, low_pass.still) if still)
    rigid = ', '.join(name for name, hold in zip(lay.joint_names, held) if hold)
    return [f'joints moving faster than {speed:g} rad/s (m/s) in less than '
            f'{100 * filtering.MIN_MOVING:g} % of the training samples: {named}; at rest their '
            'friction is stiction, any torque within it, so their rows are left out and their '
            'friction, offset and armature not identified (kept at zero: record them moving '
            'to know them)' + (f'; held within {HELD:g} rad (m): {rigid}, the bodies each holds '
                               'together identified as one' if rigid else '')]


VISIBILITY = 0.1  # a base parameter whose standard deviation exceeds this many prior scales


def _excitation_warnings(base, result: fit.Fit, scale: np.ndarray, first: int) -> list[str]:
    """Name the base parameters (from theta column ``first`` on) the data barely excite."""
    blind = [name for name, std, column in zip(base.names, result.std, base.columns)
             if column >= first and not std <= VISIBILITY * scale[column]]
    if not blind:
        return []
    return [f'the data barely excite {len(blind)} of {base.size} base parameters (standard '
            f'deviation above {VISIBILITY:g} of their prior scale): {", ".join(blind)}; they '
            'stay near the URDF (a more exciting trajectory would identify them)']
