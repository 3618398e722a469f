"""
Long inputs decoded off the executor: ``TrajectoryInbox``.

A 1000-point trajectory_msgs/JointTrajectory takes rclpy ~10 ms to turn into Python objects, in
one C call that holds the GIL, then milliseconds more to become arrays: done by the executor's
thread, the effort commands queued behind it went stale (a 27-step stall at 1 kHz). So the sim
subscribes to the trajectory serialized (a copy of the bytes), and this thread decodes it with
rosbags' pure-Python CDR reader, which hands the GIL over at every switch interval, then calls
``take(message)`` with the decoded message (attribute access as rclpy's; float64 arrays as
numpy arrays). A trajectory arriving while another is being decoded replaces any still waiting:
the newest is the one to track, as joint_trajectory_controller replaces its trajectory.

Bytes that do not decode, or a ``take`` that fails, call ``refuse(text)`` with one line; only
``close`` stops the thread.
"""
from __future__ import annotations

from collections.abc import Callable
import threading

MSGTYPE = 'trajectory_msgs/msg/JointTrajectory'


class TrajectoryInbox:
    """A thread decoding serialized trajectories (``put``) and handing them to ``take``."""

    def __init__(self, take: Callable, refuse: Callable[[str], None]):
        from rosbags.typesys import get_typestore, Stores
        self._store = get_typestore(Stores.LATEST)
        self._msgdef = self._store.get_msgdef(MSGTYPE)
        self._take, self._refuse = take, refuse
        self._pending: bytes | None = None
        self._closed = False
        self._ready = threading.Condition()
        self._thread = threading.Thread(target=self._run, daemon=True, name='rnea_sim inbox')
        self._thread.start()

    def put(self, data: bytes) -> None:
        """Queue a serialized trajectory (replacing one not yet decoded)."""
        with self._ready:
            self._pending = data
            self._ready.notify()

    def decode(self, data: bytes):
        """Return the message of CDR ``data`` (``ValueError`` with one line if it is not one)."""
        little = data[1:2] == b'\x01'
        try:
            read = self._msgdef.deserialize_cdr_le if little else \
                self._msgdef.deserialize_cdr_be
            message, _ = read(data[4:], 0, self._msgdef.cls, self._store)
        except Exception as error:  # rosbags raises struct, index and its own errors
            kind = f'{type(error).__module__}.{type(error).__name__}'.removeprefix('builtins.')
            raise ValueError(f'not a serialized {MSGTYPE} ({kind})') from None
        return message

    def close(self, timeout: float = 2.0) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify()
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._ready:
                self._ready.wait_for(lambda: self._pending is not None or self._closed)
                if self._closed:
                    return
                data, self._pending = self._pending, None
            try:
                message = self.decode(data)
            except ValueError as error:
                self._refuse(str(error))
                continue
            try:
                self._take(message)
            except Exception as error:  # keep serving; say what went wrong
                self._refuse(f'not taken ({type(error).__name__}: {error})')
