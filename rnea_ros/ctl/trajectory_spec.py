"""
The trajectory ``rnea_ctl trajectory`` sends: from a YAML file or an inline spec, checked.

The file is a ``trajectory_msgs/JointTrajectory`` as YAML, the fields as ``ros2 topic pub``
takes them, as ``rnea_excite`` writes ``trajectory.yaml``: ``joint_names``, ``points`` (each
with ``positions``, ``velocities``, ``accelerations``, ``effort``: a number per joint or none,
and ``time_from_start`` as ``{sec, nanosec}`` or seconds), an optional ``header``. The inline
spec is ``--point SECONDS NAME=POSITION ...`` per point, every point naming the same joints;
each point's velocities are 0 (the joints come to rest at each point: the node and the
simulated robot then interpolate with cubic Hermite splines). Everything is checked before
anything is sent; a fault raises ``InputError`` naming the file or option, the field and what
was expected. No ROS here: ``session`` builds the message.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
import math

from rnea_ros.errors import InputError
from rnea_ros.files import brief, finite_number, load_yaml, read_text, YamlError

MAX_FILE_BYTES = 64 * 1024 * 1024  # a trajectory file larger than this is refused unread
FIELDS = ('positions', 'velocities', 'accelerations', 'effort')
NANOSECONDS = 1_000_000_000
MAX_SECONDS = 2 ** 31 - 1  # builtin_interfaces/Duration's sec is an int32
MAX_JOINTS = 10_000  # joint names of one trajectory: far more than any robot has


@dataclass(frozen=True)
class Point:
    """One point: ``time_from_start`` [ns] and per field a number per joint (or none)."""

    time_from_start: int
    positions: tuple[float, ...]
    velocities: tuple[float, ...] = ()
    accelerations: tuple[float, ...] = ()
    effort: tuple[float, ...] = ()


@dataclass(frozen=True)
class TrajectorySpec:
    """The fields of a JointTrajectory; ``stamp`` (sec, nanosec), 0 meaning "start now"."""

    joint_names: tuple[str, ...]
    points: tuple[Point, ...]
    stamp: tuple[int, int] = (0, 0)
    frame_id: str = ''


def load_file(path: str) -> TrajectorySpec:
    """Read and check the trajectory YAML file ``path`` (see the module docstring)."""
    where = f'trajectory file {path!r}'
    text = read_text(path, 'trajectory file', MAX_FILE_BYTES)  # a FIFO, /dev/zero: refused
    try:
        document = load_yaml(text)
    except YamlError as exc:
        raise InputError(f'{where}: {exc}') from None
    return from_fields(document, where)


def from_fields(document, where: str) -> TrajectorySpec:
    """Check a JointTrajectory's fields (a YAML document) and return them."""
    mapping = _mapping(document, where, 'the document', {'header', 'joint_names', 'points'})
    names = mapping.get('joint_names')
    if (not isinstance(names, list) or not names
            or not all(isinstance(name, str) and name for name in names)):
        raise InputError(f'{where}: joint_names: expected a list of joint names (non-empty '
                         'texts)')
    if len(names) > MAX_JOINTS:
        raise InputError(f'{where}: joint_names: {len(names)} names: expected at most '
                         f'{MAX_JOINTS}')
    repeated = sorted(name for name, count in Counter(names).items() if count > 1)
    if repeated:
        raise InputError(f'{where}: joint_names: {brief(repeated[0])} is named twice: expected '
                         'each joint once')
    points = mapping.get('points')
    if not isinstance(points, list) or not points:
        raise InputError(f'{where}: points: expected a list of at least one point')
    checked = tuple(_point(point, where, f'points[{k}]', len(names))
                    for k, point in enumerate(points))
    _increasing(checked, where)
    stamp, frame_id = _header(mapping.get('header', {}), where)
    return TrajectorySpec(tuple(names), checked, stamp, frame_id)


