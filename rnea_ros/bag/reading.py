"""
``rnea_bag``'s stages 1 and 2: what a run reads, and the samples it analyses.

``load_inputs`` reads the model (``--urdf`` or the bag's ``robot_description``), checks the
options on it and loads the joint series and the desired accelerations; ``select_samples``
keeps the samples in the time window whose estimate is finite and two-sided, and warns of the
rest. ``progress_bar`` is the progress display of every stage (shown for long inputs only).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.bag import inputs
from rnea_ros.bag.decomposition import effort_labels
from rnea_ros.bag.options import BagOptions
from rnea_ros.description.loading import urdf_model
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import InputError
from rnea_ros.params.actuation_file import read_actuation
from rnea_ros.recording import differentiate, JointSeries, load_joint_states
from rnea_ros.recording.bagio.storage import BagError, JOINT_STATE, topic_connections

PROGRESS_MIN_MESSAGES = 100_000


@dataclass
class Inputs:
    """
    What a run reads (stage 1): the model and its options, the joint series, desired a.

    ``window``: the [start, stop) log times [ns] of --start/--end (None: open), read with
    ``margin`` [ns] around them; ``joints``: the one-DoF joints, the series' columns;
    ``columns``: the reported ``labels`` (--joints).
    """

    source: str
    model: RobotModel
    joints: list
    actuation: Actuation | None
    labels: list[str]
    units: list[str]
    columns: list[int]
    contacts: list
    js_conns: list
    series: JointSeries
    desired: np.ndarray | None
    window: tuple[int | None, int | None]
    margin: int
    bag_start: int


@dataclass
class Samples:
    """
    The samples analysed (stage 2): q, v, a and effort in model order, their times.

    ``keep``: their rows of the joint series (a slice when they are one run of rows);
    ``seconds``: from the time origin; ``edges_left_out``: samples near gaps left out.
    ``measured``: the effort less the actuation model's effort bias (``effort`` without one), what
    the predictions are compared with; the observer takes ``effort`` and the actuation model.
    """

    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    effort: np.ndarray
    keep: np.ndarray | slice
    times_ns: np.ndarray
    seconds: np.ndarray
    edges_left_out: int
    measured: np.ndarray


def load_inputs(options: BagOptions, reader, store, show: bool, warnings: list) -> Inputs:
    """Stage 1: the model, the options checked on it, the joint series, desired a."""
    xml, source = inputs.robot_description(options, reader, store)
    gravity = options.gravity if options.gravity else (0.0, 0.0, -9.81)
    model = urdf_model(xml, f'--urdf {source!r}' if options.urdf else source,
                       floating_base=options.floating_base, gravity=gravity,
                       inertia_check=options.inertia_check)
    joints = [j for j in model.joints if j.nv == 1]
    if model.multi_dof_joints:
        odd = [j.name for j in model.multi_dof_joints]
        raise InputError(f'URDF joints {odd} are floating/planar: joint_states cannot give '
                         'their state')
    actuation = read_actuation(options.actuation, model) if options.actuation \
        else None
    labels, units = effort_labels(model)
    columns = inputs.selected_columns(options.joints, model, labels)
    contacts = inputs.contacts(options, model)
    js_conns = topic_connections(reader, options.joint_states, JOINT_STATE,
                                 what='joint_states topic')
    # Reading margin around --start/--end, for the windows of the samples at its ends (the
    # default window is 10 sample intervals at low rates: 1 s covers 20 Hz).
    margin = int(2 * (0.5 if options.window == differentiate.AUTO else options.window) * 1e9)
    bag_start = int(reader.start_time)
    lo = None if options.start is None else bag_start + int(options.start * 1e9)
    hi = None if options.end is None else bag_start + int(options.end * 1e9)
    progress = progress_bar('reading', sum(c.msgcount for c in js_conns), show)
    series = load_joint_states(
        reader, model, xml, options.joint_states, window=(lo, hi), margin=margin,
        progress=progress, ways_out='--clock receive, or --start/--end on one side of it',
        one_side='--start/--end on one side of it',
        clock=options.clock, ignore_extra=options.ignore_extra_joints, lock=options.lock,
        lock_missing=options.lock_missing)
    progress.close()
    warnings += series.warnings
    desired = inputs.desired(options, reader, store, series, lo, hi, margin)
    return Inputs(source, model, joints, actuation, labels, units, columns, contacts,
                  js_conns, series, desired, (lo, hi), margin, bag_start)


def select_samples(read: Inputs, estimate, base_state, warnings: list) -> Samples:
    """Stage 2: the samples in the time window with a finite, two-sided estimate."""
    series, model, joints = read.series, read.model, read.joints
    q, v, a, effort, finite = estimate.model_arrays(
        series.position, series.effort, [j.idx_q for j in joints], [j.idx_v for j in joints],
        model.nq, model.nv)
    keep = np.ones(series.times_ns.size, dtype=bool)
    if base_state is not None:
        keep &= base_state.keep
        q[keep, :7], v[keep, :6], a[keep, :6] = base_state.q, base_state.v, base_state.a
        finite[keep] &= (np.isfinite(base_state.q).all(axis=1)
                         & np.isfinite(base_state.v).all(axis=1)
                         & np.isfinite(base_state.a).all(axis=1))
        if not base_state.keep.all():
            warnings.append(f'{int((~base_state.keep).sum())} joint samples outside the '
                            'odometry time span were left out')
    lo, hi = read.window
    if lo is not None:
        keep &= series.receive_ns >= lo
    if hi is not None:
        keep &= series.receive_ns < hi
    edges_left_out = _leave_out_edges_and_gaps(keep, finite, estimate, warnings)
    keep &= ~estimate.edge & finite
    if not keep.any():
        raise BagError('no joint_states samples left to analyse in the time window')
    rows = np.flatnonzero(keep)
    if rows[-1] - rows[0] + 1 == rows.size:  # one run of rows: views, not copies
        keep = slice(int(rows[0]), int(rows[-1]) + 1)
    times_ns = series.times_ns[keep]
    origin = _time_origin(times_ns, series.receive_ns[keep], read.bag_start, series.clock,
                          warnings)
    effort = effort[keep]
    measured = effort if read.actuation is None else read.actuation.corrected_effort(effort)
    return Samples(q[keep], v[keep], a[keep], effort, keep, times_ns,
                   (times_ns - origin) * 1e-9, edges_left_out, measured)


def _leave_out_edges_and_gaps(keep, finite, estimate, warnings: list) -> int:
    """Warn of the samples a one-sided fit or a too short run leaves out; return the first."""
    edge = estimate.edge
    edges_left_out = int((keep & finite & edge).sum())
    if edges_left_out:
        warnings.append(f'{edges_left_out} samples within half a differentiation window '
                        f'({estimate.diff.window:g} s) of the ends of the gap-free segments '
                        'were left out (their estimate would come from a one-sided fit)')
    short = keep & ~edge & ~finite
    if short.any():
        warnings.append(f'{int(short.sum())} samples in gap-separated runs shorter than 3 '
                        'samples have no acceleration estimate and were left out')
    return edges_left_out


def _time_origin(times_ns, receive_ns, bag_start: int, clock: str, warnings: list) -> int:
    """Return the bag start, unless header stamps are on another clock (e.g. simulated time)."""
    if clock == 'header' and times_ns.size:
        offset = np.median((times_ns - receive_ns).astype(np.float64)) * 1e-9
        if abs(offset) > 10.0:
            warnings.append(f'joint_states header stamps are {offset:.3g} s away from the '
                            'receive times (another clock?): time counts from the first sample')
            return int(times_ns[0])
    return bag_start


def progress_bar(label: str, total: int, show: bool):
    """Return the progress display of a stage: shown when ``show`` and ``total`` is large."""
    from rnea_ros.tools.progress import Progress
    return Progress(label, total, bool(show) and total >= PROGRESS_MIN_MESSAGES)
