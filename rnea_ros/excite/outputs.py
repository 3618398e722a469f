"""
What ``rnea_excite`` writes into ``--output DIR``: every file, or none.

- ``trajectory.yaml``: a ``trajectory_msgs/JointTrajectory`` (the message's fields as YAML,
  as ``ros2 topic pub`` takes them): every joint of the URDF, per point positions,
  velocities, accelerations and ``time_from_start``; the held joints at their rest position.
  joint_trajectory_controller, the simulated robot (``rnea_sim``) and the node's
  ``planned_trajectory`` input play it;
- ``trajectory.csv``: the same points, a column per joint and quantity, with the torques the
  URDF model predicts;
- ``trajectory.html``: an interactive plot (plotly) per joint: position, velocity,
  acceleration and torque with their limits;
- ``excitation.json`` and ``excitation.md``: the report: the conditioning reached and that of
  random sines within the same limits, the base parameters the motion excites, the limits
  used and how much of each the motion takes, the Fourier coefficients, warnings.

Staged and committed as ``rnea_bag``'s outputs (``rnea_ros.tools.staging``): a directory that
holds files is refused without ``--overwrite``; nothing is written outside it or through a
symlink planted in it; ``excitation.json`` is written last.
"""
from __future__ import annotations

import html
import io
import json
from pathlib import Path
import re

import numpy as np
import yaml

from rnea_ros.excite.limits import effort_unit, unit
from rnea_ros.tools.staging import Staging, Tool
from rnea_ros.tools.text import bullets, fmt

TOOL = Tool('rnea_excite', 'excitation.json', re.compile(
    r'trajectory\.(yaml|csv|html)|excitation\.(json|md)'))


def trajectory_message(names, times: np.ndarray, q: np.ndarray, v: np.ndarray,
                       a: np.ndarray) -> dict:
    """Return the fields of a trajectory_msgs/JointTrajectory (header stamp 0: start now)."""
    points = []
    for k, t in enumerate(times):
        sec = int(np.floor(t))
        nanosec = min(int(round((t - sec) * 1e9)), 999_999_999)
        points.append({'positions': q[k].tolist(), 'velocities': v[k].tolist(),
                       'accelerations': a[k].tolist(), 'effort': [],
                       'time_from_start': {'sec': sec, 'nanosec': nanosec}})
    return {'header': {'stamp': {'sec': 0, 'nanosec': 0}, 'frame_id': ''},
            'joint_names': list(names), 'points': points}


def csv_text(names, times, q, v, a, tau) -> str:
    """time, then per joint position, velocity, acceleration and the URDF model's torque."""
    header = ['time'] + [f'{name}.{field}' for field in
                         ('position', 'velocity', 'acceleration', 'effort') for name in names]
    buffer = io.StringIO()
    np.savetxt(buffer, np.column_stack([times, q, v, a, tau]), delimiter=',', fmt='%.9g',
               header=','.join(header), comments='')
    return buffer.getvalue()


def figure(model, limits, times, q, v, a, tau, title: str):
    """Position, velocity, acceleration and torque of each joint, their limits dashed."""
    from rnea_ros.tools import htmlpage
    rows = ['position', 'velocity', 'acceleration', 'torque (URDF model)']
    options, axis_titles = {}, {}
    ends = np.array([times[0], times[-1]])
    for k, joint in enumerate(model.joints):
        u, e = unit(joint), effort_unit(joint)
        bounds = ((limits.lower[k], limits.upper[k]), (-limits.velocity[k], limits.velocity[k]),
                  (-limits.acceleration[k], limits.acceleration[k]),
                  (-limits.effort[k], limits.effort[k]))
        items = []
        for row, (values, (low, high)) in enumerate(zip((q, v, a, tau), bounds), start=1):
            items += [(row, trace) for trace in htmlpage.line_traces(
                times, {rows[row - 1]: values[:, k]}, colours={rows[row - 1]: '#1f77b4'},
                showlegend=False)]
            if np.isfinite(high):
                items += [(row, trace) for trace in htmlpage.line_traces(
                    ends, {'limit': np.array([high, high]), 'limit ': np.array([low, low])},
                    colours={'limit': '#d62728', 'limit ': '#d62728'}, showlegend=False)]
        options[joint.name] = items
        axis_titles[joint.name] = [f'[{u}]', f'[{u}/s]', f'[{u}/s^2]', f'[{e}]']
    out = htmlpage.selector_figure(options, rows, title=title, axis_titles=axis_titles,
                                   selector_label='joint', height_per_row=200)
    out.update_xaxes(title_text='time from start [s]', row=len(rows), col=1)
    return out


