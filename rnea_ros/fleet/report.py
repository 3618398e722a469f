"""
``report.html`` of a fleet: a self-contained page (plotly.js embedded) that opens offline.

The residual-over-time trends - per robot and joint, the residual RMS of each bag over the
bag start time, drifting joints in red, every judged joint with its drift threshold - with a
selector (all, drifting, one robot, one robot and joint); the drift headline (what was judged)
and a legend of the verdicts; the per-(robot, joint) table with the verdicts; the bags not
judged (motion unlike their robot's usual one) with the reason; the failed bags with their
errors. Plotly draws the plots; the page itself is static
HTML written here (no hand-written JavaScript).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
import html
import math

from rnea_ros.fleet import comparable, drift
from rnea_ros.fleet.task import Outcome

DRIFT_COLOR = '#d62728'
STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; } td.name { text-align: left; font-family: monospace; }
tr.drift td { background: #fde2e2; font-weight: bold; }
tr.notjudged td { color: #777; }
dl.legend dt { font-weight: bold; } dl.legend dd { margin: 0 0 0.4em 1.5em; }
"""


def _utc(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).replace(tzinfo=None)


def _num(value: float, digits: int = 4) -> str:
    return '–' if value is None or math.isnan(value) else f'{value:.{digits}g}'


def trends_figure(outcomes: Sequence[Outcome], checks: Sequence[drift.Check],
                  not_judged: Mapping[str, str] | None = None):
    """Plot the judged bags' residual RMS over bag start (plotly), a trace per (robot, joint)."""
    import plotly.graph_objects as go
    series: dict[tuple[str, str], list] = defaultdict(list)
    for o in outcomes:
        if o.status != 'ok' or o.bag in (not_judged or {}):
            continue
        for j in o.joints:
            if not math.isnan(j.rms_residual):
                series[o.robot or '', j.joint].append((o.start_ns, o.bag, j.rms_residual))
    by_key = {(c.robot, c.joint): c for c in checks}
    figure = go.Figure()
    owners: list[tuple[str, str, bool]] = []  # (robot, joint, is threshold) per trace
    for (robot, joint), points in sorted(series.items()):
        points.sort()
        check = by_key.get((robot, joint))
        flagged = check is not None and check.flagged
        x = [_utc(p[0]) for p in points]
        figure.add_trace(go.Scatter(
            x=x, y=[p[2] for p in points], text=[p[1] for p in points],
            mode='lines+markers', name=f'{robot} / {joint}' + (' (DRIFT)' if flagged else ''),
            legendgroup=f'{robot}/{joint}',
            line={'color': DRIFT_COLOR, 'width': 3} if flagged else {'width': 1.5},
            hovertemplate='%{text}<br>%{x}<br>RMS residual %{y:.4g}<extra>'
            f'{html.escape(robot)} / {html.escape(joint)}</extra>'))
        owners.append((robot, joint, False))
        if check is not None and math.isfinite(check.threshold):
            figure.add_trace(go.Scatter(
                x=[x[0], x[-1]], y=[check.threshold] * 2, mode='lines',
                name=f'{robot} / {joint} threshold',
                legendgroup=f'{robot}/{joint}', showlegend=False,
                line={'dash': 'dash', 'color': DRIFT_COLOR if flagged else '#888'},
                hovertemplate=f'drift threshold {check.threshold:.4g}<extra></extra>'))
            owners.append((robot, joint, True))
    flagged_keys = {(c.robot, c.joint) for c in checks if c.flagged}

    def button(label, wanted):
        visible = [wanted(robot, joint) and (not threshold or label != 'all')
                   for robot, joint, threshold in owners]
        return {'label': label, 'method': 'update',
                'args': [{'visible': visible}, {'title.text': f'Residual RMS per bag: {label}'}]}
    buttons = [button('all', lambda r, j: True)]
    if flagged_keys:
        buttons.append(button('drifting', lambda r, j: (r, j) in flagged_keys))
    robots = sorted({robot for robot, _ in series})
    for robot in robots:
        buttons.append(button(robot, lambda r, j, robot=robot: r == robot))
    for robot, joint in sorted(series):
        buttons.append(button(f'{robot} / {joint}',
                              lambda r, j, key=(robot, joint): (r, j) == key))
    initial = buttons[0]['args'][0]['visible']
    for trace, visible in zip(figure.data, initial):
        trace.visible = visible
    figure.update_layout(
        title={'text': 'Residual RMS per bag: all'}, height=560, hovermode='closest',
        xaxis={'title': {'text': 'bag start (UTC)'}},
        yaxis={'title': {'text': 'RMS residual (measured - predicted) [N·m, N]'},
               'rangemode': 'tozero'},
        updatemenus=[{'buttons': buttons, 'direction': 'down', 'x': 0.0, 'xanchor': 'left',
                      'y': 1.12, 'yanchor': 'bottom', 'showactive': True}],
        margin={'t': 110})
    return figure


