"""
The rclpy side of ``rnea_ctl``: one context and node; services and topics with deadlines.

A node that does not answer is ``Unreachable`` (exit 1), naming the node or topic and how long
was waited. Waiting is on events: the executor spins until a future is done, a service or a
subscriber is there, or a message came. SIGINT stays Python's (KeyboardInterrupt: exit 130).
Where a node is up, a call costs the start of Python and rclpy and the discovery of the
endpoints: a client is made once per service and kept for the session, and ``expect`` makes
the clients of a command together, so that their discovery overlaps instead of adding up.
The node is the narrowest rclpy makes: no parameter services, no ``~/get_type_description``,
no rosout; numpy, which rclpy imports for message types no command makes, is imported at its
first use only (``Deferred``). A publisher's wait wakes on its matched event; a service's,
which no event tells, looks at the graph every ``DISCOVERY_TICK``.
"""
from __future__ import annotations

from collections.abc import Callable
import importlib
import importlib.util
import sys
import time
import types

from rnea_ros.ctl.names import DIAGNOSTICS_TOPIC, STATUS_TOPIC
from rnea_ros.errors import RneaError

TICK = 0.05  # s: the longest a wait spins before it looks at its deadline again
DISCOVERY_TICK = 0.005  # s: between two looks at the graph while a service is not found yet
# rosidl_generator_py's package imports its code generator (lark, empy) beside the type support
# importer the messages need: ~35 ms of CPU per call (the node made in 20 ms instead of 54),
# for nothing a client does.
GENERATOR = 'rosidl_generator_py.generate_py_impl'
TYPE_DESCRIPTION = 'start_type_description_service'  # rclpy's parameter: a service per node
# rclpy's type support imports two message types with fixed-size arrays (a service event's
# client id, a UUID), whose modules import numpy: ~0.1 s of CPU per call, half of importing
# rclpy, for messages no command makes. It is imported when one is made (``defer``).
DEFERRED = 'numpy'


class Deferred(types.ModuleType):
    """A module in ``sys.modules`` that imports the real one at its first use, then is it."""

    def __getattr__(self, attribute: str):
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        real = importlib.import_module(self.__name__)
        self.__dict__.update(vars(real))
        return getattr(real, attribute)


def defer(name: str) -> None:
    """Put a ``Deferred`` module ``name`` in ``sys.modules`` unless it is imported already."""
    spec = None if name in sys.modules else importlib.util.find_spec(name)
    if spec is not None:
        module = Deferred(name)
        module.__spec__ = spec  # what ``import name`` looks at: found, not loaded
        sys.modules[name] = module


class Unreachable(RneaError):
    """A node, service or topic did not answer in time (``rnea_ctl`` exit 1)."""


class Refused(RneaError):
    """The node answered no: a transition, a parameter, a reset it refused (exit 1)."""


