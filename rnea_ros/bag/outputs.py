"""
``rnea_bag``'s stage 5: every output of a run, staged, then moved into the output directory.

``write_outputs`` writes the tables, the contact wrenches, the observer's files, the pictures,
``report.html``, the bag (``--write-bag``) and the summary into a ``Staging`` directory and
commits them all at once (what each output holds: ``rnea_ros.bag.pipeline``).
"""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from rnea_ros.bag import motion, observing
from rnea_ros.bag.options import BagOptions
from rnea_ros.bag.reading import Inputs, progress_bar, Samples
from rnea_ros.bag.report import table_suffix, write_summary, write_table, write_tables
from rnea_ros.bag.summary import add_outputs, add_run_parts, run_summary, TOOL
from rnea_ros.recording.bagio import cdr
from rnea_ros.recording.bagio.storage import JOINT_STATE, WRENCH_STAMPED
from rnea_ros.tools.downsample import reduce_bag
from rnea_ros.tools.staging import Staging

WRENCH_AXES = ('fx', 'fy', 'fz', 'tx', 'ty', 'tz')


def write_outputs(options: BagOptions, reader, output: Path, read: Inputs, estimate,
                  samples: Samples, solved, parts, show: bool, warnings: list,
                  observed: observing.Observed | None = None, judged=None) -> list[Path]:
    """
    Stage 5: every output, staged, then moved into ``output`` at once; their paths.

    ``observed``: the observer's residual, thresholds and detections (``--observer``);
    ``judged``: the samples against the URDF limits (``plausibility.Plausibility``).
    """
    seconds, labels, columns = samples.seconds, read.labels, read.columns
    with Staging(output, options.overwrite, TOOL) as staging, \
            _background(options.threads) as background:
        stage = staging.path
        # The tables (pyarrow, compiled CSV text) and the summary's statistics (compiled) run
        # without the GIL: on the second core while this thread draws the pictures.
        tables = [background.submit(write_tables, stage, seconds, labels, columns, parts,
                                    samples.measured, options.format, options.threads)]
        statistics = background.submit(
            run_summary, options, read.model, read.series, estimate, read.desired,
            seconds, labels, read.units, columns, parts,
            within_limits(samples.measured, read.joints, judged), list(warnings), read.source,
            samples.edges_left_out)
        if solved is not None:
            tables.append(background.submit(_write_contact_table, stage, options.format,
                                            seconds, solved))
        if observed is not None:
            tables.append(background.submit(observing.write_files, stage, seconds, labels,
                                            columns, observed))
        reduced, shown, pictures = _pictures(options, stage, read, samples, parts)
        summary = add_run_parts(statistics.result(), options, read.actuation, solved,
                                int(samples.times_ns.size), observed, judged)
        motion.add_motion(summary, samples.v[:, columns])
        from rnea_ros.bag import htmlreport
        report = htmlreport.write_bag_report(stage / 'report.html', reduced, *shown, summary)
        # The bag (compiled chunks, mostly disk) while the tables may still be written.
        bag = [_write_bag(reader, stage, read.model, read.joints, read.series, samples.keep,
                          samples.q, samples.v, parts.total, options.joint_states,
                          read.js_conns, show, solved)] if options.write_bag else []
        files = [path for table in tables for path in _paths(table.result())]
        files += pictures + [report] + bag
        files += list(write_summary(stage, add_outputs(summary, files)))
        return staging.commit([f.name for f in files])


def within_limits(measured: np.ndarray, joints, judged) -> np.ndarray:
    """
    Return ``measured`` (N, nv) with NaN where a joint is at a limit (``judged.flagged``).

    The summary's residual statistics (and rnea_fleet's drift baselines, made of them) leave
    out what the model does not hold: an end stop's torque, a clamped drive.
    """
    if judged is None or not judged.flagged.any():
        return measured
    columns = [j.idx_v for j in joints]
    out = measured.copy()
    out[:, columns] = np.where(judged.flagged, np.nan, out[:, columns])
    return out


def _paths(result) -> list[Path]:
    return result if isinstance(result, list) else [result]


def _write_contact_table(stage: Path, table_format: str | None, seconds, solved) -> Path:
    table = {'time': seconds}
    for link, wrench in solved.wrenches.items():
        table.update({f'{link}.{axis}': wrench[:, k] for k, axis in enumerate(WRENCH_AXES)})
    return write_table(stage / f'contact_wrenches{table_suffix(table_format)}', table)


def _pictures(options: BagOptions, stage: Path, read: Inputs, samples: Samples, parts):
    """Return the reduced curves, the shown labels and units, and the PNGs drawn."""
    labels, columns = read.labels, read.columns
    sel = _index(columns, len(labels))
    shown = ([labels[k] for k in columns], [read.units[k] for k in columns])
    terms = {t: values[:, sel] for t, values in parts.terms.items()}
    reduced = reduce_bag(samples.seconds, parts.total[:, sel], terms, samples.measured[:, sel])
    pictures = []
    if not options.no_plots:
        from rnea_ros.bag import plots
        pictures = plots.plot_all(stage, reduced, *shown, title=read.model.name,
                                  wrenches=set(labels) - {j.name for j in read.joints})
    return reduced, shown, pictures


class _Inline:
    """An executor that runs each task at once, in the calling thread (``--threads 1``)."""

    def submit(self, function, *args):
        future = Future()
        try:
            future.set_result(function(*args))
        except BaseException as exc:  # noqa: B036 - handed to whoever takes the result
            future.set_exception(exc)
        return future


@contextmanager
def _background(threads: int | None):
    """
    Yield the executor of the writing's side work (tables, summary statistics).

    Two threads beside this one, which draws the pictures; with ``threads`` 1 (a fleet worker:
    one bag per core, the other cores busy with other bags) everything runs in this thread.
    """
    if threads == 1:
        yield _Inline()
        return
    with ThreadPoolExecutor(2) as pool:
        yield pool


def _index(columns: list[int], width: int) -> list[int] | slice:
    """Column index for arrays: a slice (a view, no copy) when every column is selected."""
    return slice(None) if columns == list(range(width)) else columns


def _write_bag(reader, output, model, joints, series, keep, q, v, total, topic, js_conns,
               show, solved=None) -> Path:
    from rnea_ros.recording.bagio.storage import write_bag
    names = [j.name for j in joints]
    qi = [j.idx_q for j in joints]
    vi = [j.idx_v for j in joints]
    matrix, _ = cdr.encode_joint_states(series.times_ns[keep], names, q[:, qi], v[:, vi],
                                        total[:, vi])
    namespace = js_conns[0].topic.rsplit('/', 1)[0]
    torque_topic = f'{namespace}/joint_torques' if js_conns[0].topic.startswith('/') \
        else 'joint_torques'
    receive_ns = series.receive_ns[keep]
    extra = [(torque_topic, JOINT_STATE, receive_ns, matrix)]
    if solved is not None:
        prefix = torque_topic[:-len('joint_torques')]
        for link, wrench in solved.wrenches.items():
            encoded = cdr.encode_wrench_stamped(series.times_ns[keep], link, wrench)
            extra.append((f'{prefix}contact_wrenches/{link}', WRENCH_STAMPED, receive_ns,
                          encoded))
    path = output / 'bag'
    count = sum(c.msgcount for c in reader.connections) + sum(len(e[3]) for e in extra)
    progress = progress_bar('writing bag', count, show)
    write_bag(reader, path, extra, progress=progress)
    progress.close()
    return path
