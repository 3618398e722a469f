"""
``PolledInputs``: the robot's command inputs, taken by the stepping thread itself.

As a ros2_control loop reads its command buffers in its own cycle, the stepping thread takes
what came since the last step before each step, from a node no executor serves
(``rnea_ros.polling``): rclpy's executor costs hundreds of µs of Python per message with the
GIL held, two messages a step, which made real-time answers arrive a step later and lockstep
steps take ~5 ms. In lockstep the stepping thread also waits for the node's answer here, on a
wait set of these subscriptions alone.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from rclpy.context import Context
from rclpy.node import Node
from rclpy.qos import QoSProfile

from rnea_ros.polling import PolledSubscriptions


class PolledInputs:
    """Subscriptions of a node of their own; ``take`` serves them, ``wait`` awaits one."""

    def __init__(self, context: Context, namespace: str,
                 inputs: Sequence[tuple[type, str, Callable]], qos: QoSProfile):
        """Subscribe each (message type, topic, callback) of ``inputs``, in that order."""
        self.node = Node('rnea_sim_inputs', context=context, namespace=namespace)
        self._subscriptions = PolledSubscriptions(self.node)
        for msg_type, topic, callback in inputs:
            self._subscriptions.add(msg_type, topic, qos, callback)

    def take(self, keep: Callable[[str, type, bytes], None] | None = None) -> None:
        """
        Call each input's callback with every message it received since the last take.

        ``keep(topic, message type, data)``: given each message serialized, as received,
        before its callback (a recording): taken serialized and decoded once.
        """
        self._subscriptions.take(keep=keep)

    def wait(self, timeout: float) -> None:
        """Return once an input has a message to take, or after ``timeout`` s."""
        self._subscriptions.wait(timeout)

    def destroy(self) -> None:
        self.node.destroy_node()
