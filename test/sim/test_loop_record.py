"""``Recorder``: what ``rnea_sim --record`` keeps (of ``run_in_process``), how it is written."""
from __future__ import annotations

from dataclasses import replace
import errno
import os
from pathlib import Path

from harness.oracle import robot_path
import numpy as np
import pytest
from rosbags.highlevel import AnyReader
from std_msgs.msg import String
import yaml

from rnea_ros.errors import InputError
from rnea_ros.recording.bagio.splitwrite import SplitBagWriter
from rnea_ros.recording.bagio.storage import open_bag, read_raw
from rnea_ros.sim.controller import JointController
from rnea_ros.sim.gap import Gap, load_gap
from rnea_ros.sim.loop import rnea_feedforward, run_in_process, START_NS
from rnea_ros.sim.plant import Plant
from rnea_ros.sim.record import Recorder, SPLIT_BYTES
from rnea_ros.sim.settings import BY_NAME, RECORD_SPLIT_MAX

STEPS = 60


def _record(tmp_path, gap: Gap):
    """Hold the panda at its start for STEPS steps with the URDF's feed-forward; the bag."""
    plant = Plant(robot_path('panda').read_text(), gap=gap)
    start = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7, 0.02])
    plant.reset(start)
    lower = [plant.nominal.joint(n).lower for n in plant.joint_names]
    upper = [plant.nominal.joint(n).upper for n in plant.joint_names]
    controller = JointController(plant.joint_names, 100.0, 10.0, lower, upper, start)
    recorder = Recorder()
    run = run_in_process(plant, controller, STEPS * plant.timestep,
                         rnea_feedforward(plant.nominal, plant), recorder)
    recorder.write(tmp_path / 'bag')
    with AnyReader([tmp_path / 'bag']) as reader:
        messages = [(connection.topic, stamp, reader.deserialize(raw, connection.msgtype))
                    for connection, stamp, raw in reader.messages()]
    return plant, run, messages


