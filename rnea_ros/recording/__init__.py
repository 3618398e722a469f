"""
One way into a recording: a rosbag2 -> joint time series -> derivatives, without ROS.

``load_joint_states`` (a bag's JointState topic -> ``JointSeries`` in a model's joint order)
and ``derivatives`` (``JointSeries`` -> ``Estimate``: v and a per joint) are the entry
points (``joint_states``). Beneath them: ``bagio`` (``storage`` opens and reads bags: the mapped
MCAP chunks or the rosbags reader, and writes them; ``mcapcheck`` checks an MCAP file's
layout; ``cdr`` decodes and encodes messages in bulk; ``mcapwrite`` writes MCAP chunks),
``series`` (stamps, merging, holes; the floating base's odometry and the desired
accelerations), ``ordering`` (clock steps, stamps out of order, two stretches of a recording
sharing their stamps), ``locks`` (joints held fixed), ``differentiate`` and ``savgol`` (the
Savitzky-Golay differentiator), ``clock`` (the regular clock of jittered stamps) and
``accelerations`` (the route and window per joint), ``fitness`` (what a simulated run writes
into its bag's metadata about its own fitness: late steps, limit contacts, saturation).
Imports ``rnea_ros.dynamics`` only; no argparse, no rclpy.
"""
from rnea_ros.recording.accelerations import Estimate
from rnea_ros.recording.joint_states import derivatives, load_joint_states
from rnea_ros.recording.series import JointSeries

__all__ = ['derivatives', 'Estimate', 'JointSeries', 'load_joint_states']
