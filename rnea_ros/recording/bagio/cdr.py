"""
Vectorised CDR codec for ``sensor_msgs/JointState`` and ``nav_msgs/Odometry``, without ROS.

Decoding millions of messages one at a time through a generic deserializer costs ~15 us each
(about a minute for an hour of joint_states at 1 kHz). A publisher nearly always sends the same
names and frame ids in every message, so its records share one byte layout: only the stamp and
the float64 values change. This module parses one record per layout, then one compiled pass
over every other record of that length checks it against the layout's fixed bytes and copies
the stamp and the float64 arrays of each matching record straight from the buffer (which may
be a map of the bag file: records need not be back to back). Records that fit no layout
(big-endian, names that change every message, malformed) go to a fallback deserializer
(``rosbags``), so the result never depends on the fast path applying.

Wire format (ROS 2 ``cdr``, i.e. XCDR1, little endian): a 4-byte encapsulation header
``00 01 00 00``, then the payload, in which every primitive is aligned to its size *relative to
the payload start*; strings are a uint32 length counting the terminating NUL, then the bytes::

    JointState: int32 stamp.sec, uint32 stamp.nanosec, string frame_id,
                uint32 n, n * string name,
                position, velocity, effort: uint32 k, [align 8, float64[k]]
    Odometry:   int32 stamp.sec, uint32 stamp.nanosec, string frame_id, string child_frame_id,
                align 8, float64[85] = pose (position xyz, orientation xyzw, covariance[36]),
                twist (linear xyz, angular xyz, covariance[36])

The encoder (``encode_joint_states``) writes the same layout with zero padding, i.e. the bytes
of ``rosbags``' serializer; it serves the benchmark and the ``joint_torques`` output topic.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import struct

from numba import njit
import numpy as np

ENCAPSULATION_LE = b'\x00\x01\x00\x00'
HEADER_SIZE = 4
# Layouts tried per record length before the rest of that length falls back (a publisher that
# changes its names every message).
MAX_LAYOUTS_PER_LENGTH = 16
JOINT_STATE_FIELDS = ('position', 'velocity', 'effort')
ODOMETRY_DOUBLES = 85
# Columns of the Odometry float64 block that the analysis uses.
ODOMETRY_POSITION = slice(0, 3)
ODOMETRY_ORIENTATION = slice(3, 7)  # x y z w
ODOMETRY_LINEAR = slice(43, 46)
ODOMETRY_ANGULAR = slice(46, 49)


@dataclass(frozen=True)
class Layout:
    """
    Byte layout shared by records: fixed bytes and float64 arrays (offsets from the start).

    ``fixed``: offsets of the bytes every record of this layout repeats (string lengths and
    characters, sequence counts); ``arrays``: (offset, count) of each float64 array; ``key``:
    what the fixed bytes say (names, frame ids), identical for every record of the layout.
    """

    size: int
    key: tuple
    arrays: tuple[tuple[int, int], ...]
    fixed: np.ndarray
    template: bytes


@dataclass(frozen=True)
class Block:
    """
    Records with one ``key`` (e.g. joint names): their row numbers and float64 arrays.

    ``arrays[i]`` is (len(rows), count_i); for JointState the arrays are position, velocity
    and effort, and ``key`` is (names, frame_id); for Odometry one (len(rows), 85) array.
    """

    rows: np.ndarray
    key: tuple
    arrays: tuple[np.ndarray, ...]


@dataclass(frozen=True)
class Decoded:
    """Header stamps (ns, int64, one per record) and the blocks covering every record."""

    stamps: np.ndarray
    blocks: tuple[Block, ...]
    fallback_count: int


class _Cursor:
    """Reads little-endian CDR primitives from a record, noting the bytes that must repeat."""

    def __init__(self, record: bytes):
        self.record = record
        self.offset = HEADER_SIZE + 8  # after the stamp, which varies
        self.fixed: list[range] = []

    def align(self, size: int) -> None:
        payload = self.offset - HEADER_SIZE
        self.offset = HEADER_SIZE + (payload + size - 1) // size * size

    def uint32(self) -> int:
        self.align(4)
        value = struct.unpack_from('<I', self.record, self.offset)[0]
        self.fixed.append(range(self.offset, self.offset + 4))
        self.offset += 4
        return value

    def string(self) -> str:
        length = self.uint32()
        end = self.offset + length
        if length == 0 or end > len(self.record) or self.record[end - 1]:
            raise ValueError('bad string')
        self.fixed.append(range(self.offset, end))
        text = self.record[self.offset:end - 1].decode()
        self.offset = end
        return text

    def doubles(self, count: int) -> tuple[int, int]:
        if count:
            self.align(8)
        start = self.offset
        self.offset += 8 * count
        if self.offset > len(self.record):
            raise ValueError('truncated')
        return start, count

    def layout(self, key: tuple, arrays: tuple) -> Layout | None:
        if self.offset != len(self.record):
            return None
        fixed = np.concatenate([np.arange(r.start, r.stop) for r in self.fixed])
        return Layout(len(self.record), key, arrays, fixed, bytes(self.record))


def _checked(parse: Callable[[_Cursor], Layout | None]) -> Callable[[bytes], Layout | None]:
    def parse_layout(record: bytes) -> Layout | None:
        if len(record) < HEADER_SIZE + 12 or record[:HEADER_SIZE] != ENCAPSULATION_LE:
            return None
        try:
            return parse(_Cursor(record))
        except (struct.error, UnicodeDecodeError, ValueError):
            return None
    parse_layout.__doc__ = parse.__doc__
    return parse_layout


@_checked
def joint_state_layout(cursor: _Cursor) -> Layout | None:
    """Layout of a little-endian JointState record, key (names, frame_id); None if not one."""
    frame_id = cursor.string()
    count = cursor.uint32()
    if count > len(cursor.record):
        return None
    names = tuple(cursor.string() for _ in range(count))
    arrays = tuple(cursor.doubles(cursor.uint32()) for _ in JOINT_STATE_FIELDS)
    return cursor.layout((names, frame_id), arrays)


@_checked
def odometry_layout(cursor: _Cursor) -> Layout | None:
    """Layout of a little-endian Odometry record, key (frame_id, child_frame_id)."""
    key = (cursor.string(), cursor.string())
    return cursor.layout(key, (cursor.doubles(ODOMETRY_DOUBLES),))


@njit(cache=True, nogil=True)
def _extract(buffer, starts, rows, first_fixed, template, mask, arrays, outputs, stamps,
             match):
    """
    Match the records ``rows`` against a layout and extract the matching ones, in one pass.

    The record at ``starts[rows[i]]`` matches if, from its byte ``first_fixed`` on, it repeats
    ``template`` wherever ``mask`` is 0xFF (its fixed bytes): then ``match[i]`` is set,
    ``stamps[rows[i]]`` gets its header stamp in ns and row ``count`` (the matches so far) of
    each ``outputs[k]`` (a uint8 view of a float64 array) the bytes at record offset
    ``arrays[k]``. Returns the number of matches.
    """
    count = 0
    span = template.size
    for i in range(rows.size):
        row = rows[i]
        start = starts[row]
        # Sliced once per record so that the loop below reads from a fixed base: vectorised.
        fixed = buffer[start + first_fixed:start + first_fixed + span]
        differ = np.uint8(0)
        for k in range(span):
            differ |= (fixed[k] ^ template[k]) & mask[k]
        match[i] = differ == 0
        if differ:
            continue
        sec = np.int64(0)
        nanosec = np.int64(0)
        for k in range(4):
            sec |= np.int64(buffer[start + HEADER_SIZE + k]) << (8 * k)
            nanosec |= np.int64(buffer[start + HEADER_SIZE + 4 + k]) << (8 * k)
        if sec >= 2**31:  # int32 seconds
            sec -= 2**32
        stamps[row] = sec * 1_000_000_000 + nanosec
        for k in range(len(outputs)):
            out = outputs[k][count]
            source = buffer[start + arrays[k]:start + arrays[k] + out.size]
            for j in range(out.size):
                out[j] = source[j]
        count += 1
    return count


def decode(buffer: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
           layout_of: Callable[[bytes], Layout | None],
           fallback: Callable[[bytes], tuple[int, tuple, tuple]]) -> Decoded:
    """
    Decode the records ``buffer[starts[i]:starts[i] + lengths[i]]`` (uint8 buffer).

    ``layout_of``: ``joint_state_layout`` or ``odometry_layout``. ``fallback(record)`` returns
    (stamp_ns, key, arrays) for a record no layout fits; it may raise for a corrupt record.
    The arrays of the blocks are new arrays: none views ``buffer``.
    """
    n = starts.size
    stamps = np.zeros(n, dtype=np.int64)
    blocks: list[Block] = []
    leftover: list[np.ndarray] = []
    one_size = n > 0 and lengths.min() == lengths.max()
    for size in (lengths[:1] if one_size else np.unique(lengths)):
        rows = np.arange(n) if one_size else np.flatnonzero(lengths == size)
        for _ in range(MAX_LAYOUTS_PER_LENGTH):
            if rows.size == 0:
                break
            first = int(starts[rows[0]])
            layout = layout_of(buffer[first:first + size].tobytes())
            if layout is None:
                leftover.append(rows[:1])
                rows = rows[1:]
                continue
            # The fixed bytes as a template and mask from the first fixed one to the last.
            fixed = layout.fixed
            first_fixed = int(fixed[0]) if fixed.size else 0
            span = int(fixed[-1]) + 1 - first_fixed if fixed.size else 0
            template = np.frombuffer(layout.template, dtype=np.uint8)[
                first_fixed:first_fixed + span]
            mask = np.zeros(span, dtype=np.uint8)
            mask[fixed - first_fixed] = 0xFF
            arrays = tuple(np.empty((rows.size, count)) for _, count in layout.arrays)
            offsets = np.array([offset for offset, _ in layout.arrays], dtype=np.int64)
            match = np.empty(rows.size, dtype=np.bool_)
            found = _extract(buffer, starts, rows, first_fixed, template, mask, offsets,
                             tuple(a.view(np.uint8) for a in arrays), stamps, match)
            if found < rows.size // 2:  # do not keep a large allocation for a few records
                arrays = tuple(a[:found].copy() for a in arrays)
            elif found < rows.size:
                arrays = tuple(a[:found] for a in arrays)
            blocks.append(Block(rows[match], layout.key, arrays))
            rows = rows[~match]
        if rows.size:
            leftover.append(rows)
    fallback_rows = np.concatenate(leftover) if leftover else np.zeros(0, dtype=np.int64)
    groups: dict[tuple, list] = {}
    for row in fallback_rows.tolist():
        start = int(starts[row])
        stamp, key, arrays = fallback(buffer[start:start + int(lengths[row])].tobytes())
        stamps[row] = stamp
        arrays = tuple(np.asarray(a, dtype=np.float64).ravel() for a in arrays)
        groups.setdefault((key, tuple(a.size for a in arrays)), []).append((row, arrays))
    for (key, sizes), items in groups.items():
        rows = np.array([row for row, _ in items], dtype=np.int64)
        arrays = tuple(np.array([a[k] for _, a in items]).reshape(len(items), size)
                       for k, size in enumerate(sizes))
        blocks.append(Block(rows, key, arrays))
    return Decoded(stamps, tuple(blocks), int(fallback_rows.size))


def joint_state_fields(msg) -> tuple[int, tuple, tuple]:
    """(stamp_ns, (names, frame_id), (position, velocity, effort)) of a deserialized message."""
    stamp = msg.header.stamp
    return (int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec),
            (tuple(msg.name), msg.header.frame_id),
            tuple(getattr(msg, field) for field in JOINT_STATE_FIELDS))


def odometry_fields(msg) -> tuple[int, tuple, tuple]:
    """(stamp_ns, (frame_id, child_frame_id), (85 float64 as in the wire order,))."""
    stamp = msg.header.stamp
    pose, twist = msg.pose, msg.twist
    p, o = pose.pose.position, pose.pose.orientation
    lin, ang = twist.twist.linear, twist.twist.angular
    values = np.concatenate([[p.x, p.y, p.z, o.x, o.y, o.z, o.w], pose.covariance,
                             [lin.x, lin.y, lin.z, ang.x, ang.y, ang.z], twist.covariance])
    return (int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec),
            (msg.header.frame_id, msg.child_frame_id), (values,))


def encode_joint_states(stamps_ns: np.ndarray, names: Sequence[str], position: np.ndarray,
                        velocity: np.ndarray, effort: np.ndarray,
                        frame_id: str = '') -> tuple[np.ndarray, int]:
    """
    Little-endian CDR JointState records sharing ``names`` and field lengths.

    ``stamps_ns`` (N,) int64 header stamps in ns; ``position``/``velocity``/``effort`` (N, k)
    arrays (k = 0 for an empty field). Returns (an (N, size) uint8 matrix, size): row i is the
    record of message i (``bytes(matrix[i])`` or ``records(matrix)``).
    """
    stamps_ns = np.asarray(stamps_ns, dtype=np.int64)
    n = stamps_ns.size
    fields = [np.ascontiguousarray(np.asarray(f, dtype='<f8').reshape(n, -1))
              for f in (position, velocity, effort)]
    template = bytearray(ENCAPSULATION_LE + bytes(8))

    def pad(size: int) -> None:
        payload = len(template) - HEADER_SIZE
        template.extend(bytes(-payload % size))

    def put_string(text: str) -> None:
        data = text.encode() + b'\x00'
        pad(4)
        template.extend(struct.pack('<I', len(data)) + data)

    put_string(frame_id)
    pad(4)
    template.extend(struct.pack('<I', len(names)))
    for name in names:
        put_string(name)
    offsets = []
    for values in fields:
        pad(4)
        template.extend(struct.pack('<I', values.shape[1]))
        if values.shape[1]:
            pad(8)
        offsets.append(len(template))
        template.extend(bytes(8 * values.shape[1]))
    size = len(template)
    out = np.empty((n, size), dtype=np.uint8)
    out[:] = np.frombuffer(bytes(template), dtype=np.uint8)
    seconds, nanoseconds = np.divmod(stamps_ns, 1_000_000_000)
    out[:, 4:8] = seconds.astype('<i4').view(np.uint8).reshape(n, 4)
    out[:, 8:12] = nanoseconds.astype('<u4').view(np.uint8).reshape(n, 4)
    for values, offset in zip(fields, offsets):
        width = 8 * values.shape[1]
        out[:, offset:offset + width] = values.view(np.uint8).reshape(n, width)
    return out, size


def encode_wrench_stamped(stamps_ns: np.ndarray, frame_id: str,
                          wrenches: np.ndarray) -> np.ndarray:
    """
    Little-endian CDR geometry_msgs/WrenchStamped records with one ``frame_id``.

    ``stamps_ns`` (N,) int64 header stamps in ns; ``wrenches`` (N, 6) [force; torque]. Returns
    an (N, size) uint8 matrix, row i the record of message i (see ``records``).
    """
    stamps_ns = np.asarray(stamps_ns, dtype=np.int64)
    n = stamps_ns.size
    values = np.ascontiguousarray(np.asarray(wrenches, dtype='<f8').reshape(n, 6))
    data = frame_id.encode() + b'\x00'
    template = bytearray(ENCAPSULATION_LE + bytes(8) + struct.pack('<I', len(data)) + data)
    template.extend(bytes(-(len(template) - HEADER_SIZE) % 8))
    offset = len(template)
    template.extend(bytes(48))
    out = np.empty((n, len(template)), dtype=np.uint8)
    out[:] = np.frombuffer(bytes(template), dtype=np.uint8)
    seconds, nanoseconds = np.divmod(stamps_ns, 1_000_000_000)
    out[:, 4:8] = seconds.astype('<i4').view(np.uint8).reshape(n, 4)
    out[:, 8:12] = nanoseconds.astype('<u4').view(np.uint8).reshape(n, 4)
    out[:, offset:] = values.view(np.uint8).reshape(n, 48)
    return out


def records(matrix: np.ndarray) -> list[bytes]:
    """Return the rows of an encoded (N, size) matrix as one ``bytes`` object each."""
    size = matrix.shape[1]
    flat = matrix.tobytes()
    return [flat[k:k + size] for k in range(0, len(flat), size)]
