"""
``--write-bag`` output (``recording.bagio.mcapwrite``, ``storage.write_bag``) read back by rosbags.

The bulk MCAP writer must give the messages rosbags' own per-message writer gives: the same
topics, log times, bytes and order, a valid ``metadata.yaml``, and chunks that span several
``CHUNK_BYTES``.
"""
from __future__ import annotations

from harness.bagdata import panda_bag, PANDA_JOINTS, sample_times, STORE
import numpy as np
import pytest
from rosbags.rosbag2 import Reader
import yaml

from rnea_ros.recording.bagio import cdr, mcapwrite, storage


def messages(path):
    with Reader(path) as reader:
        return [(c.topic, c.msgtype, t, bytes(raw)) for c, t, raw in reader.messages()]


def torques_topic(times, n):
    position = np.arange(n * 8, dtype=np.float64).reshape(n, 8) * 1e-3
    matrix, _ = cdr.encode_joint_states(times, PANDA_JOINTS, position, -position, 2 * position)
    return '/joint_torques', storage.JOINT_STATE, times, matrix


@pytest.mark.parametrize('input_storage', ['mcap', 'sqlite3'])
def test_written_bag_reads_back_as_the_input_plus_the_new_topic(tmp_path, monkeypatch,
                                                                input_storage):
    n = 3000
    times = sample_times(n, jitter=0.3)
    bag = panda_bag(tmp_path / 'in', times, storage=input_storage, desired=True,
                    effort=np.ones((n, 8)), description='<robot name="x"/>')
    extra = [torques_topic(times, n)]
    monkeypatch.setattr(mcapwrite, 'CHUNK_BYTES', 64 << 10)  # many chunks
    reader = storage.open_bag(bag)
    assert storage.write_bag(reader, tmp_path / 'bulk', extra) == 3 * n + 1
    reader.close()
    monkeypatch.setattr(storage, 'mcap_storages', lambda reader: None)  # rosbags' writer
    reader = storage.open_bag(bag)
    assert storage.write_bag(reader, tmp_path / 'each', extra) == 3 * n + 1
    reader.close()
    bulk, each = messages(tmp_path / 'bulk'), messages(tmp_path / 'each')
    assert bulk == each
    expected = sorted(messages(bag) + [('/joint_torques', storage.JOINT_STATE, t, bytes(r))
                                       for t, r in zip(times.tolist(), extra[0][3])],
                      key=lambda m: m[2])  # stable: the input's first on equal times
    assert bulk == expected
    first = STORE.deserialize_cdr(next(m[3] for m in bulk if m[0] == '/joint_torques'),
                                  storage.JOINT_STATE)
    assert list(first.name) == PANDA_JOINTS
    meta = yaml.safe_load((tmp_path / 'bulk' / 'metadata.yaml').read_text())
    info = meta['rosbag2_bagfile_information']
    assert info['storage_identifier'] == input_storage
    assert info['message_count'] == 3 * n + 1
    counts = {t['topic_metadata']['name']: t['message_count']
              for t in info['topics_with_message_count']}
    assert counts == {'/joint_states': n, '/desired_accelerations': n,
                      '/robot_description': 1, '/joint_torques': n}
    assert info['starting_time']['nanoseconds_since_epoch'] == int(times[0]) - 1000
    assert info['duration']['nanoseconds'] == int(times[-1]) - int(times[0]) + 1000
    with Reader(tmp_path / 'bulk') as reader:
        assert reader.message_count == 3 * n + 1
        assert reader.start_time == int(times[0]) - 1000
        assert reader.end_time == int(times[-1]) + 1
        if input_storage == 'mcap':
            chunks = reader.storage.storages[0].chunks if hasattr(reader.storage, 'storages') \
                else reader.storage.chunks
            assert len(chunks) > 10
