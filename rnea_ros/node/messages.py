"""
The node's ROS messages: its interfaces' types and QoS, the preallocated outputs, their filling.

Every message the node publishes is built here: ``OutputMessages`` allocates a model's
joint_torques (sensor_msgs/JointState), feedforward_effort (std_msgs/Float64MultiArray) and
wrench (geometry_msgs/WrenchStamped) messages once, serialized (``serialized``), and the cycles
write into their bytes through numpy views (``payload``: what a publisher takes);
``diagnostic_array`` builds the 1 Hz diagnostic_msgs/DiagnosticArray.
``message_type`` and ``qos_profile`` turn a declaration of ``interfaces`` into its rclpy class
and profile.
"""
from __future__ import annotations

import array
import importlib
import struct

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import WrenchStamped
import numpy as np
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.control.joint_input import MAX_NAMES, Rejected, TOO_LARGE
from rnea_ros.control.trajectory import Trajectory
from rnea_ros.node import interfaces
from rnea_ros.node.serialized import sequence, Serialized, set_wrench


_RELIABILITY = {interfaces.RELIABLE: ReliabilityPolicy.RELIABLE,
                interfaces.BEST_EFFORT: ReliabilityPolicy.BEST_EFFORT}
_DURABILITY = {interfaces.VOLATILE: DurabilityPolicy.VOLATILE,
               interfaces.TRANSIENT_LOCAL: DurabilityPolicy.TRANSIENT_LOCAL}


def qos_profile(qos: interfaces.Qos, depth: int | None = None) -> QoSProfile:
    """Return the rclpy profile of a declared QoS (keep last; ``depth`` over the declared)."""
    return QoSProfile(depth=qos.depth if depth is None else depth,
                      history=HistoryPolicy.KEEP_LAST, reliability=_RELIABILITY[qos.reliability],
                      durability=_DURABILITY[qos.durability])


def message_type(interface: interfaces.Interface) -> type:
    """Return the rclpy class of a declared interface's type (``std_srvs/Trigger``: a service)."""
    package, name = interface.msg_type.split('/')
    kind = 'srv' if interface.direction == interfaces.SERVICE else 'msg'
    return getattr(importlib.import_module(f'{package}.{kind}'), name)


def create_publisher(node, interface: interfaces.Interface, name: str | None = None):
    """Create ``node``'s publisher of a declared interface (``name``: one of a family)."""
    return node.create_publisher(message_type(interface), name or interface.name,
                                 qos_profile(interface.qos))


SENSOR_QOS = qos_profile(interfaces.SENSOR)
COMMAND_QOS = qos_profile(interfaces.COMMAND)
TRAJECTORY_QOS = qos_profile(interfaces.TRAJECTORY)
DESCRIPTION_QOS = qos_profile(interfaces.LATCHED)


class OutputMessages:
    """
    The preallocated output messages of one model (``core``: a ``ControlCore``), serialized.

    joint_torques (position, velocity, effort) and feedforward_effort (data) are kept as their
    CDR (``serialized.Serialized``), whose float64 views are bound to ``core``: the cycles write
    the outputs into the bytes published. One WrenchStamped per contact link and per reaction
    frame, ``frame_id`` set, likewise.
    """

    def __init__(self, core):
        n = len(core.joint_names)
        self.torques = Serialized(JointState(name=list(core.joint_names)), {
            field: (n, sequence(field)) for field in ('position', 'velocity', 'effort')})
        k = len(core.command_joints)
        command = Float64MultiArray()
        command.layout.dim = [MultiArrayDimension(label='joints', size=k, stride=k)]
        self.command = Serialized(command, {'data': (k, sequence('data'))})
        torques = self.torques.arrays
        core.bind_outputs(torques['position'], torques['velocity'], torques['effort'],
                          self.command.arrays['data'])
        contacts, reactions = core.torques.contacts, core.torques.reactions
        self.contacts = wrench_messages(contacts.links if contacts else ())
        self.reactions = wrench_messages(reactions.frames if reactions else ())

    def stamp(self, core, stamp) -> None:
        """Stamp the cycle's outputs and write its wrenches (``stamp``: builtin Time)."""
        self.torques.stamp(stamp)
        contacts, reactions = core.torques.contacts, core.torques.reactions
        if contacts is not None:
            write_wrenches(self.contacts, contacts.wrenches, stamp)
        if reactions is not None:
            write_wrenches(self.reactions, reactions.wrenches, stamp)


def wrench_messages(frames) -> list[Serialized]:
    """One serialized WrenchStamped per frame, ``header.frame_id`` set."""
    messages = []
    for frame in frames:
        msg = WrenchStamped()
        msg.header.frame_id = frame
        messages.append(Serialized(msg, {'wrench': (6, set_wrench)}))
    return messages


