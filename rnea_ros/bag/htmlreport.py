"""
``report.html`` of ``rnea_bag``: the run, one interactive figure per joint, the summary tables.

Built from the plotly building blocks of ``rnea_ros.tools.htmlpage``; long recordings are reduced
first (``rnea_ros.tools.downsample``).
"""
from __future__ import annotations

from collections.abc import Sequence
import html
from pathlib import Path

import numpy as np

from rnea_ros.bag import detectable
from rnea_ros.bag.plots import TERM_STYLE
from rnea_ros.tools.downsample import ReducedBag
from rnea_ros.tools.htmlpage import line_traces, selector_figure, stacked_traces, table, write_page


def bag_figure(reduced: ReducedBag, labels: Sequence[str], units: Sequence[str],
               title: str = ''):
    """Predicted vs measured effort, the stacked terms and the residual, one joint at a time."""
    lines, areas = reduced.lines, reduced.areas
    rows = ['predicted vs measured effort', 'torque by term (stacked) and total']
    if 'residual' in lines:
        rows.append('residual = measured - predicted')
    colours = {'predicted (RNEA)': '#1f77b4', 'measured effort': '#d62728',
               'total': '#000000', 'residual': '#9467bd'}
    options, axis_titles = {}, {}
    for k, label in enumerate(labels):
        effort = {'predicted (RNEA)': lines['predicted'][:, k]}
        if 'measured' in lines and np.isfinite(lines['measured'][:, k]).any():
            effort['measured effort'] = lines['measured'][:, k]
        items = [(1, trace) for trace in line_traces(reduced.line_time, effort,
                                                     colours=colours, legendgroup='effort')]
        items += [(2, trace) for trace in stacked_traces(
            reduced.area_time, {term: values[:, k] for term, values in areas.items()
                                if term != 'total'}, group=f'terms{k}')]
        items += [(2, trace) for trace in line_traces(
            reduced.area_time, {'total': areas['total'][:, k]}, colours=colours)]
        if 'residual' in lines:
            items += [(3, trace) for trace in line_traces(
                reduced.line_time, {'residual': lines['residual'][:, k]}, colours=colours)]
        options[label] = items
        axis_titles[label] = [f'{label} [{units[k]}]'] * len(rows)
    return selector_figure(options, rows, title=title, axis_titles=axis_titles,
                           selector_label='joint')


def write_bag_report(path: Path, reduced: ReducedBag, labels: Sequence[str],
                     units: Sequence[str], summary: dict) -> Path:
    """``report.html`` of one bag: the run, the interactive figure, the summary tables."""
    info = summary['run']
    heading = f'Torque analysis of {summary["bag"]}'
    facts = [
        ('robot', f'{info["robot"]} ({info["nv"]} DoF, floating base: '
                  f'{info["floating_base"]})'),
        ('joint_states', f'{info["joint_states"]}: {info["samples"]} samples over '
                         f'{info["duration"]:.4g} s, median rate {info["rate"] or 0:.4g} Hz, '
                         f'clock {info["clock"]}'),
        ('accelerations', info['acceleration_source']),
    ]
    sections = [f'<h1>{html.escape(heading)}</h1>',
                '<div class="facts">' + table(['', ''], facts).replace(
                    '<thead><tr><th></th><th></th></tr></thead>', '') + '</div>']
    if summary.get('warnings'):
        sections.append('<ul class="warning">' + ''.join(
            f'<li>{html.escape(w)}</li>' for w in summary['warnings']) + '</ul>')
    sections.append(bag_figure(reduced, labels, units, title=f'{info["robot"]}: joint effort'))
    if reduced.reduced:
        sections.append(f'<p class="note">{reduced.samples} samples shown as the minimum and '
                        f'maximum of {reduced.buckets} time buckets (areas: bucket means); the '
                        'tables beside this page hold every sample.</p>')
    measured_columns = any('rms_residual' in j for j in summary['joints'])
    terms = [t for t in TERM_STYLE if any(t in j['rms_terms'] for j in summary['joints'])]
    header = ['joint', 'unit', 'RMS', 'peak', 'peak at [s]', 'peak / limit']
    header += [f'RMS {TERM_STYLE[t][0]}' for t in terms]
    header += ['RMS residual', 'peak residual'] if measured_columns else []
    rows = []
    for j in summary['joints']:
        row = [j['joint'], j['unit'], j['rms'], j['peak'], j['peak_time'], j['peak_over_limit']]
        row += [j['rms_terms'].get(t) for t in terms]
        row += [j.get('rms_residual'), j.get('peak_residual')] if measured_columns else []
        rows.append(row)
    sections += ['<h2>Per joint</h2>', table(header, rows)]
    windows = summary.get('worst_windows') or []
    if windows:
        sections += [f'<h2>Worst time windows ({html.escape(windows[0]["kind"])})</h2>',
                     table(['from [s]', 'to [s]', 'score', 'worst joint', 'its score'],
                           [[w['start'], w['end'], w['score'], w['worst_joint'],
                             w['worst_joint_score']] for w in windows])]
    observer = summary.get('observer')
    if observer:
        sections += [f'<h2>External torques (momentum observer, gain {observer["gain"]:g} '
                     f'1/s, {html.escape(observer["measured_effort"])} effort)</h2>',
                     f'<p class="note">Thresholds: {html.escape(observer["thresholds_source"])}'
                     '</p>',
                     table(['joint', 'RMS', 'peak', 'threshold'],
                           [[j['joint'], j['rms'], j['peak'], j['threshold']]
                            for j in observer['joints']])]
        if observer.get('smallest_detectable_force'):
            sections.append('<p>' + html.escape(detectable.describe(
                observer['smallest_detectable_force'])) + '</p>')
    if 'collisions' in summary:
        sections += ['<h2>Collisions</h2>',
                     table(['start [s]', 'end [s]', 'joint', 'peak'],
                           [[c['start'], c['end'], c['joint'], c['peak']]
                            for c in summary['collisions']])
                     if summary['collisions'] else '<p>None detected.</p>']
    return write_page(path, heading, sections)
