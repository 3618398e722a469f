"""
The summary.json dict of an ``rnea_bag`` run (``report`` writes it, with summary.md).

Per joint numbers come from ``report.summarize``; this adds what the run used: the bag, the
model, the sample times, the acceleration routes, locked joints and differentiator settings,
the actuation model and contacts (``add_run_parts``) and the output files (``add_outputs``): the
whole of summary.json is assembled here.
"""
from __future__ import annotations

import re

import numpy as np

from rnea_ros.bag import observing
from rnea_ros.bag.report import summarize
from rnea_ros.recording import accelerations, differentiate
from rnea_ros.tools.staging import Tool

# What rnea_bag writes into its output directory; summary.json lists a run's outputs.
TOOL = Tool('rnea_bag', 'summary.json', re.compile(
    r'(torques\.csv|(decomposition|residual|contact_wrenches)\.(csv|parquet)'
    r'|summary\.(json|md)|report\.html|(effort|decomposition)_[\w.-]+\.png|bag/?)'))


def run_summary(options, model, series, estimate, desired, seconds, labels, units, columns,
                parts, effort, warnings, source, edges_left_out) -> dict:
    """
    Build summary.json of a run: per joint numbers (``report.summarize``) and settings.

    ``estimate``: the ``accelerations.Estimate`` of the run (routes, windows, time base).
    """
    routes = estimate.routes
    sel = slice(None) if columns == list(range(len(labels))) else columns
    measured = effort[:, sel]
    summary = summarize(seconds, [labels[k] for k in columns], [units[k] for k in columns],
                        parts.total[:, sel], {t: x[:, sel] for t, x in parts.terms.items()},
                        None, model.effort_limits[sel], options.summary_window,
                        measured=measured if np.isfinite(measured).any() else None)
    rate = 1.0 / differentiate.median_interval(series.times_ns) if series.times_ns.size > 1 \
        else float('nan')
    estimated = accelerations.describe(routes)
    if desired is None:
        source_text = estimated
    else:
        share = float(np.isfinite(desired).mean()) if desired.size else 0.0
        source_text = (f'desired accelerations topic for {100 * share:.3g} % of values, '
                       f'the rest {estimated}')
    velocity_measured = float(np.isfinite(series.velocity).mean()) if series.velocity.size \
        else 0.0
    summary.update({
        'bag': str(options.bag),
        'run': {
            'joint_states': options.joint_states, 'samples': int(seconds.size),
            'start': float(seconds[0]), 'end': float(seconds[-1]),
            'duration': float(seconds[-1] - seconds[0]), 'rate': rate, 'clock': options.clock,
            'robot': model.name, 'urdf': source, 'nv': model.nv,
            'floating_base': model.floating_base, 'velocity_measured': velocity_measured,
            'acceleration_source': source_text,
            'acceleration_routes': [route.as_dict() for route in routes],
            'locked_joints': {name: {'position': value, 'source': why}
                              for name, (value, why) in series.locked.items()},
            'differentiation': dict(accelerations.settings(estimate, options.order),
                                    edge_samples_left_out=edges_left_out),
        },
        'warnings': list(warnings),
    })
    return json_safe(summary)


def json_safe(value):
    """Replace NaN and inf by None throughout (JSON has no NaN)."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def add_run_parts(summary: dict, options, actuation, solved, samples: int,
                  observed=None, judged=None) -> dict:
    """
    Add the actuation model (--actuation), the contacts (--contacts) used to ``summary``.

    With ``judged`` (``plausibility.Plausibility``) also ``plausibility``: the samples at a
    joint's position or effort limit and the joints beyond the URDF limits.

    With ``observed`` (--observer, ``observing.Observed``) also ``observer`` (settings, per
    joint RMS and peak external torque, thresholds) and, given thresholds, ``collisions``.
    """
    if actuation is not None:
        summary['actuation'] = actuation_summary(options.actuation, actuation)
    if solved is not None:
        summary['contacts'] = json_safe({
            'links': list(solved.links), 'kind': 'point', 'friction': options.friction,
            'schedule': 'in contact for the whole time window (the bag records none)',
            'samples': samples, 'infeasible_samples': solved.infeasible,
            'max_residual_norm': float(solved.residual_norm.max()),
        })
    if observed is not None:
        summary.update(json_safe(observing.summary_part(options, observed)))
    if judged is not None:
        summary['plausibility'] = json_safe(judged.summary())
    return summary


def add_outputs(summary: dict, files) -> dict:
    """Add the names of the output files (and summary.json, summary.md) to ``summary``."""
    summary['outputs'] = [f.name + ('/' if f.is_dir() else '') for f in files] + [
        'summary.json', 'summary.md']
    return summary


def actuation_summary(path, actuation) -> dict:
    """Describe the actuation model used: file, model, threshold, joints with terms, parameters."""
    names = actuation.joint_names
    friction = actuation.friction_model != 'none'
    return json_safe({
        'file': str(path), 'friction_model': actuation.friction_model,
        'velocity_threshold': actuation.velocity_threshold,
        'friction_joints': [name for k, name in enumerate(names) if friction and (
            actuation.coulomb[k] or actuation.viscous[k] or actuation.offset[k])],
        'armature_joints': [name for k, name in enumerate(names) if actuation.armature[k]],
        'effort_bias_joints': [name for k, name in enumerate(names)
                               if actuation.effort_bias[k]],
        'effort_gain_joints': [name for k, name in enumerate(names)
                               if name and actuation.effort_gain[k] != 1.0],
        'parameters': actuation.to_parameters(),
    })
