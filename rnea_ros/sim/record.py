"""
``--record BAG``: what ``ros2 bag record`` would keep of a run, written to disk as it goes.

The messages (the sim's own topics and the inputs it hears) are serialized as they pass and
gathered into splits of ``record_split`` seconds of log time; a thread of its own writes each
split as a complete MCAP file of the rosbag2 ``BAG`` (``rnea_ros.recording.bagio.splitwrite``:
``BAG/metadata.yaml`` lists a split once it is whole). A split is handed over once a message a
tenth of a split past its end arrives (a message of another thread logged a step earlier
still lands in its split), or at ``SPLIT_BYTES``; at most one split waits for the writer (the
caller waits for it then): the memory stays bounded however long the run. A kill loses the
splits not written yet (the one being gathered; a split is written in milliseconds), never
the bag. Topic names are as the sim sees
them (relative, before remapping).

``Recorder()`` without a path keeps every message in memory for ``write(path)`` at the end
(in-process runs, ``rnea_ros.sim.loop``).

rclpy pads a serialized message to 8 bytes with undefined bytes; rosbags (and so the project's
bag tools) accept at most 3 bytes past the message: each message is cut to its CDR size.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
import queue
import threading
from typing import TYPE_CHECKING

import numpy as np

from rclpy.serialization import serialize_message

from rnea_ros.errors import InputError

if TYPE_CHECKING:  # imported by open_bag: rnea_ros.recording loads numba
    from rnea_ros.recording.bagio.splitwrite import SplitBagWriter

SPLIT_BYTES = 64 << 20  # a split is handed over at this many bytes even before its time
Message = tuple[int, str, str, bytes]  # (log time ns, topic, msgtype, serialized data)


class Recorder:
    """
    Serialized messages of one run: ``add`` while running, ``close`` (or ``write``) at the end.

    With ``path`` the bag is created now (``InputError``, one line naming it, when it exists
    or cannot be written) and written split by split; ``error`` then says why a split could
    not be written (the recording stops there, ``failed`` is set and ``on_failure`` called).
    """

    def __init__(self, path: str | Path | None = None, split: float = 5.0,
                 split_bytes: int = SPLIT_BYTES, on_failure: Callable[[], None] | None = None,
                 resolve: Callable[[str], str] | None = None):
        """``resolve``: a topic's fully qualified name (the node's ``resolve_topic_name``)."""
        self.resolve = resolve or qualified
        self.names: dict[str, str] = {}  # topic as the sim names it -> as recorded
        self.messages: list[Message] = []
        self.size = 0  # bytes in ``messages``
        self.split_bytes = split_bytes
        self.error: str | None = None
        self.failed = threading.Event()
        self.on_failure = on_failure
        self.lock = threading.Lock()
        self.bag: SplitBagWriter | None = None
        if path is None:
            return
        self.bag = open_bag(Path(path))
        self.split_ns = max(1, round(split * 1e9))
        self.hold_ns = self.split_ns // 10
        self.boundary: int | None = None  # log time at which the split being gathered ends
        self.pending: queue.Queue = queue.Queue(maxsize=1)
        self.writer = threading.Thread(target=self._write_splits, daemon=True,
                                       name='rnea_sim recorder')
        self.writer.start()

    def add(self, topic: str, msg, stamp_ns: int) -> None:
        """Keep ``msg`` of ``topic`` with log time ``stamp_ns``."""
        self._keep((stamp_ns, topic, msgtype_of(type(msg)), serialize_message(msg)))

    def add_serialized(self, topic: str, msgtype: str, data: bytes, stamp_ns: int) -> None:
        """Keep an already serialized message (``msgtype`` e.g. ``std_msgs/msg/String``)."""
        self._keep((stamp_ns, topic, msgtype, bytes(data)))

    def add_desired(self, stamp_ns: int, names, reference) -> None:
        """Keep a ``desired_accelerations`` message: one point, the ``Reference`` sampled."""
        from builtin_interfaces.msg import Time
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
        point = JointTrajectoryPoint(positions=reference.position.tolist(),
                                     velocities=reference.velocity.tolist(),
                                     accelerations=reference.acceleration.tolist())
        msg = JointTrajectory(joint_names=list(names), points=[point])
        msg.header.stamp = Time(sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000)
        self.add('desired_accelerations', msg, stamp_ns)

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

    def _keep(self, message: Message) -> None:
        topic = message[1]
        if topic not in self.names:
            self.names[topic] = self.resolve(topic)
        message = (message[0], self.names[topic], *message[2:])
        with self.lock:
            if self.error is not None:  # the recording stopped at a write failure
                self.messages, self.size = [], 0  # nothing more is kept
                return
            self.messages.append(message)
            self.size += len(message[3])
            if self.bag is None:
                return
            stamp = message[0]
            if self.boundary is None:
                self.boundary = stamp + self.split_ns
            if self.size >= self.split_bytes:
                self._hand_over(None)
            if stamp >= self.boundary + self.hold_ns:
                self._hand_over(self.boundary)
                # The next boundary past this message (a pause in the messages: no empty splits)
                passed = (stamp - self.hold_ns - self.boundary) // self.split_ns + 1
                self.boundary += passed * self.split_ns

    def _hand_over(self, boundary: int | None) -> None:
        """Give the writer the messages logged before ``boundary`` (None: all); lock held."""
        if boundary is None:
            split, self.messages = self.messages, []
        else:
            split = [m for m in self.messages if m[0] < boundary]
            if not split:
                return
            self.messages = [m for m in self.messages if m[0] >= boundary]
        self.size = sum(len(m[3]) for m in self.messages)
        self.pending.put(split)  # waits while the writer is still busy with a split

    def _write_splits(self) -> None:
        """Write each handed-over split to the bag, until None (the writer thread)."""
        while (split := self.pending.get()) is not None:
            if self.error is not None:
                continue
            try:
                self.bag.write_split([cut(self.bag.store, m) for m in split])
            except Exception as error:  # OSError: a full disk; anything else stops it too
                reason = error.strerror if isinstance(error, OSError) and error.strerror \
                    else str(error) or type(error).__name__
                self.error = (f'cannot write {str(self.bag.path / self.bag.split_name())!r} '
                              f'of the recording ({reason}); the recording stops with the '
                              f'{len(self.bag.files)} splits written in {str(self.bag.path)!r}')
                self.failed.set()
                if self.on_failure is not None:
                    self.on_failure()

    def close(self, custom_data: dict[str, str] | None = None) -> int:
        """
        Write what is left as the last split; the number of messages in the bag.

        ``custom_data``: written into ``metadata.yaml`` (the run's fitness,
        ``rnea_ros.recording.fitness``) once the splits are.
        """
        if self.bag is None:
            return 0
        with self.lock:
            if self.error is None and self.messages:
                self._hand_over(None)
            self.messages, self.size = [], 0
        self.pending.put(None)
        self.writer.join()
        if custom_data is not None and self.error is None:
            self.bag.finish(custom_data)
        return self.bag.written

    def write(self, path: str | Path, custom_data: dict[str, str] | None = None) -> int:
        """Write every kept message (no ``path`` given at start) as the bag ``path``; count."""
        bag = open_bag(Path(path))
        bag.write_split([cut(bag.store, m) for m in self.messages])
        if custom_data is not None:
            bag.finish(custom_data)
        return bag.written


def qualified(topic: str) -> str:
    """Return ``topic`` fully qualified in the root namespace: ``/joint_states``."""
    return topic if topic.startswith('/') else '/' + topic


def msgtype_of(msg_type: type) -> str:
    """Return the rosbag2 type name of a message class, e.g. ``sensor_msgs/msg/JointState``."""
    return msg_type.__module__.split('.')[0] + '/msg/' + msg_type.__name__


def open_bag(path: Path) -> SplitBagWriter:
    """Create the bag ``path``, or raise ``InputError`` naming it (it exists, or no writing)."""
    if path.exists() or path.is_symlink():
        raise InputError(f"parameter 'record' is {str(path)!r}: it exists; expected a new "
                         'directory')
    from rnea_ros.recording.bagio.splitwrite import SplitBagWriter
    try:
        return SplitBagWriter(path)
    except OSError as error:
        raise InputError(f"parameter 'record' is {str(path)!r}: cannot create it "
                         f'({error.strerror or error}); expected a new directory in a writable '
                         'place') from None


def cut(store, message: Message) -> Message:
    """Return ``message`` without the padding past the end of its CDR data (rosbags' ``store``)."""
    stamp, topic, msgtype, data = message
    msgdef = store.get_msgdef(msgtype)
    _, size = msgdef.deserialize_cdr_le(data[4:], 0, msgdef.cls, store)
    return stamp, topic, msgtype, data[:4 + size]
