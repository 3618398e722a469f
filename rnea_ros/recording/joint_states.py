"""
The typed way into a recording: a bag's joint_states -> ``JointSeries`` -> ``Estimate``.

``load_joint_states`` reads, decodes (the fast CDR decoder, rosbags as its fallback) and
gathers the JointState topic into the one-DoF joints of a ``RobotModel`` (``series``: clock,
merging, holes; ``locks``: joints held fixed); ``derivatives`` estimates v and a per joint
(``accelerations``: the Savitzky-Golay differentiator, the route per joint). ``rnea_bag`` and
``rnea_identify`` read bags through these two functions only.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from rnea_ros.description.urdf import urdf_joint_names
from rnea_ros.recording import accelerations, differentiate, locks, plausibility
from rnea_ros.recording.bagio import cdr
from rnea_ros.recording.bagio.storage import (BagError, JOINT_STATE, open_bag, read_raw,
                                              topic_connections, typestore)
from rnea_ros.recording.series import joint_series, JointSeries


def decode_records(raw, layout_of, store, msgtype: str, fields, topic: str):
    """``cdr.decode`` with rosbags as the fallback; a record neither can read is corrupt."""
    def fallback(record: bytes):
        try:
            return fields(store.deserialize_cdr(record, msgtype))
        except Exception as exc:
            raise BagError(f'corrupt {msgtype} message on {topic!r} ({len(record)} bytes): '
                           f'{type(exc).__name__}: {exc}') from None
    return cdr.decode(raw.buffer, raw.starts, raw.lengths, layout_of, fallback)


def one_dof_joints(model) -> list:
    """Return the model's one-DoF joints: the columns of its ``JointSeries``."""
    return [j for j in model.joints if j.nv == 1]


def load_joint_states(source, model, urdf: str, topic: str = 'joint_states', *,
                      clock: str = 'header', lock: str | None = None,
                      lock_missing: bool = False, ignore_extra: bool = False,
                      window: tuple[int | None, int | None] = (None, None), margin: int = 0,
                      progress=None, ways_out: str = '--clock receive',
                      one_side: str = 'a bag of one side of it') -> JointSeries:
    """
    Read the JointState ``topic`` of a bag into the one-DoF joints of ``model``.

    ``source``: a bag path, or a reader of ``open_bag`` (left open); ``urdf``: the model's URDF
    text (its fixed and mimic joint names are ignored in the messages); ``clock``: 'header'
    stamps or 'receive' times; ``lock``: the ``--lock`` text (``locks.parse``);
    ``lock_missing``: hold the joints no message carries; ``ignore_extra``: skip names the
    URDF does not have. ``window``: [start, stop) log times [ns] to analyse, read with
    ``margin`` [ns] around them; ``progress(k)``: as ``read_raw``; ``ways_out``: the options
    that avoid a clock step, ``one_side`` those that analyse one side of interleaved motions,
    for their errors. ``BagError``/``InputError`` name what is wrong; positions in a wrong
    unit (degrees read as radians) are refused (``plausibility.UnitError``).
    """
    joints = one_dof_joints(model)
    options = {'clock': clock, 'ignore_extra': ignore_extra, 'locked': locks.parse(lock, joints),
               'lock_missing': locks.missing_positions(joints) if lock_missing else None}
    if isinstance(source, (str, Path)):
        reader = open_bag(Path(source))
        try:
            return _read(reader, topic, joints, urdf, window, margin, progress,
                         (ways_out, one_side), options)
        finally:
            reader.close()
    return _read(source, topic, joints, urdf, window, margin, progress, (ways_out, one_side),
                 options)


def _read(reader, topic, joints, urdf, window, margin, progress, ways_out,
          options) -> JointSeries:
    conns = topic_connections(reader, topic, JOINT_STATE, what='joint_states topic')
    lo, hi = window
    raw = read_raw(reader, conns, None if lo is None else lo - margin,
                   None if hi is None else hi + margin, progress)
    if len(raw) == 0:
        raise BagError(f'no {conns[0].topic} messages in the bag'
                       + ('' if lo is None and hi is None else ' in the time window'))
    # Decoded while the bag is open: the records may be a view of the mapped file.
    decoded = decode_records(raw, cdr.joint_state_layout, typestore(), JOINT_STATE,
                             cdr.joint_state_fields, conns[0].topic)
    series = joint_series(decoded, raw.times, [j.name for j in joints], urdf_joint_names(urdf),
                          topic=conns[0].topic, window=window, ways_out=ways_out[0],
                          origin_ns=int(reader.start_time), one_side=ways_out[1], **options)
    plausibility.check_unit(joints, series.position)
    return series


def derivatives(series: JointSeries, model, desired: np.ndarray | None = None, *,
                window: float | None = None, order: int = differentiate.DEFAULT_ORDER,
                max_gap: float | None = None,
                route: str = 'auto') -> accelerations.Estimate:
    """
    Estimate v and a of ``series`` (read for ``model``): ``accelerations.estimate``.

    ``desired``: (N, J) accelerations to use where finite (NaN: estimate); ``window`` [s],
    ``order`` and ``max_gap`` [s]: the differentiator's (None: its defaults); ``route``:
    'auto' (per joint the better of positions and velocities), 'positions' or 'velocities'.
    """
    return accelerations.estimate(series, [j.kind for j in one_dof_joints(model)], desired,
                                  window, order, max_gap, route)
