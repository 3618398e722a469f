"""
Measured robot state from ROS inputs, without ROS: joint states merged by name, base odometry.

``JointStateInput`` keeps the latest position and velocity of each joint of a fixed list (the
model's one-degree-of-freedom joints, in model order) and writes them straight into views of the
model's q and v arrays, so the dynamics reads them without a copy. Any number of publishers may
each send a subset of the joints: values merge per joint, each joint keeps its own age. Names the
model does not know are ignored.

A message is rejected whole, leaving the previous values in place (they keep ageing toward the
timeout), when it has more than ``MAX_NAMES`` names (``TOO_LARGE``, before any is mapped), when
its arrays disagree in length with ``name`` (``velocity`` and ``effort`` may also be empty, as
``sensor_msgs/JointState`` allows), when it repeats a name, when a position or velocity of a
joint the model uses is not finite (``NON_FINITE``), or when one is beyond its plausibility
bound (``IMPLAUSIBLE``; ``bound_by``): a velocity beyond ``STATE_PLAUSIBILITY`` times the
joint's URDF velocity limit (``MAX_VELOCITY`` for a joint without one), a position outside the
joint's URDF range stretched ``STATE_PLAUSIBILITY`` times about its middle, and at least
``POSITION_SLACK`` beyond each limit (``MAX_POSITION`` in magnitude for a joint without
limits). Such a sample (1e6 rad/s on a joint of 2 rad/s, a
position of 1e300 rad) is no measurement: taken, it would put the torques at the effort limits
and the observer's residual at 1e10. Effort is read only when tracked
(``track_effort``: the momentum observer's measured torque), merged by name like the positions,
and its values are not checked here: drivers commonly publish NaN there when they have no torque
sensing (the observer reports a non-finite residual).

Times are steady-clock seconds (``time.monotonic``) given by the caller: watchdogs must not follow
simulated or adjusted ROS time. A joint never received has time ``-inf`` (age infinite).

Freshness is judged per joint, against what that joint's own publisher does. Each joint keeps an
estimate of the interval between its messages (``period``: the first interval, then an
exponential mean with weight ``PERIOD_WEIGHT`` per new interval; ``inf`` until two messages
arrived), and its timeout is ``max(input_timeout, min(max_input_timeout, STALE_PERIODS x
period))`` (``joint_timeouts``): an arm at 500 Hz keeps ``input_timeout``, a gripper published
at 5 Hz by another publisher gets 3 x 0.2 s = 0.6 s, and no joint waits longer than
``max(input_timeout, max_input_timeout)`` after its last message before the fault output. A
joint with one message so far (period unknown) gets that bound.

Locked joints (``lock``; the node's ``locked_joints``) are joints of the model that nobody
publishes (a gripper absent from joint_states): held at a given position, at rest, never stale
(time ``+inf``); names of locked joints in messages are ignored like unknown names.

``BaseStateInput`` maps ``nav_msgs/Odometry`` onto the free-flyer part of the state (REP-105):
the pose (``pose.pose``, the base link in the odometry/world frame ``header.frame_id``) gives
``q[:7] = [x y z qx qy qz qw]``; the twist (``twist.twist``, expressed in the base link frame
``child_frame_id``) gives ``v[:6] = [linear; angular]``, exactly the free-flyer velocity of
``RobotModel``. The world frame must be gravity-aligned (z up), as REP-105 requires of odom.
"""
from __future__ import annotations

import array
from collections.abc import Sequence
import math

from numba import njit
import numpy as np

from rnea_ros.dynamics.rnea import QUATERNION_TOLERANCE

# Rejection reasons, the keys of the rejection counters in the diagnostics.
LENGTH_MISMATCH = 'length_mismatch'
DUPLICATE_NAME = 'duplicate_name'
NON_FINITE = 'non_finite'
BAD_QUATERNION = 'bad_quaternion'
TOO_LARGE = 'too_large'
IMPLAUSIBLE = 'implausible'

# The plausibility bound of a measured state (module docstring): a multiple of the URDF limits,
# as the observer's of the effort (``observer_outputs.EFFORT_PLAUSIBILITY``), and for joints
# without limits a magnitude [rad or m, rad/s or m/s] no robot reaches.
STATE_PLAUSIBILITY = 10.0
POSITION_SLACK = 2 * math.pi  # rad (m for a prismatic joint): a short stroke's bound at least
MAX_POSITION = 1e6
MAX_VELOCITY = 1e4

# Most joint names a joint_states or trajectory message may carry: a larger one is dropped
# before its names are mapped (a robot, or several merged, has far fewer joints).
MAX_NAMES = 1000

