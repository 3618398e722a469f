"""
Subscriptions no executor serves: one wait set on them alone, every message taken at once.

rclpy's executor rebuilds its wait set in Python, wraps every message in a task and wakes itself
once more per message: hundreds of µs on the path from a message to its callback, with the GIL
held. ``PolledSubscriptions`` instead waits on a wait set holding only its subscriptions (and,
given, a guard condition that interrupts the wait), takes each message and calls its callback at
once, as ``rclpy.wait_for_message`` does. The subscriptions are ordinary ones of their node
(names, remapping, QoS, graph) in a callback group executors skip (``NotByExecutor``).
"""
from __future__ import annotations

from collections.abc import Callable

from rclpy.callback_groups import CallbackGroup
from rclpy.guard_condition import GuardCondition
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.serialization import deserialize_message

__all__ = ['NotByExecutor', 'PolledSubscriptions']


class NotByExecutor(CallbackGroup):
    """A callback group executors never run: its subscriptions are polled."""

    def can_execute(self, entity) -> bool:
        return False

    def beginning_execution(self, entity) -> bool:
        return False

    def ending_execution(self, entity) -> None:
        pass


class PolledSubscriptions:
    """
    The subscriptions of ``node`` that ``take`` serves and ``wait`` awaits (module docstring).

    ``guard``: a guard condition that also ends a ``wait`` (e.g. to stop a thread waiting).
    """

    def __init__(self, node: Node, guard: GuardCondition | None = None):
        self.node = node
        self._group = NotByExecutor()
        self._guard = guard
        self._entries: list[tuple] = []  # (subscription, topic, callback, with_info, batch_end)
        self._wait_set = None

    def add(self, msg_type, topic: str, qos: QoSProfile, callback: Callable, raw: bool = False,
            with_info: bool = False, batch_end: Callable[[], None] | None = None):
        """
        Subscribe ``callback(msg)`` to ``topic``; returns the subscription.

        ``raw``: ``callback`` gets the serialized message (bytes), as rclpy's ``raw``.
        ``with_info``: ``callback(msg, info)``, ``info`` the message info rclpy takes with it
        (``source_timestamp``: when the publisher sent it, ``received_timestamp``; ns).
        ``batch_end``: called once the subscription has nothing left, after a ``take`` that
        took at least one of its messages (a ``qos`` depth above 1 keeps the messages that came
        while the taker was busy: ``callback`` sees each, ``batch_end`` answers the newest).
        """
        if self._wait_set is not None:
            raise RuntimeError('PolledSubscriptions.add after the first wait')
        subscription = self.node.create_subscription(msg_type, topic, callback, qos,
                                                     callback_group=self._group, raw=raw)
        self._entries.append((subscription, topic, callback, with_info, batch_end))
        return subscription

    def entities(self) -> list:
        """Return what a wait uses (the context, the guard, the subscriptions), to keep alive."""
        guard = [] if self._guard is None else [self._guard]
        return [self.node.context, *guard, *(entry[0] for entry in self._entries)]

    def wait(self, timeout: float | None) -> None:
        """Return once a subscription has a message (or the guard fired), or ``timeout`` s on."""
        if self._wait_set is None:
            self._wait_set = _rclpy.WaitSet(len(self._entries), 0 if self._guard is None else 1,
                                            0, 0, 0, 0, self.node.context.handle)
        wait_set = self._wait_set
        wait_set.clear_entities()
        for entry in self._entries:
            wait_set.add_subscription(entry[0].handle)
        if self._guard is not None:
            wait_set.add_guard_condition(self._guard.handle)
        wait_set.wait(-1 if timeout is None else max(0, int(timeout * 1e9)))

    def take(self, ready_only: bool = False,
             keep: Callable[[str, type, bytes], None] | None = None) -> None:
        """
        Call each subscription's callback with every message it has, in the order added.

        ``ready_only``: only the subscriptions the last ``wait`` found ready. ``keep(topic,
        message type, data)``: given each message serialized, as received, before its callback
        (a recording): taken serialized and decoded once.
        """
        for index, (subscription, topic, callback, with_info, batch_end) in enumerate(
                self._entries):
            if ready_only and not self._wait_set.is_ready('subscription', index):
                continue
            handle, msg_type, raw = subscription.handle, subscription.msg_type, subscription.raw
            took = False
            while (taken := handle.take_message(msg_type, raw or keep is not None)) is not None:
                took = True
                if keep is not None and not raw:
                    keep(topic, msg_type, taken[0])
                    taken = (deserialize_message(taken[0], msg_type), *taken[1:])
                if with_info:
                    callback(*taken)
                else:
                    callback(taken[0])
            if took and batch_end is not None:
                batch_end()