def markdown(report: dict) -> str:
    """Render the report as Markdown (``excitation.md``)."""
    c, t = report['conditioning'], report['trajectory']
    lines = [f'# Excitation trajectory for {report["robot"]}', '',
             f'{t["duration"]:g} s: {t["periods"]} periods of {t["period"]:g} s, '
             f'{t["harmonics"]} harmonics of {t["base_frequency"]:g} Hz, '
             f'{t["points"]} points every {t["point_interval"]:g} s; moving joints: '
             f'{", ".join(t["moving"])}.', '',
             f'Condition number of the weighted base regressor: **{c["condition_number"]:.4g}** '
             f'(random sines within the same limits: {c["random_condition_number"]:.4g}); '
             f'{c["objective"]}: {c["log_det_per_parameter"]:.4g}.', '']
    if report['warnings']:
        lines += [*bullets('Warnings', report['warnings']), '']
    lines += ['## Limits and their use', '',
              '| joint | rest | lower | upper | velocity | acceleration | effort '
              '| position used | velocity used | acceleration used | effort used |',
              '|---|---|---|---|---|---|---|---|---|---|---|']
    for name, row in report['limits'].items():
        used = row['used']
        lines.append(f'| {name} | {row["rest"]:.4g} | {row["lower"]:.4g} | {row["upper"]:.4g} '
                     f'| {row["velocity"]:.4g} | {row["acceleration"]:.4g} '
                     f'| {fmt(row["effort"])} | ' + ' | '.join(
                         f'{100 * used[kind]:.0f} %' for kind in
                         ('position', 'velocity', 'acceleration', 'effort')) + ' |')
    lines += ['', f'Limits: the URDF\'s times {report["limits_scale"]:g} (position ranges about '
              'their middle), accelerations as given.', '']
    if report['planes']:
        lines += [*bullets('Planes', (f'{p["link"]} above z = {p["height"]:g} m: lowest '
                                      f'{p["height"] + p["margin"]:.4g} m'
                                      for p in report['planes'])), '']
    lines += bullets(f'Base parameters excited ({len(report["base_parameters"])})', (
        item['name'] + ''.join(f' {c:+.4g} {n}' for n, c in item['grouped'])
        for item in report['base_parameters']))
    o = report['optimiser']
    lines += ['', f'Optimiser: {o["method"]}, {o["iterations"]} iterations, {o["seconds"]:.1f} '
              f's: {o["status"]}', '']
    return '\n'.join(lines)


def write(output: Path, overwrite: bool, report: dict, message: dict, csv: str,
          plot) -> list[Path]:
    """Stage and commit every output (module docstring); return their paths."""
    with Staging(output, overwrite, TOOL) as staging:
        staging.write_text('trajectory.yaml', yaml.safe_dump(message, sort_keys=False,
                                                             default_flow_style=None))
        staging.write_text('trajectory.csv', csv)
        names = ['trajectory.yaml', 'trajectory.csv']
        if plot is not None:
            from rnea_ros.tools import htmlpage
            with staging.writing('trajectory.html') as path:
                htmlpage.write_page(path, report['robot'], [
                    f'<h1>Excitation trajectory for {html.escape(report["robot"])}</h1>', plot])
            names.append('trajectory.html')
        names += ['excitation.md', 'excitation.json']
        report = {**report, 'outputs': names}
        staging.write_text('excitation.md', markdown(report))
        staging.write_text('excitation.json', json.dumps(report, indent=2) + '\n')
        return staging.commit(names)
