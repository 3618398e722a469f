"""
One ``rnea_excite`` run: options -> model and limits -> optimised design -> outputs.

``run`` checks what can be checked before the optimiser (the harmonics, the duration against
the period, the limits and planes, ``rnea_ros.excite.limits``), designs one period
(``rnea_ros.excite.design``), repeats it for the whole periods that fit in ``--duration``
and writes the files (``rnea_ros.excite.outputs``). Bad input raises ``ExciteError`` (or
another ``InputError``/``URDFError``) with one line.
"""
from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path

import numpy as np

from rnea_ros.description.loading import read_file_option, urdf_model
from rnea_ros.description.robot_file import read_robot_description
from rnea_ros.excite import design, limits as limits_module, outputs, worker
from rnea_ros.excite.fourier import FourierBasis
from rnea_ros.excite.limits import ExciteError
from rnea_ros.tools.options import check_bounds

OBJECTIVE = 'log det(W^T W) / p of the weighted base regressor W with unit columns'


@dataclass(frozen=True)
class Excitation:
    """What a run made: the design, the sampled trajectory, the report and the files."""

    design: design.Design
    times: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    report: dict
    files: list[Path]


# What a robot can play: each bound is stated in --help (cli.py) and docs/excite.md.
MAX_HARMONICS = 10
MIN_BASE_FREQUENCY = 0.001  # Hz: a period of at most 1000 s
MAX_HIGHEST_FREQUENCY = 2.0  # Hz: harmonics x base frequency, what an arm's joints track
MAX_DURATION = 3600.0  # s: an hour of recording
MIN_POINT_INTERVAL = 0.001  # s: one cycle of a 1 kHz controller
MAX_POINTS = 100_000  # points of the written trajectory: duration / point interval + 1
MAX_ITERATIONS = 1000
MAX_SEED = 2 ** 32 - 1
# The bounds of the options alone (cli.py declares them; check_timing the options together).
HARMONICS = (2, MAX_HARMONICS)  # the first harmonic is fixed by starting and ending at rest
BASE_FREQUENCY = (MIN_BASE_FREQUENCY, MAX_HIGHEST_FREQUENCY / HARMONICS[0])
DURATION = (1 / BASE_FREQUENCY[1], MAX_DURATION)  # at least one period
POINT_INTERVAL = (MIN_POINT_INTERVAL, 1 / (4 * HARMONICS[0] * MIN_BASE_FREQUENCY))
ITERATIONS = (1, MAX_ITERATIONS)
SEED = (0, MAX_SEED)
LIMITS_SCALE = (0.01, 1.0)  # a safety factor of the URDF's limits


def check_timing(options) -> FourierBasis:
    """Return the Fourier basis of the options; ``ExciteError`` if they cannot hold."""
    check_bounds(options)  # each option within its declared bounds (cli.py), then together
    if options.harmonics * options.base_frequency > MAX_HIGHEST_FREQUENCY * (1 + 1e-9):
        raise ExciteError(f'--base-frequency {options.base_frequency:g}: expected at least '
                          f'{MIN_BASE_FREQUENCY:g} Hz and, times --harmonics '
                          f'{options.harmonics}, at most {MAX_HIGHEST_FREQUENCY:g} Hz (the '
                          'highest harmonic)')
    basis = FourierBasis(options.harmonics, options.base_frequency)
    if options.duration < basis.period * (1 - 1e-9):
        raise ExciteError(f'--duration {options.duration:g} s is shorter than one period of '
                          f'--base-frequency {options.base_frequency:g} Hz '
                          f'({basis.period:g} s)')
    quarter = basis.period / (4 * options.harmonics)
    if options.point_interval > quarter:
        raise ExciteError(f'--point-interval {options.point_interval:g} s: expected an interval '
                          f'of at least {MIN_POINT_INTERVAL:g} s (a 1 kHz controller cycle) and '
                          f'at most {quarter:g} s (a quarter period of the highest harmonic)')
    if options.duration / options.point_interval + 1 > MAX_POINTS:
        raise ExciteError(f'--duration {options.duration:g} s every --point-interval '
                          f'{options.point_interval:g} s: more than {MAX_POINTS} points; '
                          'lengthen the interval or shorten the duration')
    return basis


