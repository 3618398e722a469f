"""
The ROS side of the observer outputs: publishers, preallocated messages, the reset service.

With ``observer: true`` the node publishes (``ObserverPublishers``, created with the node's
other publishers on configure; types and QoS declared in ``interfaces``) ``external_torques``
(effort = the residual r of the momentum observer, stamped like ``joint_torques``),
``estimated_wrenches/<link>`` for each of ``wrench_estimation_links`` (in the link frame about
its origin, ``frame_id`` = the link), ``collision`` (published when its value changes, and its
first value: transient local, so a late subscriber gets the current one) and
``collision_events`` (one per detection, level ERROR, and per auto reset, OK; its key-values
from ``control.collision_events.key_values``).

On path a (``joint_trajectory_with_effort`` to a joint_trajectory_controller) a latched
collision sends ``stop_trajectory``: one point at the measured positions, zero velocities and
accelerations, the hold torques as efforts, ``time_from_start`` 0 and a zero header stamp
(start on receipt). joint_trajectory_controller replaces its trajectory with every message of
its topic (``topic_callback``), and samples a time past the last point as that point at rest:
it holds the measured position, as its own ``set_hold_position`` does on a cancel. An empty
trajectory would not do: ``validate_trajectory_msg`` refuses it ("Empty trajectory received.").

``ObserverMessages`` allocates a model's messages once (external_torques and the wrenches
serialized, as ``messages.OutputMessages`` does); ``publications`` gives the (publisher,
message) pairs of a cycle (``valid_pairs`` those of a cycle with a valid residual and no
collision change, which ``Cycles`` publishes from a list made once). The state comes from
``observer_outputs.ObserverOutput``; the ``~/reset_collision`` service (std_srvs/Trigger) calls
its ``reset``.
"""
from __future__ import annotations


from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.control import collision_events
from rnea_ros.control.safety import ERROR, OK
from rnea_ros.node import interfaces as io
from rnea_ros.node.messages import qos_profile, wrench_messages, write_wrenches
from rnea_ros.node.serialized import sequence, Serialized

EVENTS_QOS = qos_profile(io.COLLISION_EVENTS.qos)


class ObserverPublishers:
    """The observer's publishers, made by ``outputs`` (``outputs.NodeOutputs``)."""

    def __init__(self, outputs, links):
        self.external = outputs.publisher(io.EXTERNAL_TORQUES)
        self.collision = outputs.publisher(io.COLLISION)
        self.events = outputs.publisher(io.COLLISION_EVENTS)
        self.wrenches = [outputs.wrench_publisher(io.ESTIMATED_WRENCHES, link) for link in links]


class ObserverMessages:
    """The preallocated observer messages of one model, bound to its ``ObserverOutput``."""

    def __init__(self, observer, publishers: ObserverPublishers):
        self.publishers = publishers
        self.external = Serialized(JointState(name=list(observer.joint_names)), {
            'effort': (len(observer.joint_names), sequence('effort'))})
        observer.bind_residual(self.external.arrays['effort'])
        self.wrenches = wrench_messages(observer.links)
        self.collision = Bool()
        self._collision_only = [(publishers.collision, self.collision)]
        # The pairs of a valid residual, in order; the observer's sample count whose wrenches
        # the messages hold (they change only when a sample is integrated, not every cycle).
        self.valid_pairs = [(publishers.external, self.external),
                            *zip(publishers.wrenches, self.wrenches)]
        self._written = -1

    def publications(self, observer, stamp) -> list[tuple]:
        """Return this cycle's (publisher, message) pairs (``stamp``: that of joint_torques)."""
        pairs = []
        if observer.valid:
            self.stamp_valid(observer, stamp)
            pairs += self.valid_pairs
        if observer.changed:
            pairs += self.collision_change(observer)
        return pairs

    def stamp_valid(self, observer, stamp) -> None:
        """Stamp the messages of ``valid_pairs``; write the wrenches of a new sample."""
        self.external.stamp(stamp)
        if observer.samples != self._written:
            write_wrenches(self.wrenches, observer.wrenches, stamp)
            self._written = observer.samples
        else:
            for msg in self.wrenches:
                msg.stamp(stamp)

    def collision_change(self, observer) -> list[tuple]:
        """Return the collision message to publish if its value changed (else nothing)."""
        if not observer.changed:
            return []
        observer.changed = False
        self.collision.data = observer.collision
        return self._collision_only


def event_message(event: dict, name: str, hardware_id: str) -> DiagnosticStatus:
    """Return the ``collision_events`` message of ``event`` (``ObserverOutput.take_events``)."""
    return DiagnosticStatus(
        level=bytes([ERROR if event['kind'] == 'detected' else OK]), name=name,
        message=collision_events.describe(event), hardware_id=hardware_id,
        values=[KeyValue(key=key, value=value)
                for key, value in collision_events.key_values(event).items()])


def stop_trajectory(joint_names, positions, efforts) -> JointTrajectory:
    """Return the trajectory that makes a joint_trajectory_controller hold ``positions``."""
    n = len(joint_names)
    point = JointTrajectoryPoint(positions=[float(x) for x in positions],
                                 velocities=[0.0] * n, accelerations=[0.0] * n,
                                 effort=[float(x) for x in efforts])
    return JointTrajectory(joint_names=list(joint_names), points=[point])
