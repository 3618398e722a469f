"""The node's message conversions: a trajectory's size read from its CDR before decoding."""
from __future__ import annotations

import pytest
from rclpy.serialization import serialize_message
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.control.joint_input import Rejected, TOO_LARGE
from rnea_ros.node.messages import decode_trajectory


@pytest.mark.parametrize('frame_id', ['', 'a', 'odom', 'base_link'])
@pytest.mark.parametrize('names', [[], ['j'], ['ab', 'cde', 'fghij', 'klmnopqr']])
@pytest.mark.parametrize('count', [0, 1, 3])
def test_trajectories_within_the_limit_decode_whole(frame_id, names, count):
    """Every string length (the CDR's alignment) gives the right count: 3 points fit."""
    msg = JointTrajectory(joint_names=names, points=[
        JointTrajectoryPoint(positions=[0.5] * len(names)) for _ in range(count)])
    msg.header.frame_id = frame_id
    assert decode_trajectory(serialize_message(msg), 3) == msg


@pytest.mark.parametrize('frame_id', ['', 'odom', 'base_link'])
def test_too_many_points_or_names_are_refused_undecoded(frame_id):
    msg = JointTrajectory(joint_names=['a', 'bc'], points=[JointTrajectoryPoint()] * 4)
    msg.header.frame_id = frame_id
    with pytest.raises(Rejected, match=r'^4 points \(max_trajectory_points is 3\)$') as caught:
        decode_trajectory(serialize_message(msg), 3)
    assert caught.value.reason == TOO_LARGE
    msg = JointTrajectory(joint_names=[f'j{k}' for k in range(1001)])
    msg.header.frame_id = frame_id
    with pytest.raises(Rejected, match=r'^joint_names has 1001 entries \(at most 1000\)$'):
        decode_trajectory(serialize_message(msg), 3)
