"""
Bags -> identification samples: q, v, a and measured effort per joint, in model order.

A bag is read as ``rnea_bag`` reads it (``rnea_ros.bag``): the joint_states topic, header
stamps, messages merged by stamp, velocities from the messages where finite, else from the
Savitzky-Golay differentiator, which also gives the accelerations (gap-aware, see
``rnea_ros.bag.differentiate``). Samples without a finite acceleration (runs too short to
differentiate) are left out; samples with a NaN effort on any joint are dropped and counted.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
import xml.etree.ElementTree as ET

import numpy as np

from rnea_ros.bag import cdr, differentiate, replay
from rnea_ros.bag.storage import BagError, JOINT_STATE, open_bag, read_raw, topic_connections
from rnea_ros.bag.storage import typestore
from rnea_ros.errors import InputError


@dataclass
class Samples:
    """
    The samples of one bag, (N, nv) arrays in ``RobotModel`` v order (SI units).

    ``seconds``: sample times from the first kept sample; ``dropped_nan_effort``: samples left
    out because a joint's effort was NaN; ``warnings``: what the reader merged or filled.
    """

    bag: str
    seconds: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    effort: np.ndarray
    dropped_nan_effort: int = 0
    warnings: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.seconds.size)

    def select(self, mask: np.ndarray) -> Samples:
        """Return the samples where ``mask`` is true (same bag, same warnings)."""
        return Samples(self.bag, self.seconds[mask], self.q[mask], self.v[mask], self.a[mask],
                       self.effort[mask], self.dropped_nan_effort, self.warnings)


def check_fixed_base(model) -> None:
    """Refuse a model with a floating or planar joint: identification is for fixed bases."""
    odd = [j.name for j in model.multi_dof_joints]
    if model.floating_base or odd:
        raise InputError(f'the robot has a floating base or a floating/planar joint {odd}: '
                         'rnea_identify identifies fixed-base robots only')


def load(path: str | Path, model, urdf_xml: str, topic: str = 'joint_states', *,
         window: float = differentiate.DEFAULT_WINDOW,
         order: int = differentiate.DEFAULT_ORDER) -> Samples:
    """Read one bag into ``Samples`` (``BagError``/``InputError`` name what is wrong)."""
    store = typestore()
    reader = open_bag(Path(path))
    try:
        conns = topic_connections(reader, topic, JOINT_STATE, what='joint_states topic')

        def fallback(record: bytes):
            try:
                return cdr.joint_state_fields(store.deserialize_cdr(record, JOINT_STATE))
            except Exception as exc:  # noqa: B902 - any decoding failure: a corrupt record
                raise BagError(f'{path}: corrupt {JOINT_STATE} message on {conns[0].topic!r} '
                               f'({len(record)} bytes): {type(exc).__name__}: {exc}') from None
        raw = read_raw(reader, conns)
        if len(raw) == 0:
            raise BagError(f'{path}: no {conns[0].topic} messages')
        # Decoded while the bag is open: the records may be a view of the mapped file.
        decoded = cdr.decode(raw.buffer, raw.starts, raw.lengths, cdr.joint_state_layout,
                             fallback)
    finally:
        reader.close()
    joints = list(model.joints)
    urdf_joints = {j.get('name') for j in ET.fromstring(urdf_xml).findall('joint')}
    series = replay.joint_series(decoded, raw.times, [j.name for j in joints], urdf_joints)
    del raw, decoded
    no_effort = [name for k, name in enumerate(series.names)
                 if not np.isfinite(series.effort[:, k]).any()]
    if no_effort:
        raise InputError(f'{path}: joint_states carries no effort for {no_effort}: '
                         'identification needs the measured joint torques')
    continuous = [k for k, j in enumerate(joints) if j.kind == 'continuous']
    position = replay.unwrap_columns(series.position, continuous)
    diff = differentiate.derivatives(series.times_ns, position, window, order)
    velocity = np.where(np.isfinite(series.velocity), series.velocity, diff.first)
    keep = np.isfinite(velocity).all(axis=1) & np.isfinite(diff.second).all(axis=1)
    nan_effort = ~np.isfinite(series.effort).all(axis=1) & keep
    keep &= ~nan_effort
    times = series.times_ns[keep]
    seconds = (times - times[0]) * 1e-9 if times.size else np.zeros(0)
    # A fixed-base model's joints are one-DoF and in v order: the series columns are v order.
    return Samples(str(path), seconds, series.position[keep], velocity[keep],
                   diff.second[keep], series.effort[keep], int(nan_effort.sum()),
                   list(series.warnings))
