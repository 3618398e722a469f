"""
The ROS side of the observer outputs: publishers, preallocated messages, the reset service.

With ``observer: true`` the node publishes (``ObserverPublishers``, created with the node's
other publishers on configure):

- ``external_torques``: sensor_msgs/JointState, reliable, depth 1, effort = the residual r of
  the momentum observer (the external joint torques), stamped like ``joint_torques``;
- ``estimated_wrenches/<link>`` for each of ``wrench_estimation_links``:
  geometry_msgs/WrenchStamped, reliable, depth 1, in the link frame about its origin
  (``frame_id`` = the link);
- ``collision``: std_msgs/Bool, reliable + transient local, depth 1, published when its value
  changes (and its first value), so a late subscriber gets the current one.

``ObserverMessages`` allocates a model's messages once; ``publications`` gives the (publisher,
message) pairs of a cycle. The state comes from ``observer_outputs.ObserverOutput``; the
``~/reset_collision`` service (std_srvs/Trigger) calls its ``reset``.
"""
from __future__ import annotations

import array

import numpy as np
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool

from rnea_ros.node.messages import COMMAND_QOS, wrench_messages, write_wrenches

COLLISION_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                           reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)
WRENCH_PREFIX = 'estimated_wrenches/'


class ObserverPublishers:
    """The observer's publishers on ``node`` (its ``_wrench_publisher`` makes the wrenches')."""

    def __init__(self, node, links):
        self.external = node.create_publisher(JointState, 'external_torques', COMMAND_QOS)
        self.collision = node.create_publisher(Bool, 'collision', COLLISION_QOS)
        node._entities += [self.external, self.collision]
        self.wrenches = [node._wrench_publisher(WRENCH_PREFIX, link) for link in links]


class ObserverMessages:
    """The preallocated observer messages of one model, bound to its ``ObserverOutput``."""

    def __init__(self, observer, publishers: ObserverPublishers):
        self.publishers = publishers
        self.external = JointState()
        self.external.name = list(observer.joint_names)
        self.external.effort = array.array('d', bytes(8 * len(observer.joint_names)))
        observer.bind_residual(np.frombuffer(self.external.effort, dtype=np.float64))
        self.wrenches = wrench_messages(observer.links)
        self.collision = Bool()
        self._collision_only = [(publishers.collision, self.collision)]

    def publications(self, observer, stamp) -> list[tuple]:
        """Return this cycle's (publisher, message) pairs (``stamp``: that of joint_torques)."""
        pairs = []
        if observer.valid:
            self.external.header.stamp = stamp
            pairs.append((self.publishers.external, self.external))
            write_wrenches(self.wrenches, observer.wrenches, stamp)
            pairs += zip(self.publishers.wrenches, self.wrenches)
        if observer.changed:
            pairs += self.collision_change(observer)
        return pairs

    def collision_change(self, observer) -> list[tuple]:
        """Return the collision message to publish if its value changed (else nothing)."""
        if not observer.changed:
            return []
        observer.changed = False
        self.collision.data = observer.collision
        return self._collision_only
