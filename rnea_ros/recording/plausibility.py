"""
Recorded joints against the model: beyond its limits, in a wrong unit, at a limit.

A recording's positions, velocities and efforts are judged against the URDF limits of the
model it is read with (``check``), one rule for every tool that reads recorded joints:

- A position beyond a joint's limits by more than ``LIMIT_MARGIN`` of the joint's range, a
  velocity beyond ``VELOCITY_FACTOR`` times its velocity limit, a predicted torque beyond
  ``EFFORT_FACTOR`` times its effort limit: reported per joint with its extent (the worst
  value), the limit and the count of samples (``Excess``; a warning of the tool).
- A wrong unit (``check_unit``): revolute positions beyond their limits by more than the margin
  that, read as degrees (times pi/180), all fit within their limits (and margin) are degrees
  read as radians; prismatic positions that fit in millimetres, millimetres read as metres.
  Such a recording is refused (``UnitError``: the joint, its extent, its limit, the unit; each
  tool words what fixes it with its own options).
- A sample where a joint is within ``AT_LIMIT`` of its range from a position limit (or beyond
  it), or where a measured torque reaches ``SATURATION`` of its effort limit, is at a limit:
  the end stop or the drive's saturation acts there, which the model does not hold. Such
  samples are flagged (``Plausibility.at_limit``, ``at_effort_limit``), left out of the
  identification fit and counted in the reports.

The margins are fractions of each joint's own range and limits: the same rule for any robot.
No ROS, no command-line option in the messages.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math

import numpy as np

from rnea_ros.errors import InputError

__all__ = ['AT_LIMIT', 'check', 'check_unit', 'EFFORT_FACTOR', 'Excess', 'LIMIT_MARGIN',
           'Plausibility', 'SATURATION', 'UnitError', 'VELOCITY_FACTOR']

LIMIT_MARGIN = 0.05  # of a joint's range: a position beyond its limit by more is reported
AT_LIMIT = 0.01  # of a joint's range: a position this close to a limit (or beyond) is at it
VELOCITY_FACTOR = 1.2  # times the URDF velocity limit: a faster sample is reported
EFFORT_FACTOR = 1.5  # times the URDF effort limit: a larger predicted torque is reported
SATURATION = 0.99  # of the effort limit: a measured torque this large is at the limit
# The units a joint's positions may wrongly be in, per joint kind: (name, factor to SI units).
WRONG_UNITS = {'revolute': ('deg', math.pi / 180.0), 'prismatic': ('mm', 1e-3)}
SI_UNITS = {'revolute': 'rad', 'prismatic': 'm', 'continuous': 'rad'}
WORDS = {'deg': 'degrees', 'mm': 'millimetres', 'rad': 'radians', 'm': 'metres'}


class UnitError(InputError):
    """
    Recorded positions in another unit than the model's (degrees read as radians).

    ``joint``: the joint furthest beyond its limits; ``extent``: its worst position as read;
    ``limit``: the limit it passes; ``unit``: the unit the recording looks to be in ('deg',
    'mm'); ``converted``: the extent in that unit, converted; ``si``: the model's unit.
    """

    def __init__(self, joint: str, extent: float, limit: float, unit: str, converted: float,
                 si: str, remedy: str = ''):
        self.joint, self.extent, self.limit = joint, extent, limit
        self.unit, self.converted, self.si, self.remedy = unit, converted, si, remedy
        super().__init__(
            f'joint_states positions look like {WORDS[unit]} read as {WORDS[si]}: {joint} reaches '
            f'{extent:.4g} {si} against its limit {limit:.4g} {si} (as {unit}, '
            f'{converted:.4g} {si}, within the limits)' + (f'; {remedy}' if remedy else ''))

    def worded(self, remedy: str, prefix: str = '') -> UnitError:
        """Return this error with a tool's ``remedy`` (its option) and a ``prefix`` (a path)."""
        error = UnitError(self.joint, self.extent, self.limit, self.unit, self.converted,
                          self.si, remedy)
        if prefix:
            error.args = (f'{prefix}: {error.args[0]}',)
        return error


