"""
Reading and writing rosbag2 bags (sqlite3 or mcap) with ``rosbags``; no ROS install needed.

Raw records: a topic's messages are read as one uint8 buffer with per-record offsets, the form
the vectorised decoders of ``cdr`` take. Indexed MCAP files are read chunk by
chunk with a numba record scanner (rosbags' per-message generator costs ~8 us per message: half
a minute for an hour of 1 kHz joint_states), uncompressed chunks in place in a read-only memory
map of the file (no copy of the bag); every other bag goes through
``rosbags.rosbag2.Reader.messages``. Both give the same records in the same order (log time,
ties in file order); ``read_raw(..., fast=False)`` forces the generic path.

Errors: every problem with the bag itself (missing, unreadable, corrupt, unknown topic, wrong
type) raises ``BagError`` with a message that names the path or topic. A bag is regular files
only (``regular_files``): a FIFO would block its reader and a device (``/dev/zero``) never end,
so either, as the bag or in a bag directory (symlinks followed), is refused before any read.
"""
from __future__ import annotations

from binascii import crc32
from collections.abc import Callable, Iterable
from dataclasses import dataclass
import heapq
import mmap
import os
from pathlib import Path
import stat

from numba import njit
import numpy as np

from rnea_ros.errors import reason, RneaError
from rnea_ros.recording.bagio.mcapcheck import MESSAGE

JOINT_STATE = 'sensor_msgs/msg/JointState'
ODOMETRY = 'nav_msgs/msg/Odometry'
JOINT_TRAJECTORY = 'trajectory_msgs/msg/JointTrajectory'
STRING = 'std_msgs/msg/String'
WRENCH_STAMPED = 'geometry_msgs/msg/WrenchStamped'


class BagError(RneaError):
    """The bag cannot be read as asked: missing, corrupt, or without the topic needed."""


@dataclass(frozen=True)
class RawRecords:
    """
    Serialized messages of one topic: record i is ``buffer[starts[i]:starts[i]+lengths[i]]``.

    ``times``: receive (log) time of each record in ns since the epoch, non-decreasing;
    ``channels``: the MCAP channel id of each record (chunk reader only, else None).
    ``buffer`` may be a read-only map of the bag file (``_map_file``), released with the last
    array that views it: decode and drop the records rather than keep them.
    """

    times: np.ndarray
    buffer: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    channels: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.times.size)

    def record(self, k: int) -> bytes:
        start = int(self.starts[k])
        return self.buffer[start:start + int(self.lengths[k])].tobytes()


def typestore():
    """Return the rosbags type store of the standard ROS 2 messages."""
    from rosbags.typesys import get_typestore, Stores
    return get_typestore(Stores.LATEST)


KINDS = ((stat.S_ISFIFO, 'a FIFO'), (stat.S_ISCHR, 'a character device'),
         (stat.S_ISBLK, 'a block device'), (stat.S_ISSOCK, 'a socket'))


def regular_files(path: str | Path) -> list[Path]:
    """
    Return the files of the bag ``path`` (itself, or the files of its directory), by name.

    Symlinks are followed; subdirectories are not part of a bag. Raises ``BagError`` naming
    the first that is not a regular file (a FIFO, a device, a socket) or cannot be read.
    """
    path = Path(path)
    try:
        if not path.is_dir():
            files = [path]
        else:
            files = sorted(entry for entry in path.iterdir() if not entry.is_dir())
        for file in files:
            mode = os.stat(file).st_mode
            if not stat.S_ISREG(mode):
                kind = next((name for test, name in KINDS if test(mode)), 'not a file')
                what = f'bag {str(path)!r}'
                if file != path:
                    what += f': its file {file.name!r}'

                raise BagError(f'{what} is {kind}: expected a regular file (a bag is read '
                               'from regular files only)')
    except OSError as exc:
        raise BagError(f'cannot read bag {str(path)!r}: {exc.strerror or exc}'
                       + (f': {exc.filename!r}' if exc.filename else '')) from None
    return files


