"""
End-to-end test harness: the real ``rnea_node`` as a subprocess, rclpy in the test, Fast DDS.

Each test gets its own ROS_DOMAIN_ID (within 1..100, held with a lock file while the test runs)
and its own rclpy context on that domain, so tests and concurrent test runs do not hear each other;
discovery is limited to localhost (the launcher of ``rnea_ros.demos.process`` starts both).
Waiting is always on events: spin until a message matching a predicate arrives, with a timeout
whose failure message carries the node's stderr.
"""
from __future__ import annotations

from collections.abc import Callable
import fcntl
import itertools
import json
import os
from pathlib import Path
import signal
import sys
import tempfile

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from rnea_ros.demos.process import ProcessExited, RclpySide, RosProcess

_domains = itertools.count()

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
BEST_EFFORT = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)


_held: dict[int, int] = {}  # domain -> file descriptor of its lock
LOCKS = Path(tempfile.gettempdir()) / 'rnea_ros_test_domains'
DOMAINS_PER_WORKER = 25  # four xdist workers' ranges fit in 1..100


def next_domain_id() -> int:
    """
    Return a domain in 1..100 (Fast DDS ports stay valid) that no other test process holds.

    The domain's lock file is held (``flock``) until ``release_domain``, or this process ends:
    several test runs on one machine never share a domain while both use it. A pytest-xdist
    worker (``PYTEST_XDIST_WORKER``: gw0, gw1, ...) looks in its own range of
    ``DOMAINS_PER_WORKER`` first, so that the workers of one run do not race for the same lock.
    """
    LOCKS.mkdir(exist_ok=True)
    worker = os.environ.get('PYTEST_XDIST_WORKER', '')
    if worker.startswith('gw') and worker[2:].isdigit():
        start = int(worker[2:]) * DOMAINS_PER_WORKER + next(_domains) % DOMAINS_PER_WORKER
    else:
        start = os.getpid() * 37 + next(_domains)
    for step in range(100):
        domain = 1 + (start + step) % 100
        if domain in _held:
            continue
        descriptor = os.open(LOCKS / f'{domain}.lock', os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(descriptor)
            continue
        _held[domain] = descriptor
        return domain
    return 1 + start % 100  # every domain busy: share one, as unlocked runs would


def release_domain(domain: int) -> None:
    """Let other test processes take ``domain`` again."""
    descriptor = _held.pop(domain, None)
    if descriptor is not None:
        os.close(descriptor)  # closing the descriptor releases its flock


class NodeProcess(RosProcess):
    """The node under test, started with ``--ros-args --params-file``; its output in a file."""

    def __init__(self, params: dict, domain: int, tmp_path: Path, name: str = 'rnea',
                 extra_args: tuple[str, ...] = (), command: list[str] | None = None,
                 cwd: Path | None = None, env: dict[str, str] | None = None):
        """
        Start the node with ``params`` (keyed ``/**``: any name and namespace).

        ``command``: run this instead of ``python -m rnea_ros.node --ros-args --params-file
        <params> <extra_args>`` (``params`` and ``extra_args`` are then unused); ``env``:
        variables added to its environment.
        """
        self.params_file = tmp_path / f'{name}_params.yaml'
        # JSON is YAML: no quoting problems for a URDF held in a string.
        self.params_file.write_text(json.dumps({'/**': {'ros__parameters': params}}))
        self.stderr_path = tmp_path / f'{name}_stderr.txt'
        if command is None:
            command = [sys.executable, '-m', 'rnea_ros.node', '--ros-args', '--params-file',
                       str(self.params_file), *extra_args]
        super().__init__(command, domain, self.stderr_path, 'rnea_node', env=env, cwd=cwd)

    def stop(self, timeout: float = 5.0, signum: int = signal.SIGINT) -> int:
        """``signum`` (a clean shutdown), then SIGKILL if it does not exit; the exit code."""
        return super().stop(timeout, signum)


class Collector:
    """Keeps every message received on one topic."""

    def __init__(self, node: Node, msg_type, topic: str, qos: QoSProfile):
        self.messages: list = []
        self.topic = topic
        self.subscription = node.create_subscription(msg_type, topic, self.messages.append, qos)

    def clear(self) -> None:
        self.messages.clear()


class RosHarness:
    """rclpy on a private domain: publishers, collectors, spin-until-predicate, the node."""

    def __init__(self, tmp_path: Path):
        self.tmp_path = tmp_path
        self.domain = next_domain_id()
        os.environ['ROS_DOMAIN_ID'] = str(self.domain)
        self.side = RclpySide(self.domain, 'rnea_test')
        self.context, self.node, self.executor = self.side.context, self.side.node, \
            self.side.executor
        self.processes: list[NodeProcess] = []

    # ------------------------------------------------------------------ the node under test
    def start_node(self, params: dict, extra_args: tuple[str, ...] = (),
                   command: list[str] | None = None, cwd: Path | None = None,
                   env: dict[str, str] | None = None) -> NodeProcess:
        process = NodeProcess(params, self.domain, self.tmp_path, f'rnea{len(self.processes)}',
                              extra_args, command, cwd, env)
        self.processes.append(process)
        return process

    @property
    def process(self) -> NodeProcess:
        return self.processes[-1]

    # ------------------------------------------------------------------ services
    def call(self, srv_type, name: str, request, timeout: float = 90.0):
        """Call service ``name`` once it is available; the response."""
        client = self.node.create_client(srv_type, name)
        try:
            self.spin_until(client.service_is_ready, timeout, what=f'service {name}')
            future = client.call_async(request)
            self.spin_until(future.done, timeout, what=f'the answer of {name}')
            return future.result()
        finally:
            self.node.destroy_client(client)

    # ------------------------------------------------------------------ topics
    def publisher(self, msg_type, topic: str, qos: QoSProfile = RELIABLE):
        return self.node.create_publisher(msg_type, topic, qos)

    def latched_publisher(self, msg_type, topic: str, timeout: float = 60.0):
        """
        Return a latched publisher of ``topic`` once a subscription (the node's) matched it.

        A latched message published before the match waits in the writer's history, but at
        load 5 the match of a new endpoint itself once took longer than a test's 15 s wait
        for the answer: the wait for discovery gets its own, longer, timeout.
        """
        publisher = self.node.create_publisher(msg_type, topic, LATCHED)
        self.spin_until(lambda: publisher.get_subscription_count() > 0, timeout,
                        what=f'a subscription of {topic}')
        return publisher

    def collect(self, msg_type, topic: str, qos: QoSProfile = RELIABLE) -> Collector:
        return Collector(self.node, msg_type, topic, qos)

    def matched(self, collector: Collector, timeout: float = 60.0) -> Collector:
        """
        Return ``collector`` once a publisher (the node's) matched its subscription.

        For an answer the node sends once (volatile): published before the match, it is lost.
        """
        self.spin_until(lambda: collector.subscription.get_publisher_count() > 0, timeout,
                        what=f'a publisher of {collector.topic}')
        return collector

    def spin_until(self, condition: Callable[[], object], timeout: float = 10.0,
                   tick: Callable[[], None] | None = None, what: str = 'condition'):
        """Spin (calling ``tick`` between spins) until ``condition()`` is truthy; return it."""
        try:
            return self.side.spin_until(condition, timeout, what, self.processes, tick, 0.01)
        except (ProcessExited, TimeoutError) as exc:
            raise AssertionError(str(exc)) from None

    def wait_for(self, collector: Collector, predicate: Callable = lambda msg: True,
                 timeout: float = 10.0, tick: Callable[[], None] | None = None,
                 start: int | None = None):
        """Return the first message (from index ``start``, default: new ones only) matching."""
        first = len(collector.messages) if start is None else start
        checked = [first]

        def found():
            messages = collector.messages
            for k in range(checked[0], len(messages)):
                if predicate(messages[k]):
                    return messages[k]
            checked[0] = len(messages)
            return None
        return self.spin_until(found, timeout, tick, f'a message on {collector.topic}')

    def close(self) -> str:
        output = []
        for process in self.processes:
            code = process.stop()
            output.append(f'--- rnea_node (exit {code}) ---\n{process.output()}')
        self.side.close()
        release_domain(self.domain)
        return '\n'.join(output)
