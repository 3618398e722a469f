"""The vectorised JointState/Odometry CDR codec against rosbags' own (de)serializer."""
from __future__ import annotations

from harness.bagdata import JOINT_STATE, joint_state, ODOMETRY, odometry, STORE
import numpy as np
import pytest

from rnea_ros.recording.bagio import cdr


def _records(raws: list[bytes]):
    lengths = np.array([len(r) for r in raws], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return np.frombuffer(b''.join(raws), dtype=np.uint8), starts, lengths


def _decode_js(raws: list[bytes]) -> cdr.Decoded:
    def fallback(raw: bytes):
        return cdr.joint_state_fields(STORE.deserialize_cdr(raw, JOINT_STATE))
    return cdr.decode(*_records(raws), cdr.joint_state_layout, fallback)


def _rows(decoded: cdr.Decoded, n: int) -> list:
    """Per record: (names, position, velocity, effort) from the blocks."""
    out = [None] * n
    for block in decoded.blocks:
        for i, row in enumerate(block.rows.tolist()):
            out[row] = (block.key[0], *(a[i] for a in block.arrays))
    return out


def assert_rosbags_values(raws: list[bytes], decoded: cdr.Decoded) -> None:
    """Names, stamp and arrays of every record as rosbags deserializes them (copied bytes)."""
    for raw, (names, pos, vel, eff), stamp in zip(raws, _rows(decoded, len(raws)),
                                                  decoded.stamps):
        msg = STORE.deserialize_cdr(raw, JOINT_STATE)
        assert names == tuple(msg.name)
        assert stamp == msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
        for ours, theirs in ((pos, msg.position), (vel, msg.velocity), (eff, msg.effort)):
            np.testing.assert_array_equal(ours, theirs)


def test_decoder_matches_rosbags_on_mixed_layouts():
    rng = np.random.default_rng(3)
    layouts = [(['a', 'joint_bb'], 2, 2, 0), (['x'], 1, 0, 1), ([], 0, 0, 0),
               (['a', 'joint_bb'], 2, 0, 2), (['long_name_' * 3, 'c', 'dd'], 3, 3, 3)]
    raws = []
    for k in range(400):
        names, npos, nvel, neff = layouts[rng.integers(len(layouts))]
        values = [rng.normal(size=m) for m in (npos, nvel, neff)]
        if k == 7 and npos:
            values[0][0] = np.nan  # non-finite values pass through unchanged
        raws.append(joint_state(int(rng.integers(0, 2**31 * 10**9)), names, *values))
    decoded = _decode_js(raws)
    assert decoded.fallback_count == 0
    assert_rosbags_values(raws, decoded)


def test_records_apart_in_the_buffer_as_in_a_mapped_bag():
    # In a mapped MCAP file the records lie between record headers and other topics: random
    # gaps here, and a same-length record with other names among them (layout check).
    rng = np.random.default_rng(6)
    raws = [joint_state(int(ns), ['ab', 'cd'], rng.normal(size=2), rng.normal(size=2))
            for ns in rng.integers(-2**31 * 10**9, 2**31 * 10**9, 300)]
    raws[100] = joint_state(-1, ['xy', 'zw'], [1.0, 2.0], [3.0, 4.0])  # negative seconds
    gaps = rng.integers(0, 40, len(raws))
    buffer = b''.join(bytes(rng.integers(0, 256, gap, dtype=np.uint8)) + raw
                      for gap, raw in zip(gaps, raws))
    lengths = np.array([len(r) for r in raws], dtype=np.int64)
    starts = np.cumsum(gaps + np.concatenate([[0], lengths[:-1]]))
    decoded = cdr.decode(np.frombuffer(buffer, dtype=np.uint8), starts, lengths,
                         cdr.joint_state_layout, lambda raw: pytest.fail('no fallback'))
    assert sorted(len(block.rows) for block in decoded.blocks) == [1, 299]
    assert_rosbags_values(raws, decoded)
    assert decoded.stamps[100] == -1


def test_same_length_other_names_is_a_second_layout():
    raws = [joint_state(k, ['ab', 'cd'], [k, -k]) for k in range(5)]
    raws += [joint_state(k, ['xy', 'zw'], [2 * k, 3.0]) for k in range(5)]
    assert len({len(r) for r in raws}) == 1
    decoded = _decode_js(raws)
    assert sorted(block.key[0] for block in decoded.blocks) == [('ab', 'cd'), ('xy', 'zw')]
    rows = _rows(decoded, 10)
    assert rows[7][0] == ('xy', 'zw') and list(rows[7][1]) == [4.0, 3.0]


def test_big_endian_records_fall_back_to_rosbags():
    msg = STORE.deserialize_cdr(joint_state(5 * 10**9 + 7, ['j'], [1.5], [2.5], [3.5]),
                                JOINT_STATE)
    big = bytes(STORE.serialize_cdr(msg, JOINT_STATE, little_endian=False))
    little = joint_state(6 * 10**9, ['j'], [4.0], [5.0], [6.0])
    decoded = _decode_js([big, little])
    assert decoded.fallback_count == 1
    rows = _rows(decoded, 2)
    assert [list(a) for a in rows[0][1:]] == [[1.5], [2.5], [3.5]]
    assert decoded.stamps.tolist() == [5 * 10**9 + 7, 6 * 10**9]


def test_truncated_record_reaches_the_fallback_which_raises():
    good = joint_state(1, ['j'], [1.0])
    with pytest.raises(Exception):
        _decode_js([good, good[:-3]])
    assert cdr.joint_state_layout(good[:-3]) is None


def test_encoder_writes_rosbags_bytes():
    rng = np.random.default_rng(4)
    stamps = rng.integers(0, 2**31 * 10**9, 6)
    names = ['panda_joint1', 'j2', 'k']
    position, velocity = rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    matrix, size = cdr.encode_joint_states(stamps, names, position, velocity,
                                           np.zeros((6, 0)), frame_id='base')
    for k, record in enumerate(cdr.records(matrix)):
        msg = STORE.types[JOINT_STATE](
            header=STORE.types['std_msgs/msg/Header'](
                stamp=STORE.types['builtin_interfaces/msg/Time'](
                    sec=int(stamps[k] // 10**9), nanosec=int(stamps[k] % 10**9)),
                frame_id='base'),
            name=names, position=position[k], velocity=velocity[k], effort=np.zeros(0))
        assert record == bytes(STORE.serialize_cdr(msg, JOINT_STATE))
        assert len(record) == size


def test_odometry_decoder_matches_rosbags():
    rng = np.random.default_rng(5)
    raws = [odometry(int(rng.integers(0, 2**31 * 10**9)), rng.normal(size=3), rng.normal(size=4),
                     rng.normal(size=3), rng.normal(size=3)) for _ in range(50)]

    def fallback(raw: bytes):
        return cdr.odometry_fields(STORE.deserialize_cdr(raw, ODOMETRY))
    decoded = cdr.decode(*_records(raws), cdr.odometry_layout, fallback)
    assert decoded.fallback_count == 0 and len(decoded.blocks) == 1
    values = np.zeros((50, cdr.ODOMETRY_DOUBLES))
    values[decoded.blocks[0].rows] = decoded.blocks[0].arrays[0]
    for k, raw in enumerate(raws):
        expected = cdr.odometry_fields(STORE.deserialize_cdr(raw, ODOMETRY))
        assert decoded.stamps[k] == expected[0]
        np.testing.assert_array_equal(values[k], expected[2][0])
    assert decoded.blocks[0].key == ('odom', 'base_link')
