"""
Tables and the summary of a bag analysis: CSV/Parquet files, summary.json and summary.md.

Tables are wide: a ``time`` column (seconds from the bag start) and one float64 column per
quantity. Numbers are written so that they read back exactly: CSV holds the shortest
round-trip decimal of each value (``rnea_ros.bag.floattext``, the text pyarrow's CSV writer
gives); ``pyarrow``, when installed, writes Parquet. See ``rnea_ros.bag.cli`` for the files and
their columns.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
import importlib.util
import json
import math
import os
from pathlib import Path

import numpy as np

from rnea_ros.bag import detectable
from rnea_ros.bag.floattext import format_rows
from rnea_ros.errors import InputError
from rnea_ros.tools.column_stats import Moments, moments
from rnea_ros.tools.text import bullets, fmt

WORST_WINDOWS = 5
TABLE_ROWS = 1 << 17  # rows per block written (CSV: blocks formatted in parallel)


def have_pyarrow() -> bool:
    return importlib.util.find_spec('pyarrow') is not None


def write_table(path: Path, columns: Mapping[str, np.ndarray],
                threads: int | None = None) -> Path:
    """
    Write ``columns`` (name -> (N,) array) to ``path`` as Parquet or CSV.

    Write ``columns`` (name -> (N,) array) to ``path``, Parquet if its suffix is
    '.parquet' (needs pyarrow) else CSV with a plain header line, its text formatted on
    ``threads`` threads (default: one per core). Returns ``path``.
    """
    names = list(columns)
    arrays = [np.asarray(columns[name]) for name in names]
    rows = len(arrays[0]) if arrays else 0
    return _write_blocks(path, names, rows, lambda lo, hi: [x[lo:hi] for x in arrays],
                         threads)


def _write_blocks(path: Path, names: list[str], rows: int,
                  block: Callable[[int, int], list[np.ndarray]],
                  threads: int | None = None) -> Path:
    """
    ``write_table`` of the columns ``names`` whose rows lo:hi ``block(lo, hi)`` gives.

    Rows go ``TABLE_ROWS`` at a time: buffers are then reused, where whole columns would each
    be copied into freshly mapped memory (most of pyarrow's Parquet writing time).
    """
    edges = list(range(0, rows, TABLE_ROWS)) + [rows]
    spans = list(zip(edges[:-1], edges[1:])) or [(0, 0)]
    if path.suffix == '.parquet':
        import pyarrow as pa
        import pyarrow.parquet as pq

        def table(lo: int, hi: int):
            return pa.Table.from_arrays(block(lo, hi), names=names)
        first = table(*spans[0])
        # Float columns gain little from dictionaries or compression, which cost most of the
        # writing time.
        with pq.ParquetWriter(path, first.schema, use_dictionary=False, compression='none',
                              write_statistics=False) as writer:
            writer.write_table(first, row_group_size=TABLE_ROWS)
            for lo, hi in spans[1:]:
                writer.write_table(table(lo, hi), row_group_size=TABLE_ROWS)
        return path

    def text(span: tuple[int, int]) -> memoryview:
        lo, hi = span
        columns = np.empty((len(names), hi - lo))  # one contiguous row per column
        for k, values in enumerate(block(lo, hi)):
            columns[k] = values
        return format_rows(columns)
    # The formatter holds no GIL: blocks in parallel, written in order.
    with path.open('wb') as out, ThreadPoolExecutor(threads or os.cpu_count() or 1) as pool:
        out.write((','.join(names) + '\n').encode())
        for piece in pool.map(text, spans if rows else []):
            out.write(piece)
    return path


def table_suffix(fmt: str | None = None) -> str:
    """'.parquet' or '.csv': ``fmt``, by default parquet when pyarrow is installed."""
    suffix = '.' + (fmt or ('parquet' if have_pyarrow() else 'csv'))
    if suffix == '.parquet' and not have_pyarrow():
        raise InputError('--format parquet needs pyarrow (pip install pyarrow), or use '
                         '--format csv')
    return suffix


def write_tables(directory: Path, time: np.ndarray, labels: Sequence[str],
                 columns: Sequence[int], parts, effort: np.ndarray,
                 fmt: str | None = None, threads: int | None = None) -> list[Path]:
    """
    torques.csv, decomposition.<fmt> and, with measured effort, residual.<fmt>.

    ``parts``: ``decomposition.Decomposition``; ``effort`` (N, nv) measured, NaN where not
    recorded; ``columns``: the tau entries to write; ``fmt``: 'parquet' or 'csv' (default:
    parquet when pyarrow is installed); ``threads``: of the CSV formatting (default: one per
    core).
    """
    suffix = table_suffix(fmt)
    files = [write_table(directory / 'torques.csv',
                         {'time': time, **{labels[k]: parts.total[:, k] for k in columns}},
                         threads)]
    table = {'time': time}
    for term in parts.terms:
        table.update({f'{term}/{labels[k]}': parts.terms[term][:, k] for k in columns})
    files.append(write_table(directory / f'decomposition{suffix}', table, threads))
    measured = [k for k in columns if np.isfinite(effort[:, k]).any()]
    residual = directory / f'residual{suffix}'
    if measured:
        names = (['time'] + [f'measured/{labels[k]}' for k in measured]
                 + [f'residual/{labels[k]}' for k in measured])

        def block(lo: int, hi: int) -> list[np.ndarray]:
            rows = slice(lo, hi)
            effort_rows = effort[rows, measured]
            return [time[rows], *effort_rows.T,
                    *(effort_rows - parts.total[rows, measured]).T]
        files.append(_write_blocks(residual, names, len(time), block, threads))
    elif residual.exists():
        residual.unlink()  # from an earlier run on another bag
    return files


def read_table(path: Path) -> dict[str, np.ndarray]:
    """Read back a table written by ``write_table`` (tests and users)."""
    if path.suffix == '.parquet':
        import pyarrow.parquet as pq
        table = pq.read_table(path)
        return {name: table.column(name).to_numpy() for name in table.column_names}
    with path.open() as src:
        names = src.readline().strip().split(',')
    data = np.loadtxt(path, delimiter=',', skiprows=1, ndmin=2)
    return {name: data[:, k] for k, name in enumerate(names)}


def _rms(stats: Moments) -> np.ndarray:
    """Root mean square of each column over its finite values (NaN if none)."""
    with np.errstate(invalid='ignore', divide='ignore'):
        return np.where(stats.count > 0,
                        np.sqrt(stats.sum_squares / np.maximum(stats.count, 1)), np.nan)


def _finite_or_none(value: float):
    return None if value is None or not math.isfinite(value) else float(value)


def summarize(time: np.ndarray, labels: Sequence[str], units: Sequence[str],
              total: np.ndarray, terms: Mapping[str, np.ndarray],
              residual: np.ndarray | None, effort_limits: np.ndarray,
              window: float = 1.0, measured: np.ndarray | None = None) -> dict:
    """
    Per-joint statistics and the worst time windows, as a JSON-ready dict.

    Per joint: RMS and peak |torque| (and when), RMS of each term, peak |torque| over the URDF
    effort limit, and with measured effort RMS and peak |residual| (measured - predicted).
    Worst windows (``window`` s long, from the first sample): with measured effort, the
    windows of largest RMS residual over all joints; without, those of largest peak |torque|
    over the effort limit (or of largest peak |torque| when no joint has a limit).
    ``measured`` (N, J), instead of ``residual``: the residual is measured - ``total``, not
    formed as an array. Each array is read once (``column_stats.moments``).
    """
    n = time.size
    index, starts = _windows(time, window)
    stats = moments(total, starts=starts)
    peak_index = stats.argmax if n else np.zeros(len(labels), np.int64)
    rms = _rms(stats)
    term_rms = {term: _rms(moments(values)) for term, values in terms.items()}
    misfit = None
    if residual is not None or measured is not None:
        misfit = moments(residual, starts=starts) if residual is not None \
            else moments(measured, total, starts)
        measured_fraction = misfit.count / n if n else np.zeros(len(labels))
        residual_rms = _rms(misfit)
        residual_peak = np.where(misfit.count > 0, misfit.peak, np.nan)
    joints = []
    for k, label in enumerate(labels):
        peak = float(abs(total[peak_index[k], k])) if n else math.nan
        limit = float(effort_limits[k])
        entry = {
            'joint': label, 'unit': units[k], 'rms': _finite_or_none(float(rms[k])),
            'peak': _finite_or_none(peak),
            'peak_time': float(time[peak_index[k]]) if n else None,
            'effort_limit': _finite_or_none(limit),
            'peak_over_limit': (_finite_or_none(peak / limit) if 0 < limit < math.inf
                                else None),  # no URDF limit: no ratio
            'rms_terms': {term: _finite_or_none(float(values[k]))
                          for term, values in term_rms.items()},
        }
        if misfit is not None:
            entry['measured_fraction'] = float(measured_fraction[k])
            entry['rms_residual'] = _finite_or_none(float(residual_rms[k]))
            entry['peak_residual'] = _finite_or_none(float(residual_peak[k]))
        joints.append(entry)
    return {'joints': joints,
            'worst_windows': _worst_windows(time, labels, stats, misfit, effort_limits,
                                            window, index, starts)}


def _windows(time: np.ndarray, window: float) -> tuple[np.ndarray, np.ndarray]:
    """Window number of each sample (``window`` s from the first) and each window's first row."""
    if time.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    index = np.floor((time - time[0]) / window).astype(np.int64)
    starts = np.flatnonzero(np.concatenate([[True], index[1:] != index[:-1]]))
    return index, starts


def _windows_text(diff: dict) -> str:
    """Describe the differentiator's window(s) and time base, for the settings list."""
    windows = sorted(set((diff.get('windows') or {}).values()))
    if diff.get('window_rule') == 'auto' and windows:
        span = fmt(windows[0]) if len(windows) == 1 else \
            f'{fmt(windows[0])}-{fmt(windows[-1])}'
        text = f'window chosen per joint from the data ({span} s, see the table below)'
    else:
        text = f'window {fmt(diff["window"])} s'
    if diff.get('time_base') == 'regular clock':
        text += (', over the regular clock fitted to the stamps (residual variance '
                 f'{fmt(diff["clock_residual_ratio"], 3)} x that over the stamps)')
    return text


def _worst_windows(time, labels, stats: Moments, misfit: Moments | None, effort_limits,
                   window, index, starts) -> list[dict]:
    if time.size == 0:
        return []
    if misfit is not None and misfit.count.any():
        sums, counts = misfit.window_sum_squares, misfit.window_count
        per_joint = np.sqrt(sums / np.maximum(counts, 1))
        score = np.sqrt(sums.sum(axis=1) / np.maximum(counts.sum(axis=1), 1))
        kind = 'rms_residual'
    else:
        peaks = stats.window_peak
        limits = np.where(np.isfinite(effort_limits) & (effort_limits > 0), effort_limits,
                          np.nan)
        if np.isfinite(limits).any():
            per_joint = peaks / limits
            kind = 'peak_over_limit'
        else:
            per_joint = peaks
            kind = 'peak'
        score = np.nanmax(np.where(np.isfinite(per_joint), per_joint, -np.inf), axis=1)
    order = np.argsort(-score, kind='stable')[:WORST_WINDOWS]
    windows = []
    for w in order.tolist():
        worst = int(np.nanargmax(np.where(np.isfinite(per_joint[w]), per_joint[w], -np.inf)))
        begin = float(time[0] + index[starts[w]] * window)
        windows.append({'start': begin, 'end': begin + window, 'kind': kind,
                        'score': _finite_or_none(float(score[w])), 'worst_joint': labels[worst],
                        'worst_joint_score': _finite_or_none(float(per_joint[w, worst]))})
    return windows


def write_summary(directory: Path, summary: dict) -> tuple[Path, Path]:
    """summary.json (the dict as is) and summary.md (tables for people)."""
    json_path = directory / 'summary.json'
    json_path.write_text(json.dumps(summary, indent=2, allow_nan=False) + '\n')
    md_path = directory / 'summary.md'
    md_path.write_text(markdown(summary))
    return json_path, md_path


def _names(names) -> str:
    return ', '.join(f'`{name}`' for name in names) if names else 'no joint'


def _observer_lines(summary: dict) -> list[str]:
    """summary.md's external torques and collisions (``rnea_bag --observer``)."""
    observer = summary.get('observer')
    if not observer:
        return []
    lines = ['', '## External torques (momentum observer)', '',
             f'Gain {fmt(observer["gain"])} 1/s, measured effort: '
             f'{observer["measured_effort"]}; thresholds: {observer["thresholds_source"]}.', '',
             '| joint | RMS | peak | threshold |', '|---|---|---|---|']
    lines += [f'| `{j["joint"]}` | {fmt(j["rms"])} | {fmt(j["peak"])} | {fmt(j["threshold"])} |'
              for j in observer['joints']]
    if observer.get('smallest_detectable_force'):
        lines += ['', detectable.describe(observer['smallest_detectable_force'])]
    if 'collisions' in summary:
        lines += ['', '## Collisions', '']
        events = summary['collisions']
        lines += ['| start [s] | end [s] | joint | peak |', '|---|---|---|---|'] + [
            f'| {fmt(e["start"])} | {fmt(e["end"])} | `{e["joint"]}` | {fmt(e["peak"])} |'
            for e in events] if events else ['None detected.']
    return lines


def markdown(summary: dict) -> str:
    """summary.md: settings, per-joint table, worst windows, warnings, files."""
    lines = [f'# Torque analysis of `{summary["bag"]}`', '']
    info = summary['run']
    lines += [f'- joint_states topic: `{info["joint_states"]}`, {info["samples"]} samples over '
              f'{fmt(info["duration"])} s (t = {fmt(info["start"])} to {fmt(info["end"])} s '
              f'from the bag start), median rate {fmt(info["rate"])} Hz, clock: '
              f'{info["clock"]}',
              f'- model: `{info["robot"]}`, {info["nv"]} DoF, floating base: '
              f'{info["floating_base"]}',
              f'- velocities from the messages: {fmt(100 * info["velocity_measured"], 3)} % of '
              'values (the rest estimated)',
              f'- accelerations: {info["acceleration_source"]}']
    actuation = summary.get('actuation')
    if actuation:
        lines.append(f'- actuation model: `{actuation["file"]}`, friction '
                     f'{actuation["friction_model"]} (velocity threshold '
                     f'{fmt(actuation["velocity_threshold"])}) on '
                     f'{_names(actuation["friction_joints"])}; armature on '
                     f'{_names(actuation["armature_joints"])} (the friction term and the '
                     'armature, in the inertial term, are part of the prediction); effort bias '
                     f'on {_names(actuation.get("effort_bias_joints", []))} (taken out of '
                     'the measured effort)')
        if actuation.get('effort_gain_joints'):
            lines.append(f'- effort gain on {_names(actuation["effort_gain_joints"])}: '
                         'measured torque = effort_gain x effort - effort_bias')
    contacts = summary.get('contacts')
    if contacts:
        links = ', '.join(f'`{link}`' for link in contacts['links'])
        lines.append(f'- contacts: {links} ({contacts["kind"]}, friction '
                     f'{fmt(contacts["friction"])}), {contacts["schedule"]}; infeasible '
                     f'samples: {contacts["infeasible_samples"]} of {contacts["samples"]} '
                     f'(max unbalanced base wrench {fmt(contacts["max_residual_norm"])})')
    diff = info['differentiation']
    lines += [f'- differentiator: Savitzky–Golay, degree {diff["order"]}, {_windows_text(diff)}'
              f' ({diff["samples"]} samples at the median rate), '
              f'{diff["segments"]} gap-free segment(s) (gap > {fmt(diff["max_gap"])} s; '
              'shorter holes are fitted through); '
              f'{diff.get("edge_samples_left_out", 0)} samples near segment ends left out; '
              f'acceleration error <= gain x max|q^({diff["order"] + 1})| with median gain '
              f'{fmt(diff["gain_second_median"])} s^{diff["order"] - 1} (max '
              f'{fmt(diff["gain_second_max"])} over the samples kept)']
    locked = info.get('locked_joints') or {}
    if locked:
        lines.append('- joints held fixed: ' + ', '.join(
            f'`{name}` = {fmt(entry["position"])} ({entry["source"]})'
            for name, entry in locked.items()))
    lines.append('')
    routes = info.get('acceleration_routes') or []
    if routes:
        lines += ['## Accelerations per joint', '',
                  'Route: from the positions (two differentiations) or the velocities of the '
                  'messages (one), whichever has the smaller predicted RMS error; noise: '
                  'white-noise level of the signal (rad or m, per s for velocities).', '',
                  '| joint | route | window [s] | position noise | velocity noise | predicted '
                  'error, positions | predicted error, velocities | velocity delay [s] |',
                  '|---|---|---|---|---|---|---|---|']
        for r in routes:
            lines.append(f'| `{r["joint"]}` | {r["route"]} | {fmt(r.get("window"), 3)} | '
                         f'{fmt(r["position_noise"], 3)} | '
                         f'{fmt(r["velocity_noise"], 3)} | {fmt(r["error_positions"], 3)} | '
                         f'{fmt(r["error_velocities"], 3)} | {fmt(r["velocity_delay"], 3)} |')
        lines.append('')
    measured = any('rms_residual' in j for j in summary['joints'])
    terms = list(summary['joints'][0]['rms_terms']) if summary['joints'] else []
    header = ['joint', 'unit', 'RMS', 'peak', 'peak at [s]', 'peak / limit']
    header += [f'RMS {term.replace("_", " ")}' for term in terms]
    if measured:
        header += ['RMS residual', 'peak residual']
    lines += ['## Per joint', '',
              'Predicted torque (N·m, or N for prismatic joints and base forces); residual = '
              'measured - predicted.', '',
              '| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    for j in summary['joints']:
        row = [f'`{j["joint"]}`', j['unit'], fmt(j['rms']), fmt(j['peak']),
               fmt(j['peak_time']), fmt(j['peak_over_limit'], 3)]
        row += [fmt(j['rms_terms'][t]) for t in terms]
        if measured:
            row += [fmt(j.get('rms_residual')), fmt(j.get('peak_residual'))]
        lines.append('| ' + ' | '.join(row) + ' |')
    lines += ['', '## Worst time windows', '']
    windows = summary['worst_windows']
    if windows:
        kind = {'rms_residual': 'RMS residual over all joints',
                'peak_over_limit': 'peak |torque| / effort limit',
                'peak': 'peak |torque|'}[windows[0]['kind']]
        lines += [f'Ranked by {kind}.', '',
                  '| from [s] | to [s] | score | worst joint | its score |',
                  '|---|---|---|---|---|']
        for w in windows:
            lines.append(f'| {fmt(w["start"])} | {fmt(w["end"])} | {fmt(w["score"])} | '
                         f'`{w["worst_joint"]}` | {fmt(w["worst_joint_score"])} |')
    else:
        lines.append('No samples.')
    lines += _observer_lines(summary)
    if summary.get('warnings'):
        lines += ['', *bullets('Warnings', summary['warnings'])]
    lines += ['', *bullets('Files', (f'`{f}`' for f in summary.get('outputs', [])))]
    return '\n'.join(lines) + '\n'
