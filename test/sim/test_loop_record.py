"""``run_in_process`` with a ``Recorder``: the joint_states that ``rnea_sim --record`` keeps."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from oracle import robot_path
from rosbags.highlevel import AnyReader

from rnea_ros.sim.controller import JointController
from rnea_ros.sim.gap import Gap, load_gap
from rnea_ros.sim.loop import rnea_feedforward, run_in_process, START_NS
from rnea_ros.sim.plant import Plant
from rnea_ros.sim.record import Recorder

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
    assert [topic for topic, _, _ in messages] == ['joint_states'] * STEPS
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
