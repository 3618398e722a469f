"""
Interactive HTML reports (plotly): self-contained pages that open offline in a browser.

A page is built from sections (``page``): headings, HTML tables (``table``) and plotly
figures; the plotly.js bundle (about 4.7 MB) is inlined once, in the first figure, so the file
needs no network. Figures are plain SVG ``Scatter`` traces (no WebGL), zoomable, with a
dropdown that selects which option (a joint, a robot) is shown (``selector_figure``).

Long recordings are reduced before they go into the page (``rnea_ros.bag.downsample``): the
time axis is cut into 1000 buckets of equal sample count (about one per horizontal pixel of a
wide plot) and each line keeps its minimum and maximum in every bucket, in time order, so
peaks stay visible at any length; stacked areas keep each bucket's mean. Values are stored as
float32 (base64 in the page). A one-hour 1 kHz bag of a 7-DoF arm gives a page of about 6 MB,
of which the plotly.js bundle is 4.7 MB; zooming in shows the envelope, not every sample (the
tables hold every sample).

``write_bag_report`` is the per-bag page of ``rnea_bag``; ``line_traces``, ``selector_figure``,
``table`` and ``page`` are the building blocks other reports (the fleet's) reuse.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
import html
from pathlib import Path

import numpy as np

from rnea_ros.bag import detectable
from rnea_ros.bag.downsample import bucket_means, BUCKETS, envelope, ReducedBag
from rnea_ros.bag.plots import TERM_STYLE

PLOTLY_CONFIG = {'displaylogo': False, 'responsive': True, 'scrollZoom': False}
STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.9em}
th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
.facts td{text-align:left}.note{color:#555;font-size:0.9em}.warning{color:#a40}"""


def _float32(values: np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


def line_traces(x: np.ndarray, columns: Mapping[str, np.ndarray], *,
                colours: Mapping[str, str] | None = None, buckets: int = BUCKETS,
                mode: str = 'lines', **style) -> list:
    """
    One plotly ``Scatter`` per column of a dataframe-like dict, reduced by ``envelope``.

    ``columns``: trace name -> (N,) values over ``x``; ``colours``: trace name -> colour;
    ``style``: more ``Scatter`` properties (e.g. ``legendgroup``).
    """
    import plotly.graph_objects as go
    x, reduced = envelope(x, columns, buckets)
    colours = colours or {}
    return [go.Scatter(x=_float32(x), y=_float32(values), name=name, mode=mode,
                       line={'width': 1, **({'color': colours[name]} if name in colours
                                            else {})}, **style)
            for name, values in reduced.items()]


def stacked_traces(x: np.ndarray, terms: Mapping[str, np.ndarray], *, group: str,
                   buckets: int = BUCKETS) -> list:
    """
    Stack terms as areas: positive parts above zero, negative parts below (bucket means).

    ``terms``: name (a key of ``TERM_STYLE`` or any label) -> (N,) values; all-zero terms are
    left out. ``group`` names the two stacks (unique per figure).
    """
    import plotly.graph_objects as go
    x, means = bucket_means(x, terms, buckets)
    traces = []
    for sign, stack in ((1.0, 'above'), (-1.0, 'below')):
        for name, values in means.items():
            if not np.any(values):
                continue
            label, colour = TERM_STYLE.get(name, (name, None))
            part = np.maximum(sign * values, 0.0) * sign
            traces.append(go.Scatter(
                x=_float32(x), y=_float32(part), name=label, mode='lines',
                stackgroup=f'{group}-{stack}', legendgroup=label, showlegend=sign > 0,
                line={'width': 0, **({'color': colour} if colour else {})},
                fillcolor=colour, hoverinfo='x+y+name'))
    return traces


def selector_figure(options: Mapping[str, Sequence[tuple[int, object]]],
                    row_titles: Sequence[str], *, title: str = '',
                    axis_titles: Mapping[str, Sequence[str]] | None = None,
                    selector_label: str = 'show', height_per_row: int = 280):
    """
    Build stacked subplots (shared, zoomable time axis) with a dropdown over ``options``.

    ``options``: option label (e.g. a joint) -> [(row, trace), ...], rows counted from 1;
    only the first option's traces are visible until another is chosen. ``axis_titles``:
    option -> y-axis title per row (units may differ between options).
    """
    from plotly.subplots import make_subplots
    figure = make_subplots(rows=len(row_titles), cols=1, shared_xaxes=True,
                           vertical_spacing=0.06, subplot_titles=list(row_titles))
    owners = []
    for index, items in enumerate(options.values()):
        for row, trace in items:
            trace.visible = index == 0
            figure.add_trace(trace, row=row, col=1)
            owners.append(index)
    owners = np.array(owners)
    buttons = []
    for index, label in enumerate(options):
        layout = {}
        if axis_titles and label in axis_titles:
            for row, text in enumerate(axis_titles[label], start=1):
                layout[f'yaxis{row if row > 1 else ""}.title.text'] = text
        buttons.append({'label': label, 'method': 'update',
                        'args': [{'visible': (owners == index).tolist()}, layout]})
    first = next(iter(options), None)
    if axis_titles and first in axis_titles:
        for row, text in enumerate(axis_titles[first], start=1):
            figure.update_yaxes(title_text=text, row=row, col=1)
    figure.update_xaxes(title_text='time from bag start [s]', row=len(row_titles), col=1)
    selector = len(buttons) > 1
    figure.update_layout(
        title={'text': title, 'x': 0.01, 'y': 0.99, 'yanchor': 'top'},
        height=140 + height_per_row * len(row_titles),
        margin={'l': 70, 'r': 20, 't': 110, 'b': 50}, hovermode='x',
        updatemenus=[{'buttons': buttons, 'direction': 'down', 'x': 0.07, 'xanchor': 'left',
                      'y': 1.0, 'yanchor': 'bottom', 'showactive': True,
                      'pad': {'b': 30}}] if selector else [],
        annotations=list(figure.layout.annotations) + ([{
            'text': f'{selector_label}:', 'showarrow': False, 'xref': 'paper', 'yref': 'paper',
            'x': 0.0, 'xanchor': 'left', 'y': 1.0, 'yanchor': 'bottom', 'yshift': 38}]
            if selector else []))
    return figure


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Render an HTML table; cells are escaped, floats shown with 4 significant digits."""
    def cell(value) -> str:
        if value is None or (isinstance(value, float) and not np.isfinite(value)):
            return '–'
        if isinstance(value, float):
            return f'{value:.4g}'
        return html.escape(str(value))
    head = ''.join(f'<th>{html.escape(str(h))}</th>' for h in header)
    body = ''.join('<tr>' + ''.join(f'<td>{cell(v)}</td>' for v in row) + '</tr>'
                   for row in rows)
    return f'<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def page(title: str, sections: Sequence[object]) -> str:
    """Render a complete HTML document of ``sections`` (HTML strings or plotly figures)."""
    parts = []
    bundled = False
    for section in sections:
        if isinstance(section, str):
            parts.append(section)
        else:
            parts.append(section.to_html(full_html=False, include_plotlyjs=not bundled,
                                         config=PLOTLY_CONFIG))
            bundled = True
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>\n'
            + '\n'.join(parts) + '\n</body></html>\n')


def write_page(path: Path, title: str, sections: Sequence[object]) -> Path:
    """Write ``page(title, sections)`` to ``path`` (UTF-8); returns ``path``."""
    path.write_text(page(title, sections), encoding='utf-8')
    return path


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
