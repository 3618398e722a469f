"""
The summary.json dict of an ``rnea_bag`` run (``report`` writes it, with summary.md).

Per joint numbers come from ``report.summarize``; this adds what the run used: the bag, the
model, the sample times, the acceleration routes, locked joints and differentiator settings.
"""
from __future__ import annotations

import numpy as np

from rnea_ros.bag.report import summarize
from rnea_ros.recording import accelerations, differentiate


def run_summary(options, model, series, diff, desired, seconds, labels, units, columns, parts,
                effort, warnings, source, routes, edges_left_out) -> dict:
    """Build summary.json of a run: per joint numbers (``report.summarize``) and settings."""
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
            'differentiation': dict(differentiate.settings(diff, options.order),
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