NEVER = -math.inf
LOCKED = math.inf  # the time of a locked joint: never older than any timeout

STALE_PERIODS = 3.0  # a joint is stale after this many of its own message periods...
PERIOD_WEIGHT = 0.1  # ...estimated by an exponential mean with this weight per new interval

# input_fault codes (joint_states part), most severe first.
FRESH, NEVER_RECEIVED, STALE, VELOCITY_STALE = 0, 1, 2, 3


class Rejected(ValueError):
    """An input message was dropped: ``reason`` is a reason constant, str() the detail."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason


_EMPTY = np.empty(0)


def _as_array(values):
    """
    Return the message array in a form numba takes without a copy.

    The message array as it is when numba takes it without a copy (``array.array('d')``, as
    rclpy gives, or a float64 ndarray); anything else (lists) converted to an ndarray.
    """
    kind = type(values)
    if kind is array.array and values.typecode == 'd':
        return values
    if kind is np.ndarray and values.dtype == np.float64 and values.ndim == 1:
        return values
    if len(values) == 0:
        return _EMPTY
    return np.asarray(values, dtype=np.float64)


@njit(cache=True, nogil=True)
def merge(position, velocity, source, target, q, v, q_time, v_time, period, now, q_low, q_high,
          v_bound) -> int:
    """
    Merge a message's positions (and velocities) into the state if they are plausible.

    Write ``position[source]`` into ``q[target]`` (and velocity, unless empty) with their
    times, if all those entries are finite and within their bounds (``q_low[target]`` to
    ``q_high[target]``, ``|v|`` at most ``v_bound[target]``); else write nothing and return the
    message index of the first bad position, or ``len(position)`` + that of the first bad
    velocity. Returns -1 when merged, after updating each merged joint's ``period`` estimate
    (see the module docstring). ``position``/``velocity``: message arrays (buffers, no copy).
    """
    for i in range(source.shape[0]):
        value, j = position[source[i]], target[i]
        if not (np.isfinite(value) and q_low[j] <= value <= q_high[j]):
            return source[i]
    with_velocity = len(velocity) > 0
    if with_velocity:
        for i in range(source.shape[0]):
            value = velocity[source[i]]
            if not (np.isfinite(value) and abs(value) <= v_bound[target[i]]):
                return len(position) + source[i]
    for i in range(source.shape[0]):
        j = target[i]
        q[j] = position[source[i]]
        previous = q_time[j]
        if previous > -np.inf:
            interval = now - previous
            if period[j] == np.inf:
                period[j] = interval
            else:
                period[j] += PERIOD_WEIGHT * (interval - period[j])
        q_time[j] = now
        if with_velocity:
            v[j] = velocity[source[i]]
            v_time[j] = now
    return -1


@njit(cache=True, nogil=True)
def merge_effort(effort, source, target, out) -> None:
    """Write ``effort[source]`` into ``out[target]`` (a message array, no copy)."""
    for i in range(source.shape[0]):
        out[target[i]] = effort[source[i]]


@njit(cache=True, nogil=True)
def joint_timeouts(period, timeout, max_timeout, out) -> None:
    """Write each joint's timeout: max(timeout, min(max_timeout, STALE_PERIODS x period))."""
    for j in range(period.shape[0]):
        own = STALE_PERIODS * period[j]
        if own > max_timeout:
            own = max_timeout
        out[j] = own if own > timeout else timeout


@njit(cache=True, nogil=True)
def freshness(now, q_time, v_time, period, indices, timeout, max_timeout,
              need_velocity) -> int:
    """
    Return the worst freshness of the joints ``indices``.

    NEVER_RECEIVED, STALE (a position older than its joint's timeout), VELOCITY_STALE (a
    velocity likewise, if ``need_velocity``) or FRESH.
    """
    worst = FRESH
    for k in indices:
        if q_time[k] == -np.inf:
            return NEVER_RECEIVED
        own = STALE_PERIODS * period[k]
        if own > max_timeout:
            own = max_timeout
        if own < timeout:
            own = timeout
        if now - q_time[k] > own:
            worst = STALE
        elif need_velocity and worst == FRESH and now - v_time[k] > own:
            worst = VELOCITY_STALE
    return worst


class _NameMap:
    """Where the entries of one message name list go: positions in the message -> joint indices."""

    __slots__ = ('names', 'source', 'target')

    def __init__(self, names: list, source: list[int], target: list[int]):
        self.names = list(names)
        self.source = np.array(source, dtype=np.int64)
        self.target = np.array(target, dtype=np.int64)


