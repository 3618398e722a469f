"""
The ``rnea_bag`` pipeline: replay a rosbag2 through the dynamics; torques, terms, plots.

Usage::

    rnea_bag BAG [--urdf FILE] [--floating-base] [--joint-states TOPIC] [--output DIR]
                 [--write-bag] [--start S] [--end S] [--joints J1,J2] [--window S]
                 [--contacts LINK,LINK [--friction MU]] ...

``BAG`` is a rosbag2 directory (sqlite3 or mcap) or a single .db3/.mcap file, read with the
``rosbags`` library: no ROS install needed. ``rnea_bag --help`` lists every option.

What it does
------------
1. The model: ``--urdf FILE`` (a URDF, or a xacro file expanded with its ``--xacro-arg
   NAME:=VALUE`` arguments), or else the first ``robot_description`` (std_msgs/String)
   message in the bag.
2. The joint states (``--joint-states``, sensor_msgs/JointState) become q, v and measured
   effort in model order (``rnea_ros.recording.series``: clock, merging, missing joints; joints the
   bag never publishes are an error unless held by ``--lock``/``--lock-missing``,
   ``rnea_ros.recording.locks``). Velocities come from the messages where present and finite, else
   from the differentiator.
3. Accelerations: from the ``--desired-accelerations`` topic (trajectory_msgs/JointTrajectory
   with one point, as the node consumes it) where it has a fresh sample, else estimated by a
   Savitzky-Golay differentiator on the uneven sample times that fits through holes and
   splits at gaps (``rnea_ros.recording.differentiate``: method, defaults and error bound), per
   joint from the positions or from the velocities of the messages, whichever the data say is
   better (``rnea_ros.recording.accelerations``, ``--accelerations-from``), with a window per
   joint from the data (``--window auto``) over the stamps or, where they carry noise, their
   regular clock (``rnea_ros.recording.clock``). Samples whose estimate
   would come from a one-sided fit (within half a window of a gap or of the ends) are left
   out, with a warning.
4. Floating base (``--floating-base``): the base state from nav_msgs/Odometry (``--odometry``);
   a floating-base run without odometry is refused.
5. The dynamics of every sample in one batch (``rnea_ros.bag.decomposition``): total torque and the
   inertial, velocity-product, gravity and external terms. External wrenches: with
   ``--contacts LINK,...`` (floating base only) the links are point contacts with the ground
   (friction ``--friction``, default 0.7) for the whole time window - a bag does not record a
   contact schedule - and one ``rnea_ros.contacts.ContactSolver`` solves every sample for the
   contact wrenches (``decomposition.contact_wrenches``); they are the ``f_ext`` of the
   dynamics: external = -J^T f and total = rnea(q, v, a, f_ext=contacts). Samples the contacts
   cannot balance (infeasible: least-violation wrenches, the rest left on the base rows) are
   counted in the summary and a warning. Without ``--contacts`` the external term is zero.
   With ``--joint-model FILE`` (a node parameters file: ``rnea_ros.dynamics.joint_model``)
   the armature torques join the inertial term and the joint friction (from the velocities
   used) is a fifth term, ``friction``: both are part of the predicted torque, so residuals
   are against the full model; the measured torque is its ``effort_gain`` times the measured
   effort less its ``effort_bias`` (the effort sensor's gain and bias, never a torque:
   ``JointModel.corrected_effort``), before any comparison.

Outputs in ``--output DIR`` (default ``./<bag name>_rnea``)
-----------------------------------------------------------
- ``torques.csv``: header ``time,<joint>,...``: seconds from the bag start (the time of the
  first message in the bag), then the predicted torque of every independent joint in
  ``RobotModel.joint_names`` order (``--joints`` selects a subset). A free-flyer's six entries
  are ``root_joint.fx, .fy, .fz`` (N) and ``root_joint.tx, .ty, .tz`` (N·m): the wrench in the
  root-link frame (``decomposition.effort_labels``).
- ``decomposition.parquet`` (``.csv`` without pyarrow or with ``--format csv``): ``time`` and
  ``<term>/<joint>`` for term in inertial, velocity_product, gravity, external (and friction
  with ``--joint-model``).
- ``residual.parquet`` (idem), when the bag has measured effort: ``measured/<joint>`` (less
  the ``--joint-model``'s effort bias) and ``residual/<joint>`` = measured - predicted (NaN
  where not measured).
- ``contact_wrenches.parquet`` (idem), with ``--contacts``: ``time`` and ``<link>.fx``, ``.fy``,
  ``.fz`` (N), ``.tx``, ``.ty``, ``.tz`` (N·m) per contact link: the wrench the ground applies,
  in the link frame about its origin.
- ``summary.json`` and ``summary.md``: per joint RMS/peak torque, RMS per term, peak over the
  URDF effort limit, RMS/peak residual; the worst time windows; the settings used (the
  differentiator's window, gap and samples left out; per joint the acceleration route with
  the noise of positions and velocities; the locked joints); warnings.
- ``effort_<group>.png`` and ``decomposition_<group>.png`` (``rnea_ros.bag.plots``).
- With ``--write-bag``: ``DIR/bag``, a bag of the input's storage format with every original
  topic plus ``joint_torques`` (sensor_msgs/JointState: position and velocity used, effort =
  predicted torque, for the one-DoF joints, as the node publishes it) in the namespace of the
  joint_states topic; with ``--contacts`` also ``contact_wrenches/<link>``
  (geometry_msgs/WrenchStamped, frame_id = the link, header stamp = the sample time) there.

Errors (missing or corrupt bag, missing topic, joints the URDF does not have, bad URDF) are
printed as one ``rnea_bag: error: ...`` line; the exit status is then 2 (``rnea_ros.bag.cli``).
"""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
import sys
import time

