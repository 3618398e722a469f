"""
The rnea node's input callbacks: each message merged into the core, or refused and counted.

``NodeInputs`` holds what the subscriptions of ``RneaNode`` (``rnea_ros.node.node``) call:
joint_states (answered at once with ``cycle_trigger: joint_states`` or rate 0; with the
observer, the batch taken in one go integrated first), the desired accelerations, the planned
trajectory, odometry, the measured wrenches and the base acceleration. A message the core
refuses is counted by topic and reason (``Rejected``) and warned about at most once a second.
It reaches the control state through ``cycles.Cycles`` (its lock, core and cycles), the
collision handling (``collision_handling.CollisionHandling``) and the outputs
(``outputs.NodeOutputs``, a relayed trajectory published) it is given, and the node through a
few public members (``settings``, ``ros_time``, its logger); it keeps the inputs' own account:
the rejections, the joint_states arrival gaps, the arrival clock of ``cycle_trigger:
joint_states``.
"""
from __future__ import annotations

import time

from geometry_msgs.msg import AccelStamped, WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState

from rnea_ros.control.diagnostics import ArrivalGaps, Rejections
from rnea_ros.control.joint_input import Rejected
from rnea_ros.node.collision_handling import CollisionHandling
from rnea_ros.node.cycles import Cycles
from rnea_ros.node.messages import decode_trajectory, DesiredDecoder, set_efforts, to_trajectory
from rnea_ros.node.outputs import NodeOutputs
from rnea_ros.timing import realtime

__all__ = ['NodeInputs']


