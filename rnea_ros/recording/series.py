"""
Recorded messages -> joint-space time series in ``RobotModel`` order, without ROS.

Conventions
-----------
- Sample times: the joint_states header stamps (``clock='header'``), or the bag's receive
  times (``clock='receive'``); int64 ns since the epoch. Header stamps that are all zero (never
  set) fall back to receive times with a warning.
- A header clock that steps or stamps out of order (``ordering.clock_steps``): in the bag's
  receive order, a stamp that goes back, or jumps forward while the receive times do not, by
  more than the tolerance of ``ordering`` (100 median sample periods, at least 0.5 s) is a step
  of the sender's clock (not a reordered or dropped message): sorting by stamp would
  interleave the two sides. It is an error naming the topic, the message and both stamps;
  ``--clock receive`` or a time window on one side of it (``window``: steps in the margin read
  around the window drop that side, with a warning) are the ways out. Smaller disorder (two
  publishers, delivery jitter) is sorted by stamp. Once sorted, on either clock, samples where
  two motions take turns (a clock that stepped back with the receive times) are an error
  (``ordering.interleaved``) naming the first message of the stretch and its time; a window on
  one side of it (``one_side``) is the way out.
- A finite value beyond ``MAX_ABS`` (1e9 rad, m, rad/s, m/s, N·m or N: no joint turns, moves or
  pushes that far; a continuous joint at 10 rad/s takes three years to reach it) is a corrupt
  message: an error naming the message index (in the order read), the joint and the field,
  before any arithmetic spreads it (or overflows) over the samples around it. NaN is "not
  given", as in the messages' convention.
- Messages with the same sample time are merged: per joint, any message at that time that
  carries the joint gives its value (with conflicting values, the largest).
- A joint missing from some messages (e.g. two publishers on one topic, each with its own
  joints) gets its position by linear interpolation in time between the messages that carry
  it, held constant before the first and after the last; velocity and effort stay unknown
  (NaN) there. A model joint that no message carries is an error that names it, unless it is
  locked: ``locked`` (--lock) or ``lock_missing`` (--lock-missing) hold it at a fixed position
  (velocity and acceleration zero, effort unknown). A lock also overrides a joint the bag
  publishes (with a warning).
- Joint names of the bag that the URDF has but that are not independent (mimic, fixed) are
  ignored: the model derives them. Names the URDF does not have are an error, unless
  ``ignore_extra``.
- Positions of continuous joints are unwrapped before differentiation (``unwrap_columns``).
- Floating base (``base_state``): nav_msgs/Odometry gives the free-flyer q[:7] (pose of the
  base link in the odom frame: position, quaternion x y z w) and v[:6] (twist in the base link
  frame, ``child_frame_id``: [linear; angular]), REP-105, as the node reads them. They are
  interpolated to the joint sample times (linearly; the quaternion by normalised linear
  interpolation along the shorter arc). a[:6], the time derivative of that body twist, comes
  from differentiating the twist on the odometry's own time line.
- Desired accelerations (``desired_accelerations``): trajectory_msgs/JointTrajectory, as the
  node's ``desired_accelerations`` input: each point with accelerations is a sample at header
  stamp + time_from_start (receive time when the stamp is zero), which holds until the next
  sample of that joint or for ``timeout`` seconds, whichever comes first.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from rnea_ros.errors import InputError
from rnea_ros.recording.ordering import clock_segment, clock_steps, interleaved

__all__ = ['base_state', 'BaseState', 'clock_steps', 'desired_accelerations', 'joint_series',
           'JointSeries', 'MAX_ABS', 'unwrap_columns']

MAX_ABS = 1e9


@dataclass(frozen=True)
class JointSeries:
    """
    Joint samples: (N,) times and (N, J) values, columns in ``names`` order (SI units).

    ``times_ns``: sample times on ``clock`` ('header' or 'receive', the one actually used);
    ``receive_ns``: when the bag received each sample (the earliest, for merged messages).
    ``velocity`` and ``effort`` are NaN where no message gave them. ``warnings``: what was
    dropped, merged or filled, for the report. ``locked``: joint -> (position, why) of the
    joints held fixed ('--lock' or '--lock-missing').
    """

    names: tuple[str, ...]
    clock: str
    times_ns: np.ndarray
    receive_ns: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    warnings: tuple[str, ...] = field(default=())
    locked: dict = field(default_factory=dict)


def joint_series(decoded, receive_ns: np.ndarray, names: Sequence[str],
                 urdf_joints: set[str], *, clock: str = 'header',
                 ignore_extra: bool = False, locked: Mapping[str, float] | None = None,
                 lock_missing: Mapping[str, float] | None = None, topic: str = 'joint_states',
                 window: tuple[int | None, int | None] = (None, None),
                 ways_out: str = '--clock receive', origin_ns: int | None = None,
                 one_side: str = 'a bag of one side of it') -> JointSeries:
    """
    Gather decoded JointState blocks (``rnea_ros.cdr.Decoded``) into model-order columns.

    ``names``: the model's one-DoF joints, the columns; ``urdf_joints``: every joint name of
    the URDF; ``locked``: joint -> position held (--lock); ``lock_missing``: joint -> position
    held if no message carries the joint (--lock-missing), None: such a joint is an error.
    ``window``: the [start, stop) receive times [ns] analysed, when the messages were read
    with a margin around them (None: all); ``topic`` and ``ways_out`` (the options that avoid a
    clock step) name them in errors, with the step's time from ``origin_ns`` (the bag start;
    None: the first message); ``one_side``: the options that analyse one side of interleaved
    motions (``ordering.interleaved``). Raises ``InputError`` naming unknown or never-seen
    joints, header clock steps, stamps out of order and interleaved motions.
    """
    names = tuple(names)
    column = {name: k for k, name in enumerate(names)}
    n, width = receive_ns.size, len(names)
    position = velocity = effort = None
    unknown: set[str] = set()
    bad_rows, first_bad = 0, n
    bad = ''
    warnings: list[str] = []
    for block in decoded.blocks:
        (msg_names, _), (pos, vel, eff) = block.key, block.arrays
        count = len(msg_names)
        if len(set(msg_names)) != count or any(
                a.shape[1] not in (0, count) for a in (vel, eff)) or pos.shape[1] != count:
            bad_rows += block.rows.size
            if int(block.rows[0]) < first_bad:
                first_bad = int(block.rows[0])
                bad = (f'message {first_bad} has {count} names'
                       + (' (one repeated)' if len(set(msg_names)) != count else '')
                       + f', {pos.shape[1]} positions, {vel.shape[1]} velocities and '
                       f'{eff.shape[1]} efforts')
            continue
        source = np.full(width, -1)  # per model column: the block's column, or -1
        for k, name in enumerate(msg_names):
            if name in column:
                source[column[name]] = k
            elif name not in urdf_joints:
                unknown.add(name)
        if not np.any(source >= 0):
            continue
        if position is None and len(decoded.blocks) == 1 and block.rows.size == n \
                and np.array_equal(block.rows, np.arange(n)):
            # One block for every message, in order (the usual case): one column gather each.
            position, velocity, effort = (_gather_columns(a, source) for a in (pos, vel, eff))
            continue
        if position is None:
            position, velocity, effort = (np.full((n, width), np.nan) for _ in range(3))
        dst = np.flatnonzero(source >= 0)
        src = source[dst]
        rows = block.rows[:, None]
        position[rows, dst] = pos[:, src]
        if vel.shape[1]:
            velocity[rows, dst] = vel[:, src]
        if eff.shape[1]:
            effort[rows, dst] = eff[:, src]
    if position is None:
        position, velocity, effort = (np.full((n, width), np.nan) for _ in range(3))
    if unknown and not ignore_extra:
        raise InputError(f'joint_states names joints that are not in the URDF: '
                         f'{sorted(unknown)} (wrong URDF? --ignore-extra-joints skips them)')
    if unknown:
        warnings.append(f'ignored joints that are not in the URDF: {sorted(unknown)}')
    expected = ('expected distinct names, one position per name, and one velocity and effort '
                'per name or none')
    if bad_rows and bad_rows == n:
        raise InputError(f'{topic}: every message is malformed: {bad} ({expected})')
    if bad_rows:
        warnings.append(f'skipped {bad_rows} {topic} messages whose position, velocity or '
                        f'effort length does not match their names (or that repeat a name); '
                        f'the first: {bad} ({expected})')
    _check_magnitudes(topic, names, (position, velocity, effort), set(locked or ()))
    times = np.asarray(decoded.stamps, dtype=np.int64)
    if clock == 'header' and n and not np.any(times):
        warnings.append('joint_states header stamps are all zero: using the receive times')
        clock = 'receive'
    if clock == 'receive':
        times = np.asarray(receive_ns, dtype=np.int64)
    elif clock != 'header':
        raise ValueError(f"clock {clock!r}: expected 'header' or 'receive'")
    received = np.asarray(receive_ns, dtype=np.int64)
    messages = np.arange(n)  # per row, its message in the order read
    if clock == 'header':
        rows = clock_segment(times, received, topic, window, ways_out, origin_ns)
        if rows != slice(0, n):
            warnings.append(f'{topic}: left out {n - (rows.stop - rows.start)} messages read '
                            'around the time window on the other side of a header clock step')
            times, received, messages = times[rows], received[rows], messages[rows]
            position, velocity, effort = position[rows], velocity[rows], effort[rows]
            n = times.size
    if n > 1 and np.any(times[1:] < times[:-1]):  # in order already: no copies
        order = np.argsort(times, kind='stable')
        times, received, messages = times[order], received[order], messages[order]
        position, velocity, effort = position[order], velocity[order], effort[order]
    if n > 1 and np.any(np.diff(times) <= 0):
        unique, first = np.unique(times, return_index=True)
        warnings.append(f'merged {n - unique.size} joint_states messages that share a stamp '
                        'with another')
        position, velocity, effort = (_merge_rows(a, first) for a in (position, velocity, effort))
        received = np.minimum.reduceat(received, first)
        times, messages = unique, messages[first]
    held = {name: (float(value), '--lock') for name, value in (locked or {}).items()}
    complete, seen = _finite_columns(position)
    never = [names[k] for k in range(width) if not seen[k] and names[k] not in held]
    if never and times.size and lock_missing is None:
        raise InputError(f'joint_states never gives a position for the URDF joints {never} '
                         '(the dynamics needs every joint; wrong URDF or topic? To hold them '
                         'at a fixed position: --lock JOINT=VALUE[,...] or --lock-missing)')
    if never and times.size:
        held.update({name: (float(lock_missing[name]), '--lock-missing') for name in never})
        warnings.append('joints the bag never publishes are held fixed (--lock-missing): '
                        + ', '.join(f'{name}={held[name][0]:g}' for name in never))
    overridden = [name for name, (_, why) in held.items() if why == '--lock'
                  and seen[column[name]]]
    if overridden:
        warnings.append(f'--lock overrides the positions the bag gives for {overridden}')
    for name, (value, _) in held.items():
        k = column[name]
        position[:, k] = value
        velocity[:, k] = 0.0
        complete[k] = True
    filled = 0
    for k in np.flatnonzero(~complete):
        have = np.isfinite(position[:, k])
        if not have.all():
            filled += int((~have).sum())
            position[~have, k] = np.interp(times[~have], times[have], position[have, k])
    if filled:
        warnings.append(f'interpolated {filled} joint positions missing from some messages')
    inside = slice(None)  # the rows of the window, not the margin read around it
    if window != (None, None):
        inside = (received >= (received[0] if window[0] is None else window[0])) \
            & (received < (received[-1] + 1 if window[1] is None else window[1]))
    origin = int(origin_ns) if origin_ns is not None else int(receive_ns[0]) if n else 0
    interleaved(times[inside], position[inside], names, topic, messages[inside], origin,
                one_side)
    return JointSeries(names, clock, times, received, position, velocity, effort,
                       tuple(warnings), held)


def _check_magnitudes(topic: str, names, fields, held: set[str]) -> None:
    """Raise ``InputError`` naming the first message with a finite value beyond ``MAX_ABS``."""
    for field_name, values in zip(('position', 'velocity', 'effort'), fields):
        flat = values.ravel()
        # Two reductions without a temporary array (an hour at 1 kHz: 200 MB a field); NaN
        # is skipped, an inf sends to the full check below.
        if not flat.size or not (np.fmax.reduce(flat) > MAX_ABS
                                 or np.fmin.reduce(flat) < -MAX_ABS):
            continue
        beyond = np.abs(values) > MAX_ABS
        beyond &= np.isfinite(values)
        beyond[:, [k for k, name in enumerate(names) if name in held]] = False
        if not beyond.any():
            continue
        row = int(np.flatnonzero(beyond.any(axis=1))[0])
        k = int(np.flatnonzero(beyond[row])[0])
        raise InputError(f'{topic}: message {row} gives {names[k]!r} the {field_name} '
                         f'{values[row, k]:.6g}, beyond +-{MAX_ABS:g} (SI units): a corrupt '
                         'value')


def _gather_columns(values: np.ndarray, source: np.ndarray) -> np.ndarray:
    """(N, J) array: column j is ``values[:, source[j]]``, or NaN where ``source[j]`` < 0."""
    if values.shape[1] == 0:
        return np.full((values.shape[0], source.size), np.nan)
    first = int(source[0])
    if first >= 0 and np.array_equal(source, np.arange(first, first + source.size)):
        # The model's columns in the message's order (the usual case): one slice copy.
        out = np.empty((values.shape[0], source.size))
        out[...] = values[:, first:first + source.size]
        return out
    out = np.take(values, np.maximum(source, 0), axis=1)
    if np.any(source < 0):
        out[:, source < 0] = np.nan
    return out


def _finite_columns(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column of (N, J) ``values``: (every value finite, some value finite)."""
    with np.errstate(all='ignore'):
        # A finite column sum proves a column finite in one pass; only the others are scanned.
        complete = np.isfinite(values.sum(axis=0))
    seen = complete & (values.shape[0] > 0)
    for k in np.flatnonzero(~complete):
        finite = np.isfinite(values[:, k])
        complete[k], seen[k] = finite.all(), finite.any()
    return complete, seen