import numpy as np

from rnea_ros.bag import inputs, motion, observing
from rnea_ros.bag.decomposition import contact_wrenches, decompose, effort_labels
from rnea_ros.bag.options import BagOptions
from rnea_ros.bag.report import table_suffix, write_summary, write_table, write_tables
from rnea_ros.bag.summary import add_outputs, add_run_parts, run_summary, TOOL
from rnea_ros.dynamics.joint_model import JointModel
from rnea_ros.dynamics.loading import urdf_model
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import InputError
from rnea_ros.recording import derivatives, differentiate, JointSeries, load_joint_states
from rnea_ros.recording.bagio import cdr
from rnea_ros.recording.bagio.storage import (BagError, JOINT_STATE, open_bag, topic_connections,
                                              typestore, WRENCH_STAMPED)
from rnea_ros.tools.downsample import reduce_bag
from rnea_ros.tools.staging import check as check_output, Staging

PROGRESS_MIN_MESSAGES = 100_000
# The contact solver is slower per sample: its progress bar shows from fewer samples.
PROGRESS_MIN_CONTACT_SAMPLES = 10_000
WRENCH_AXES = ('fx', 'fy', 'fz', 'tx', 'ty', 'tz')


@dataclass
class Result:
    """What ``run`` produced: the output directory, files, sample count, phase timings [s]."""

    output: Path
    files: list[Path]
    samples: int
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


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
    joint_model: JointModel | None
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
    ``measured``: the effort less the joint model's effort bias (``effort`` without one), what
    the predictions are compared with; the observer takes ``effort`` and the joint model.
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


