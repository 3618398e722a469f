"""
The node's message conversions.

A trajectory's size read from its CDR before decoding; a desired motion that only changed its
stamp not decoded again; an output kept serialized (``Serialized``) decodes, after its views
are written, to the message filled with the same values (the bytes may differ in the CDR's
padding, which rclpy's serializer leaves as it finds it).
"""
from __future__ import annotations

import struct

from builtin_interfaces.msg import Time
from geometry_msgs.msg import WrenchStamped
import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.control.joint_input import Rejected, TOO_LARGE
from rnea_ros.node.messages import decode_trajectory, DesiredDecoder, to_trajectory
from rnea_ros.node.serialized import sequence, Serialized, set_wrench


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


def _desired(positions, points: int = 1) -> bytes:
    msg = JointTrajectory(joint_names=['a', 'b'], points=[
        JointTrajectoryPoint(positions=positions, velocities=[0.0, 0.0],
                             accelerations=[1.5, -2.0]) for _ in range(points)])
    for k, point in enumerate(msg.points):
        point.time_from_start.sec = k
    return serialize_message(msg)


def _stamped(data: bytes, sec: int, nanosec: int) -> bytes:
    """
    Return ``data`` (little endian) with ``header.stamp`` set, its other bytes kept.

    rclpy pads a serialized message with undefined bytes: two serializations may differ there.
    """
    return data[:4] + struct.pack('<iI', sec, nanosec) + data[12:]


def _same(a, b) -> bool:
    return a.joint_names == b.joint_names and all(
        np.array_equal(getattr(a, f), getattr(b, f))
        for f in ('times', 'positions', 'velocities', 'accelerations'))


def test_a_desired_motion_that_only_changed_its_stamp_is_not_decoded_again():
    """The held reference at every cycle: the same trajectory, each message's own stamp."""
    decoder, held = DesiredDecoder(), _desired([0.25, 0.5])
    first, start = decoder.decode(_stamped(held, 3, 400), 10)
    assert _same(first, to_trajectory(decode_trajectory(held, 10)))
    assert start == pytest.approx(3.0000004, abs=1e-12)
    again, start = decoder.decode(_stamped(held, 3, 1_000_400), 10)
    assert again is first and start == pytest.approx(3.0010004, abs=1e-12)
    moved, start = decoder.decode(_stamped(_desired([0.25, 0.75]), 3, 2_000_400), 10)
    assert moved is not first and start == pytest.approx(3.0020004, abs=1e-12)
    assert moved.positions.tolist() == [[0.25, 0.75]]


def test_a_repeated_desired_motion_is_checked_again_against_a_new_limit():
    decoder, points = DesiredDecoder(), _desired([0.0, 0.0], points=3)
    three, _ = decoder.decode(points, 3)
    assert three.n_points == 3
    with pytest.raises(Rejected, match=r'^3 points \(max_trajectory_points is 2\)$'):
        decoder.decode(_stamped(points, 0, 1_000_000), 2)
    with pytest.raises(Rejected, match=r'^points\[0\]\.positions has 1 values, expected 2'):
        decoder.decode(_desired([0.0]), 3)  # a refused one is not kept in place of the last
    assert decoder.decode(_stamped(points, 0, 2_000_000), 3)[0] is three


def written(serialized: Serialized, rng) -> dict[str, list[float]]:
    """Write random values into every view and a stamp; return the values written."""
    values = {}
    for name, view in serialized.arrays.items():
        assert view.ctypes.data % 8 == 0  # aligned: the compiled kernels write into it
        view[:] = rng.normal(size=view.shape)
        values[name] = view.tolist()
    return values


@pytest.mark.parametrize('names', [[], ['j'], ['ab', 'cde', 'fghij', 'klmnopq'],
                                   [f'panda_joint{k}' for k in range(1, 8)]])
@pytest.mark.parametrize('fields', [('position', 'velocity', 'effort'), ('effort',)])
def test_a_serialized_joint_state_decodes_to_the_message_filled(names, fields):
    """Every name length (the CDR's alignment): the bytes are those of the message filled."""
    rng = np.random.default_rng(len(names))
    serialized = Serialized(JointState(name=list(names)), {
        field: (len(names), sequence(field)) for field in fields})
    for _ in range(3):  # written again: the views stay those of the bytes
        values = written(serialized, rng)
        serialized.stamp(Time(sec=1_700_000_123, nanosec=999_999_999))
        expected = JointState(name=list(names), **values)
        expected.header.stamp = Time(sec=1_700_000_123, nanosec=999_999_999)
        assert deserialize_message(serialized.payload(), JointState) == expected


@pytest.mark.parametrize('frame_id', ['', 'a', 'panda_hand', 'panda_link7'])
def test_a_serialized_wrench_decodes_to_the_message_filled(frame_id):
    rng = np.random.default_rng(1)
    msg = WrenchStamped()
    msg.header.frame_id = frame_id
    serialized = Serialized(msg, {'wrench': (6, set_wrench)})
    values = written(serialized, rng)['wrench']
    serialized.stamp(Time(sec=-3, nanosec=7))
    expected = WrenchStamped()
    expected.header.frame_id = frame_id
    expected.header.stamp = Time(sec=-3, nanosec=7)
    set_wrench(expected, values)
    assert deserialize_message(serialized.payload(), WrenchStamped) == expected


@pytest.mark.parametrize('size', [0, 1, 7])
def test_a_serialized_float64_multi_array_decodes_to_the_message_filled(size):
    def command():
        msg = Float64MultiArray()
        msg.layout.dim = [MultiArrayDimension(label='joints', size=size, stride=size)]
        return msg
    serialized = Serialized(command(), {'data': (size, sequence('data'))})
    expected = command()
    expected.data = written(serialized, np.random.default_rng(2))['data']
    assert deserialize_message(serialized.payload(), Float64MultiArray) == expected