class JointStateInput:
    """
    Latest position/velocity per joint, merged by name, written into caller-owned arrays.

    ``position`` and ``velocity`` (length ``len(joint_names)``, joint order) may be views into the
    model's q and v; they start at the values they hold (zero: the neutral configuration).
    """

    CACHE_SIZE = 8

    def __init__(self, joint_names: Sequence[str], position: np.ndarray | None = None,
                 velocity: np.ndarray | None = None):
        self.joint_names = tuple(joint_names)
        n = len(self.joint_names)
        self._index = {name: k for k, name in enumerate(self.joint_names)}
        if len(self._index) != n:
            raise ValueError('joint_names repeats a name')
        self.position = np.zeros(n) if position is None else position
        self.velocity = np.zeros(n) if velocity is None else velocity
        if self.position.shape != (n,) or self.velocity.shape != (n,):
            raise ValueError(f'position and velocity must have shape ({n},)')
        self.position_time = np.full(n, NEVER)
        self.velocity_time = np.full(n, NEVER)
        self.period = np.full(n, math.inf)  # estimated interval between messages, per joint
        # Plausibility bounds (``bound_by``; until then, finite is plausible).
        self.position_low, self.position_high = np.full(n, -math.inf), np.full(n, math.inf)
        self.velocity_bound = np.full(n, math.inf)
        self._bounds: dict[tuple[str, int], str] = {}  # (field, joint) -> the bound, in words
        self.locked: dict[str, float] = {}
        self.stamp = None  # header stamp of the latest accepted message (opaque to this class)
        self.accepted = 0
        self.effort: np.ndarray | None = None  # merged measured efforts (``track_effort``)
        self.with_effort = False  # the latest accepted message carried efforts
        self._maps: list[_NameMap | None] = []  # most recent first; None entries: duplicates
        self._map_names: list[list] = []
        self._last_map: _NameMap | None = None
        # Compile (or load from the cache) the merge for both kinds of message arrays now.
        for kind in (np.zeros, lambda size: array.array('d', bytes(8 * size))):
            merge(kind(1), kind(0), np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1),
                  np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1), 0.0, np.zeros(1),
                  np.zeros(1), np.zeros(1))
        freshness(0.0, self.position_time, self.velocity_time, self.period,
                  np.zeros(0, np.int64), 1.0, 1.0, True)
        joint_timeouts(self.period, 1.0, 1.0, np.zeros(n))

    def bound_by(self, model) -> None:
        """Take each joint's plausibility bounds from ``model``'s URDF limits (module doc)."""
        for k, name in enumerate(self.joint_names):
            joint = model.joint(name)
            lower, upper, limit = joint.lower, joint.upper, joint.velocity_limit
            if math.isfinite(lower) and math.isfinite(upper) and lower < upper:
                margin = max(0.5 * (STATE_PLAUSIBILITY - 1.0) * (upper - lower), POSITION_SLACK)
                self.position_low[k], self.position_high[k] = lower - margin, upper + margin
                why = f'its URDF range [{lower:g}, {upper:g}] widened by {margin:.6g} each side'
            else:
                self.position_low[k], self.position_high[k] = -MAX_POSITION, MAX_POSITION
                why = 'it has no URDF limits'
            self._bounds['position', k] = (f'from {self.position_low[k]:.6g} to '
                                           f'{self.position_high[k]:.6g} ({why})')
            if math.isfinite(limit) and limit > 0.0:
                self.velocity_bound[k] = STATE_PLAUSIBILITY * limit
                why = f'{STATE_PLAUSIBILITY:g} times its URDF velocity limit {limit:g}'
            else:
                self.velocity_bound[k] = MAX_VELOCITY
                why = 'it has no URDF velocity limit'
            self._bounds['velocity', k] = (f'of magnitude at most {self.velocity_bound[k]:.6g} '
                                           f'({why})')

    def track_effort(self, effort: np.ndarray | None = None) -> np.ndarray:
        """
        Merge the efforts of the messages into ``effort`` (joint order; default: a new array).

        A message without efforts (an empty ``effort``) leaves them as they were and sets
        ``with_effort`` False.
        """
        n = len(self.joint_names)
        self.effort = np.zeros(n) if effort is None else effort
        for kind in (np.zeros, lambda size: array.array('d', bytes(8 * size))):
            merge_effort(kind(1), np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1))
        return self.effort

    def lock(self, positions: dict[str, float]) -> None:
        """
        Hold these joints at these positions, at rest, never stale; ignore them in messages.

        ``KeyError`` names a joint that is not one of ``joint_names``.
        """
        for name, value in positions.items():
            k = self._index[name]
            self.position[k], self.velocity[k] = value, 0.0
            self.position_time[k] = self.velocity_time[k] = LOCKED
        self.locked.update(positions)
        self._maps.clear()
        self._map_names.clear()
        self._last_map = None

    # ------------------------------------------------------------------ updates
    def update(self, names: Sequence[str], position, velocity, effort, now: float,
               stamp=None) -> None:
        """Merge one JointState message received at steady time ``now``; raises ``Rejected``."""
        n = len(names)
        if n > MAX_NAMES:
            raise Rejected(TOO_LARGE, f'name has {n} entries (at most {MAX_NAMES})')
        size = len(position)
        if size != n:
            raise Rejected(LENGTH_MISMATCH, f'position has {size} entries for {n} names '
                                            f'(expected {n})')
        for field, values in (('velocity', velocity), ('effort', effort)):
            size = len(values)
            if size != n and size != 0:
                raise Rejected(LENGTH_MISMATCH,
                               f'{field} has {size} entries for {n} names (expected 0 or {n})')
        # Publishers repeat their name list: compare with the last one before the cache.
        mapping = self._last_map
        if mapping is None or names != mapping.names:
            mapping = self._name_map(names)
            self._last_map = mapping
        bad = merge(_as_array(position), _as_array(velocity), mapping.source, mapping.target,
                    self.position, self.velocity, self.position_time, self.velocity_time,
                    self.period, now, self.position_low, self.position_high,
                    self.velocity_bound)
        if bad >= 0:
            field, values, k = (('position', position, bad) if bad < n else
                                ('velocity', velocity, bad - n))
            if not math.isfinite(values[k]):
                raise Rejected(NON_FINITE, f'{field}[{k}] (joint {names[k]!r}) is {values[k]}')
            bound = self._bounds[field, self._index[names[k]]]
            raise Rejected(IMPLAUSIBLE, f'{field}[{k}] (joint {names[k]!r}) is {values[k]:.6g}: '
                                        f'beyond its plausibility bound, expected {bound}')
        if self.effort is not None:
            self.with_effort = len(effort) == n and n > 0
            if self.with_effort:
                merge_effort(_as_array(effort), mapping.source, mapping.target, self.effort)
        self.stamp = stamp
        self.accepted += 1

    def _name_map(self, names) -> _NameMap:
        """Return the cached map of this name list (publishers repeat theirs)."""
        for k, cached in enumerate(self._map_names):
            if cached == names:
                mapping = self._maps[k]
                if mapping is None:
                    raise Rejected(DUPLICATE_NAME, self._duplicate_detail(names))
                return mapping
        if len(set(names)) != len(names):
            self._remember(names, None)
            raise Rejected(DUPLICATE_NAME, self._duplicate_detail(names))
        source, target = [], []
        for k, name in enumerate(names):
            joint = self._index.get(name)
            if joint is not None and name not in self.locked:
                source.append(k)
                target.append(joint)
        mapping = _NameMap(names, source, target)
        self._remember(names, mapping)
        return mapping

    def _remember(self, names, mapping) -> None:
        self._map_names.insert(0, list(names))
        self._maps.insert(0, mapping)
        del self._map_names[self.CACHE_SIZE:], self._maps[self.CACHE_SIZE:]

    @staticmethod
    def _duplicate_detail(names) -> str:
        seen, repeated = set(), []
        for name in names:
            if name in seen and name not in repeated:
                repeated.append(name)
            seen.add(name)
        return f'name repeats {repeated}'

    def copy_state_from(self, other: JointStateInput) -> None:
        """Take over the values and ages of the joints both inputs know (after a model change)."""
        for k, name in enumerate(self.joint_names):
            j = other._index.get(name)
            if j is not None and name not in self.locked:
                self.position[k] = other.position[j]
                self.velocity[k] = other.velocity[j]
                self.position_time[k] = other.position_time[j]
                self.velocity_time[k] = other.velocity_time[j]
                self.period[k] = other.period[j]
        self.stamp = other.stamp

    def timeouts(self, timeout: float, max_timeout: float) -> np.ndarray:
        """Each joint's current timeout (see the module docstring; allocates)."""
        out = np.empty(len(self.joint_names))
        joint_timeouts(self.period, timeout, max_timeout, out)
        return out

    def fault(self, now: float, indices: np.ndarray, timeout: float, max_timeout: float,
              need_velocity: bool) -> int:
        """FRESH, NEVER_RECEIVED, STALE or VELOCITY_STALE for the joints ``indices``."""
        return freshness(now, self.position_time, self.velocity_time, self.period, indices,
                         timeout, max_timeout, need_velocity)

    # ------------------------------------------------------------------ ages
    def names_never_received(self, indices=None) -> list[str]:
        """Joints (of ``indices``, default all) whose position never arrived."""
        indices = range(len(self.joint_names)) if indices is None else indices
        return [self.joint_names[k] for k in indices if self.position_time[k] == NEVER]

    def names_older_than(self, now: float, timeout, indices=None,
                         velocity: bool = False) -> list[str]:
        """
        Return the joints (of ``indices``) whose position (or velocity) is older than timeout.

        ``timeout``: a number, or one per joint as ``timeouts`` gives.
        """
        times = self.velocity_time if velocity else self.position_time
        indices = range(len(self.joint_names)) if indices is None else indices
        limits = np.broadcast_to(np.asarray(timeout, dtype=np.float64),
                                 (len(self.joint_names),))
        return [self.joint_names[k] for k in indices if now - times[k] > limits[k]]