class _Timings(dict):

    @contextmanager
    def __call__(self, phase: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self[phase] = self.get(phase, 0.0) + time.perf_counter() - start


def run(options: BagOptions) -> Result:
    """Everything ``rnea_bag`` does, returning a ``Result`` (``RneaError`` on bad input)."""
    timings = _Timings()
    bag_path = Path(options.bag)
    output = Path(options.output) if options.output else Path.cwd() / f'{bag_path.name}_rnea'
    if (options.window != differentiate.AUTO and not options.window > 0) or options.order < 2 or (
            options.max_gap is not None and not options.max_gap > 0):
        raise InputError('--window and --max-gap must be positive and --order at least 2')
    if options.threads is not None and options.threads < 1:
        raise InputError(f'--threads must be at least 1, got {options.threads}')
    inputs.check_seconds(options)
    inputs.contact_links(options)
    observing.check_options(options)
    check_output(output, options.overwrite, TOOL)  # before any work: refuse and touch nothing
    with timings('reading'):
        reader = open_bag(bag_path)
    try:
        with thread_limit(options.threads):
            return _run(options, reader, output, timings)
    finally:
        reader.close()


@contextmanager
def thread_limit(threads: int | None):
    """
    Run the numba kernels called from this thread on at most ``threads`` threads.

    None: numba's default (one per core). A fleet worker runs one bag per core with 1.
    """
    if threads is None:
        yield
        return
    import numba
    before = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(before)


def _run(options: BagOptions, reader, output: Path, timings: _Timings) -> Result:
    """Run the stages: load inputs, select samples, solve contacts, decompose, write outputs."""
    warnings: list[str] = []
    show = options.progress if options.progress is not None else sys.stderr.isatty()
    store = typestore()
    with timings('reading'):
        read = load_inputs(options, reader, store, show, warnings)
    with timings('differentiating'):
        estimate = derivatives(read.series, read.model, read.desired, window=options.window,
                               order=options.order, max_gap=options.max_gap,
                               route=options.accelerations_from)
    with timings('reading'):
        base_state = inputs.base_state(
            options, reader, store, read.series, *read.window, read.margin,
            partial(_differentiate, options.window, options.order, options.max_gap))
    samples = select_samples(read, estimate, base_state, warnings)
    solved = None
    if read.contacts:
        with timings('contacts'):
            solved = solve_contacts(options, read, samples, show, warnings)
    with timings('dynamics'):
        parts = decompose_samples(options, read, samples, solved, show)
    observed = None
    if options.observer:
        with timings('observer'):
            observed = observing.observe(options, read.model, read.joint_model,
                                         samples.seconds, samples.q, samples.v, samples.effort,
                                         samples.measured, parts.total)
        warnings += observed.warnings
    with timings('writing'):
        files = write_outputs(options, reader, output, read, estimate, samples, solved, parts,
                              show, warnings, observed)
    return Result(output, files, int(samples.times_ns.size), dict(timings), warnings)


def _differentiate(window, order, max_gap, times, values):
    # The odometry's twist: the default window for 'auto' (one signal, no joint to choose for).
    window = None if window == differentiate.AUTO else window
    return differentiate.derivatives(times, values, window, order, max_gap)


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
    joint_model = JointModel.load_yaml(options.joint_model, model) if options.joint_model \
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
    progress = _progress('reading', sum(c.msgcount for c in js_conns), show)
    series = load_joint_states(
        reader, model, xml, options.joint_states, window=(lo, hi), margin=margin,
        progress=progress, ways_out='--clock receive, or --start/--end on one side of it',
        one_side='--start/--end on one side of it',
        clock=options.clock, ignore_extra=options.ignore_extra_joints, lock=options.lock,
        lock_missing=options.lock_missing)
    progress.close()
    warnings += series.warnings
    desired = inputs.desired(options, reader, store, series, lo, hi, margin)
    return Inputs(source, model, joints, joint_model, labels, units, columns, contacts,
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
    measured = effort if read.joint_model is None else read.joint_model.corrected_effort(effort)
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


def solve_contacts(options: BagOptions, read: Inputs, samples: Samples, show: bool,
                   warnings: list):
    """Stage 3: the contact wrenches of every sample (``decomposition.contact_wrenches``)."""
    count = int(samples.times_ns.size)
    progress = _progress('contacts', count, show and count >= PROGRESS_MIN_CONTACT_SAMPLES)
    solved = contact_wrenches(read.model, samples.q, samples.v, samples.a, read.contacts,
                              progress=progress)
    progress.close()
    if solved.infeasible:
        warnings.append(
            f'{solved.infeasible} of {count} samples are infeasible with contacts '
            f'{list(solved.links)} (friction {options.friction:g}): least-violation wrenches '
            'used, the base wrench they leave unbalanced (up to '
            f'{float(solved.residual_norm.max()):.3g}) is in the root_joint columns')
    return solved


def decompose_samples(options: BagOptions, read: Inputs, samples: Samples, solved, show: bool):
    """Stage 4: the torques of every sample and their terms (``decomposition.decompose``)."""
    n = read.series.times_ns.size
    progress = _progress('dynamics', n, show and n >= PROGRESS_MIN_MESSAGES)
    parts = decompose(read.model, samples.q, samples.v, samples.a,
                      f_ext=solved.wrenches if solved is not None else None,
                      threads=options.threads, progress=progress, joint_model=read.joint_model)
    progress.close()
    return parts


def write_outputs(options: BagOptions, reader, output: Path, read: Inputs, estimate,
                  samples: Samples, solved, parts, show: bool, warnings: list,
                  observed: observing.Observed | None = None) -> list[Path]:
    """
    Stage 5: every output, staged, then moved into ``output`` at once; their paths.

    ``observed``: the observer's residual, thresholds and detections (``--observer``).
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
            seconds, labels, read.units, columns, parts, samples.measured, list(warnings),
            read.source, samples.edges_left_out)
        if solved is not None:
            tables.append(background.submit(_write_contact_table, stage, options.format,
                                            seconds, solved))
        if observed is not None:
            tables.append(background.submit(observing.write_files, stage, seconds, labels,
                                            columns, observed))
        reduced, shown, pictures = _pictures(options, stage, read, samples, parts)
        summary = add_run_parts(statistics.result(), options, read.joint_model, solved,
                                int(samples.times_ns.size), observed)
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


def _progress(label: str, total: int, show: bool):
    from rnea_ros.tools.progress import Progress
    return Progress(label, total, bool(show) and total >= PROGRESS_MIN_MESSAGES)


def _time_origin(times_ns, receive_ns, bag_start: int, clock: str, warnings: list) -> int:
    """Return the bag start, unless header stamps are on another clock (e.g. simulated time)."""
    if clock == 'header' and times_ns.size:
        offset = np.median((times_ns - receive_ns).astype(np.float64)) * 1e-9
        if abs(offset) > 10.0:
            warnings.append(f'joint_states header stamps are {offset:.3g} s away from the '
                            'receive times (another clock?): time counts from the first sample')
            return int(times_ns[0])
    return bag_start


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
    progress = _progress('writing bag', count, show)
    write_bag(reader, path, extra, progress=progress)
    progress.close()
    return path