class NodeInputs:
    """The subscriptions' callbacks of a node: merge each input, or refuse it."""

    def __init__(self, node, cycles: Cycles, collisions: CollisionHandling,
                 outputs: NodeOutputs):
        self._node = node
        self.cycles = cycles
        self._collisions, self._outputs = collisions, outputs
        self.rejections = Rejections()
        self.input_gaps = ArrivalGaps()  # between joint_states messages
        self.answer_each = False  # answer each joint_states message at once
        self.arrival_clock: realtime.ArrivalClock | None = None  # cycle_trigger joint_states
        self._batch_accepted = False  # a joint_states message of this batch was accepted
        self._desired_decoder = DesiredDecoder()  # the inputs thread's alone

    def configure(self, answer_each: bool, arrival_clock: realtime.ArrivalClock | None) -> None:
        """Start the account of a configured node: how joint_states are answered, new gaps."""
        self.answer_each, self.arrival_clock = answer_each, arrival_clock
        self.input_gaps = ArrivalGaps()  # gaps while configured

    def reject(self, topic: str, exc: Rejected, now: float) -> None:
        with self.cycles.lock:
            warning = self.rejections.record(topic, exc.reason, str(exc), now)
        if warning:
            self._node.get_logger().warning(warning)

    def on_joint_states(self, msg: JointState) -> None:
        """
        From the inputs thread: merge; answer at once (cycle_trigger joint_states, rate 0).

        With the observer, the sample is queued for it instead, and the batch of messages taken
        in one go (those that came while the thread was busy) is integrated, then answered
        once, after its last (``on_joint_states_batch``).
        """
        now = time.monotonic()
        batched = self._node.settings.observer
        with self.cycles.lock:
            self.input_gaps.arrival(now)
            core = self.cycles.core
            if core is None:
                return
            answer = False
            try:
                core.on_joint_states(msg.name, msg.position, msg.velocity, msg.effort, now,
                                     msg.header.stamp, observe=not batched)
            except Rejected as exc:
                rejected = exc
            else:
                if self.arrival_clock is not None:  # the clock's next cycle: 1.5 periods on
                    self.arrival_clock.arrived(time.monotonic_ns())
                self._batch_accepted = True
                rejected = None
                answer = not batched and self.answer_each and self.cycles.active
                messages = self.cycles.run_locked(core, now) if answer else None
        if rejected is not None:
            self.reject('joint_states', rejected, now)
        elif answer:
            self.cycles.publish(messages, now)

    def on_joint_states_batch(self) -> None:
        """
        After a batch of joint_states: the observer integrates it, then answer the newest.

        Answered at once with cycle_trigger joint_states or rate 0, if a message was accepted.
        """
        now = time.monotonic()
        with self.cycles.lock:
            core, accepted, self._batch_accepted = self.cycles.core, self._batch_accepted, False
            if core is None:
                return
            core.observe_queued()
            notice = None if core.observer is None else core.observer.notice(now)
            collided = self._collisions.take(core)
            answer = accepted and self.answer_each and self.cycles.active
            messages = self.cycles.run_locked(core, now) if answer else None
        if notice:  # a clock step of the stamps (the observer restarted)
            self._node.get_logger().error(notice)
        self._collisions.send(collided)
        if answer:
            self.cycles.publish(messages, now)

    def on_desired(self, data: bytes) -> None:
        """From the inputs thread: a serialized desired motion, decoded unless too large."""
        if self.cycles.core is None:
            return
        now = time.monotonic()
        try:
            trajectory, start = self._desired_decoder.decode(
                data, self._node.settings.max_trajectory_points)
            if start == 0:  # joint_trajectory_controller's convention: start on receipt
                start = self._node.ros_time()
            with self.cycles.lock:
                self.cycles.core.on_desired(trajectory, start, now)
        except Rejected as exc:
            self.reject('desired_accelerations', exc, now)

    def on_trajectory(self, data: bytes) -> None:
        core = self.cycles.core
        if not self.cycles.active:  # the executor's thread, which also runs the transitions
            return
        if core is None:
            self._node.get_logger().warning('planned_trajectory dropped: no robot model yet')
            return
        with self.cycles.lock:
            measured = core.state.q.copy()
        try:  # outside the lock: a long trajectory must not hold up the cycles
            msg = decode_trajectory(data, self._node.settings.max_trajectory_points)
            efforts = core.trajectory_efforts(to_trajectory(msg), measured)
        except Rejected as exc:
            self.reject('planned_trajectory', exc, time.monotonic())
            return
        set_efforts(msg, efforts)
        with self._collisions.trajectory_lock:  # never after a collision's stop trajectory
            if self._collisions.blocks(core):
                self.reject('planned_trajectory', Rejected(
                    'collision', 'dropped: a collision is latched (reset it first)'),
                    time.monotonic())
                return
            self._collisions.relayed = tuple(msg.joint_names)
            self._outputs.publish_trajectory(msg)

    def on_odometry(self, msg: Odometry) -> None:
        if self.cycles.core is None:
            return
        now = time.monotonic()
        pose, twist = msg.pose.pose, msg.twist.twist
        p, o, lin, ang = pose.position, pose.orientation, twist.linear, twist.angular
        try:
            with self.cycles.lock:
                self.cycles.core.on_odometry((p.x, p.y, p.z), (o.x, o.y, o.z, o.w),
                                             (lin.x, lin.y, lin.z), (ang.x, ang.y, ang.z), now,
                                             msg.header.stamp)
        except Rejected as exc:
            self.reject('odometry', exc, now)

    def on_wrench(self, index: int, topic: str, msg: WrenchStamped) -> None:
        if self.cycles.core is None:
            return
        now = time.monotonic()
        force, torque = msg.wrench.force, msg.wrench.torque
        try:
            with self.cycles.lock:
                self.cycles.core.on_wrench(index, msg.header.frame_id, (
                    force.x, force.y, force.z, torque.x, torque.y, torque.z), now)
        except Rejected as exc:
            self.reject(topic, exc, now)

    def on_base_acceleration(self, msg: AccelStamped) -> None:
        if self.cycles.core is None:
            return
        now = time.monotonic()
        lin, ang = msg.accel.linear, msg.accel.angular
        try:
            with self.cycles.lock:
                stamp = msg.header.stamp
                seconds = stamp.sec + 1e-9 * stamp.nanosec if stamp.sec or stamp.nanosec else None
                self.cycles.core.on_base_acceleration((lin.x, lin.y, lin.z),
                                                      (ang.x, ang.y, ang.z), now, seconds)
        except Rejected as exc:
            self.reject('base_acceleration', exc, now)
