"""
``PolledInputs``: the robot's command inputs, taken by the stepping thread itself.

As a ros2_control loop reads its command buffers in its own cycle, the stepping thread takes
what came since the last step before each step, from a node no executor serves: rclpy's
executor costs hundreds of µs of Python per message with the GIL held, two messages a step,
which made real-time answers arrive a step later and lockstep steps take ~5 ms. In lockstep
the stepping thread also waits for the node's answer here, on a wait set of these
subscriptions alone.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from rclpy.context import Context
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.serialization import deserialize_message


class PolledInputs:
    """Subscriptions of a node of their own; ``take`` serves them, ``wait`` awaits one."""

    def __init__(self, context: Context, namespace: str,
                 inputs: Sequence[tuple[type, str, Callable]], qos: QoSProfile):
        """Subscribe each (message type, topic, callback) of ``inputs``, in that order."""
        self.node = Node('rnea_sim_inputs', context=context, namespace=namespace)
        self._context = context
        self._entries = []
        for msg_type, topic, callback in inputs:
            subscription = self.node.create_subscription(msg_type, topic, callback, qos)
            self._entries.append((topic, subscription.handle, msg_type, callback))
        self._wait_set = None

    def take(self, keep: Callable[[str, type, bytes], None] | None = None) -> None:
        """
        Call each input's callback with every message it received since the last take.

        ``keep(topic, message type, data)``: given each message serialized, as received,
        before its callback (a recording): taken serialized and decoded once.
        """
        if keep is None:
            for _, handle, msg_type, callback in self._entries:
                while (taken := handle.take_message(msg_type, False)) is not None:
                    callback(taken[0])
            return
        for topic, handle, msg_type, callback in self._entries:
            while (taken := handle.take_message(msg_type, True)) is not None:
                keep(topic, msg_type, taken[0])
                callback(deserialize_message(taken[0], msg_type))

    def wait(self, timeout: float) -> None:
        """Return once an input has a message to take, or after ``timeout`` s."""
        if self._wait_set is None:
            self._wait_set = _rclpy.WaitSet(len(self._entries), 0, 0, 0, 0, 0,
                                            self._context.handle)
        wait_set = self._wait_set
        wait_set.clear_entities()
        for _, handle, _, _ in self._entries:
            wait_set.add_subscription(handle)
        wait_set.wait(max(0, int(timeout * 1e9)))

    def destroy(self) -> None:
        self.node.destroy_node()
