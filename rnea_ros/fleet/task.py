"""
One bag, one Dask task: the ``rnea_bag`` pipeline into ``DIR/bags/<name>``, or its stored result.

``analyse(job)`` runs on a worker. It fingerprints the bag (``rnea_ros.fleet.digest``); when
``DIR/bags/<name>/summary.json`` holds the same bag and settings digests (key ``fleet``) and
every output it lists is still there, the stored result is returned without recomputing.
Otherwise the pipeline writes into a folder created afresh, ``DIR/bags/.partial-<name>.<random>``
(an exclusive ``mkdir``: never a folder or symlink that was there), the digests are added to
its summary.json, and the folder replaces ``DIR/bags/<name>`` by renames: a worker killed
mid-bag leaves only a partial folder (removed by the next run), never a result that looks
complete, and two runs of the same task (a retried one) cannot mix their files.

Only rnea_fleet's own results are ever replaced or removed: a ``DIR/bags/<name>`` that is not
one (no summary.json stamped by rnea_fleet, or a symlink) fails its bag and stays as it is.
A bag the pipeline refuses (corrupt, empty, foreign: ``RneaError``, ``ValueError``,
``OSError``) gives an ``Outcome`` with status 'error' and the message; its stale result, if
any, is removed. A bag whose positions are in a wrong unit (degrees read as radians:
``rnea_ros.recording.plausibility.UnitError``) is also ``refused``: the fleet's run stops on
it. Any other exception propagates, so that Dask retries the task.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
import json
import os
from pathlib import Path
import shutil
import uuid

from rnea_ros.errors import InputError, RneaError
from rnea_ros.fleet.digest import bag_digest
from rnea_ros.recording.plausibility import UnitError

PARTIAL_PREFIX = '.partial-'  # output names never start with a dot (``bags.safe_name``)
EVENT_TOPIC = 'rnea_fleet'


@dataclass(frozen=True)
class Job:
    """
    What a worker needs to analyse one bag.

    ``options``: ``BagOptions`` fields (name -> value) besides the bag and the output;
    ``settings_digest``: their fingerprint; ``output``: ``DIR/bags/<name>``.
    """

    bag: str
    name: str
    robot: str | None
    output: str
    options: dict
    settings_digest: str
    overwrite: bool = False
    robot_error: str | None = None


@dataclass(frozen=True)
class JointStats:
    """
    Per-joint numbers of one bag (N·m, or N for prismatic joints; NaN when not measured).

    ``speed_rms`` (rad/s, m/s) and ``moving_share``: its motion (``rnea_ros.bag.motion``).
    """

    joint: str
    unit: str
    rms_torque: float
    peak_torque: float
    rms_residual: float
    peak_residual: float
    speed_rms: float = float('nan')
    moving_share: float = float('nan')


@dataclass(frozen=True)
class Outcome:
    """
    The result of one bag: 'ok' with its per-joint numbers, or 'error' with the message.

    ``start_ns``: the bag start (ns since the epoch, UTC); ``duration``: the analysed time span
    [s]; ``skipped``: the stored result was reused; ``model``: the URDF's robot name;
    ``robot``: the job's robot, or the model when the job had none; ``refused``: the bag's
    positions are in a wrong unit (an error the whole run stops on); ``at_limit``: its samples
    with a joint at a position or effort limit, left out of its residual's numbers.
    """

    bag: str
    path: str
    robot: str | None
    status: str
    model: str = ''
    error: str = ''
    skipped: bool = False
    start_ns: int | None = None
    duration: float = float('nan')
    refused: bool = False
    at_limit: int = 0
    samples: int = 0
    joints: tuple[JointStats, ...] = field(default_factory=tuple)


def failed(job: Job, message: str, refused: bool = False) -> Outcome:
    """Return the outcome of a bag that could not be analysed (``refused``: a wrong unit)."""
    return Outcome(job.name, job.bag, job.robot, 'error', error=message, refused=refused)


def analyse(job: Job) -> Outcome:
    """Analyse one bag (or reuse its stored result); see the module docstring."""
    _event('started', job)
    if job.robot_error:
        return failed(job, job.robot_error)
    output = Path(job.output)
    try:
        digest = bag_digest(Path(job.bag))
        if not job.overwrite:
            stored = _stored(output, digest, job.settings_digest)
            if stored is not None:
                return _outcome(job, stored, skipped=True)
        summary = _compute(job, output, digest)
    except (RneaError, ValueError, OSError) as exc:
        if is_result(output):
            shutil.rmtree(output, ignore_errors=True)  # stale: no longer this bag's result
        return failed(job, _message(exc), isinstance(exc, UnitError))
    return _outcome(job, summary, skipped=False)


def _message(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        text = f'{exc.strerror}: {exc.filename!r}'
    return text or type(exc).__name__


def is_result(folder: Path) -> bool:
    """Tell whether ``folder`` is a bag result of rnea_fleet (a folder, its summary stamped)."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    try:
        summary = json.loads((folder / 'summary.json').read_text())
    except (OSError, ValueError):
        return False
    return isinstance(summary, dict) and isinstance(summary.get('fleet'), dict)


