"""
Bulk writing of MCAP rosbag2 messages: whole chunks built with numba, not one call per message.

``rosbags``' writer costs ~25 us per message in Python (about 100 s for the joint_states and
joint_torques of an hour at 1 kHz). Here the messages, already serialized and sorted by log
time, are laid out chunk by chunk (``CHUNK_BYTES`` of message records, uncompressed) by one
compiled loop; each chunk is followed by its message indexes, and its chunk index goes to the
summary that ``rosbags.rosbag2.Writer`` writes when it closes, together with the schemas,
channels, statistics and ``metadata.yaml``: the result is the bag rosbags itself would write.

Records (MCAP v0, little endian; opcodes in ``mcapcheck``): a message is ``MESSAGE``, u64
length, u16 channel id, u32 sequence (0), u64 log time, u64 publish time (= log time), data; a
chunk is ``CHUNK``, u64 length, u64 start, u64 end, u64 uncompressed size, u32 crc (0: not
computed), string compression ('' = none), u64 size, records; a message index is
``MESSAGE_INDEX``, u64 length, u16 channel, u32 byte count, then (u64 log time, u64 offset in
the chunk) per message.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from io import BytesIO

from numba import njit
import numpy as np

from rnea_ros.recording.bagio.mcapcheck import CHUNK, MESSAGE, MESSAGE_INDEX

CHUNK_BYTES = 4 << 20
MESSAGE_HEADER = 1 + 8 + 22


@njit(cache=True, nogil=True)
def _fill_chunk(out, prefix_size, first, second, starts, lengths, times, channels, offsets):
    """
    Lay the message records of the selected messages into ``out`` after ``prefix_size`` bytes.

    Message i is ``first[starts[i]:starts[i] + lengths[i]]``, or for ``starts[i]`` past the
    end of ``first`` the same bytes of ``second`` (two uint8 buffers read as one);
    ``offsets[i]`` receives its record's offset in the chunk. Returns the bytes used.
    """
    position = prefix_size
    for i in range(starts.size):
        offsets[i] = position
        size = lengths[i] + 22
        out[position] = MESSAGE
        for k in range(8):
            out[position + 1 + k] = (size >> (8 * k)) & 0xFF
        channel = channels[i]
        out[position + 9] = channel & 0xFF
        out[position + 10] = (channel >> 8) & 0xFF
        for k in range(4):
            out[position + 11 + k] = 0
        stamp = times[i]
        for k in range(8):
            byte = (stamp >> (8 * k)) & 0xFF
            out[position + 15 + k] = byte
            out[position + 23 + k] = byte
        body = position + MESSAGE_HEADER
        start = starts[i]
        if start < first.size:
            out[body:body + lengths[i]] = first[start:start + lengths[i]]
        else:
            start -= first.size
            out[body:body + lengths[i]] = second[start:start + lengths[i]]
        position = body + lengths[i]
    return position


def _u64(value: int) -> bytes:
    return int(value).to_bytes(8, 'little')


def write_messages(writer, times: np.ndarray, channels: np.ndarray,
                   sources: tuple[np.ndarray, np.ndarray], starts: np.ndarray,
                   lengths: np.ndarray,
                   progress: Callable[[int], None] | None = None) -> int:
    """
    Write messages into an open ``rosbags.rosbag2.Writer`` of MCAP storage, in this order.

    ``times`` (n,) log times in ns (sorted); ``channels`` (n,) the ids of the writer's
    connections; message i is ``starts[i]:starts[i] + lengths[i]`` of the two uint8 buffers
    ``sources`` read as one (the second starts where the first ends).
    Updates the writer's counts and time span so its ``close`` writes the right summary and
    metadata. Returns n.
    """
    from rosbags.rosbag2.storage_mcap import PendingChunk
    storage = writer.storage
    n = int(times.size)
    if n == 0:
        return 0
    record_sizes = lengths + MESSAGE_HEADER
    ends = np.cumsum(record_sizes)
    # Chunk boundaries: each chunk takes messages until it holds CHUNK_BYTES or more.
    cuts = np.unique(np.searchsorted(ends, np.arange(CHUNK_BYTES, int(ends[-1]), CHUNK_BYTES),
                                     side='right'))
    bounds = np.concatenate([[0], cuts[(cuts > 0) & (cuts < n)], [n]])
    bio = storage.bio
    prefix = storage.chunk.bio.getvalue()  # schema and channel records not yet in a chunk
    storage.chunk = PendingChunk(2**63 - 1, 0, BytesIO(), defaultdict(list))
    for first, last in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        size = len(prefix) + int(ends[last - 1] - (ends[first - 1] if first else 0))
        data = np.empty(size, dtype=np.uint8)
        data[:len(prefix)] = np.frombuffer(prefix, dtype=np.uint8)
        offsets = np.empty(last - first, dtype=np.int64)
        chunk_times, chunk_channels = times[first:last], channels[first:last]
        used = _fill_chunk(data, len(prefix), sources[0], sources[1], starts[first:last],
                           lengths[first:last], chunk_times, chunk_channels, offsets)
        assert used == size
        prefix = b''
        begin, end = int(chunk_times.min()), int(chunk_times.max())
        head = (_u64(begin) + _u64(end) + _u64(size) + (0).to_bytes(4, 'little')
                + (0).to_bytes(4, 'little') + _u64(size))
        chunk_start = bio.tell()
        bio.write(bytes((CHUNK,)) + _u64(len(head) + size) + head)
        bio.write(memoryview(data))
        chunk_end = bio.tell()
        index_offsets = []
        for channel in np.unique(chunk_channels).tolist():
            mine = chunk_channels == channel
            pairs = np.empty((int(mine.sum()), 2), dtype='<u8')
            pairs[:, 0] = chunk_times[mine]
            pairs[:, 1] = offsets[mine]
            body = pairs.tobytes()
            index_offsets.append((channel, bio.tell()))
            bio.write(bytes((MESSAGE_INDEX,)) + _u64(6 + len(body)) + channel.to_bytes(2, 'little')
                      + len(body).to_bytes(4, 'little') + body)
            count = int(mine.sum())
            storage.channel_stats[channel] += count
            writer.counts[channel] += count
        index = BytesIO()  # the chunk index record, written in the summary by rosbags
        index.write(_u64(begin) + _u64(end) + _u64(chunk_start) + _u64(chunk_end - chunk_start))
        index.write((10 * len(index_offsets)).to_bytes(4, 'little'))
        for channel, offset in index_offsets:
            index.write(channel.to_bytes(2, 'little') + _u64(offset))
        index.write(_u64(bio.tell() - chunk_end) + (0).to_bytes(4, 'little') + _u64(size)
                    + _u64(size))
        storage.chunks.append(index)
        storage.message_start_time = min(storage.message_start_time, begin)
        storage.message_end_time = max(storage.message_end_time, end)
        if progress is not None:
            progress(last)
    writer.min_timestamp = min(writer.min_timestamp, int(times.min()))
    writer.max_timestamp = max(writer.max_timestamp, int(times.max()))
    return n