def from_inline(points: list[list[str]]) -> TrajectorySpec:
    """Build the trajectory of ``--point SECONDS NAME=POSITION ...`` options (rest at each)."""
    names, checked = None, []
    for k, words in enumerate(points):
        field = f'--point #{k + 1}'
        if len(words) < 2:
            raise InputError(f'{field}: expected SECONDS NAME=POSITION [NAME=POSITION ...]')
        seconds = _number(words[0], f'{field} SECONDS')
        if not 0 <= seconds <= MAX_SECONDS:
            raise InputError(f'{field} SECONDS: {words[0]!r}: expected a time from start from 0 '
                             f'to {MAX_SECONDS} s')
        pairs = []
        for word in words[1:]:
            name, separator, value = word.partition('=')
            if not separator or not name:
                raise InputError(f'{field}: {word!r}: expected NAME=POSITION')
            pairs.append((name, _number(value, f'{field} {name}')))
        these = [name for name, _ in pairs]
        if len(set(these)) != len(these):
            raise InputError(f'{field}: a joint is named twice: expected each joint once')
        if names is None:
            names = these
        elif these != names:
            raise InputError(f'{field}: names {", ".join(these)}: expected the joints of the '
                             f'first point, in its order: {", ".join(names)}')
        checked.append(Point(round(seconds * NANOSECONDS), tuple(v for _, v in pairs),
                             velocities=(0.0,) * len(pairs)))
    if names is None:
        raise InputError('--point: expected at least one point (or a trajectory file)')
    points = tuple(checked)
    _increasing(points, 'the --point options')
    return TrajectorySpec(tuple(names), points)


def _mapping(value, where: str, field: str, keys: set[str]) -> dict:
    if not isinstance(value, dict):
        raise InputError(f'{where}: {field}: expected a mapping with {", ".join(sorted(keys))}')
    unknown = sorted(brief(key) for key in value if key not in keys)
    if unknown:
        raise InputError(f'{where}: {field}: unknown field {unknown[0]}: expected '
                         f'{", ".join(sorted(keys))}')
    return value


def _point(point, where: str, field: str, joints: int) -> Point:
    mapping = _mapping(point, where, field, set(FIELDS) | {'time_from_start'})
    values = {}
    for name in FIELDS:
        numbers = mapping.get(name, [])
        if not isinstance(numbers, list) or len(numbers) not in (0, joints) or not all(
                finite_number(number) for number in numbers):
            raise InputError(f'{where}: {field}.{name}: expected {joints} finite numbers (one '
                             f'per joint_names) or none')
        values[name] = tuple(float(number) for number in numbers)
    if 'time_from_start' not in mapping:
        raise InputError(f'{where}: {field}.time_from_start: missing: expected '
                         '{sec: S, nanosec: N} or seconds')
    return Point(_duration(mapping['time_from_start'], where, f'{field}.time_from_start'),
                 **values)


def _duration(value, where: str, field: str) -> int:
    """Return nanoseconds of ``{sec, nanosec}`` or of a number of seconds >= 0."""
    if finite_number(value) and 0 <= value <= MAX_SECONDS:
        return round(value * NANOSECONDS)
    if isinstance(value, dict) and set(value) <= {'sec', 'nanosec'} and all(
            isinstance(part, int) and not isinstance(part, bool) for part in value.values()):
        sec, nanosec = value.get('sec', 0), value.get('nanosec', 0)
        if 0 <= sec <= MAX_SECONDS and 0 <= nanosec < NANOSECONDS:
            return sec * NANOSECONDS + nanosec
    raise InputError(f'{where}: {field}: expected {{sec: S, nanosec: N}} (integers, S from 0 '
                     f'to {MAX_SECONDS}, N below 1e9) or a number of seconds in that range')


def _increasing(points: tuple[Point, ...], where: str) -> None:
    for k in range(1, len(points)):
        if points[k].time_from_start <= points[k - 1].time_from_start:
            raise InputError(f'{where}: points[{k}].time_from_start: expected a time after the '
                             f"previous point's ({points[k - 1].time_from_start / 1e9:g} s)")


def _header(header, where: str) -> tuple[tuple[int, int], str]:
    mapping = _mapping(header, where, 'header', {'stamp', 'frame_id'})
    stamp = mapping.get('stamp', {'sec': 0, 'nanosec': 0})
    total = _duration(stamp, where, 'header.stamp')
    frame_id = mapping.get('frame_id', '')
    if not isinstance(frame_id, str):
        raise InputError(f'{where}: header.frame_id: expected a text')
    return divmod(total, NANOSECONDS), frame_id


def _number(text: str, field: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise InputError(f'{field}: {text!r}: expected a finite number')
    return value