def open_bag(path: str | Path):
    """Open a bag as a ``rosbags.rosbag2.Reader`` (close it, or use it in a ``with``)."""
    from rosbags.rosbag2 import Reader
    from rnea_ros.recording.bagio.mcapcheck import check_file, mcap_files, McapLayoutError
    path = Path(path)
    if not path.exists():
        raise BagError(f'bag {str(path)!r} does not exist')
    regular_files(path)
    try:
        for data in mcap_files(path):
            check_file(data)
    except McapLayoutError as exc:
        raise BagError(f'invalid MCAP file {str(data)!r}: {exc}') from None
    except OSError as exc:
        raise BagError(f'cannot read bag file {str(data)!r}: {exc.strerror}') from None
    try:
        reader = Reader(path)
        reader.open()
    except BagError:
        raise
    except Exception as exc:  # rosbags raises ReaderError, sqlite/apsw, yaml, OS errors
        raise BagError(f'cannot read bag {str(path)!r} (corrupt or not a rosbag2 sqlite3/mcap '
                       f'bag?): {reason(exc)}') from None
    return reader


def topic_list(reader) -> str:
    """'topic (type), ...' for error messages."""
    topics = sorted({(c.topic, c.msgtype) for c in reader.connections})
    return ', '.join(f'{topic} ({msgtype})' for topic, msgtype in topics) or 'none'


def topic_connections(reader, topic: str, msgtype: str, *, required: bool = True,
                      what: str = '') -> list:
    """
    Return the connections of ``topic`` (with or without the leading '/') carrying ``msgtype``.

    Returns [] for an absent optional topic; raises ``BagError`` for an absent required one
    (naming the bag's topics and the topics of that type) or a topic of another type.
    """
    wanted = {topic, '/' + topic.lstrip('/')}
    found = [c for c in reader.connections if c.topic in wanted]
    if not found:
        if not required:
            return []
        same_type = sorted({c.topic for c in reader.connections if c.msgtype == msgtype})
        hint = (f'; {msgtype} topics in the bag: {", ".join(same_type)}' if same_type
                else f'; the bag has no {msgtype} topic')
        raise BagError(f'{what or "topic"} {topic!r} is not in the bag{hint} '
                       f'(all topics: {topic_list(reader)})')
    wrong = sorted({c.msgtype for c in found if c.msgtype != msgtype})
    if wrong:
        raise BagError(f'topic {found[0].topic!r} carries {", ".join(wrong)}, '
                       f'expected {msgtype}')
    return found


def read_raw(reader, connections: list, start: int | None = None, stop: int | None = None,
             progress: Callable[[int], None] | None = None, fast: bool = True) -> RawRecords:
    """
    Every record of ``connections`` with log time in [start, stop) ns, in log-time order.

    ``progress(k)`` is called now and then with the number of records read so far.
    """
    try:
        if fast:
            records = _read_mcap_chunks(reader, connections, start, stop, progress)
            if records is not None:
                return records
        return _read_generic(reader, connections, start, stop, progress)
    except BagError:
        raise
    except Exception as exc:
        raise BagError(f'cannot read topic {connections[0].topic!r} from bag '
                       f'{str(reader.path)!r} (corrupt?): {type(exc).__name__}'
                       + (f': {exc}' if str(exc) else '')) from None


def _read_generic(reader, connections, start, stop, progress) -> RawRecords:
    times, data = [], []
    append_time, append_data = times.append, data.append
    for count, (_, timestamp, raw) in enumerate(reader.messages(connections, start, stop)):
        append_time(timestamp)
        append_data(raw)
        if progress is not None and count % 65536 == 0:
            progress(count)
    lengths = np.fromiter(map(len, data), dtype=np.int64, count=len(data))
    starts = np.zeros(len(data), dtype=np.int64)
    if len(data) > 1:
        np.cumsum(lengths[:-1], out=starts[1:])
    buffer = np.frombuffer(b''.join(data), dtype=np.uint8)
    return RawRecords(np.array(times, dtype=np.int64), buffer, starts, lengths)


