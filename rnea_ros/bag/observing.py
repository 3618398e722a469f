"""
``rnea_bag --observer``: the momentum observer over the bag's samples, thresholds, detections.

The node's observer (``rnea_ros.observer.MomentumObserver``) runs over the analysed samples in
time order, one integration per sample with dt from the sample times: the residual r is the
node's ``external_torques``, from the same samples. Its inputs are the samples' positions,
velocities (the messages', or the differentiator's where they have none) and measured effort
(``--measured-effort``: link-side torque, or motor torque from which ``--actuation``'s friction
and armature are taken out; either less ``--actuation``'s effort bias, which the observer
takes out). No accelerations: the estimated ones are not used. A joint held fixed by
``--lock`` or ``--lock-missing`` that the bag gives no effort for (a gripper the arm's driver
does not publish) is out of the observer: each joint's residual depends on its own effort
only, so the others' are those of the observer on the whole model; the held joint's residual
is zero, its threshold the calibration's floor, and a warning names it.

Outputs: ``external_torques.csv`` (``time`` and r per joint, like torques.csv); without
``--collision-thresholds``, ``collision_thresholds.yaml``: thresholds calibrated on this
(collision-free) bag (``rnea_ros.observer.collision``: margin * max |r| + spread * robust
sigma + floor), as a node
parameters file (``collision_threshold.<joint>``, under ``/**:``, like actuation.yaml); with
it, the detections on this bag (summary.json ``collisions``). With the thresholds, the smallest
force they detect on the flange over the bag's poses (``detectable``: summary.json
``observer.smallest_detectable_force``, warned about above ``DETECTABLE_FORCE``); a calibration
bag where no joint moves is refused, one where some do not is warned about.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rnea_ros.bag import detectable
from rnea_ros.bag.report import write_table
from rnea_ros.errors import InputError
from rnea_ros.files import brief, finite_number
from rnea_ros.observer import calibrate_thresholds, detect_events, MomentumObserver
from rnea_ros.observer.collision import MAX_THRESHOLD, MIN_THRESHOLD, RULE, THRESHOLD_PARAMETER
from rnea_ros.params import params_file

THRESHOLD = THRESHOLD_PARAMETER  # node parameter family: collision_threshold.<joint>
# The effort that informs the observer (``check_effort``): on a joint whose predicted torque
# spreads at least LOADED of the largest joint's, measured and predicted must correlate at
# least MIN_CORRELATION and differ by a spread of at most MAX_RESIDUAL times the predicted's.
LOADED = 0.1
MIN_CORRELATION = 0.5
MAX_RESIDUAL = 3.0
FLOATING_BASE = ('--observer: a floating base needs the base wrench and odometry terms in the '
                 'momentum balance; fixed-base robots only')


@dataclass
class Observed:
    """The observer's residual (N, nv) of the joints ``names``, thresholds and detections."""

    names: list[str]
    residual: np.ndarray
    thresholds: np.ndarray
    thresholds_file: str | None
    events: list[dict]
    detectable: dict | None = None  # the smallest detectable force (``detectable``)
    warnings: list[str] = field(default_factory=list)


def check_options(options) -> None:
    """Refuse observer options that cannot work, before any work."""
    if options.collision_thresholds and not options.observer:
        raise InputError('--collision-thresholds needs --observer')
    if options.observer and options.floating_base:
        raise InputError(FLOATING_BASE)


def observe(options, model, actuation, seconds: np.ndarray, q: np.ndarray, v: np.ndarray,
            effort: np.ndarray, measured: np.ndarray, predicted: np.ndarray,
            locked=()) -> Observed:
    """
    Run the observer over the samples; calibrate thresholds, or detect with the given ones.

    ``effort``: the bag's (the observer's input); ``measured``: less the actuation model's bias;
    ``predicted``: the model's torque of the samples, (N, nv) each: ``check_effort``;
    ``locked``: the names of the joints held fixed (module docstring).
    """
    names = list(model.joint_names)
    warnings = []
    out = [k for k, name in enumerate(names)
           if name in locked and not np.isfinite(measured[:, k]).any()]
    if out:
        effort, measured, predicted = effort.copy(), measured.copy(), predicted.copy()
        effort[:, out] = measured[:, out] = predicted[:, out] = 0.0
        warnings.append(f'--observer: {[names[k] for k in out]} held fixed without a measured '
                        'effort: out of the observer (external torque 0, threshold the '
                        'floor)')
    if options.collision_thresholds:
        thresholds = read_thresholds(options.collision_thresholds, names)
    else:
        warnings.append(detectable.check_motion(names, v))  # refuses a bag where none moves
    check_effort(names, measured, predicted, out)
    observer = MomentumObserver(model, options.observer_gain,
                                measured_effort=options.measured_effort, actuation=actuation)
    residual = observer.run(seconds, q, v, effort)
    residual[:, out] = 0.0
    if options.collision_thresholds:
        events = detect_events(seconds, residual, thresholds, names)
        observed = Observed(names, residual, thresholds, str(options.collision_thresholds),
                            events)
    else:
        observed = Observed(names, residual, calibrate_thresholds(residual), None, [])
    observed.detectable = detectable.smallest_detectable_force(model, q, observed.thresholds)
    warnings.append(detectable.force_warning(observed.detectable))
    observed.warnings = [warning for warning in warnings if warning]
    return observed


