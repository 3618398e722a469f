"""
Test bags written with ``rosbags`` from an analytic trajectory of Franka's panda.

Messages are serialized by rosbags' own serializer (not by ``rnea_ros.bag.cdr``), so the bag tool's
decoder is checked against an independent encoding.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from oracle import robot_path
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