class BaseStateInput:
    """Free-flyer state from odometry, written into views ``q[:7]`` and ``v[:6]`` (see module)."""

    def __init__(self, pose: np.ndarray | None = None, twist: np.ndarray | None = None):
        self.pose = np.array([0, 0, 0, 0, 0, 0, 1.0]) if pose is None else pose
        self.twist = np.zeros(6) if twist is None else twist
        if pose is not None:
            pose[:] = (0, 0, 0, 0, 0, 0, 1.0)
        self.time = NEVER
        self.stamp = None
        self.accepted = 0

    def update(self, position, orientation, linear, angular, now: float, stamp=None) -> None:
        """
        Take the position, orientation and twist of the base (twist in the base frame).

        A quaternion whose norm is off by more than ``QUATERNION_TOLERANCE`` is rejected; a nearly
        unit one is normalised. Raises ``Rejected``.
        """
        values = (*position, *orientation, *linear, *angular)
        for k, value in enumerate(values):
            if not math.isfinite(value):
                field = ('pose.position', 'pose.orientation', 'twist.linear', 'twist.angular')
                raise Rejected(NON_FINITE, f'{field[(k > 2) + (k > 6) + (k > 9)]} holds {value}')
        x, y, z, w = orientation
        norm = math.sqrt(x * x + y * y + z * z + w * w)
        if abs(norm - 1.0) > QUATERNION_TOLERANCE:
            raise Rejected(BAD_QUATERNION, f'pose.orientation has norm {norm:.6g}: expected a '
                                           f'unit quaternion')
        pose = self.pose
        pose[0], pose[1], pose[2] = position
        pose[3], pose[4], pose[5], pose[6] = x / norm, y / norm, z / norm, w / norm
        twist = self.twist
        twist[0], twist[1], twist[2] = linear
        twist[3], twist[4], twist[5] = angular
        self.time = now
        self.stamp = stamp
        self.accepted += 1

    def copy_state_from(self, other: BaseStateInput) -> None:
        self.pose[:] = other.pose
        self.twist[:] = other.twist
        self.time, self.stamp = other.time, other.stamp