@njit(cache=True, nogil=True)
def _scan_mcap_chunk(data, channels, start, stop, out_time, out_start, out_length,
                     out_channel):
    """
    Scan the message records of a decompressed MCAP chunk.

    Message records of a decompressed MCAP chunk on ``channels`` with log time in
    [start, stop): fills the outputs, returns their count (-1 if the chunk is malformed).

    Record: opcode u8, length u64, then for a message: channel u16, sequence u32, log_time u64,
    publish_time u64, data.
    """
    size = data.size
    position = 0
    count = 0
    while position < size:
        if position + 9 > size:
            return -1
        opcode = data[position]
        length = 0
        for k in range(8):
            length |= np.int64(data[position + 1 + k]) << (8 * k)
        body = position + 9
        if length < 0 or body + length > size:
            return -1
        if opcode == MESSAGE:
            if length < 22:
                return -1
            channel = np.int64(data[body]) | (np.int64(data[body + 1]) << 8)
            log_time = np.int64(0)
            for k in range(8):
                log_time |= np.int64(data[body + 6 + k]) << (8 * k)
            wanted = False
            for c in channels:
                if c == channel:
                    wanted = True
            if wanted and start <= log_time < stop:
                if count >= out_time.size:
                    return -1
                out_time[count] = log_time
                out_start[count] = body + 22
                out_length[count] = length - 22
                out_channel[count] = channel
                count += 1
        position = body + length
    return count


def mcap_storages(reader) -> list | None:
    """
    Return the ``McapReader`` of each file of an indexed MCAP bag, or None.

    None for any bag that is not MCAP, not indexed, or compressed per file or per message
    (chunk compression is fine).
    """
    try:
        from rosbags.rosbag2.reader import DirectoryReader
        from rosbags.rosbag2.storage_mcap import McapReader
    except ImportError:  # another rosbags layout: stay on the public API
        return None
    storage = reader.storage
    if isinstance(storage, DirectoryReader):
        if storage.metadata.compression_mode:
            return None
        storages = storage.storages
    else:
        storages = [storage]
    if not storages or not all(isinstance(s, McapReader) and s.chunks for s in storages):
        return None
    return storages


