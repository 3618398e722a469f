"""
An output message kept serialized: its numbers written in place in its CDR, published as bytes.

rclpy converts a message object to its C form at every ``publish`` (~10 µs for a JointState or a
WrenchStamped, most of a 1 kHz cycle's publishing), but takes serialized bytes for a third of
that (``Publisher.publish(bytes)``, ``rcl_publish_serialized_message``). The node's outputs have
a fixed layout (their names, frame ids and array lengths are set once per model), so
``Serialized`` serializes a message once, with rclpy's own serializer, and keeps its bytes:
its float64 fields (``arrays``) and its ``header.stamp`` are numpy views of them, which the
cycles write, and ``payload`` is what a publisher takes. The fields are found in the bytes by
writing distinct sentinel values into them before serializing, so the layout is rclpy's, not
computed here. The bytes start 4 bytes past an 8-byte boundary: CDR aligns a float64 to 8 from
the end of its 4-byte encapsulation header, so each view is an aligned array (the compiled
kernels write into them).
"""
from __future__ import annotations

from collections.abc import Callable

from builtin_interfaces.msg import Time
import numpy as np
from rclpy.serialization import serialize_message

__all__ = ['sequence', 'Serialized', 'set_wrench']

_SENTINEL = 1.0e300  # float64 sentinels _SENTINEL * (1 + k / 1024): distinct, never in a name
_SECONDS, _NANOSECONDS = 1_592_345_678, 987_654_321  # the stamp's sentinels


class Serialized:
    """
    A message of fixed layout as its serialized bytes (module docstring).

    ``fields``: name -> (count, setter(msg, values)) of the float64 runs to write in place (a
    sequence field, or consecutive float64 fields such as a Wrench's six); ``msg`` holds the
    rest (names, frame id, sizes). ``arrays[name]``: the (count,) view of that run;
    ``stamp(time)`` writes ``header.stamp`` (a message with a header).
    """

    def __init__(self, msg, fields: dict[str, tuple[int, Callable]]):
        runs, start = {}, 0
        for name, (count, setter) in fields.items():
            runs[name] = _SENTINEL * (1.0 + np.arange(start, start + count) / 1024.0)
            setter(msg, runs[name].tolist())
            start += count
        stamped = hasattr(msg, 'header')
        if stamped:
            msg.header.stamp = Time(sec=_SECONDS, nanosec=_NANOSECONDS)
        data = serialize_message(msg)
        self._buffer = np.zeros(len(data) + 8, dtype=np.uint8)
        first = (4 - self._buffer.ctypes.data) % 8
        self.image = self._buffer[first:first + len(data)]
        self.image[:] = np.frombuffer(data, dtype=np.uint8)
        self.arrays = {name: self._view(data, values, np.float64) for name, values in runs.items()}
        if stamped:
            self._seconds = self._view(data, np.array([_SECONDS]), np.int32)
            self._nanoseconds = self._view(data, np.array([_NANOSECONDS]), np.uint32)

    def _view(self, data: bytes, values: np.ndarray, dtype) -> np.ndarray:
        """Return the view of the bytes where ``values`` were serialized, zeroed."""
        pattern = values.astype(dtype).tobytes()
        if not pattern:  # an empty run: nothing in the bytes
            return np.zeros(0, dtype)
        offset = data.find(pattern)
        if offset < 0 or data.find(pattern, offset + 1) >= 0:
            raise ValueError('Serialized: a field was not found once in the serialized bytes')
        view = self.image[offset:offset + len(pattern)].view(dtype)
        view[:] = 0
        return view

    def stamp(self, time) -> None:
        """Write ``header.stamp`` (a builtin_interfaces/Time, or anything with sec, nanosec)."""
        self._seconds[0] = time.sec
        self._nanoseconds[0] = time.nanosec

    def payload(self) -> bytes:
        """Return the serialized message as it is now (what ``Publisher.publish`` takes)."""
        return self.image.tobytes()


def sequence(field: str) -> Callable:
    """Return the setter of a float64 sequence field (``position``, ``data``...)."""
    def setter(msg, values) -> None:
        setattr(msg, field, values)
    return setter


def set_wrench(msg, values) -> None:
    """Set a WrenchStamped's force and torque from six values [fx fy fz tx ty tz]."""
    force, torque = msg.wrench.force, msg.wrench.torque
    force.x, force.y, force.z, torque.x, torque.y, torque.z = values