def test_each_step_keeps_the_state_and_the_torque_sensors_reading_of_the_step_before(tmp_path):
    """Gap none (exact sensors): message k = state of step k, effort applied in step k - 1."""
    plant, run, messages = _record(tmp_path, Gap.none())
    assert [topic for topic, _, _ in messages] == ['/joint_states'] * STEPS  # as rnea_convert
    stamps = np.array([stamp for _, stamp, _ in messages])
    np.testing.assert_array_equal(stamps, START_NS + np.arange(STEPS) * 1_000_000)
    headers = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for _, _, m in messages]
    np.testing.assert_array_equal(headers, stamps)
    assert all(list(m.name) == list(plant.joint_names) for _, _, m in messages)
    position = np.array([m.position for _, _, m in messages])
    effort = np.array([m.effort for _, _, m in messages])
    np.testing.assert_allclose(position, run.position, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(effort[0], np.zeros(len(plant.joint_names)))
    np.testing.assert_allclose(effort[1:], run.effort[:-1], rtol=0, atol=1e-12)
    assert np.max(np.abs(effort[1:, 1])) > 1.0  # the shoulder holds the arm: a real torque


def test_the_gap_drops_messages_and_reads_the_torque_through_its_sensor(tmp_path):
    gap = replace(load_gap('default'), drop=0.5)
    plant, run, messages = _record(tmp_path, gap)
    assert 10 < len(messages) < STEPS - 10  # about half lost, as the sim's draws lose them
    kept = (np.array([stamp for _, stamp, _ in messages]) - START_NS) // 1_000_000
    effort = np.array([m.effort for _, _, m in messages])
    error = effort[kept > 0] - run.effort[kept[kept > 0] - 1] - plant.torque_offset
    assert 0.02 < np.std(error) < 0.1  # the sensor's noise, 0.05 N m


def _chatter(count: int, start: int = START_NS):
    """``count`` String messages, one per ms of log time, of 20 to 70 bytes."""
    return [(start + k * 1_000_000, String(data='x' * (k % 50))) for k in range(count)]


def _read_back(bag: Path) -> np.ndarray:
    """Return the log times of every message of ``bag``, as rnea_bag's reader reads them."""
    reader = open_bag(bag)
    try:
        return read_raw(reader, list(reader.connections)).times
    finally:
        reader.close()


def _listed(bag: Path) -> list[str]:
    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    return info['relative_file_paths']


def test_topic_names_are_fully_qualified_as_rnea_convert_writes_them(tmp_path):
    """``/joint_states`` as ``rnea_convert`` and ``ros2 bag record``; a node's own resolution."""
    from rnea_ros.convert.cli import build_parser
    plant = Plant(robot_path('panda').read_text(), gap=Gap.none())
    controller = JointController(plant.joint_names, 100.0, 10.0, plant.q()[plant.actuated_q] - 1,
                                 plant.q()[plant.actuated_q] + 1, plant.q()[plant.actuated_q])
    for resolve, prefix in ((None, '/'), (lambda topic: '/arm_2/' + topic, '/arm_2/')):
        recorder = Recorder(resolve=resolve)
        run_in_process(plant, controller, 3 * plant.timestep, recorder=recorder, desired=True)
        topics = [message[1] for message in recorder.messages]
        assert topics == [f'{prefix}joint_states', f'{prefix}desired_accelerations'] * 3
    assert build_parser().get_default('topic') == '/joint_states'
    recorder = Recorder()
    run = run_in_process(plant, controller, 3 * plant.timestep, recorder=recorder, desired=True)
    recorder.write(tmp_path / 'bag')
    with AnyReader([tmp_path / 'bag']) as reader:
        desired = [reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages()
                   if c.topic == '/desired_accelerations']
    assert [list(m.joint_names) for m in desired] == [list(plant.joint_names)] * 3
    np.testing.assert_array_equal([m.points[0].positions for m in desired], run.reference)


def test_the_recording_is_written_split_by_split_in_bounded_memory(tmp_path):
    """Each split complete and listed as it fills; the buffer never past its size."""
    bag = tmp_path / 'bag'
    recorder = Recorder(bag, split=0.1, split_bytes=4000)
    listed = []
    for stamp, msg in _chatter(1000):
        recorder.add('chatter', msg, stamp)
        assert recorder.size <= 4000  # bytes held, whatever the run's length
        listed.append(len(_listed(bag)))
    written = recorder.close()
    assert recorder.error is None and written == 1000
    # Splits were complete and listed while the run went on, not at its end.
    assert listed[500] >= 3 and listed == sorted(listed)
    files = _listed(bag)
    assert files[:2] == ['bag_0.mcap', 'bag_1.mcap'] and len(files) >= 10
    assert sorted(p.name for p in bag.glob('*.mcap')) == sorted(files)
    np.testing.assert_array_equal(_read_back(bag), [stamp for stamp, _ in _chatter(1000)])
    with AnyReader([bag]) as reader:  # rosbags reads the splits in order too
        stamps = [stamp for _, stamp, _ in reader.messages()]
    assert stamps == [stamp for stamp, _ in _chatter(1000)]


def test_a_late_message_of_another_thread_lands_in_its_split(tmp_path):
    """Logged a step earlier than the last one kept: still written, in log-time order."""
    bag = tmp_path / 'bag'
    recorder = Recorder(bag, split=0.1)
    messages = _chatter(300)
    messages[150], messages[151] = messages[151], messages[150]  # 0.15 s: inside a split
    messages[100], messages[101] = messages[101], messages[100]  # at a split's start
    for stamp, msg in messages:
        recorder.add('chatter', msg, stamp)
    assert recorder.close() == 300
    assert len(_listed(bag)) == 3
    np.testing.assert_array_equal(_read_back(bag), sorted(stamp for stamp, _ in messages))


def test_a_pause_in_the_messages_makes_no_empty_splits(tmp_path):
    bag = tmp_path / 'bag'
    recorder = Recorder(bag, split=0.1)
    messages = _chatter(50) + _chatter(50, start=START_NS + 3600 * 10**9)  # an hour later
    for stamp, msg in messages:
        recorder.add('chatter', msg, stamp)
    assert recorder.close() == 100
    assert _listed(bag) == ['bag_0.mcap', 'bag_1.mcap']
    np.testing.assert_array_equal(_read_back(bag), [stamp for stamp, _ in messages])


@pytest.mark.parametrize('make, reason', [
    (lambda tmp: tmp, 'it exists; expected a new directory'),
    (lambda tmp: (tmp / 'file').write_text('') or tmp / 'file' / 'bag',
     'cannot create it (Not a directory); expected a new directory in a writable place'),
])
def test_a_bag_that_exists_or_cannot_be_created_is_refused_at_start(tmp_path, make, reason):
    path = make(tmp_path)
    with pytest.raises(InputError) as error:
        Recorder(path)
    assert str(error.value) == f"parameter 'record' is {str(path)!r}: {reason}"


def test_a_split_that_cannot_be_written_stops_the_recording_and_keeps_the_bag(
        tmp_path, monkeypatch):
    """A full disk at the third split: one line, the first two splits still read back."""
    write_split = SplitBagWriter.write_split

    def full_at_the_third(self, messages):
        if len(self.files) == 2:
            with open(self.path / 'filler', 'wb') as file:  # a write, as the split's would
                file.write(b'x')
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return write_split(self, messages)
    monkeypatch.setattr(SplitBagWriter, 'write_split', full_at_the_third)
    bag = tmp_path / 'bag'
    recorder = Recorder(bag, split=0.1)
    for stamp, msg in _chatter(500):
        recorder.add('chatter', msg, stamp)
    assert recorder.failed.wait(timeout=60)
    assert recorder.close() == 200
    assert recorder.error == (f"cannot write {str(bag / 'bag_2')!r} of the recording (No "
                              f'space left on device); the recording stops with the 2 splits '
                              f'written in {str(bag)!r}')
    assert recorder.messages == []  # nothing kept after the failure
    np.testing.assert_array_equal(_read_back(bag), [s for s, _ in _chatter(200)])


def test_the_docs_state_the_recordings_bounds():
    """docs/sim.md gives the split's default and largest length and its byte bound."""
    text = ' '.join((Path(__file__).resolve().parents[2] / 'docs' / 'sim.md').read_text().split())
    default = BY_NAME['record_split'].default
    assert (f'| `record_split` | `{default!r}` | a number > 0 and <= {RECORD_SPLIT_MAX:g} | Log '
            'time [s] per file (split) of the record bag') in text
    assert f'(at most {SPLIT_BYTES >> 20} MB: a split that reaches it is written early)' in text
