"""
Which columns of a log are the time and each joint's position, velocity and effort, in which units.

A field's columns are given as a template or a list: ``Position{n}`` (``{n}``: the joint's
place in ``joints``, from 1) or ``{joint}_pos`` (``{joint}``: its name) gives one column per
joint; ``q1,q2,q3`` names them one by one (as many as joints). The columns of a matrix ``q`` of
an ``.npz`` or ``.mat`` file are ``q[1]``, ``q[2]``, ...: ``q[{n}]`` gives them in order.
Units: the time column in ``s``, ``ms``, ``us`` or ``ns`` plus an offset in seconds (the bag's
stamps are ns since the epoch: a log that counts from 0 starts at the offset, by default 1970);
positions in ``rad``, ``deg``, ``m`` or ``mm``, velocities in the same per second; effort times
a scale (N m, or N for a prismatic joint, per unit of the column; a motor current is converted
by the actuation model's ``effort_gain``, not here).
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
import math

import numpy as np

from rnea_ros.convert.log_faults import row_name
from rnea_ros.errors import InputError

TIME_UNITS = {'s': 1.0, 'ms': 1e-3, 'us': 1e-6, 'ns': 1e-9}
POSITION_UNITS = {'rad': 1.0, 'deg': math.pi / 180.0, 'm': 1.0, 'mm': 1e-3}
VELOCITY_UNITS = {f'{unit}/s': scale for unit, scale in POSITION_UNITS.items()}
MAX_SECONDS = 1e9  # |time| (about 31 years), as the bag tools' times
MAX_OFFSET = 4e9  # |offset|: the stamps, in int64 ns, stay below 2**63 (year 2262)
FIELDS = ('position', 'velocity', 'effort')


@dataclass(frozen=True)
class JointSamples:
    """
    The joint_states of a log: one message per row.

    ``stamps_ns`` (N,) int64 increasing; ``position`` (N, k); ``velocity`` and ``effort``
    (N, k) or (N, 0) when the log has none; ``names`` the k joints.
    """

    stamps_ns: np.ndarray
    names: tuple[str, ...]
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


def offset_ns(text: str) -> int:
    """Parse ``--time-offset`` (seconds, decimal text) into whole ns, exactly."""
    try:
        seconds = Decimal(text.strip())
    except InvalidOperation:
        seconds = Decimal('nan')
    # copy_abs, not abs(): abs rounds in the context, and 1e9999999999 overflows its exponent
    if not seconds.is_finite() or seconds.copy_abs() > Decimal(MAX_OFFSET):
        raise InputError(f'--time-offset {text!r}: expected a number of seconds of magnitude '
                         f'at most {MAX_OFFSET:g}')
    return int(seconds.scaleb(9).to_integral_value())


def joint_names(text: str) -> tuple[str, ...]:
    """Parse ``--joints`` (comma-separated names, each once)."""
    names = tuple(name.strip() for name in text.split(','))
    if not all(names):
        raise InputError(f'--joints {text!r}: expected joint names separated by commas')
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise InputError(f'--joints: {twice[0]!r} is given twice')
    return names


@dataclass(frozen=True)
class ColumnMapping:
    """The columns of one log and their units (see the module docstring)."""

    time: str
    joints: tuple[str, ...]
    position: str
    velocity: str | None = None
    effort: str | None = None
    time_unit: str = 's'
    time_offset_ns: int = 0
    position_unit: str = 'rad'
    velocity_unit: str = 'rad/s'
    effort_scale: float = 1.0

    def columns(self, field: str) -> list[str]:
        """Return the columns of ``field`` (position, velocity, effort), one per joint; [] none."""
        text = getattr(self, field)
        if text is None:
            return []
        if '{n}' in text or '{joint}' in text:
            return [text.replace('{n}', str(k)).replace('{joint}', name)
                    for k, name in enumerate(self.joints, start=1)]
        names = [name.strip() for name in text.split(',')]
        if len(names) != len(self.joints) or not all(names):
            matrix = (f'; a matrix {names[0]!r} of an .npz or .mat file gives its columns as '
                      f"--{field} '{names[0]}[{{n}}]'") if len(names) == 1 and names[0] else ''
            raise InputError(f'--{field} {text!r}: names {len(names)} columns for '
                             f'{len(self.joints)} joints; expected one column per joint '
                             '(separated by commas) or a template with {n} or {joint}' + matrix)
        return names

    def all_columns(self) -> list[str]:
        """Return every column the mapping reads: the time, then each field's."""
        return [self.time] + [c for field in FIELDS for c in self.columns(field)]

    def samples(self, values: dict[str, np.ndarray], log: str) -> JointSamples:
        """Return the joint_states of the columns ``values`` of the file ``log``."""
        raw = values[self.time]
        seconds = raw * TIME_UNITS[self.time_unit]
        where = f'LOG {log!r}: column {self.time!r} ({self.time_unit})'
        if raw.size < 2:
            raise InputError(f'LOG {log!r} has {raw.size} rows; expected at least 2')
        beyond = np.flatnonzero(np.abs(seconds) > MAX_SECONDS)
        if beyond.size:
            raise InputError(f'{where}, {row_name(log, int(beyond[0]))}: {raw[beyond[0]]:.17g} '
                             f'is past {MAX_SECONDS:g} s')
        stamps = self.time_offset_ns + np.round(seconds * 1e9).astype(np.int64)
        if stamps[0] < 0:
            raise InputError(f'{where}, {row_name(log, 0)}: the time {raw[0]:.17g} is before '
                             '1970 with --time-offset; expected a time from the epoch or an '
                             'offset that makes it one')
        back = np.flatnonzero(np.diff(stamps) <= 0)
        if back.size:
            k = int(back[0]) + 1
            raise InputError(f'{where}, {row_name(log, k)}: {raw[k]:.17g} is not after the '
                             f"previous row's {raw[k - 1]:.17g}; expected increasing times "
                             '(one row per sample, at least 1 ns apart)')
        scales = {'position': POSITION_UNITS[self.position_unit],
                  'velocity': VELOCITY_UNITS[self.velocity_unit], 'effort': self.effort_scale}
        arrays = {}
        for field in FIELDS:
            columns = self.columns(field)
            arrays[field] = (np.column_stack([values[c] for c in columns]) * scales[field]
                             if columns else np.zeros((raw.size, 0)))
            rows, joints = np.nonzero(~np.isfinite(arrays[field]))
            if rows.size:
                raise InputError(f'LOG {log!r}: {row_name(log, int(rows[0]))}, column '
                                 f'{columns[joints[0]]!r}: {values[columns[joints[0]]][rows[0]]:g}'
                                 f' times the {field} scale is not a finite number')
        return JointSamples(stamps, self.joints, **arrays)
