"""
Serving subscriptions from a thread of their own, outside the rclpy executor.

The node's control inputs (and the benchmark's echo node, for a like-for-like comparison) use
``TakeLoop``. Part of the node: with ``node.py`` and ``parameters.py`` the modules that import
rclpy.
"""
from __future__ import annotations

from contextlib import ExitStack

from rclpy.callback_groups import CallbackGroup
from rclpy.guard_condition import GuardCondition
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile

from rnea_ros.timing import realtime


class NotByExecutor(CallbackGroup):
    """A callback group executors never run: its subscriptions are served by a ``TakeLoop``."""

    def can_execute(self, entity) -> bool:
        return False

    def beginning_execution(self, entity) -> bool:
        return False

    def ending_execution(self, entity) -> None:
        pass


class TakeLoop(realtime.RealtimeThread):
    """
    Subscriptions served from a thread of their own, outside the executor.

    rclpy's executor rebuilds its wait set in Python, wraps every message in a task and wakes
    itself once more per message: hundreds of µs on the path from a message to its callback, with
    the GIL held. This thread instead waits on a wait set holding only its subscriptions (and a
    guard condition to stop it), takes each message and calls its callback at once, as
    ``rclpy.wait_for_message`` does. The subscriptions (``add``, before ``start``) are ordinary
    ones of ``node`` (names, remapping, QoS, graph), in a callback group executors skip. After a
    wake-up they are served in the order they were added, each until it has nothing left.

    ``idle()``, when given, runs after every wake-up, and the wait lasts at most
    ``idle_timeout()`` seconds. An exception escaping a callback or ``idle`` ends the loop:
    ``failure`` keeps it and ``on_failure(exc)`` is called (``realtime.RealtimeThread``).
    """

    def __init__(self, node: Node, *, name: str, priority: int = 0, idle=None,
                 idle_timeout=None, on_failure=None):
        super().__init__(name, priority, on_failure)
        self._node = node
        self._context = node.context
        self._group = NotByExecutor()
        self._wake = GuardCondition(None, None, context=node.context)
        self._entries: list[tuple] = []
        self._idle, self._idle_timeout = idle, idle_timeout

    def add(self, msg_type, topic: str, qos: QoSProfile, callback, raw: bool = False,
            with_info: bool = False, batch_end=None):
        """
        Subscribe ``callback(msg)`` to ``topic`` on this thread; returns the subscription.

        ``raw``: ``callback`` gets the serialized message (bytes), as rclpy's ``raw``.
        ``with_info``: ``callback(msg, info)``, ``info`` the message info rclpy takes with it
        (``source_timestamp``: when the publisher sent it, ``received_timestamp``; ns).
        ``batch_end``: called once the subscription has nothing left, after a wake-up that
        took at least one of its messages (a ``qos`` depth above 1 keeps the messages that came
        while the thread was busy: ``callback`` sees each, ``batch_end`` answers the newest).
        """
        if self._thread.is_alive():
            raise RuntimeError('TakeLoop.add after start')
        subscription = self._node.create_subscription(msg_type, topic, callback, qos,
                                                      callback_group=self._group, raw=raw)
        self._entries.append((subscription, callback, with_info, batch_end))
        return subscription

    def _loop(self) -> None:
        entries = [(k, sub.handle, sub.msg_type, sub.raw, callback, with_info, batch_end)
                   for k, (sub, callback, with_info, batch_end) in enumerate(self._entries)]
        idle, idle_timeout = self._idle, self._idle_timeout
        with ExitStack() as handles:
            for entity in (self._context, self._wake, *(entry[0] for entry in self._entries)):
                handles.enter_context(entity.handle)  # alive while the loop uses them
            wait_set = _rclpy.WaitSet(len(entries), 1, 0, 0, 0, 0, self._context.handle)
            self._started.set()
            while not self._stopping:
                wait_set.clear_entities()
                for entry in entries:
                    wait_set.add_subscription(entry[1])
                wait_set.add_guard_condition(self._wake.handle)
                wait_set.wait(-1 if idle_timeout is None else int(idle_timeout() * 1e9))
                if self._stopping:
                    break
                for index, handle, msg_type, raw, callback, with_info, batch_end in entries:
                    if not wait_set.is_ready('subscription', index):
                        continue
                    took = False
                    while True:
                        taken = handle.take_message(msg_type, raw)
                        if taken is None:
                            break
                        took = True
                        if with_info:
                            callback(*taken)
                        else:
                            callback(taken[0])
                    if took and batch_end is not None:
                        batch_end()
                if idle is not None:
                    idle()

    def _ending(self, exc: BaseException) -> bool:
        return self._stopping or not self._context.ok()  # the wait set ends with the context

    def _wake_up(self) -> None:
        self._wake.trigger()
