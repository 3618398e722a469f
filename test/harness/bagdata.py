"""
Test bags written with ``rosbags``: analytic panda motions and realistic logs.

Messages are serialized by rosbags' own serializer (not by ``rnea_ros.recording.bagio.cdr``),
so the bag tool's decoder is checked against an independent encoding.

- ``panda_bag``: an exact sinusoidal motion of Franka's panda (``trajectory``).
- ``realistic_log`` / ``realistic_bag``: what a real robot logs, for any fixed-base
  ``RobotModel``: jittered stamps, dropped packets, quantised positions, the robot's own
  filtered velocity, effort with noise and an offset (torque sensor or motor current x gain,
  optionally low-passed), friction and armature, a "true" model other than the URDF's; the
  truth (q, v, a, tau) comes from a finite Fourier series inside the joint limits.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from harness.oracle import robot_path
import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import get_typestore, Stores

STORE = get_typestore(Stores.LATEST)
JOINT_STATE = 'sensor_msgs/msg/JointState'
JOINT_TRAJECTORY = 'trajectory_msgs/msg/JointTrajectory'
ODOMETRY = 'nav_msgs/msg/Odometry'
STRING = 'std_msgs/msg/String'
PANDA = robot_path('panda')
# The 8 independent joints of the panda model, then the mimic finger the robot also publishes.
PANDA_JOINTS = [f'panda_joint{k}' for k in range(1, 8)] + ['panda_finger_joint1']
MIMIC = 'panda_finger_joint2'
BAG_START = 1_700_000_000 * 10**9  # ns since the epoch
# q = center + amplitude sin(omega t + phase), inside the panda's joint limits.
CENTER = np.array([0.0, -0.3, 0.0, -1.8, 0.0, 1.6, 0.7, 0.02])
AMPLITUDE = np.array([0.8, 0.5, 0.6, 0.5, 0.9, 0.5, 1.0, 0.015])
OMEGA = np.array([1.3, 2.1, 1.7, 2.6, 3.0, 2.3, 3.3, 4.0])  # rad/s
PHASE = np.array([0.1, 0.7, 1.3, 2.2, 0.4, 1.9, 2.8, 0.5])


def trajectory(t: np.ndarray, derivative: int = 0) -> np.ndarray:
    """(N, 8) q (derivative 0), v (1), a (2) or the 4th derivative at times t [s]."""
    angle = OMEGA * t[:, None] + PHASE
    scale = AMPLITUDE * OMEGA ** derivative
    value = [np.sin, np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x),
             np.sin][derivative](angle) * scale
    return value + CENTER if derivative == 0 else value


def fourth_derivative_bound() -> np.ndarray:
    """Return max |q''''| per joint: amplitude * omega^4."""
    return AMPLITUDE * OMEGA ** 4


def stamp(ns: int):
    t = STORE.types['builtin_interfaces/msg/Time']
    return t(sec=int(ns // 10**9), nanosec=int(ns % 10**9))


def header(ns: int, frame_id: str = ''):
    return STORE.types['std_msgs/msg/Header'](stamp=stamp(ns), frame_id=frame_id)


def joint_state(ns: int, names, position, velocity=(), effort=()) -> bytes:
    msg = STORE.types[JOINT_STATE](
        header=header(ns), name=list(names), position=np.asarray(position, dtype=np.float64),
        velocity=np.asarray(velocity, dtype=np.float64),
        effort=np.asarray(effort, dtype=np.float64))
    return bytes(STORE.serialize_cdr(msg, JOINT_STATE))


def desired_acceleration(ns: int, names, accelerations) -> bytes:
    types = STORE.types
    duration = types['builtin_interfaces/msg/Duration'](sec=0, nanosec=0)
    point = types['trajectory_msgs/msg/JointTrajectoryPoint'](
        positions=np.zeros(0), velocities=np.zeros(0),
        accelerations=np.asarray(accelerations, dtype=np.float64), effort=np.zeros(0),
        time_from_start=duration)
    msg = types[JOINT_TRAJECTORY](header=header(ns), joint_names=list(names), points=[point])
    return bytes(STORE.serialize_cdr(msg, JOINT_TRAJECTORY))


def string(text: str) -> bytes:
    return bytes(STORE.serialize_cdr(STORE.types[STRING](data=text), STRING))


def odometry(ns: int, position, orientation, linear, angular) -> bytes:
    types = STORE.types
    geometry = 'geometry_msgs/msg/'
    pose = types[geometry + 'Pose'](position=types[geometry + 'Point'](*position),
                                    orientation=types[geometry + 'Quaternion'](*orientation))
    twist = types[geometry + 'Twist'](linear=types[geometry + 'Vector3'](*linear),
                                      angular=types[geometry + 'Vector3'](*angular))
    msg = types[ODOMETRY](
        header=header(ns, 'odom'), child_frame_id='base_link',
        pose=types[geometry + 'PoseWithCovariance'](pose=pose, covariance=np.zeros(36)),
        twist=types[geometry + 'TwistWithCovariance'](twist=twist, covariance=np.zeros(36)))
    return bytes(STORE.serialize_cdr(msg, ODOMETRY))


def write_bag(path: Path, topics: dict, storage: str = 'sqlite3') -> Path:
    """``topics``: name -> (msgtype, [(receive ns, record bytes), ...])."""
    plugin = {'sqlite3': StoragePlugin.SQLITE3, 'mcap': StoragePlugin.MCAP}[storage]
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        connections = {name: writer.add_connection(name, msgtype, typestore=STORE)
                       for name, (msgtype, _) in topics.items()}
        messages = sorted((ns, k, name, raw) for name, (_, items) in topics.items()
                          for k, (ns, raw) in enumerate(items))
        for ns, _, name, raw in messages:
            writer.write(connections[name], ns, raw)
    return path


def sample_times(n: int, rate: float = 1000.0, jitter: float = 0.0, gap: tuple | None = None,
                 seed: int = 0) -> np.ndarray:
    """
    Make n increasing sample times in ns from BAG_START.

    n increasing sample times in ns from BAG_START: period 1/rate, uniform relative jitter
    in [-jitter, jitter] of a period, and ``gap`` = (index, seconds) inserted before a sample.
    """
    rng = np.random.default_rng(seed)
    period = 1e9 / rate
    steps = period * (1.0 + rng.uniform(-jitter, jitter, n))
    steps[0] = 0.0
    if gap is not None:
        steps[gap[0]] += gap[1] * 1e9
    return BAG_START + np.round(np.cumsum(steps)).astype(np.int64)


def panda_bag(path: Path, times_ns: np.ndarray, *, storage: str = 'sqlite3',
              velocity: bool = True, effort: np.ndarray | None = None,
              desired: bool = False, description: str | None = None) -> Path:
    """
    Make the joint_states messages of the analytic trajectory at ``times_ns``.

    joint_states of the analytic trajectory at ``times_ns`` (also the receive times), with
    the mimic finger; optional measured ``effort`` (N, 8), a desired_accelerations message
    per sample (exact accelerations) and a robot_description message.
    """
    t = (times_ns - BAG_START) * 1e-9
    q, v, a = trajectory(t), trajectory(t, 1), trajectory(t, 2)
    names = PANDA_JOINTS + [MIMIC]
    states = []
    for k, ns in enumerate(times_ns.tolist()):
        row_q = np.append(q[k], q[k, 7])
        row_v = np.append(v[k], v[k, 7]) if velocity else ()
        row_e = np.append(effort[k], 0.0) if effort is not None else ()
        states.append((ns, joint_state(ns, names, row_q, row_v, row_e)))
    topics = {'/joint_states': (JOINT_STATE, states)}
    if desired:
        topics['/desired_accelerations'] = (JOINT_TRAJECTORY, [
            (ns, desired_acceleration(ns, PANDA_JOINTS, a[k]))
            for k, ns in enumerate(times_ns.tolist())])
    if description is not None:
        topics['/robot_description'] = (STRING, [(int(times_ns[0]) - 1000, string(description))])
    return write_bag(path, topics, storage)


# ---------------------------------------------------------------- realistic logs

@dataclass(frozen=True)
class JointFriction:
    """
    Friction of the simulated joints: coulomb * tanh(v / threshold) + viscous * v.

    ``coulomb`` [N·m] and ``viscous`` [N·m·s/rad] per joint (N or N·s/m for prismatic
    joints); ``threshold`` [rad/s] the velocity over which the smooth sign saturates.
    """

    coulomb: np.ndarray
    viscous: np.ndarray
    threshold: float = 0.01

    def torque(self, v: np.ndarray) -> np.ndarray:
        return self.coulomb * np.tanh(v / self.threshold) + self.viscous * v


@dataclass(frozen=True)
class RealisticLog:
    """
    A simulated joint_states log of a fixed-base robot, and the truth behind it.

    Columns in ``names`` order (the model's one-DoF joints). Measured: ``times_ns`` (N,) the
    header stamps (ns from the epoch, start ``BAG_START``), ``q`` (quantised positions),
    ``v_reported`` (the robot's own velocity estimate), ``effort`` (the torque sensor or the
    scaled motor current). Truth at the instants the samples were taken: ``q_true``, ``v_true``,
    ``a_true`` from the analytic trajectory and ``tau_true``: the rigid-body torque of
    ``true_model`` + armature · a + friction (what the joint produced, before the sensor).
    ``offset`` (J,): the effort sensor offset; ``holes``: (K, 2) [start, stop) times [ns] of
    the dropped stretches; ``settings``: the generator's arguments.
    """

    names: tuple[str, ...]
    times_ns: np.ndarray
    q: np.ndarray
    v_reported: np.ndarray
    effort: np.ndarray
    q_true: np.ndarray
    v_true: np.ndarray
    a_true: np.ndarray
    tau_true: np.ndarray
    offset: np.ndarray
    holes: np.ndarray
    settings: dict


# Fields of ``RealisticLog`` with one row per sample (to cut a log).
RECEIVE_DELAY = 300_000  # ns from a message's stamp to its receive time in the bag
PER_SAMPLE = ('times_ns', 'q', 'v_reported', 'effort', 'q_true', 'v_true', 'a_true', 'tau_true')


def fourier_trajectory(lower: np.ndarray, upper: np.ndarray, seed: int, *,
                       base_frequency: float = 0.2, harmonics: int = 5,
                       max_velocity: float = 1.0):
    """
    Make a finite Fourier series per joint inside [lower, upper] (a 20 % margin each side).

    q_j(t) = c_j + sum_l (a_jl sin(l w t) + b_jl cos(l w t)), w = 2 pi ``base_frequency``, the
    usual excitation of identification experiments. Joints without limits swing over +-1 rad;
    peak velocity at most ``max_velocity`` (rad/s; for prismatic joints scaled by the range).
    Returns ``evaluate(t, derivative)`` -> (N, J) exact q, v, a, jerk (derivative 0..3).
    """
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(lower), lower, -1.0)
    upper = np.where(np.isfinite(upper), upper, 1.0)
    center = 0.5 * (lower + upper)
    reach = 0.3 * (upper - lower)  # 20 % margin to each limit
    order = np.arange(1, harmonics + 1)
    omega = 2 * np.pi * base_frequency * order
    # Coefficients falling off with the harmonic: smooth, with content up to the top one.
    a = rng.normal(size=(reach.size, harmonics)) / order
    b = rng.normal(size=(reach.size, harmonics)) / order
    peak = np.abs(a).sum(axis=1) + np.abs(b).sum(axis=1)
    speed = (np.abs(a) + np.abs(b)) @ omega
    scale = np.minimum(reach / peak, max_velocity * np.minimum(1.0, reach) / speed)
    a *= scale[:, None]
    b *= scale[:, None]
    offset = center - b.sum(axis=1)  # q(0) at the centre

    def evaluate(t: np.ndarray, derivative: int = 0) -> np.ndarray:
        angle = t[:, None, None] * omega
        sin, cos = np.sin(angle), np.cos(angle)
        # d/dt of (sin, cos) = omega (cos, -sin): rotate (a, b) a quarter turn per derivative.
        ca, cb = a, b
        for _ in range(derivative):
            ca, cb = -cb * omega, ca * omega
        value = (ca * sin + cb * cos).sum(axis=2)
        return value + offset if derivative == 0 else value
    return evaluate


def _low_pass(x: np.ndarray, times: np.ndarray, cutoff: float | None) -> np.ndarray:
    """First-order low-pass of the rows of x (N, J) at the sample times [s], state from x[0]."""
    if cutoff is None:
        return x.copy()
    out = np.empty_like(x)
    out[0] = x[0]
    alpha = 1.0 - np.exp(-2 * np.pi * cutoff * np.diff(times, prepend=times[0]))
    for k in range(1, x.shape[0]):
        out[k] = out[k - 1] + alpha[k] * (x[k] - out[k - 1])
    return out


def realistic_log(model, duration: float = 10.0, rate: float = 1000.0, seed: int = 0, *,
                  jitter: float = 2e-4, holes: tuple[float, float, float] | None = (
                      3.0, 0.005, 0.020), quantum: float = 2.0 ** -19,
                  stamp_error: float = 0.0, velocity_source: str = 'difference',
                  velocity_filter: float | None = 50.0, velocity_noise: float = 0.0,
                  effort_noise: float = 0.05, effort_offset: float | np.ndarray | None = None,
                  effort_filter: float | None = None, effort_gain: float = 1.0,
                  friction: JointFriction | None = None, armature: np.ndarray | None = None,
                  true_model=None, hold: dict | None = None,
                  max_velocity: float = 1.0) -> RealisticLog:
    """
    Simulate what a real robot logs while following an exciting trajectory.

    - Timing: the robot samples every 1/``rate`` s, each stamp jittered uniformly by
      +-``jitter`` s (stamps are the true sampling instants, unless ``stamp_error`` > 0: the
      stamp then misses the instant by normal noise of that standard deviation [s]).
    - ``holes`` = (mean spacing, shortest, longest) [s]: stretches of dropped messages (the
      network lost them; the robot kept running), their starts spaced by exponential
      intervals of that mean, lengths uniform between the two; None: no hole.
    - Positions: the trajectory (``fourier_trajectory``) quantised to ``quantum`` rad (an
      encoder's resolution).
    - Velocity: ``velocity_source='difference'``: the robot's own estimate, the backward
      difference of its quantised positions over its own ticks, low-passed at
      ``velocity_filter`` Hz (first order: delay about 1 / (2 pi f)); ``'sensor'``: the true
      velocity, low-passed likewise (None: not filtered). Plus white noise ``velocity_noise``
      [rad/s].
    - Effort: ``tau_true`` (``true_model``, default ``model``, + ``armature`` · a +
      ``friction``) times ``effort_gain`` (a motor current's torque constant error), low-passed
      at ``effort_filter`` Hz (None: not), plus ``effort_offset`` (default: per joint uniform
      in +-0.3 N·m, from the seed) and white noise ``effort_noise`` [N·m].
    - ``hold``: joint name -> position kept constant (e.g. a gripper).
    """
    true_model = model if true_model is None else true_model
    joints = [j for j in model.joints if j.nv == 1]
    names = tuple(j.name for j in joints)
    width = len(names)
    rng = np.random.default_rng(seed)
    period = 1.0 / rate
    ticks = int(round(duration * rate)) + 1
    instants = np.arange(ticks) * period + rng.uniform(-jitter, jitter, ticks)
    instants[0] = 0.0
    evaluate = fourier_trajectory(np.array([j.lower for j in joints]),
                                  np.array([j.upper for j in joints]), seed + 1,
                                  max_velocity=max_velocity)
    q_true, v_true, a_true = (evaluate(instants, d) for d in range(3))
    for name, value in (hold or {}).items():
        k = names.index(name)
        q_true[:, k], v_true[:, k], a_true[:, k] = value, 0.0, 0.0
    q = np.round(q_true / quantum) * quantum if quantum else q_true.copy()
    if velocity_source == 'difference':
        raw = np.diff(q, axis=0, prepend=q[:1]) / np.diff(instants, prepend=-period)[:, None]
    elif velocity_source == 'sensor':
        raw = v_true
    else:
        raise ValueError(f"velocity_source {velocity_source!r}: 'difference' or 'sensor'")
    v_reported = _low_pass(raw, instants, velocity_filter)
    v_reported += velocity_noise * rng.normal(size=v_reported.shape)
    tau = true_model.rnea_batch(q_true, v_true, a_true)
    if armature is not None:
        tau = tau + np.asarray(armature) * a_true
    if friction is not None:
        tau = tau + friction.torque(v_true)
    offset = rng.uniform(-0.3, 0.3, width) if effort_offset is None else \
        np.broadcast_to(np.asarray(effort_offset, dtype=np.float64), (width,)).copy()
    effort = _low_pass(effort_gain * tau, instants, effort_filter) + offset \
        + effort_noise * rng.normal(size=tau.shape)
    stamps = instants + (stamp_error * rng.normal(size=ticks) if stamp_error else 0.0)
    keep = np.ones(ticks, dtype=bool)
    spans = []
    if holes is not None:
        spacing, shortest, longest = holes
        start = rng.exponential(spacing)
        while start < duration - longest:
            length = rng.uniform(shortest, longest)
            inside = (instants >= start) & (instants < start + length)
            if inside.any():
                keep &= ~inside
                spans.append((start, start + length))
            start += length + rng.exponential(spacing)
    order = np.argsort(stamps[keep], kind='stable')  # stamp errors may reorder neighbours
    times_ns = BAG_START + np.round(stamps[keep][order] * 1e9).astype(np.int64)
    pick = np.flatnonzero(keep)[order]
    unique = np.concatenate([[True], np.diff(times_ns) > 0])
    times_ns, pick = times_ns[unique], pick[unique]
    settings = {'duration': duration, 'rate': rate, 'seed': seed, 'jitter': jitter,
                'holes': holes, 'quantum': quantum, 'stamp_error': stamp_error,
                'velocity_source': velocity_source, 'velocity_filter': velocity_filter,
                'velocity_noise': velocity_noise, 'effort_noise': effort_noise,
                'effort_filter': effort_filter, 'effort_gain': effort_gain,
                'hold': dict(hold or {})}
    holes_ns = BAG_START + np.round(np.array(spans).reshape(-1, 2) * 1e9).astype(np.int64)
    return RealisticLog(names, times_ns, q[pick], v_reported[pick], effort[pick],
                        q_true[pick], v_true[pick], a_true[pick], tau[pick], offset, holes_ns,
                        settings)


def realistic_bag(path: Path, log: RealisticLog, *, storage: str = 'sqlite3',
                  omit: tuple[str, ...] = (), extra: dict[str, float] | None = None,
                  velocity: bool = True, effort: bool = True,
                  description: str | None = None) -> Path:
    """
    Write ``log`` as /joint_states (receive time = stamp + ``RECEIVE_DELAY``), ``write_bag``.

    ``omit``: joints left out of every message (e.g. a gripper the driver does not publish);
    ``extra``: name -> constant position added to every message (e.g. a mimic joint);
    ``velocity``/``effort``: False leaves that field empty; ``description``: a
    robot_description message.
    """
    columns = [k for k, name in enumerate(log.names) if name not in omit]
    names = [log.names[k] for k in columns] + list(extra or {})
    constants = np.array(list((extra or {}).values()), dtype=np.float64)
    states = []
    for k, ns in enumerate(log.times_ns.tolist()):
        row_q = np.append(log.q[k, columns], constants)
        row_v = np.append(log.v_reported[k, columns], 0.0 * constants) if velocity else ()
        row_e = np.append(log.effort[k, columns], 0.0 * constants) if effort else ()
        states.append((ns + RECEIVE_DELAY, joint_state(ns, names, row_q, row_v, row_e)))
    topics = {'/joint_states': (JOINT_STATE, states)}
    if description is not None:
        first = int(log.times_ns[0]) - 1000
        topics['/robot_description'] = (STRING, [(first, string(description))])
    return write_bag(path, topics, storage)


def at_a_stop(log: RealisticLog, model, joint: str, rows: slice, torque: float,
              band: float) -> tuple[RealisticLog, RealisticLog]:
    """
    Return ``log`` with ``joint`` resting on its lower limit for ``rows``, twice.

    There its position is ``band`` of its range above the limit and its velocity 0: first
    with the effort of the free motion, then with an end stop's ``torque`` added to it.
    """
    k = log.names.index(joint)
    limits = model.joint(joint)
    q, v = log.q.copy(), log.v_reported.copy()
    q[rows, k] = limits.lower + band * (limits.upper - limits.lower)
    v[rows, k] = 0.0
    free = replace(log, q=q, v_reported=v)
    effort = log.effort.copy()
    effort[rows, k] += torque
    return free, replace(free, effort=effort)


# ---------------------------------------------------------------- identification data
def fourier_excitation(lower: np.ndarray, upper: np.ndarray, t: np.ndarray, *,
                       base_frequency: float = 0.2, harmonics: int = 4, seed: int = 0,
                       fill: float = 0.4):
    """
    Return q, v, a (N, J) of a finite Fourier series per joint, inside [lower, upper].

    The usual excitation of identification (Swevers et al. 1997): q_j = q0_j + sum_l
    (a_jl sin(l w t) - b_jl cos(l w t)) / (l w), w = 2 pi ``base_frequency``, random
    coefficients (``seed``) scaled so the motion spans ``fill`` of each joint's range around
    its middle (ranges capped at ±pi).
    """
    rng = np.random.default_rng(seed)
    lower = np.maximum(lower, -np.pi)
    upper = np.minimum(upper, np.pi)
    w = 2 * np.pi * base_frequency
    order = np.arange(1, harmonics + 1)
    a = rng.standard_normal((lower.size, harmonics))
    b = rng.standard_normal((lower.size, harmonics))
    angle = w * order[None, :] * t[:, None]  # (N, L)
    shape = (np.sin(angle)[:, None, :] * a - np.cos(angle)[:, None, :] * b) / (w * order)
    velocity = np.cos(angle)[:, None, :] * a + np.sin(angle)[:, None, :] * b
    accel = (-np.sin(angle)[:, None, :] * a + np.cos(angle)[:, None, :] * b) * (w * order)
    q = shape.sum(axis=2)
    peak = np.abs(q).max(axis=0)
    gain = fill * 0.5 * (upper - lower) / peak
    middle = 0.5 * (upper + lower)
    return middle + gain * q, gain * velocity.sum(axis=2), gain * accel.sum(axis=2)


def joint_states_bag(path: Path, times_ns: np.ndarray, names, position, velocity=None,
                     effort=None, storage: str = 'sqlite3',
                     stamps_ns: np.ndarray | None = None) -> Path:
    """
    Write a bag with one /joint_states message per sample, received at ``times_ns``.

    Header stamps: ``stamps_ns`` (e.g. a clock that steps), by default the receive times.
    """
    stamps = times_ns if stamps_ns is None else stamps_ns
    states = []
    for k, (ns, stamp_ns) in enumerate(zip(times_ns.tolist(), stamps.tolist())):
        states.append((ns, joint_state(stamp_ns, names, position[k],
                                       () if velocity is None else velocity[k],
                                       () if effort is None else effort[k])))
    return write_bag(path, {'/joint_states': (JOINT_STATE, states)}, storage)