@dataclass(frozen=True)
class Excess:
    """One joint beyond a bound: ``what`` ('position', 'velocity', 'torque'), worst value."""

    joint: str
    what: str
    extent: float
    limit: float
    samples: int
    unit: str

    def text(self) -> str:
        """Say it in a warning's words."""
        bound = {'position': 'its limit', 'velocity': 'its velocity limit',
                 'torque': 'its effort limit'}[self.what]
        return (f'{self.joint}: {self.what} {self.extent:.4g} {self.unit} against {bound} '
                f'{self.limit:.4g} {self.unit} in {self.samples} samples')


@dataclass(frozen=True)
class Plausibility:
    """
    What ``check`` found in N samples of J joints: joints beyond a bound, samples at a limit.

    ``at_limit``: (N, J) the joint at a position limit; ``at_effort_limit``: (N, J) its
    measured torque at the effort limit; ``beyond``: the joints beyond a bound (``Excess``).
    A joint's torque equation is what a limit spoils (the end stop's torque, the drive's
    clamp act on that joint): ``flagged`` is per joint, the counts are of samples.
    """

    at_limit: np.ndarray
    at_effort_limit: np.ndarray
    beyond: tuple[Excess, ...] = field(default=())

    @property
    def flagged(self) -> np.ndarray:
        """Return (N, J): the joint at its position or its effort limit."""
        return self.at_limit | self.at_effort_limit

    def warnings(self) -> list[str]:
        """Return the report's warnings: the joints beyond a bound, the samples at a limit."""
        out = [f'beyond the URDF limits ({LIMIT_MARGIN:g} of the range for positions, '
               f'{VELOCITY_FACTOR:g}x for velocities, {EFFORT_FACTOR:g}x for torques): '
               + '; '.join(excess.text() for excess in self.beyond)] if self.beyond else []
        counts = self.counts()
        if counts['at_limit'] or counts['at_effort_limit']:
            out.append(f"{counts['at_limit']} samples at a joint's position limit (within "
                       f"{AT_LIMIT:g} of its range) and {counts['at_effort_limit']} at its "
                       f'effort limit ({SATURATION:g} of it): the end stop or the saturation '
                       'acts there, which the model does not hold')
        return out

    def counts(self) -> dict:
        """Return the counts of the reports: samples at a position and at an effort limit."""
        return {'at_limit': int(self.at_limit.any(axis=1).sum()),
                'at_effort_limit': int(self.at_effort_limit.any(axis=1).sum()),
                'flagged': int(self.flagged.any(axis=1).sum())}

    def summary(self) -> dict:
        """Return the counts and the joints beyond a bound, for a report's JSON."""
        return {**self.counts(), 'margins': {
            'limit_margin': LIMIT_MARGIN, 'at_limit': AT_LIMIT,
            'velocity_factor': VELOCITY_FACTOR, 'effort_factor': EFFORT_FACTOR,
            'saturation': SATURATION},
            'beyond': [{'joint': e.joint, 'what': e.what, 'extent': e.extent,
                        'limit': e.limit, 'samples': e.samples, 'unit': e.unit}
                       for e in self.beyond]}


def _limits(joints) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lower = np.array([j.lower for j in joints], dtype=np.float64)
    upper = np.array([j.upper for j in joints], dtype=np.float64)
    bounded = np.isfinite(lower) & np.isfinite(upper) & (upper > lower)
    span = np.where(bounded, upper - lower, 0.0)
    return lower, upper, span


def _worst(values: np.ndarray, lower: float, upper: float) -> tuple[float, float]:
    """Return the value furthest beyond [lower, upper] and the limit it passes."""
    low, high = np.nanmin(values), np.nanmax(values)
    return (float(low), lower) if lower - low >= high - upper else (float(high), upper)