def run(options, say=None) -> Excitation:
    """
    Design the trajectory of ``options`` (``ExciteOptions``) and write its outputs.

    ``say``: called with a line when the optimiser starts and after each of its iterations
    (the command line prints them; the optimiser runs in a forked process, ``worker``).
    """
    basis = check_timing(options)
    planes = [limits_module.parse_plane(text) for text in options.keep_above or []]
    model = urdf_model(read_file_option('--urdf', options.urdf, read_robot_description),
                       f'--urdf {str(options.urdf)!r}')
    moving = limits_module.moving_joints(model, options.joints)
    limits = limits_module.joint_limits(model, moving, options.rest, options.limits_scale,
                                        options.acceleration_limit)
    limits_module.check_planes(model, planes, limits.rest)
    problem = design.problem(model, limits, basis, planes)
    say = say or (lambda line: None)
    say(f'optimising {problem.size} coefficients (SLSQP, at most {options.max_iterations} '
        'iterations; Ctrl-C stops it)')
    result = worker.call(design.optimise, problem, options.seed, options.max_iterations,
                         lambda k, value: say(f'iteration {k}: log det / p {value:.4g}'))
    periods = int(math.floor(options.duration / basis.period + 1e-9))
    total = periods * basis.period
    times = np.linspace(0.0, total, int(round(total / options.point_interval)) + 1)
    q, v, a = problem.states(result.x, times)
    tau = model.rnea_batch(q, v, a)
    warnings = list(limits.assumed)
    if periods * basis.period < options.duration - 1e-9:
        warnings.append(f'--duration {options.duration:g} s is not a whole number of periods: '
                        f'the trajectory lasts {total:g} s (whole periods of {basis.period:g} s)')
    if result.condition_number >= result.random_condition_number:
        warnings.append('the optimiser did not improve on random sines within the same limits '
                        '(try more --max-iterations or another --seed)')
    report = _report(model, options, problem, result, periods, times, warnings)
    message = outputs.trajectory_message(model.joint_names, times, q, v, a)
    csv = outputs.csv_text(model.joint_names, times, q, v, a, tau)
    plot = None if options.no_plots else outputs.figure(
        model, limits, times, q, v, a, tau, f'{model.name}: excitation trajectory')
    files = outputs.write(Path(options.output), options.overwrite, report, message, csv, plot)
    return Excitation(result, times, q, v, a, report, files)


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _report(model, options, problem, result, periods, times, warnings) -> dict:
    limits, basis = problem.limits, problem.basis
    use = design.peak_use(problem, result.x)
    names = model.joint_names
    a, b = basis.coefficients(result.x.reshape(limits.moving.size, basis.size))
    return {
        'tool': 'rnea_excite', 'robot': model.name, 'urdf': str(options.urdf),
        'trajectory': {'base_frequency': basis.base_frequency, 'harmonics': basis.harmonics,
                       'period': basis.period, 'periods': periods,
                       'duration': float(times[-1]), 'point_interval': options.point_interval,
                       'points': int(times.size), 'moving': [names[k] for k in limits.moving],
                       'rest': dict(zip(names, limits.rest.tolist()))},
        'conditioning': {'objective': OBJECTIVE,
                         'condition_number': result.condition_number,
                         'log_det_per_parameter': result.log_det,
                         'random_condition_number': result.random_condition_number,
                         'seed': options.seed},
        'base_parameters': [{'name': name, 'grouped': [list(item) for item in grouped]}
                            for name, grouped in zip(problem.base.names, problem.base.grouped)],
        'limits_scale': limits.scale,
        'limits': {name: {'rest': limits.rest[k], 'lower': limits.lower[k],
                          'upper': limits.upper[k], 'velocity': limits.velocity[k],
                          'acceleration': limits.acceleration[k],
                          'effort': _finite(limits.effort[k]),
                          'used': {kind: float(use[kind][k]) for kind in
                                   ('position', 'velocity', 'acceleration', 'effort')}}
                   for k, name in enumerate(names)},
        'planes': [{'link': p.link, 'height': p.height, 'margin': margin}
                   for p, margin in zip(problem.planes, use.get('planes', []))],
        'coefficients': {names[j]: {'a': a[m].tolist(), 'b': b[m].tolist()}
                         for m, j in enumerate(limits.moving)},
        'optimiser': {'method': 'SLSQP', 'iterations': result.iterations,
                      'status': result.status, 'seconds': result.seconds},
        'warnings': warnings,
    }
