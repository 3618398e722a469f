"""
``--record BAG``: what ``ros2 bag record`` would keep of a run, written as a rosbag2 at exit.

The messages (the sim's own topics and the inputs it hears) are serialized as they pass and kept
in memory, then written in log-time order through rosbags' writer (MCAP storage): a 10 s run at
1 kHz is a few tens of MB. Topic names are as the sim sees them (relative, before remapping).

rclpy pads a serialized message to 8 bytes with undefined bytes; rosbags (and so the project's
bag tools) accept at most 3 bytes past the message: each message is cut to its CDR size.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from rclpy.serialization import serialize_message


class Recorder:
    """Serialized messages of one run: ``add`` while running, ``write`` once at the end."""

    def __init__(self):
        self.messages: list[tuple[int, str, str, bytes]] = []

    def add(self, topic: str, msg, stamp_ns: int) -> None:
        """Keep ``msg`` of ``topic`` with log time ``stamp_ns``."""
        msgtype = type(msg).__module__.split('.')[0] + '/msg/' + type(msg).__name__
        self.messages.append((stamp_ns, topic, msgtype, serialize_message(msg)))

    def add_serialized(self, topic: str, msgtype: str, data: bytes, stamp_ns: int) -> None:
        """Keep an already serialized message (``msgtype`` e.g. ``std_msgs/msg/String``)."""
        self.messages.append((stamp_ns, topic, msgtype, bytes(data)))

    def add_joint_states(self, stamp_ns: int, names, position, velocity, effort) -> None:
        """Keep a ``joint_states`` message stamped (header and log time) ``stamp_ns``."""
        from builtin_interfaces.msg import Time
        from sensor_msgs.msg import JointState
        stamp = Time(sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000)
        msg = JointState(name=list(names), position=np.asarray(position, float).tolist(),
                         velocity=np.asarray(velocity, float).tolist(),
                         effort=np.asarray(effort, float).tolist())
        msg.header.stamp = stamp
        self.add('joint_states', msg, stamp_ns)

    def write(self, path: str | Path) -> int:
        """Write the rosbag2 directory ``path`` (must not exist); the number of messages."""
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import get_typestore, Stores
        store = get_typestore(Stores.LATEST)
        connections = {}
        with Writer(Path(path), version=Writer.VERSION_LATEST,
                    storage_plugin=StoragePlugin.MCAP) as writer:
            for stamp, topic, msgtype, data in sorted(self.messages, key=lambda m: m[0]):
                key = (topic, msgtype)
                if key not in connections:
                    connections[key] = writer.add_connection(topic, msgtype, typestore=store)
                writer.write(connections[key], stamp, _cdr_size(store, msgtype, data))
        return len(self.messages)


def _cdr_size(store, msgtype: str, data: bytes) -> bytes:
    """Return ``data`` without the padding past the end of the message."""
    msgdef = store.get_msgdef(msgtype)
    _, size = msgdef.deserialize_cdr_le(data[4:], 0, msgdef.cls, store)
    return data[:4 + size]