def check_unit(joints, position: np.ndarray) -> None:
    """
    Refuse positions (N, J) of the one-DoF ``joints`` that are in a wrong unit (``UnitError``).

    Per joint kind (``WRONG_UNITS``): some joint of it beyond its limits by more than
    ``LIMIT_MARGIN`` of its range, and every bounded joint of that kind within its limits and
    margin once converted. NaN positions (not given) are ignored.
    """
    lower, upper, span = _limits(joints)
    kinds = np.array([j.kind for j in joints])
    for kind, (unit, factor) in WRONG_UNITS.items():
        columns = np.flatnonzero((kinds == kind) & (span > 0))
        if not columns.size:
            continue
        values = position[:, columns]
        given = np.isfinite(values).any(axis=0)
        columns, values = columns[given], values[:, given]
        if not columns.size:
            continue
        margin = LIMIT_MARGIN * span[columns]
        low, high = np.nanmin(values, axis=0), np.nanmax(values, axis=0)
        excess = np.maximum(lower[columns] - low, high - upper[columns]) / span[columns]
        if not (excess > LIMIT_MARGIN).any():
            continue
        fits = (factor * low >= lower[columns] - margin) \
            & (factor * high <= upper[columns] + margin)
        if fits.all():
            k = int(np.argmax(excess))
            extent, limit = _worst(values[:, k], lower[columns[k]], upper[columns[k]])
            raise UnitError(joints[columns[k]].name, extent, limit, unit, factor * extent,
                            SI_UNITS[kind])


def check(joints, position: np.ndarray, velocity: np.ndarray | None = None,
          effort: np.ndarray | None = None, predicted: np.ndarray | None = None,
          locked=()) -> Plausibility:
    """
    Judge N samples of the one-DoF ``joints`` (columns in their order) against their limits.

    ``position``, ``velocity`` (the messages'; NaN: not given), ``effort`` (measured torque,
    N m or N; None: not a torque, e.g. a motor current) and ``predicted`` (the model's
    torque), each (N, J) or None; ``locked``: the names of joints held fixed (by the reader,
    not recorded: never at a limit). Refuses a wrong unit (``check_unit``) first.
    """
    position = np.asarray(position, dtype=np.float64)
    check_unit(joints, position)
    names = [j.name for j in joints]
    units = [SI_UNITS.get(j.kind, 'rad') for j in joints]
    torque_units = ['N' if j.kind == 'prismatic' else 'N m' for j in joints]
    lower, upper, span = _limits(joints)
    span = np.where(np.isin(names, list(locked)), 0.0, span)
    beyond = []
    with np.errstate(invalid='ignore'):
        margin = LIMIT_MARGIN * span
        out = (position < lower - margin) | (position > upper + margin)
        for k in np.flatnonzero(out.any(axis=0) & (span > 0)):
            extent, limit = _worst(position[:, k], lower[k], upper[k])
            beyond.append(Excess(names[k], 'position', extent, limit, int(out[:, k].sum()),
                                 units[k]))
        band = AT_LIMIT * span
        at_limit = ((position <= lower + band) | (position >= upper - band)) & (span > 0)
        for what, values, bound, factor, unit_of in (
                ('velocity', velocity, [j.velocity_limit for j in joints], VELOCITY_FACTOR,
                 [u + '/s' for u in units]),
                ('torque', predicted, [j.effort_limit for j in joints], EFFORT_FACTOR,
                 torque_units)):
            if values is None:
                continue
            bound = np.asarray(bound, dtype=np.float64)
            fast = np.abs(values) > factor * bound
            for k in np.flatnonzero(fast.any(axis=0) & np.isfinite(bound) & (bound > 0)):
                peak = values[:, k][np.nanargmax(np.abs(values[:, k]))]
                beyond.append(Excess(names[k], what, float(peak),
                                     float(math.copysign(bound[k], peak)),
                                     int(fast[:, k].sum()), unit_of[k]))
        at_effort = np.zeros(position.shape, dtype=bool)
        if effort is not None:
            bound = np.array([j.effort_limit for j in joints], dtype=np.float64)
            at_effort = (np.abs(effort) >= SATURATION * bound) & np.isfinite(bound) \
                & (bound > 0)
    return Plausibility(at_limit, at_effort, tuple(beyond))
