"""
What ``rnea_identify`` writes: identification.json / .md, actuation.yaml, identified.urdf.

``identification.json`` (every number; NaN/inf as null):

- ``settings``, ``samples`` (training, validation, dropped for a NaN effort);
- ``differentiation``: per bag the window rule (``auto`` or ``fixed``), each joint's
  differentiation window [s] and the time base (``stamps`` or ``regular clock``);
- ``noise``: per joint the torque noise sigma estimated from the unweighted fit's residual;
- ``excitation``: the condition number of the weighted base regressor with unit-norm
  columns (over what the fit resolves: ``fit.condition_number``), the low-pass cutoff applied to
  both sides of the fit (Hz, null: none; ``filtering``), the residuals' correlation time and
  Newey-West window (samples; ``covariance``), and per base parameter its least-squares
  value, its standard deviation (``std``: the sandwich estimate for correlated residuals;
  ``white_std``: what white residuals would give), the relative standard deviation
  (std / |value|), the final value, the departure (final - least squares) / std and the
  dependent parameters it absorbs;
- ``rms``: per model (``urdf``, ``urdf+friction``: the URDF with the joint terms fitted to
  it, ``identified``) and data set (``training``, ``validation``, ``validation_moving``: the
  validation rows the fit would use, without a joint's rows where it is nearly at rest) the
  RMS residual per joint;
- ``actuation``: the identified friction and armature per joint (with ``--offset
  sensor-bias`` its ``offset`` is the effort sensor's bias, actuation.yaml's ``effort_bias``);
- ``links``: per moving body (named by its link) the URDF and identified parameters, and
  whether its pseudo-inertia is positive semi-definite, and (``--inertial physical``) the
  standard deviations of its identified mass and centre of mass (``trust.link_uncertainty``);
  ``total_mass`` before and after;
- ``effort_gain`` (``--effort current`` only): the anchor, whether the gains were checked
  against validation data (``validation_checked``), and per joint the gain written to
  actuation.yaml (1 when not determined), the least-squares one, its standard deviation,
  whether it is determined (by the anchor, ``rnea_ros.identify.current``, and by the
  validation, ``rnea_ros.identify.gain_check``), the identified model's validation RMS in the
  effort's units with the fitted gain and with gain 1 (``validation_rms``: ``fitted_gain``,
  ``gain_1``) and, when not determined, why (``reason``);
- ``warnings`` and ``outputs``.
"""
from __future__ import annotations

import numpy as np

from rnea_ros.identify.inertial_layout import INERTIAL
from rnea_ros.identify.pipeline import Identification, MODELS
from rnea_ros.tools.text import fmt