def _read_mcap_chunks(reader, connections, start, stop, progress) -> RawRecords | None:
    """
    Read indexed MCAP chunks directly (the fast path).

    The fast path for indexed, uncompressed-per-message MCAP bags; None when it does not
    apply (then the generic reader is used). Each file is mapped read-only (``_map_file``) and
    its uncompressed chunks are scanned in place; when every record comes from the uncompressed
    chunks of one file, the records' buffer is that map and their starts are file offsets (no
    copy of the bag). Compressed chunks are decompressed (as rosbags does, checksum included),
    and records from several files or from compressed chunks are copied into one buffer.
    """
    from rosbags.rosbag2.errors import ReaderError
    from rosbags.rosbag2.storage_mcap import decompress
    storages = mcap_storages(reader)
    if storages is None:
        return None
    wanted = {(c.topic, c.msgtype) for c in connections}
    start = -2**63 if start is None else start
    stop = 2**63 - 1 if stop is None else stop
    # Per chunk: (source, first byte of its records in source, their size, then the records'
    # times, starts relative to that first byte, lengths and channel ids).
    parts, count = [], 0
    for mcap in storages:
        channels = np.array([c.id for c in mcap.connections if (c.topic, c.msgtype) in wanted],
                            dtype=np.int64)
        chunks = [chunk for chunk in mcap.chunks
                  if chunk.message_end_time >= start and chunk.message_start_time < stop
                  and any(chunk.channel_count.get(int(c), 0) for c in channels)]
        if not chunks:
            continue
        mapped = _map_file(mcap.bio)
        for chunk in chunks:
            # Same offsets as rosbags' own chunk reader (storage_mcap.msgsrc).
            head = chunk.chunk_start_offset + 9
            begin = head + 40 + len(chunk.compression)
            end = begin + chunk.compressed_size
            if end > mapped.size:
                raise BagError(f'truncated MCAP chunk in {str(mcap.path)!r}')
            crc = int.from_bytes(mapped[head + 24:head + 28].tobytes(), 'little')
            size = chunk.uncompressed_size
            if chunk.compression or chunk.compressed_size != size:
                source = np.frombuffer(decompress(mapped[begin:end].tobytes(),
                                                  chunk.compression, size, crc), dtype=np.uint8)
                first = 0
            else:
                source, first = mapped, begin
                if crc and crc32(mapped[begin:end]) != crc:  # rosbags' check and error
                    raise ReaderError('Chunk checksum mismatch.')
            capacity = sum(chunk.channel_count.get(int(c), 0) for c in channels)
            times = np.empty(capacity, dtype=np.int64)
            starts = np.empty(capacity, dtype=np.int64)
            lengths = np.empty(capacity, dtype=np.int64)
            ids = np.empty(capacity, dtype=np.int64)
            found = _scan_mcap_chunk(source[first:first + size], channels, start, stop, times,
                                     starts, lengths, ids)
            if found < 0:
                raise BagError(f'malformed MCAP chunk at byte {chunk.chunk_start_offset} of '
                               f'{str(mcap.path)!r}')
            parts.append((source, first, size, times[:found], starts[:found], lengths[:found],
                          ids[:found]))
            count += found
            if progress is not None:
                progress(count)
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return RawRecords(empty, np.zeros(0, dtype=np.uint8), empty, empty, empty)
    if all(p[0] is parts[0][0] for p in parts):  # one file's map, or one decompressed chunk
        buffer = parts[0][0]
        offsets = [p[1] for p in parts]
    else:
        pieces = [source[first:first + size] for source, first, size, *_ in parts]
        buffer = np.concatenate(pieces)
        offsets = np.cumsum([0] + [piece.size for piece in pieces[:-1]])
    times = np.concatenate([p[3] for p in parts])
    starts = np.concatenate([p[4] + offset for p, offset in zip(parts, offsets)])
    lengths = np.concatenate([p[5] for p in parts])
    ids = np.concatenate([p[6] for p in parts])
    if np.any(times[1:] < times[:-1]):
        order = np.argsort(times, kind='stable')
        times, starts, lengths, ids = times[order], starts[order], lengths[order], ids[order]
    return RawRecords(times, buffer, starts, lengths, ids)


def _map_file(bio) -> np.ndarray:
    """
    Return the whole file open as ``bio`` as a read-only uint8 array over a memory map.

    The map has its own file descriptor and lives as long as an array views it: records read
    from it stay valid after the reader is closed, and it is unmapped with the last view. A
    file cut short while mapped (not a finished bag) would fault on access: bags are read
    after they are written.
    """
    return np.frombuffer(mmap.mmap(bio.fileno(), 0, access=mmap.ACCESS_READ), dtype=np.uint8)


def deserialize_all(records: RawRecords, msgtype: str, store=None) -> list:
    """Deserialize every record with rosbags (the slow generic path: ~15 us per message)."""
    store = store or typestore()
    return [store.deserialize_cdr(records.record(k), msgtype) for k in range(len(records))]