def _merge_rows(values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Rows grouped by ``first`` (group start indices) merged: the largest finite value."""
    with np.errstate(invalid='ignore'):
        return np.fmax.reduceat(values, first, axis=0)


def unwrap_columns(position: np.ndarray, columns: Sequence[int]) -> np.ndarray:
    """Return a copy of ``position`` with the ``columns`` (continuous joints) unwrapped in time."""
    out = position.copy()
    for k in columns:
        out[:, k] = np.unwrap(out[:, k])
    return out


@dataclass(frozen=True)
class BaseState:
    """
    Free-flyer state at the joint sample times.

    Free-flyer state at the joint sample times: q (N, 7), v (N, 6), a (N, 6), ``keep``
    (the joint samples inside the odometry's time span; the others get no base state).
    """

    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    keep: np.ndarray


def base_state(odom_times_ns: np.ndarray, odometry: np.ndarray, sample_times_ns: np.ndarray,
               differentiate) -> BaseState:
    """
    Free-flyer q, v, a from Odometry rows (``rnea_ros.recording.bagio.cdr`` order, (M, 85)).

    ``differentiate(times_ns, values)`` returns ``differentiate.Derivatives`` (the caller's
    filter settings); its first derivative of the twist is a[:6].
    """
    from rnea_ros.recording.bagio import cdr
    order = np.argsort(odom_times_ns, kind='stable')
    times = odom_times_ns[order]
    rows = odometry[order]
    unique = np.concatenate([[True], np.diff(times) > 0])
    times, rows = times[unique], rows[unique]
    if times.size < 3:
        raise InputError(f'odometry has {times.size} distinct stamps: the base acceleration '
                         'needs at least 3')
    position = rows[:, cdr.ODOMETRY_POSITION]
    quaternion = rows[:, cdr.ODOMETRY_ORIENTATION].copy()
    norm = np.linalg.norm(quaternion, axis=1)
    if not np.all(np.abs(norm - 1.0) < 1e-3):
        k = int(np.argmax(np.abs(norm - 1.0)))
        raise InputError(f'odometry message {k}: orientation has norm {norm[k]:.6g}, expected '
                         'a unit quaternion')
    quaternion /= norm[:, None]
    # The same rotation as q and -q: keep consecutive quaternions on one hemisphere.
    flips = np.cumsum(np.einsum('ij,ij->i', quaternion[1:], quaternion[:-1]) < 0) % 2
    quaternion[1:][flips == 1] *= -1.0
    twist = np.concatenate([rows[:, cdr.ODOMETRY_LINEAR], rows[:, cdr.ODOMETRY_ANGULAR]], axis=1)
    acceleration = differentiate(times, twist).first
    keep = (sample_times_ns >= times[0]) & (sample_times_ns <= times[-1])
    t = sample_times_ns[keep]

    def at(values: np.ndarray) -> np.ndarray:
        rel = (times - times[0]).astype(np.float64)
        return np.stack([np.interp((t - times[0]).astype(np.float64), rel, values[:, k])
                         for k in range(values.shape[1])], axis=1) if t.size else \
            np.zeros((0, values.shape[1]))

    q = np.concatenate([at(position), at(quaternion)], axis=1)
    q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1)[:, None]
    return BaseState(q, at(twist), at(acceleration), keep)


def desired_accelerations(messages: Sequence, receive_ns: np.ndarray, names: Sequence[str],
                          sample_times_ns: np.ndarray, timeout: float) -> np.ndarray:
    """
    (N, J) desired accelerations at the sample times, NaN where none applies.

    ``messages``: deserialized trajectory_msgs/JointTrajectory, ``receive_ns`` their receive
    times; ``names``: the columns. See the module docstring for the timing rule.
    """
    column = {name: k for k, name in enumerate(names)}
    per_joint: list[list[tuple[int, float]]] = [[] for _ in names]
    for msg, received in zip(messages, receive_ns.tolist()):
        stamp = int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)
        start = stamp if stamp else received
        targets = [(k, column.get(name)) for k, name in enumerate(msg.joint_names)]
        for point in msg.points:
            accelerations = point.accelerations
            if len(accelerations) != len(targets):
                continue
            at = start + int(point.time_from_start.sec) * 1_000_000_000 \
                + int(point.time_from_start.nanosec)
            for k, col in targets:
                if col is not None and np.isfinite(accelerations[k]):
                    per_joint[col].append((at, float(accelerations[k])))
    out = np.full((sample_times_ns.size, len(names)), np.nan)
    limit = int(round(timeout * 1e9))
    for col, samples in enumerate(per_joint):
        if not samples:
            continue
        samples.sort(key=lambda s: s[0])  # stable: a later message wins a tie
        times = np.array([s[0] for s in samples], dtype=np.int64)
        values = np.array([s[1] for s in samples])
        index = np.searchsorted(times, sample_times_ns, side='right') - 1
        valid = index >= 0
        age = sample_times_ns - times[np.maximum(index, 0)]
        valid &= age <= limit
        out[valid, col] = values[index[valid]]
    return out