def _stored(output: Path, digest: str, settings_digest: str) -> dict | None:
    """Return the stored summary if made from this bag content and settings, and complete."""
    try:
        summary = json.loads((output / 'summary.json').read_text())
    except (OSError, ValueError):
        return None
    fleet = summary.get('fleet') if isinstance(summary, dict) else None
    if not isinstance(fleet, dict):
        return None
    if fleet.get('bag_digest') != digest or fleet.get('settings_digest') != settings_digest:
        return None
    if not all((output / name).exists() for name in summary.get('outputs', [])):
        return None  # a file of the result was removed since
    if not all('speed_rms' in joint for joint in summary.get('joints', [])):
        return None  # made before summaries gave the motion: drift needs it
    return summary


def _compute(job: Job, output: Path, digest: str) -> dict:
    """Run the pipeline into a partial folder, stamp its summary, move it into place."""
    from rnea_ros.bag.options import BagOptions
    from rnea_ros.bag.pipeline import run
    from rnea_ros.recording.bagio.storage import open_bag
    if (output.exists() or output.is_symlink()) and not is_result(output):
        raise InputError(f'{str(output)!r} exists and is not a result of rnea_fleet: it is '
                         'left as it is; move it away or choose another --output')
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.parent / f'{PARTIAL_PREFIX}{output.name}.{uuid.uuid4().hex}'
    partial.mkdir()  # exclusive: never a folder or symlink that was there
    try:
        run(replace(BagOptions(job.bag), output=str(partial), progress=False, **job.options))
        reader = open_bag(job.bag)
        try:
            start_ns = int(reader.start_time)
        finally:
            reader.close()
        summary_path = partial / 'summary.json'
        summary = json.loads(summary_path.read_text())
        summary['fleet'] = {'bag_digest': digest, 'settings_digest': job.settings_digest,
                            'bag_start_ns': start_ns}
        summary_path.write_text(json.dumps(summary, indent=2, allow_nan=False) + '\n')
        _replace(partial, output)
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
    return summary


def _replace(partial: Path, output: Path) -> None:
    """Put ``partial`` at ``output`` by renames; an older result is moved aside first."""
    old = None
    if output.exists() or output.is_symlink():
        old = partial.parent / f'{PARTIAL_PREFIX}{output.name}.old.{uuid.uuid4().hex}'
        os.replace(output, old)
    os.replace(partial, output)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _number(value) -> float:
    return float('nan') if value is None else float(value)


def _outcome(job: Job, summary: dict, skipped: bool) -> Outcome:
    run = summary['run']
    joints = tuple(
        JointStats(j['joint'], j['unit'], _number(j.get('rms')), _number(j.get('peak')),
                   _number(j.get('rms_residual')), _number(j.get('peak_residual')),
                   _number(j.get('speed_rms')), _number(j.get('moving_share')))
        for j in summary['joints'])
    return Outcome(job.name, job.bag, job.robot or run['robot'], 'ok', model=run['robot'],
                   skipped=skipped,
                   start_ns=int(summary['fleet']['bag_start_ns']),
                   duration=_number(run['duration']), samples=int(run['samples']),
                   at_limit=int(summary.get('plausibility', {}).get('flagged', 0)),
                   joints=joints)


def _event(state: str, job: Job) -> None:
    """Log {'state', 'bag', 'worker' address} on the scheduler's event topic (on a worker)."""
    try:
        from distributed import get_worker
        worker = get_worker()
    except (ImportError, ValueError):
        return
    worker.log_event(EVENT_TOPIC, {'state': state, 'bag': job.name, 'worker': worker.address})