class Session:
    """rclpy on the environment's ROS_DOMAIN_ID: a node ``rnea_ctl`` and its executor."""

    def __init__(self, timeout: float):
        if 'rosidl_generator_py' not in sys.modules:  # None: its package skips it (ImportError)
            sys.modules.setdefault(GENERATOR, None)
        defer(DEFERRED)
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node
        from rclpy.parameter import Parameter
        self.timeout = timeout
        self.context = Context()
        # args: not sys.argv, whose NAME:=VALUE rcl would take for (deprecated) remap rules.
        rclpy.init(args=['rnea_ctl'], context=self.context,
                   signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
        self.node = Node('rnea_ctl', context=self.context, start_parameter_services=False,
                         enable_rosout=False, use_global_arguments=False,
                         parameter_overrides=[Parameter(TYPE_DESCRIPTION, value=False)])
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._clients: dict[str, object] = {}  # service -> its client, discovered once

    def expect(self, *services) -> None:
        """Make the clients of ``(srv_type, service)`` pairs now: discovered side by side."""
        for srv_type, service in services:
            self._client(srv_type, service)

    def _client(self, srv_type, service: str):
        if service not in self._clients:
            self._clients[service] = self.node.create_client(srv_type, service)
        return self._clients[service]

    def close(self) -> None:
        """Destroy the node and shut the context down."""
        import rclpy
        self.executor.shutdown()
        self.node.destroy_node()  # and its clients
        rclpy.try_shutdown(context=self.context)

    def spin_until(self, condition: Callable[[], object], what: str,
                   timeout: float | None = None, tick: float = TICK):
        """
        Spin until ``condition()`` is truthy and return it; ``Unreachable`` at the deadline.

        It looks at ``condition()`` after each event the executor serves, and at least every
        ``tick`` seconds (for a condition no event announces).
        """
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while True:
            result = condition()
            if result:
                return result
            if time.monotonic() > deadline:
                raise Unreachable(f'{what} within {timeout:g} s')
            self.executor.spin_once(timeout_sec=tick)

    def call(self, srv_type, service: str, request, node: str):
        """Call ``service`` of ``node`` once it is there; the response."""
        client = self._client(srv_type, service)
        self.spin_until(client.service_is_ready, f'node {node} not found: no service {service}',
                        tick=DISCOVERY_TICK)
        future = client.call_async(request)
        self.spin_until(future.done, f'node {node} did not answer on {service}')
        return future.result()

    def publisher(self, msg_type, topic: str, depth: int = 10):
        """Return a reliable publisher on ``topic`` once a subscriber matched it."""
        from rclpy.event_handler import PublisherEventCallbacks
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        try:  # the matched event wakes the wait the moment a subscriber is there
            events, tick = PublisherEventCallbacks(matched=lambda status: None), TICK
        except TypeError:  # an rclpy without matched events (Humble): look every tick
            events, tick = None, DISCOVERY_TICK
        publisher = self.node.create_publisher(
            msg_type, topic, QoSProfile(depth=depth, reliability=ReliabilityPolicy.RELIABLE),
            event_callbacks=events)
        self.spin_until(publisher.get_subscription_count,
                        f'nothing subscribes to {topic} (is the node running?)', tick=tick)
        return publisher

    def delivered(self, publisher, topic: str) -> None:
        """Return once every matched subscriber acknowledged what ``publisher`` sent."""
        from rclpy.duration import Duration
        if not publisher.wait_for_all_acked(Duration(seconds=self.timeout)):
            raise Unreachable(f'the subscribers of {topic} did not acknowledge within '
                              f'{self.timeout:g} s')

    def diagnostics(self, node: str, each: Callable[[object], bool],
                    timeout: float | None = None) -> None:
        """
        Call ``each(status)`` with each of ``node``'s statuses until it returns False.

        ``Unreachable`` when none came within ``timeout`` (None: ``self.timeout``).

        The statuses come from the node's latched ``~/status`` (its last report, as soon as the
        subscription matches) or, from a node without it, /diagnostics (the next report): of
        the two, the one that gives the first, only. A status is the node's when its name is
        ``<node>: ...`` (the node's fully qualified name first, as the node names its status).
        """
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        statuses: list = []
        prefix = node + ': '
        chosen: list[str] = []  # the topic that gave the first status

        def keep(topic: str) -> Callable[[object], None]:
            def taken(message) -> None:
                ours = [s for s in message.status if s.name.startswith(prefix)]
                if ours and chosen in ([], [topic]):
                    chosen[:] = [topic]
                    statuses.extend(ours)
            return taken
        sources = ((f'{node}/{STATUS_TOPIC}', DurabilityPolicy.TRANSIENT_LOCAL),
                   (DIAGNOSTICS_TOPIC, DurabilityPolicy.VOLATILE))
        subscriptions = [self.node.create_subscription(
            DiagnosticArray, topic, keep(topic),
            QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=durability))
            for topic, durability in sources]
        try:
            while True:
                self.spin_until(lambda: statuses, f'node {node} not found: no status of it on '
                                f'{node}/{STATUS_TOPIC} or {DIAGNOSTICS_TOPIC}', timeout)
                if not each(statuses.pop(0)):
                    return
        finally:
            for subscription in subscriptions:
                self.node.destroy_subscription(subscription)