def _safe(value):
    if isinstance(value, dict):
        return {k: _safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return _safe(value.tolist())
    if isinstance(value, np.floating | float):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def actuation(result: Identification) -> dict[str, dict[str, float]]:
    """Return per joint its coulomb, viscous, offset (the friction's terms) and armature."""
    lay = result.layout
    return {joint: {term: float(result.theta[lay.joint_index(j, term)])
                    for term in lay.joint_terms}
            for j, joint in enumerate(lay.joint_names)}


def summary(result: Identification, settings: dict, outputs: list[str]) -> dict:
    """Gather the identification.json dictionary (see the module docstring)."""
    lay, base, fit = result.layout, result.base, result.fit
    joints = list(lay.joint_names)
    nb = len(lay.body_links)
    phi_urdf = result.theta_urdf[:lay.n_inertial].reshape(nb, 10)
    phi = result.theta[:lay.n_inertial].reshape(nb, 10)
    beta = result.betas['identified']
    with np.errstate(divide='ignore', invalid='ignore'):
        relative = fit.std / np.abs(fit.beta)
        departure = np.where(fit.std > 0, (beta - fit.beta) / fit.std, 0.0)
    white = fit.std if fit.white_std is None else fit.white_std
    links = {}
    for i, link in enumerate(lay.body_links):
        entry = {'urdf': dict(zip(INERTIAL, phi_urdf[i])),
                 'identified': dict(zip(INERTIAL, phi[i]))}
        if result.min_eigenvalues is not None:
            entry['pseudo_inertia_min_eigenvalue'] = result.min_eigenvalues[i]
            entry['physically_consistent'] = bool(phi[i, 0] > 0
                                                  and result.min_eigenvalues[i] >= 0)
        if result.uncertainty is not None:
            entry['mass_std'] = result.uncertainty[0][i]
            entry['com_std'] = result.uncertainty[1][i]
        links[link] = entry
    return _safe({
        'settings': settings,
        'differentiation': result.differentiation,
        'samples': {'training': result.counts['training'],
                    'validation': result.counts['validation'],
                    'dropped_nan_effort': result.dropped_nan_effort,
                    'at_limit': result.at_limit},
        'inertial': result.inertial, 'solver': result.solver,
        'noise': dict(zip(joints, fit.sigma)),
        'excitation': {
            'condition_number': fit.condition,
            'rank_tolerance': base.rank_tolerance,
            'low_pass_cutoff': fit.cutoff,
            'correlation_time': fit.correlation_time,
            'newey_west_lag': fit.lag,
            'base_parameters': [
                {'name': name, 'least_squares': b, 'std': s, 'white_std': w,
                 'relative_std': r, 'final': f, 'departure': d,
                 'absorbs': [{'name': n, 'coefficient': c} for n, c in group]}
                for name, b, s, w, r, f, d, group in zip(
                    base.names, fit.beta, fit.std, white, relative, beta, departure,
                    base.grouped)],
        },
        'rms': {model: {data: dict(zip(joints, values))
                        for data, values in result.rms[model].items()} for model in MODELS},
        'actuation': actuation(result),
        'links': links,
        'total_mass': {'urdf': float(phi_urdf[:, 0].sum()), 'identified': float(phi[:, 0].sum())},
        **({} if result.gains is None else {'effort_gain': effort_gains(result)}),
        'warnings': list(result.warnings),
        'timings': result.timings,
        'outputs': outputs,
    })


def effort_gains(result: Identification) -> dict:
    """Per joint the effort gain written, the fitted one, its std, the validation's verdict."""
    gains = result.gains
    checked = gains.validation
    if checked is None:
        checked = np.full((2, gains.std.size), np.nan)
    return {'anchor': {'link': gains.anchor.link, 'mass': gains.anchor.mass,
                       'bags': list(gains.anchor.bags), 'prior': gains.anchor.prior},
            'samples': gains.samples,
            'validation_checked': gains.validation is not None,
            'joints': {joint: {'gain': g, 'least_squares': f, 'std': s, 'determined': bool(d),
                               'validation_rms': {'fitted_gain': r, 'gain_1': r1},
                               'reason': why}
                       for joint, g, f, s, d, r, r1, why in zip(
                           result.layout.joint_names, gains.gains, gains.fitted, gains.std,
                           gains.determined, checked[0], checked[1], gains.reasons)}}


def _differentiation_lines(per_bag: dict) -> list[str]:
    """Return one line per bag: each joint's differentiation window, the time base."""
    lines = []
    for bag, entry in per_bag.items():
        windows = ', '.join(f'{joint} {fmt(w, 3)}' for joint, w in entry['windows'].items())
        lines.append(f"- `{bag}`: differentiation windows [s] ({entry['window_rule']}): "
                     f"{windows}; time base: {entry['time_base']}")
    return lines + [''] if lines else []


def markdown(data: dict) -> str:
    """identification.md from the identification.json dictionary."""
    settings = data['settings']
    joints = list(data['noise'])
    lines = ['# Identification', '',
             f"Bags: {', '.join(settings['bags'])}; URDF `{settings['urdf']}`; "
             f"inertial `{data['inertial']}`; friction `{settings['friction']}`; validation: "
             f"{settings['validation']}.", '',
             f"Samples: {data['samples']['training']} training, "
             f"{data['samples']['validation']} validation, "
             f"{data['samples']['dropped_nan_effort']} dropped (NaN effort), "
             f"{data['samples']['at_limit']} with a joint at a position or effort limit "
             '(its rows not fitted).', '']
    lines += _differentiation_lines(data.get('differentiation') or {})
    if data['warnings']:
        lines += ['## Warnings', ''] + [f'- {w}' for w in data['warnings']] + ['']
    lines += ['## RMS residual per joint (measured − predicted)', '',
              '| model | data | ' + ' | '.join(joints) + ' |',
              '|---|---|' + '---|' * len(joints)]
    for model, sets in data['rms'].items():
        for name, values in sets.items():
            lines.append(f'| {model} | {name} | '
                         + ' | '.join(fmt(values[j]) for j in joints) + ' |')
    lines += ['', '`urdf+friction`: the URDF with only the joint terms (friction, armature) '
              'fitted; `identified`: the identified model with its joint terms. '
              '`validation_moving`: the validation rows the fit would use, without the rows of '
              'a joint nearly at rest (its friction is stiction there).', '',
              '## Actuation model', '', '| joint | noise σ | '
              + ' | '.join(next(iter(data['actuation'].values()))) + ' |',
              '|---|---|' + '---|' * len(next(iter(data['actuation'].values())))]
    for joint, terms in data['actuation'].items():
        lines.append(f'| {joint} | {fmt(data["noise"][joint])} | '
                     + ' | '.join(fmt(v) for v in terms.values()) + ' |')
    if 'effort_gain' in data:
        gains = data['effort_gain']
        anchor = gains['anchor']
        lines += ['', '## Effort gains', '',
                  'Measured torque = gain × effort; anchored by '
                  + ' and '.join(([f"{fmt(anchor['mass'])} kg on `{anchor['link']}` in "
                                   f"{', '.join(anchor['bags'])}"] if anchor['link'] else [])
                                 + ([f"the URDF's inertial parameters within "
                                     f"{fmt(anchor['prior'])} × their prior scale"]
                                    if anchor['prior'] is not None else [])) + '.', '',
                  'Validation RMS: the identified model against the validation effort, in the '
                  "effort's units, with the fitted gain and with gain 1.", '',
                  '| joint | gain | least squares | std | validation RMS, fitted gain | '
                  'validation RMS, gain 1 | determined |', '|---|---|---|---|---|---|---|']
        for joint, entry in gains['joints'].items():
            rms = entry['validation_rms']
            lines.append(f"| {joint} | {fmt(entry['gain'])} | {fmt(entry['least_squares'])} | "
                         f"{fmt(entry['std'], 2)} | {fmt(rms['fitted_gain'])} | "
                         f"{fmt(rms['gain_1'])} | "
                         + ('yes' if entry['determined'] else
                            'no (' + entry['reason'].split(':')[0] + ')') + ' |')
    if settings.get('offset') == 'sensor-bias':
        lines += ['', '`offset`: the bias of the effort sensor (`--offset sensor-bias`), not a '
                  'torque: actuation.yaml has it as `effort_bias.<joint>`.']
    excitation = data['excitation']
    lines += ['', '## Excitation', '',
              'Condition number of the weighted base regressor (unit-norm columns): '
              f"{fmt(excitation['condition_number'])}; "
              f"{len(excitation['base_parameters'])} base parameters (QR rank tolerance "
              f"{excitation['rank_tolerance']:g}). Torques and regressor low-passed at "
              f"{fmt(excitation['low_pass_cutoff'])} Hz; std: the Newey-West sandwich for "
              f"residuals correlated over {fmt(excitation['correlation_time'])} samples "
              f"(window {excitation['newey_west_lag']} samples); white std: what white "
              'residuals would give; departure: (final − least squares) / std.', '',
              '| base parameter | least squares | std | white std | relative std | final | '
              'departure | absorbs |',
              '|---|---|---|---|---|---|---|---|']
    for p in excitation['base_parameters']:
        absorbs = len(p['absorbs'])
        lines.append(f"| {p['name']} | {fmt(p['least_squares'])} | {fmt(p['std'])} | "
                     f"{fmt(p['white_std'])} | {fmt(p['relative_std'], 2)} | "
                     f"{fmt(p['final'])} | {fmt(p['departure'], 2)} | {absorbs or ''} |")
    mass = data['total_mass']
    lines += ['', '## Links', '',
              f"Total mass: {fmt(mass['urdf'], 6)} kg in the URDF, "
              f"{fmt(mass['identified'], 6)} kg identified.", '',
              'Mass and centre of mass: URDF → identified ± one standard deviation (the '
              "linearised posterior; the prior's where the data are silent).", '',
              '| link | m [kg] | c (URDF → identified) [m] | changed parameters | consistent |',
              '|---|---|---|---|---|']
    for link, entry in data['links'].items():
        old, new = entry['urdf'], entry['identified']
        changed = [p for p in INERTIAL if abs(new[p] - old[p]) > 1e-9 * max(1.0, abs(old[p]))]
        com_old = [old[p] / old['m'] if old['m'] else 0.0 for p in INERTIAL[1:4]]
        com_new = [new[p] / new['m'] if new['m'] else 0.0 for p in INERTIAL[1:4]]
        mass_std = f" ± {fmt(entry['mass_std'], 2)}" if 'mass_std' in entry else ''
        com_std = f" ± {', '.join(fmt(c, 2) for c in entry['com_std'])}" \
            if 'com_std' in entry else ''
        lines.append(f"| {link} | {fmt(old['m'])} → {fmt(new['m'])}{mass_std} | "
                     f"{', '.join(fmt(c, 3) for c in com_old)} → "
                     f"{', '.join(fmt(c, 3) for c in com_new)}{com_std} | "
                     f"{', '.join(changed) or 'none'} | "
                     f"{fmt(entry.get('physically_consistent', '–'))} |")
    lines += ['', 'Outputs: ' + ', '.join(f'`{o}`' for o in data['outputs']), '']
    return '\n'.join(lines)
