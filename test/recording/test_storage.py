"""
``storage.read_raw``'s MCAP chunk reader against rosbags' generic reader.

Uncompressed chunks are scanned in place in a read-only map of the file, compressed ones are
decompressed: both must give the generic reader's records (times, bytes, order), keep rosbags'
checks (checksum, truncation) and release the map with the last record that views it.
"""
from __future__ import annotations

from binascii import crc32
import os
import weakref

from harness.bagdata import (BAG_START, desired_acceleration, JOINT_STATE, joint_state,
                             PANDA_JOINTS, sample_times, STORE)
import numpy as np
import pytest
from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer

from rnea_ros.recording.bagio import storage

N = 6000  # ~450 + ~250 bytes per sample: rosbags closes a chunk at 1 MiB: several chunks


def mcap_bag(path, compression: bool):
    """joint_states and desired_accelerations interleaved, zstd chunks if ``compression``."""
    times = sample_times(N, jitter=0.3)
    rng = np.random.default_rng(8)
    writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
    if compression:
        writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
    with writer:
        states = writer.add_connection('/joint_states', JOINT_STATE, typestore=STORE)
        desired = writer.add_connection('/desired_accelerations',
                                        'trajectory_msgs/msg/JointTrajectory', typestore=STORE)
        for ns in times.tolist():
            q = rng.normal(size=8)
            q[3] = np.nan if ns % 7 == 0 else q[3]  # bytes pass through, NaN or not
            writer.write(states, ns, joint_state(ns, PANDA_JOINTS, q, -q, 2 * q))
            writer.write(desired, ns, desired_acceleration(ns, PANDA_JOINTS, q))
    return path, times


def records(raw: storage.RawRecords) -> list[bytes]:
    return [raw.record(k) for k in range(len(raw))]


def chunks(reader) -> list:
    return storage.mcap_storages(reader)[0].chunks


@pytest.mark.parametrize('compression', [False, True])
def test_chunk_reader_gives_the_generic_readers_records(tmp_path, compression):
    bag, times = mcap_bag(tmp_path / 'bag', compression)
    reader = storage.open_bag(bag)
    assert len(chunks(reader)) > 3
    assert {c.compression for c in chunks(reader)} == {'zstd' if compression else ''}
    conns = storage.topic_connections(reader, 'joint_states', JOINT_STATE)
    windows = [(None, None), (BAG_START + 1_500_000_000, BAG_START + 4_000_000_000)]
    for start, stop in windows:
        fast = storage.read_raw(reader, conns, start, stop)
        generic = storage.read_raw(reader, conns, start, stop, fast=False)
        inside = (times >= (start or 0)) & (times < (stop or 2**63 - 1))
        assert len(fast) == np.count_nonzero(inside) > 2000
        assert fast.times.tolist() == generic.times.tolist()
        assert records(fast) == records(generic)
        assert set(fast.channels.tolist()) == {conns[0].id}
        data = next(bag.glob('*.mcap'))
        if compression:  # the decompressed chunks, copied into one buffer
            assert fast.buffer.flags.writeable
        else:  # the file itself, mapped read-only: no copy
            assert not fast.buffer.flags.writeable
            assert fast.buffer.size == data.stat().st_size
            assert int(fast.starts.max()) < fast.buffer.size
    reader.close()


def test_map_lives_as_long_as_the_records(tmp_path):
    bag, _ = mcap_bag(tmp_path / 'bag', compression=False)
    reader = storage.open_bag(bag)
    conns = storage.topic_connections(reader, 'joint_states', JOINT_STATE)
    raw = storage.read_raw(reader, conns)
    first = raw.record(0)
    mapping = weakref.ref(raw.buffer.base.obj)  # the mmap under the array's memoryview
    reader.close()
    assert raw.record(0) == first  # still valid: the map has its own file descriptor
    del raw
    assert mapping() is None  # unmapped with the last view


def test_truncated_mcap_keeps_its_error(tmp_path):
    bag, _ = mcap_bag(tmp_path / 'bag', compression=False)
    reader = storage.open_bag(bag)  # the index is read: now the file loses its tail
    conns = storage.topic_connections(reader, 'joint_states', JOINT_STATE)
    data = next(bag.glob('*.mcap'))
    os.truncate(data, chunks(reader)[-2].chunk_start_offset + 100)
    with pytest.raises(storage.BagError, match=f"^truncated MCAP chunk in '{data}'$"):
        storage.read_raw(reader, conns)
    reader.close()


def test_chunk_checksum_is_checked_in_place(tmp_path):
    bag, _ = mcap_bag(tmp_path / 'bag', compression=False)
    data = next(bag.glob('*.mcap'))
    reader = storage.open_bag(bag)
    conns = storage.topic_connections(reader, 'joint_states', JOINT_STATE)
    expected = records(storage.read_raw(reader, conns))
    chunk = chunks(reader)[1]
    reader.close()
    content = bytearray(data.read_bytes())
    crc_at = chunk.chunk_start_offset + 9 + 24
    begin = chunk.chunk_start_offset + 9 + 40 + len(chunk.compression)
    right = crc32(content[begin:begin + chunk.compressed_size])
    for crc, error in ((right, None), (right ^ 1, 'Chunk checksum mismatch.')):
        content[crc_at:crc_at + 4] = crc.to_bytes(4, 'little')
        data.write_bytes(content)
        reader = storage.open_bag(bag)
        if error:
            with pytest.raises(storage.BagError, match=f"from bag '{bag}' \\(corrupt\\?\\): "
                                                       f'ReaderError: {error}$'):
                storage.read_raw(reader, conns)
        else:
            assert records(storage.read_raw(reader, conns)) == expected
        reader.close()
