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

from rnea_ros import RobotModel
from rnea_ros.excite import design, limits as limits_module, outputs
from rnea_ros.excite.fourier import FourierBasis
from rnea_ros.excite.limits import ExciteError

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


def check_timing(options) -> FourierBasis:
    """Return the Fourier basis of the options; ``ExciteError`` if they cannot hold."""
    if options.harmonics < 2:
        raise ExciteError(f'--harmonics {options.harmonics}: at least 2 are needed (the first '
                          'harmonic is fixed by starting and ending at rest)')
    if not (math.isfinite(options.base_frequency) and options.base_frequency > 0.0):
        raise ExciteError(f'--base-frequency {options.base_frequency:g}: expected a positive '
                          'frequency in Hz')
    basis = FourierBasis(options.harmonics, options.base_frequency)
    if not (math.isfinite(options.duration) and options.duration >= basis.period * (1 - 1e-9)):
        raise ExciteError(f'--duration {options.duration:g} s is shorter than one period of '
                          f'--base-frequency {options.base_frequency:g} Hz '
                          f'({basis.period:g} s)')
    if not (math.isfinite(options.point_interval) and
            0.0 < options.point_interval <= basis.period / (4 * options.harmonics)):
        raise ExciteError(f'--point-interval {options.point_interval:g} s: expected a positive '
                          f'interval of at most {basis.period / (4 * options.harmonics):g} s '
                          '(a quarter period of the highest harmonic)')
    return basis


def run(options) -> Excitation:
    """Design the trajectory of ``options`` (``ExciteOptions``) and write its outputs."""
    basis = check_timing(options)
    planes = [limits_module.parse_plane(text) for text in options.keep_above or []]
    model = RobotModel.from_urdf_file(options.urdf)
    moving = limits_module.moving_joints(model, options.joints)
    limits = limits_module.joint_limits(model, moving, options.rest, options.limits_scale,
                                        options.acceleration_limit)
    limits_module.check_planes(model, planes, limits.rest)
    problem = design.problem(model, limits, basis, planes)
    result = design.optimise(problem, options.seed, options.max_iterations)
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