def legend(thresholds: drift.Thresholds) -> str:
    """Return the legend of the verdicts (HTML): what each word says and how it is decided."""
    return (
        '<dl class="legend">'
        '<dt>drifting</dt><dd>the residual RMS of the last bags (median, up to '
        f'{thresholds.recent_bags}) is above that of the first bags (median, up to '
        f'{thresholds.baseline_bags}) by more than the bag-to-bag scatter explains '
        f'(one-sided test, false-alarm rate {thresholds.alpha:g} over all judged joints, '
        f'Holm) and above the threshold max({thresholds.factor:g} &times; baseline, '
        f'baseline + {thresholds.floor:g}).</dd>'
        '<dt>stable</dt><dd>judged, and not drifting.</dd>'
        '<dt>not judged: needs N more bags</dt><dd>fewer than '
        f'{thresholds.min_bags} bags with measured effort: nothing is said about its drift; '
        'N more bags will judge it.</dd>'
        '<dt>z, p (Holm)</dt><dd>the growth in units of its expected scatter; the chance of '
        'a growth this large without drift, adjusted for the number of judged joints.</dd>'
        '<dt>bag not judged</dt><dd>' + _markdown_bold(comparable.rule()) + '</dd>'
        '</dl>')


def _markdown_bold(text: str) -> str:
    return html.escape(text).replace('**', '')


def page(outcomes: Sequence[Outcome], checks: Sequence[drift.Check],
         thresholds: drift.Thresholds, not_judged: Mapping[str, str] | None = None) -> str:
    """Return the whole page as a string (``not_judged``: bag -> why it was left out)."""
    import plotly.io as pio
    not_judged = not_judged or {}
    ok = [o for o in outcomes if o.status == 'ok']
    failed = sorted((o for o in outcomes if o.status != 'ok'), key=lambda o: o.bag)
    flagged = [c for c in checks if c.flagged]
    figure = trends_figure(outcomes, checks, not_judged)
    plot = pio.to_html(figure, include_plotlyjs=True, full_html=False, div_id='trends',
                       config={'displaylogo': False, 'responsive': True})
    esc = html.escape
    parts = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
             '<title>Fleet torque analysis</title>', f'<style>{STYLE}</style></head><body>',
             '<h1>Fleet torque analysis</h1>',
             f'<p>{len(outcomes)} bags: {len(ok)} analysed, {len(failed)} failed; '
             f'{len({o.robot for o in ok})} robots. ',
             f'<strong>Drift: {esc(drift.headline(list(checks), len(not_judged)))}.</strong>',
             (' Drifting: ' + ', '.join(f'{esc(c.robot)} / {esc(c.joint)}' for c in flagged)
              if flagged else '') + '</p>', legend(thresholds),
             plot, '<h2>Per robot and joint</h2>', '<table id="joints"><tr><th>robot</th>'
             '<th>joint</th><th>bags</th><th>verdict</th><th>baseline</th>'
             '<th>current</th><th>ratio</th><th>threshold</th><th>z</th><th>p (Holm)</th>'
             '</tr>']
    order = {drift.DRIFTING: 0, drift.STABLE: 1}
    for c in sorted(checks, key=lambda c: (order.get(c.verdict, 2), c.robot, c.joint)):
        kind = 'drift' if c.flagged else 'stable' if c.judged else 'notjudged'
        parts.append(f'<tr class="{kind}">'
                     f'<td class="name">{esc(c.robot)}</td><td class="name">{esc(c.joint)}</td>'
                     f'<td>{c.bags}</td><td>{esc(c.verdict)}</td><td>{_num(c.baseline)}</td>'
                     f'<td>{_num(c.current)}</td>'
                     f'<td>{_num(c.ratio, 3)}</td><td>{_num(c.threshold)}</td>'
                     f'<td>{_num(c.statistic, 3)}</td><td>{_num(c.p_adjusted, 2)}</td></tr>')
    parts.append('</table>')
    if not_judged:
        parts += ['<h2>Bags not judged</h2>', '<table id="not-judged"><tr><th>bag</th>'
                  '<th>robot</th><th>why</th></tr>']
        parts += [f'<tr><td class="name">{esc(o.bag)}</td><td class="name">{esc(o.robot)}</td>'
                  f'<td class="name">{esc(not_judged[o.bag])}</td></tr>'
                  for o in sorted(ok, key=lambda o: o.bag) if o.bag in not_judged]
        parts.append('</table>')
    if failed:
        parts += ['<h2>Failed bags</h2>', '<table id="failed"><tr><th>bag</th><th>path</th>'
                  '<th>error</th></tr>']
        parts += [f'<tr><td class="name">{esc(o.bag)}</td><td class="name">{esc(o.path)}</td>'
                  f'<td class="name">{esc(o.error)}</td></tr>' for o in failed]
        parts.append('</table>')
    parts.append('</body></html>')
    return '\n'.join(parts) + '\n'