def check_effort(names: list[str], measured: np.ndarray, predicted: np.ndarray,
                 out=()) -> None:
    """
    Refuse measured effort (N, nv) that carries no information on the model's torque.

    Per joint: missing or not finite in some sample; the same value in every sample (a sensor
    that is not read: all zero, constant); or, on a joint the model loads (the standard
    deviation of its predicted torque at least ``LOADED`` of the largest joint's), far from the
    model: correlated with it less than ``MIN_CORRELATION``, or a residual (measured less
    predicted, its mean taken out) of a standard deviation over ``MAX_RESIDUAL`` times the
    predicted torque's (a wrong sign, a wrong scale, another joint's signal). Ratios only: the
    same rule for any robot; an honest model error (a payload, friction, a sensor offset)
    passes. ``out``: the columns of joints out of the observer (held, zero), not judged.
    """
    missing = [name for k, name in enumerate(names) if not np.isfinite(measured[:, k]).all()]
    if missing:
        raise InputError(f'--observer needs the measured effort of every joint in every sample;'
                         f' missing or not finite for {missing} (a joint the bag does not '
                         'publish, a gripper, held by --lock or --lock-missing is out of the '
                         'observer)')
    low, high = measured.min(axis=0), measured.max(axis=0)
    constant = [f'{name} ({low[k]:g})' for k, name in enumerate(names)
                if low[k] == high[k] and k not in out]
    if constant:
        raise InputError(f'--observer: the measured effort is the same in every sample for '
                         f'{", ".join(constant)}: a sensor that is not read carries nothing '
                         'to calibrate or detect with')
    spread = predicted.std(axis=0)
    residual = (measured - predicted).std(axis=0)
    far = []
    for k in np.flatnonzero((spread >= LOADED * spread.max()) & (spread > 0)):
        correlation = float(np.corrcoef(measured[:, k], predicted[:, k])[0, 1])
        ratio = residual[k] / spread[k]
        if not (correlation >= MIN_CORRELATION and ratio <= MAX_RESIDUAL):
            far.append(f'{names[k]} (correlation {correlation:.3g}, residual {ratio:.3g} '
                       "times the torque's spread)")
    if far:
        raise InputError(
            f"--observer: the measured effort is far from the model's torque for "
            f'{", ".join(far)}; expected a correlation of at least {MIN_CORRELATION:g} and a '
            f"residual spread of at most {MAX_RESIDUAL:g} times the torque's (wrong sign or "
            'scale of the effort, wrong --measured-effort, wrong URDF?)')


def read_thresholds(path, names: list[str]) -> np.ndarray:
    """Thresholds (nv,) from a node parameters file: ``collision_threshold.<joint>`` each."""
    params = params_file.read(path, 'collision thresholds')
    given = {key[len(THRESHOLD):]: value for key, value in params.items()
             if key.startswith(THRESHOLD)}
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise InputError(f'{path}: unknown joints {unknown}; expected {names}')
    absent = [name for name in names if name not in given]
    if absent:
        raise InputError(f'{path}: no {THRESHOLD}<joint> for {absent}')
    thresholds = []
    for name in names:
        value = given[name]
        if not finite_number(value) or not MIN_THRESHOLD <= value <= MAX_THRESHOLD:
            raise InputError(f'{path}: parameter {THRESHOLD}{name!s}: expected a number from '
                             f'{MIN_THRESHOLD:g} to {MAX_THRESHOLD:g} (N m), got {brief(value)}')
        thresholds.append(float(value))
    return np.array(thresholds)


def thresholds_yaml(names, thresholds) -> str:
    """Return the node parameters file of the thresholds (``/**:`` applies to any node name)."""
    params = {f'{THRESHOLD}{name}': float(value) for name, value in zip(names, thresholds)}
    header = ('# Collision thresholds of rnea_ros on |external torque| (N m; N for prismatic '
              'joints),\n'
              f'# calibrated by rnea_bag --observer on a collision-free bag: {RULE}\n')
    return params_file.write(params, header)


def write_files(stage: Path, seconds, labels, columns, observed: Observed) -> list[Path]:
    """external_torques.csv and, for calibrated thresholds, collision_thresholds.yaml."""
    table = {'time': seconds, **{labels[k]: observed.residual[:, k] for k in columns}}
    files = [write_table(stage / 'external_torques.csv', table)]
    if observed.thresholds_file is None:
        path = stage / 'collision_thresholds.yaml'
        path.write_text(thresholds_yaml(observed.names, observed.thresholds))
        files.append(path)
    return files


def summary_part(options, observed: Observed) -> dict:
    """summary.json's ``observer`` (settings, per joint RMS/peak r, thresholds), ``collisions``."""
    r = observed.residual
    part = {'observer': {
        'gain': float(options.observer_gain), 'measured_effort': options.measured_effort,
        'thresholds_source': observed.thresholds_file or (
            f'calibrated on this bag: {RULE}'),
        'joints': [{'joint': name, 'rms': float(np.sqrt(np.mean(r[:, k] ** 2))),
                    'peak': float(np.abs(r[:, k]).max()),
                    'threshold': float(observed.thresholds[k])}
                   for k, name in enumerate(observed.names)],
        'smallest_detectable_force': observed.detectable,
    }}
    if observed.thresholds_file is not None:
        part['collisions'] = [dict(event) for event in observed.events]
    return part
