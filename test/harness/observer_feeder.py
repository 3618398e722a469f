"""The observer node tests' feeder: one joint_states sample at a time, the node's answers to it."""
from __future__ import annotations

from builtin_interfaces.msg import Time
from geometry_msgs.msg import WrenchStamped
from harness.node_streams import Streams
from harness.ros_harness import LATCHED
import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool

LINK = 'panda_hand'


def sample(names, q, v, effort, stamp_ns: int) -> JointState:
    msg = JointState(name=list(names), position=[float(x) for x in q],
                     velocity=[float(x) for x in v], effort=[float(x) for x in effort])
    msg.header.stamp = Time(sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9)
    return msg


def stamp_of(msg) -> int:
    return msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec


class Feeder:
    """Send one joint_states sample at a time and wait for the node's outputs for it."""

    def __init__(self, ros, model):
        self.ros, self.model = ros, model
        self.streams = Streams(ros, model.joint_names, np.zeros(model.nq), np.zeros(model.nv))
        self.streams.send_joint_states = False
        self.external = ros.collect(JointState, 'external_torques')
        self.wrench = ros.collect(WrenchStamped, f'estimated_wrenches/{LINK}')
        self.collision = ros.collect(Bool, 'collision', LATCHED)
        self.message: JointState | None = None

    def tick(self) -> None:
        self.streams.js_pub.publish(self.message)

    def diagnostic(self, predicate, timeout: float = 15.0):
        """Wait for a diagnostics message, the last sample sent again meanwhile (fresh)."""
        return self.ros.wait_for(self.streams.diagnostics, predicate, timeout, self.tick)

    def send(self, q, v, effort, stamp_ns: int):
        """Publish the sample (again until answered); return (joint_torques, external)."""
        self.message = sample(self.model.joint_names, q, v, effort, stamp_ns)
        start = len(self.external.messages)
        position = np.asarray(self.message.position)
        torques = self.ros.wait_for(  # not an answer to the previous sample sent again
            self.streams.torques, lambda m: stamp_of(m) == stamp_ns and np.array_equal(
                m.position, position), 15.0, self.tick)
        external = self.ros.wait_for(self.external, lambda m: stamp_of(m) == stamp_ns, 15.0,
                                     self.tick, start=start)
        return torques, external
