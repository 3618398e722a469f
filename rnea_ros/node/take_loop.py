"""
Serving subscriptions from a thread of their own, outside the rclpy executor.

The node's control inputs (and the benchmark's echo node, for a like-for-like comparison) use
``TakeLoop``: a real-time thread that waits on its ``rnea_ros.polling.PolledSubscriptions``
alone and serves them at each wake-up. Part of the node: with ``node.py`` and ``parameters.py``
the modules that import rclpy.
"""
from __future__ import annotations

from contextlib import ExitStack

from rclpy.guard_condition import GuardCondition
from rclpy.node import Node
from rclpy.qos import QoSProfile

from rnea_ros.polling import PolledSubscriptions
from rnea_ros.timing import realtime


class TakeLoop(realtime.RealtimeThread):
    """
    Subscriptions served from a thread of their own, outside the executor.

    The subscriptions (``add``, before ``start``) are served as ``PolledSubscriptions`` serves
    them: after a wake-up, those with messages in the order they were added, each until it has
    nothing left. A guard condition wakes the wait to stop the thread.

    ``idle()``, when given, runs after every wake-up, and the wait lasts at most
    ``idle_timeout()`` seconds. An exception escaping a callback or ``idle`` ends the loop:
    ``failure`` keeps it and ``on_failure(exc)`` is called (``realtime.RealtimeThread``).
    """

    def __init__(self, node: Node, *, name: str, priority: int = 0, idle=None,
                 idle_timeout=None, on_failure=None):
        super().__init__(name, priority, on_failure)
        self._context = node.context
        self._wake = GuardCondition(None, None, context=node.context)
        self._subscriptions = PolledSubscriptions(node, self._wake)
        self._idle, self._idle_timeout = idle, idle_timeout

    def add(self, msg_type, topic: str, qos: QoSProfile, callback, raw: bool = False,
            with_info: bool = False, batch_end=None):
        """Subscribe ``callback`` to ``topic`` on this thread (``PolledSubscriptions.add``)."""
        if self._thread.is_alive():
            raise RuntimeError('TakeLoop.add after start')
        return self._subscriptions.add(msg_type, topic, qos, callback, raw, with_info,
                                       batch_end)

    def _loop(self) -> None:
        subscriptions, idle, idle_timeout = self._subscriptions, self._idle, self._idle_timeout
        with ExitStack() as handles:
            for entity in subscriptions.entities():
                handles.enter_context(entity.handle)  # alive while the loop uses them
            self._started.set()
            while not self._stopping:
                subscriptions.wait(None if idle_timeout is None else idle_timeout())
                if self._stopping:
                    break
                subscriptions.take(ready_only=True)
                if idle is not None:
                    idle()

    def _ending(self, exc: BaseException) -> bool:
        return self._stopping or not self._context.ok()  # the wait set ends with the context

    def _wake_up(self) -> None:
        self._wake.trigger()