def write_wrenches(messages, wrenches: np.ndarray, stamp) -> None:
    """Rows [fx fy fz tx ty tz] of ``wrenches`` into the serialized WrenchStamped messages."""
    for k, msg in enumerate(messages):
        msg.stamp(stamp)
        msg.arrays['wrench'][:] = wrenches[k]


def payload(msg):
    """Return what a publisher takes of an output: a ``Serialized``'s bytes, else ``msg``."""
    return msg.payload() if type(msg) is Serialized else msg


def decode_trajectory(data: bytes, max_points: int) -> JointTrajectory:
    """
    Decode a serialized trajectory_msgs/JointTrajectory unless it is too large.

    Decoding builds a Python object per point (tens of µs each) in one call: a million points
    held up the inputs thread for most of a second. So the joint names and points are counted
    in the CDR first (``_trajectory_size``) and a message with more than ``MAX_NAMES`` names or
    ``max_points`` points raises ``Rejected`` (``TOO_LARGE``) undecoded.
    """
    names, points = _trajectory_size(data)
    if names > MAX_NAMES:
        raise Rejected(TOO_LARGE, f'joint_names has {names} entries (at most {MAX_NAMES})')
    if points > max_points:
        raise Rejected(TOO_LARGE, f'{points} points (max_trajectory_points is {max_points})')
    return deserialize_message(data, JointTrajectory)


def _trajectory_size(data: bytes) -> tuple[int, int]:
    """
    Return (joint names, points) of a serialized JointTrajectory; points 0 past ``MAX_NAMES``.

    The CDR: a 4-byte encapsulation header (second byte 1: little endian), header.stamp (two
    4-byte integers), header.frame_id and each of joint_names (a string: a uint32 byte count
    and the bytes), the point count; uint32s are aligned to 4 bytes after the encapsulation
    header. Bytes that end early give (0, 0): decoding then says what is wrong.
    """
    layout = struct.Struct('<I' if data[1:2] == b'\x01' else '>I')
    offset = 12

    def uint32() -> int:
        nonlocal offset
        offset += -(offset - 4) % 4
        value, = layout.unpack_from(data, offset)
        offset += 4
        return value
    try:
        skip = uint32()  # header.frame_id
        offset += skip
        names = uint32()
        if names > MAX_NAMES:
            return names, 0
        for _ in range(names):
            skip = uint32()
            offset += skip
        return names, uint32()
    except struct.error:
        return 0, 0


class DesiredDecoder:
    """
    Serialized desired motions to ``Trajectory``, the last one reused if only its stamp changed.

    A robot publishing its reference at every cycle (``rnea_sim``'s desired_accelerations)
    sends the same bytes but for ``header.stamp`` while the reference holds: decoding and
    checking them again (~0.1 ms at each message, on the inputs thread, before the joint_states
    behind it) would give the same trajectory. Bytes equal to the last accepted ones after the
    stamp, under the same encapsulation and ``max_points``, give its ``Trajectory`` again.
    """

    def __init__(self):
        self._key: tuple | None = None
        self._trajectory: Trajectory | None = None

    def decode(self, data: bytes, max_points: int) -> tuple[Trajectory, float]:
        """
        Return the trajectory of ``data`` and its ``header.stamp`` [s].

        ``Rejected`` as ``decode_trajectory`` and ``to_trajectory`` raise it.
        """
        key = (max_points, data[:4], data[12:])  # encapsulation; what follows the stamp
        if key == self._key:
            sec, nanosec = struct.unpack_from('<iI' if data[1:2] == b'\x01' else '>iI', data, 4)
            return self._trajectory, sec + 1e-9 * nanosec
        msg = decode_trajectory(data, max_points)
        trajectory = to_trajectory(msg)
        self._key, self._trajectory = key, trajectory
        return trajectory, msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def to_trajectory(msg: JointTrajectory) -> Trajectory:
    """Convert a trajectory_msgs/JointTrajectory into the ROS-free ``Trajectory``."""
    return Trajectory.from_points(msg.joint_names, [
        (p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec, p.positions, p.velocities,
         p.accelerations) for p in msg.points])


def set_efforts(msg: JointTrajectory, efforts) -> None:
    """Write one effort row per point of ``msg``."""
    for point, effort in zip(msg.points, efforts):
        point.effort = array.array('d', np.asarray(effort, dtype=np.float64).tobytes())


def diagnostic_array(level: int, name: str, message: str, hardware_id: str,
                     values: dict[str, str], stamp) -> DiagnosticArray:
    """One DiagnosticStatus (``level``: 0 OK, 1 WARN, 2 ERROR) in a DiagnosticArray."""
    status = DiagnosticStatus(level=bytes([level]), name=name, message=message,
                              hardware_id=hardware_id,
                              values=[KeyValue(key=k, value=v) for k, v in values.items()])
    diagnostics = DiagnosticArray(status=[status])
    diagnostics.header.stamp = stamp
    return diagnostics
