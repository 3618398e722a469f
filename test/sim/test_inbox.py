"""The sim's trajectory inbox: serialized trajectories decoded off the executor."""
from __future__ import annotations

import queue

from builtin_interfaces.msg import Duration
import numpy as np
from rclpy.serialization import serialize_message
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.sim.inbox import TrajectoryInbox


def _inbox():
    taken, refused = queue.Queue(), queue.Queue()
    return TrajectoryInbox(taken.put, refused.put), taken, refused


def test_a_serialized_trajectory_is_decoded_as_rclpy_would_and_handed_over():
    msg = JointTrajectory(joint_names=['a', 'b'])
    msg.header.stamp.sec, msg.header.stamp.nanosec = 12, 345
    for k in range(3):
        msg.points.append(JointTrajectoryPoint(
            positions=[0.1 * k, -0.2 * k], velocities=[1.0, 2.0 + k],
            time_from_start=Duration(sec=k, nanosec=500_000_000)))
    inbox, taken, refused = _inbox()
    try:
        inbox.put(serialize_message(msg))
        got = taken.get(timeout=30.0)
    finally:
        inbox.close()
    assert refused.empty()
    assert list(got.joint_names) == ['a', 'b']
    assert (got.header.stamp.sec, got.header.stamp.nanosec) == (12, 345)
    assert [p.time_from_start.sec for p in got.points] == [0, 1, 2]
    np.testing.assert_array_equal(got.points[2].positions, [0.2, -0.4])
    np.testing.assert_array_equal(got.points[1].velocities, [1.0, 3.0])
    assert len(got.points[0].accelerations) == 0


def test_bytes_that_are_no_trajectory_are_refused_in_one_line_and_the_inbox_goes_on():
    inbox, taken, refused = _inbox()
    try:
        inbox.put(b'\x00\x01\x00\x00' + b'\xff' * 7)
        assert refused.get(timeout=30.0) == ('not a serialized trajectory_msgs/msg/'
                                             'JointTrajectory (struct.error)')
        inbox.put(serialize_message(JointTrajectory(joint_names=['a'])))
        assert list(taken.get(timeout=30.0).joint_names) == ['a']
    finally:
        inbox.close()