def write_bag(reader, path: Path, extra: Iterable[tuple[str, str, np.ndarray, np.ndarray]],
              storage: str | None = None,
              progress: Callable[[int], None] | None = None) -> int:
    """
    Write a new bag at ``path``: every message of ``reader`` plus the ``extra`` topics.

    ``extra``: (topic, msgtype, log times ns, (n, size) uint8 matrix of serialized records,
    one message per row) per new topic, in time order. The storage format is the input's
    unless ``storage`` ('sqlite3'/'mcap') says otherwise. Messages are written in log-time
    order (ties: the input's first, then ``extra`` in order). An indexed single-file MCAP input
    written as MCAP goes through the bulk chunk writer (``mcapwrite``), anything
    else through rosbags' writer one message at a time. Returns the number written.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer
    store = typestore()
    extra = list(extra)
    if storage is None:
        storage = 'mcap' if _is_mcap(reader) else 'sqlite3'
    plugin = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}[storage]
    if path.exists():
        raise BagError(f'output bag {str(path)!r} exists already: remove it or use another '
                       '--output directory')
    with Writer(path, version=Writer.VERSION_LATEST, storage_plugin=plugin) as writer:
        out_conn = {}
        for conn in reader.connections:
            key = (conn.topic, conn.msgtype)
            if key in out_conn:
                continue
            msgdef, digest = conn.msgdef.data, conn.digest
            if not msgdef or not digest:
                try:
                    msgdef, _ = store.generate_msgdef(conn.msgtype, ros_version=2)
                    digest = store.hash_rihs01(conn.msgtype)
                except Exception:  # a custom type the bag does not define: copy it bare
                    msgdef, digest = msgdef or '', digest or ''
            out_conn[key] = writer.add_connection(
                conn.topic, conn.msgtype, msgdef=msgdef, rihs01=digest,
                serialization_format=conn.ext.serialization_format,
                offered_qos_profiles=conn.ext.offered_qos_profiles)
        for topic, msgtype, _, _ in extra:
            out_conn[(topic, msgtype)] = writer.add_connection(topic, msgtype, typestore=store)
        storages = mcap_storages(reader) if storage == 'mcap' else None
        if storages is not None and len(storages) == 1:
            return _write_bulk(reader, storages[0], writer, out_conn, extra, progress)
        return _write_each(reader, writer, out_conn, extra, progress)


def _write_bulk(reader, mcap, writer, out_conn, extra, progress) -> int:
    """Every message through ``mcapwrite.write_messages``: input records, then ``extra``."""
    from rnea_ros.recording.bagio.mcapwrite import write_messages
    records = read_raw(reader, list(reader.connections))
    channel_of = np.zeros(max([c.id for c in mcap.connections] + [0]) + 1, dtype=np.int64)
    for conn in mcap.connections:
        channel_of[conn.id] = out_conn[(conn.topic, conn.msgtype)].id
    times = [records.times]
    channels = [channel_of[records.channels]]
    starts = [records.starts]
    lengths = [records.lengths]
    order = [np.zeros(len(records), dtype=np.int8)]
    matrices = [np.ascontiguousarray(matrix, dtype=np.uint8) for *_, matrix in extra]
    offset = records.buffer.size
    for k, ((topic, msgtype, stamps, _), matrix) in enumerate(zip(extra, matrices), start=1):
        rows, size = matrix.shape
        times.append(np.asarray(stamps, dtype=np.int64))
        channels.append(np.full(rows, out_conn[(topic, msgtype)].id, dtype=np.int64))
        starts.append(offset + size * np.arange(rows, dtype=np.int64))
        lengths.append(np.full(rows, size, dtype=np.int64))
        order.append(np.full(rows, k, dtype=np.int8))
        offset += matrix.size
    times, order = np.concatenate(times), np.concatenate(order)
    sort = np.lexsort((order, times))  # by time, ties: the input's first; stable
    second = np.concatenate([m.ravel() for m in matrices]) if matrices \
        else np.zeros(0, dtype=np.uint8)
    return write_messages(writer, times[sort], np.concatenate(channels)[sort],
                          (records.buffer, second), np.concatenate(starts)[sort],
                          np.concatenate(lengths)[sort], progress)


def _write_each(reader, writer, out_conn, extra, progress) -> int:
    """Every message through rosbags' writer, merged in log-time order."""
    from rnea_ros.recording.bagio.cdr import records
    original = ((timestamp, 0, (conn.topic, conn.msgtype), raw)
                for conn, timestamp, raw in reader.messages())
    streams = [original]
    for order, (topic, msgtype, times, matrix) in enumerate(extra, start=1):
        streams.append(zip(times.tolist(), [order] * len(matrix),
                           [(topic, msgtype)] * len(matrix), records(matrix)))
    written = 0
    write = writer.write
    for timestamp, _, key, raw in heapq.merge(*streams, key=lambda m: (m[0], m[1])):
        write(out_conn[key], timestamp, raw)
        written += 1
        if progress is not None and written % 65536 == 0:
            progress(written)
    return written


def _is_mcap(reader) -> bool:
    from rosbags.rosbag2.storage_mcap import McapReader
    storage = reader.storage
    storages = getattr(storage, 'storages', [storage])
    return bool(storages) and isinstance(storages[0], McapReader)
