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
   With ``--actuation FILE`` (a node parameters file: ``rnea_ros.dynamics.actuation``)
   the armature torques join the inertial term and the joint friction (from the velocities
   used) is a fifth term, ``friction``: both are part of the predicted torque, so residuals
   are against the full model; the measured torque is its ``effort_gain`` times the measured
   effort less its ``effort_bias`` (the effort sensor's gain and bias, never a torque:
   ``Actuation.corrected_effort``), before any comparison.

Outputs in ``--output DIR`` (default ``./<bag name>_rnea``)
-----------------------------------------------------------
- ``torques.csv``: header ``time,<joint>,...``: seconds from the bag start (the time of the
  first message in the bag), then the predicted torque of every independent joint in
  ``RobotModel.joint_names`` order (``--joints`` selects a subset). A free-flyer's six entries
  are ``root_joint.fx, .fy, .fz`` (N) and ``root_joint.tx, .ty, .tz`` (N·m): the wrench in the
  root-link frame (``decomposition.effort_labels``).
- ``decomposition.parquet`` (``.csv`` without pyarrow or with ``--format csv``): ``time`` and
  ``<term>/<joint>`` for term in inertial, velocity_product, gravity, external (and friction
  with ``--actuation``).
- ``residual.parquet`` (idem), when the bag has measured effort: ``measured/<joint>`` (less
  the ``--actuation``'s effort bias) and ``residual/<joint>`` = measured - predicted (NaN
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

from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
import sys
import time

from rnea_ros.bag import inputs, observing
from rnea_ros.bag.decomposition import contact_wrenches, decompose
from rnea_ros.bag.options import BagOptions
from rnea_ros.bag.outputs import write_outputs
from rnea_ros.bag.reading import (Inputs, load_inputs, progress_bar, PROGRESS_MIN_MESSAGES,
                                  Samples, select_samples)
from rnea_ros.bag.summary import TOOL
from rnea_ros.recording import derivatives, differentiate, plausibility
from rnea_ros.recording.bagio.storage import open_bag, typestore
from rnea_ros.recording.plausibility import UnitError
from rnea_ros.tools.options import check_bounds
from rnea_ros.tools.reading import reconvert
from rnea_ros.tools.staging import check as check_output

# The contact solver is slower per sample: its progress bar shows from fewer samples.
PROGRESS_MIN_CONTACT_SAMPLES = 10_000


@dataclass
class Result:
    """What ``run`` produced: the output directory, files, sample count, phase timings [s]."""

    output: Path
    files: list[Path]
    samples: int
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


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
    check_bounds(options)  # every number within its declared bounds (options.py)
    inputs.contact_links(options)
    observing.check_options(options)
    check_output(output, options.overwrite, TOOL)  # before any work: refuse and touch nothing
    with timings('reading'):
        reader = open_bag(bag_path)
    try:
        with thread_limit(options.threads):
            return _run(options, reader, output, timings)
    except UnitError as exc:
        raise reconvert(exc) from None
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
    judged = judge(read, samples, parts)
    warnings += judged.warnings()
    observed = None
    if options.observer:
        with timings('observer'):
            observed = observing.observe(options, read.model, read.actuation,
                                         samples.seconds, samples.q, samples.v, samples.effort,
                                         samples.measured, parts.total,
                                         locked=read.series.locked)
        warnings += observed.warnings
    with timings('writing'):
        files = write_outputs(options, reader, output, read, estimate, samples, solved, parts,
                              show, warnings, observed, judged)
    return Result(output, files, int(samples.times_ns.size), dict(timings), warnings)


def judge(read: Inputs, samples: Samples, parts) -> plausibility.Plausibility:
    """Judge the analysed samples against the URDF limits (``recording.plausibility``)."""
    series, joints = read.series, read.joints
    v_columns = [j.idx_v for j in joints]
    return plausibility.check(joints, series.position[samples.keep],
                              series.velocity[samples.keep], samples.measured[:, v_columns],
                              parts.total[:, v_columns], locked=series.locked)


def _differentiate(window, order, max_gap, times, values):
    # The odometry's twist: the default window for 'auto' (one signal, no joint to choose for).
    window = None if window == differentiate.AUTO else window
    return differentiate.derivatives(times, values, window, order, max_gap)


def solve_contacts(options: BagOptions, read: Inputs, samples: Samples, show: bool,
                   warnings: list):
    """Stage 3: the contact wrenches of every sample (``decomposition.contact_wrenches``)."""
    count = int(samples.times_ns.size)
    progress = progress_bar('contacts', count, show and count >= PROGRESS_MIN_CONTACT_SAMPLES)
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
    progress = progress_bar('dynamics', n, show and n >= PROGRESS_MIN_MESSAGES)
    parts = decompose(read.model, samples.q, samples.v, samples.a,
                      f_ext=solved.wrenches if solved is not None else None,
                      threads=options.threads, progress=progress, actuation=read.actuation)
    progress.close()
    return parts