def base_spatial_acceleration(linear, angular, twist: np.ndarray, out: np.ndarray) -> None:
    """
    Free-flyer ``a[:6]`` from a base acceleration given as a ``geometry_msgs/Accel``.

    The message is read as the classical acceleration of the base-link origin and the angular
    acceleration, both in the base link frame, gravity excluded (not an accelerometer's specific
    force). ``RobotModel`` wants the derivative of the body twist [v; w], whose linear part is
    the classical one minus w x v: ``a_lin = a_classical - w x v``.
    """
    vx, vy, vz, wx, wy, wz = twist
    out[0] = linear[0] - (wy * vz - wz * vy)
    out[1] = linear[1] - (wz * vx - wx * vz)
    out[2] = linear[2] - (wx * vy - wy * vx)
    out[3], out[4], out[5] = angular


def accel_values(linear, angular) -> tuple[float, ...]:
    """Return [linear; angular] of a geometry_msgs/Accel; ``Rejected`` names a non-finite one."""
    values = (*linear, *angular)
    for k, value in enumerate(values):
        if not math.isfinite(value):
            part = 'linear' if k < 3 else 'angular'
            raise Rejected(NON_FINITE, f'accel.{part}.{"xyz"[k % 3]} is {value}')
    return values


def low_pass(state: np.ndarray, values, step: float, time_constant: float) -> None:
    """
    Move ``state`` toward ``values`` as a first-order low-pass over ``step`` seconds.

    A time constant 0, or a step that does not advance (-inf: a restart), takes ``values``.
    """
    if time_constant <= 0.0 or not step > 0.0:
        state[:] = values
        return
    weight = -math.expm1(-step / time_constant)
    for k in range(len(state)):
        state[k] += weight * (values[k] - state[k])
