"""Benchmark of the rnea node over real DDS: added latency, 1 kHz regularity, start-up time.

    .venv/bin/python bench/bench_node.py [--samples 2000] [--duration 60]

1. Added latency: one joint_states message at a time (ping-pong), time from publish to the
   receipt of the matching joint_torques (same stamp), for the node (``rate: 0``, answering each
   message) and for an echo node that republishes joint_states on joint_torques without computing
   (same executor, same QoS); added = node - echo, per percentile. Panda (7-DoF arm + finger) and
   talos_reduced (38-DoF free-flyer humanoid).
2. 1 kHz: the node at ``rate: 1000`` for ``--duration`` s with fresh joint_states: achieved rate
   and missed cycles from its diagnostics, receive gaps, resident memory at start and end.
3. Start-up: process start to the first joint_torques, with the numba cache warm and cold (an
   empty NUMBA_CACHE_DIR).
Each target runs on its own ROS_DOMAIN_ID, discovery limited to localhost.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'test'))


# ---------------------------------------------------------------------- the echo node
def echo_main() -> int:
    """Republish joint_states on joint_torques as they come: the cost of ROS alone."""
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from rclpy.node import Node
    from sensor_msgs.msg import JointState

    from rnea_ros.node import COMMAND_QOS, SENSOR_QOS, make_executor
    rclpy.init()
    node = Node('echo')
    publisher = node.create_publisher(JointState, 'joint_torques', COMMAND_QOS)
    node.create_subscription(JointState, 'joint_states', publisher.publish, SENSOR_QOS)
    executor = make_executor()  # the same executor as the node: only the computing differs
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        rclpy.try_shutdown()
    return 0


# ---------------------------------------------------------------------- harness
class Target:
    """A node process on its own domain, and rclpy in this process on the same domain."""

    _domains = iter(range(1 + os.getpid() % 50, 101))

    def __init__(self, command: list[str], env: dict | None = None):
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node
        self.domain = next(self._domains)
        self.env = dict(os.environ, ROS_DOMAIN_ID=str(self.domain),
                        ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', **(env or {}))
        self.log = tempfile.NamedTemporaryFile('w+', suffix='.log', delete=False)
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(command, env=self.env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        self.context = Context()
        rclpy.init(context=self.context, domain_id=self.domain)
        self.node = Node('bench', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_until(self, condition, timeout: float, tick=None) -> None:
        deadline = time.perf_counter() + timeout
        while not condition():
            if tick:
                tick()
            self.executor.spin_once(timeout_sec=0.001)
            if time.perf_counter() > deadline or self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f'timed out; process output:\n{self.log.read()[-3000:]}')

    def rss_kib(self) -> int:
        for line in Path(f'/proc/{self.proc.pid}/status').read_text().splitlines():
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
        return 0

    def close(self) -> None:
        import rclpy
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        os.unlink(self.log.name)


def node_command(params: dict, tmp: Path) -> list[str]:
    path = tmp / f'params_{len(list(tmp.iterdir()))}.yaml'
    path.write_text(json.dumps({'rnea': {'ros__parameters': params}}))
    return [sys.executable, '-m', 'rnea_ros.node', '--ros-args', '--params-file', str(path)]


class Robot:
    def __init__(self, name: str, floating: bool):
        from oracle import robot_path

        from rnea_ros import RobotModel
        self.name = name
        self.floating = floating
        self.xml = robot_path(name).read_text()
        self.model = RobotModel.from_urdf_string(self.xml, floating_base=floating)
        self.joints = [j.name for j in self.model.joints if j.nv == 1]

    def params(self, **extra) -> dict:
        return dict(robot_description=self.xml, floating_base=self.floating, **extra)


class Streams:
    """Publishers of joint_states (+ odometry) and a joint_torques subscriber on a target."""

    def __init__(self, target: Target, robot: Robot):
        from nav_msgs.msg import Odometry
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        node = target.node
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.js = JointState(name=robot.joints)
        rng = np.random.default_rng(0)
        self.js.position = rng.uniform(-1, 1, len(robot.joints)).tolist()
        self.js.velocity = rng.uniform(-1, 1, len(robot.joints)).tolist()
        self.js_pub = node.create_publisher(JointState, 'joint_states', reliable)
        self.odometry = Odometry()
        self.odometry.pose.pose.orientation.w = 1.0
        self.odom_pub = node.create_publisher(Odometry, 'odometry', reliable)
        self.floating = robot.floating
        self.received: list = []
        self.receive_times: list[float] = []
        node.create_subscription(JointState, 'joint_torques', self._on_torques, reliable)
        self.counter = 0

    def _on_torques(self, msg) -> None:
        self.receive_times.append(time.perf_counter())
        self.received.append(msg.header.stamp.nanosec)

    def publish(self) -> int:
        """Publish one sample with a unique stamp; returns the stamp's nanosec."""
        self.counter += 1
        if self.floating and self.counter % 20 == 1:
            self.odom_pub.publish(self.odometry)
        self.js.header.stamp.nanosec = self.counter
        self.js_pub.publish(self.js)
        return self.counter


# ---------------------------------------------------------------------- measurements
def measure_latency(command: list[str], robot: Robot, samples: int,
                    in_node: dict | None = None) -> np.ndarray:
    """Ping-pong latencies [us] of ``samples`` messages after a warm-up; ``in_node`` receives
    the node's own compute-time percentiles (its diagnostics) when given."""
    from diagnostic_msgs.msg import DiagnosticArray
    target = Target(command)
    try:
        streams = Streams(target, robot)
        reports = []
        target.node.create_subscription(DiagnosticArray, '/diagnostics', reports.append, 10)
        target.spin_until(lambda: streams.received, 60.0, streams.publish)
        latencies = []
        for k in range(samples + 200):
            sent = time.perf_counter()
            stamp = streams.publish()
            target.spin_until(lambda: streams.received and streams.received[-1] == stamp, 5.0)
            if k >= 200:
                latencies.append(streams.receive_times[-1] - sent)
        if in_node is not None:
            count = len(reports)
            target.spin_until(lambda: len(reports) > count, 3.0)
            values = {kv.key: kv.value for kv in reports[-1].status[0].values}
            in_node.update(p50=values['compute time p50 [us]'],
                           p99=values['compute time p99 [us]'])
        return np.array(latencies) * 1e6
    finally:
        target.close()


def measure_rate(robot: Robot, tmp: Path, duration: float) -> dict:
    from diagnostic_msgs.msg import DiagnosticArray
    params = robot.params(rate=1000.0, input_timeout=0.5)
    target = Target(node_command(params, tmp))
    try:
        streams = Streams(target, robot)
        reports = []
        target.node.create_subscription(DiagnosticArray, '/diagnostics', reports.append, 10)
        target.spin_until(lambda: streams.received, 60.0, streams.publish)
        rss_start = target.rss_kib()
        first = len(streams.received)
        start = time.perf_counter()
        next_publish = start
        while time.perf_counter() - start < duration:
            if time.perf_counter() >= next_publish:
                streams.publish()
                next_publish += 0.005  # joint_states at 200 Hz keep the input fresh
            target.executor.spin_once(timeout_sec=0.001)
        elapsed = time.perf_counter() - start
        count = len(streams.received) - first
        gaps = np.diff(streams.receive_times[first:]) * 1e3
        rss_end = target.rss_kib()
        n_reports = len(reports)
        target.spin_until(lambda: len(reports) > n_reports, 3.0)
        values = {kv.key: kv.value for kv in reports[-1].status[0].values}
        return dict(received_rate=count / elapsed, node_rate=float(values['rate [Hz]']),
                    cycles=int(values['cycles']), missed=int(values['missed cycles']),
                    gap_p99_ms=float(np.percentile(gaps, 99)), gap_max_ms=float(gaps.max()),
                    rss_start_mib=rss_start / 1024, rss_end_mib=rss_end / 1024,
                    compute_p50=values.get('compute time p50 [us]'),
                    compute_p99=values.get('compute time p99 [us]'),
                    gc=values['gc collections'], gc_max=values['gc max pause [us]'])
    finally:
        target.close()


def measure_startup(robot: Robot, tmp: Path, cold: bool) -> float:
    env = {}
    if cold:
        env['NUMBA_CACHE_DIR'] = tempfile.mkdtemp(prefix='numba_cold_')
    else:
        env['NUMBA_CACHE_DIR'] = os.environ.get('NUMBA_CACHE_DIR', '') or ''
        if not env['NUMBA_CACHE_DIR']:
            del env['NUMBA_CACHE_DIR']
    target = Target(node_command(robot.params(rate=1000.0), tmp), env)
    try:
        streams = Streams(target, robot)
        target.spin_until(lambda: streams.received, 120.0, streams.publish)
        return streams.receive_times[0] - target.started
    finally:
        target.close()


def percentiles(values: np.ndarray) -> tuple[float, float, float]:
    p50, p99 = np.percentile(values, (50, 99))
    return p50, p99, float(values.max())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--samples', type=int, default=2000)
    parser.add_argument('--duration', type=float, default=10.0, help='1 kHz run length [s]')
    parser.add_argument('--echo', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo:
        return echo_main()
    robots = [Robot('panda', False), Robot('talos_reduced', True)]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        print(f'Added latency, joint_states publish -> joint_torques receipt, {args.samples} '
              f'ping-pong samples (us):')
        print(f'{"robot":15} {"":6} {"p50":>8} {"p99":>8} {"max":>8}')
        echo = [sys.executable, str(Path(__file__).resolve()), '--echo']
        for robot in robots:
            in_node: dict = {}
            ours = measure_latency(node_command(robot.params(rate=0.0, input_timeout=1.0),
                                                tmp), robot, args.samples, in_node)
            base = measure_latency(echo, robot, args.samples)
            rows = (('node', percentiles(ours)), ('echo', percentiles(base)))
            for label, (p50, p99, peak) in rows:
                print(f'{robot.name:15} {label:6} {p50:8.1f} {p99:8.1f} {peak:8.1f}')
            added = np.subtract(percentiles(ours), percentiles(base))
            ratio = np.percentile(ours, 50) / np.percentile(base, 50)
            print(f'{robot.name:15} {"added":6} {added[0]:8.1f} {added[1]:8.1f} {"":>8}'
                  f'   node/echo median ratio {ratio:.2f}')
            print(f'{robot.name:15} {"in-node cycle (compute + 2 publishes), its diagnostics":}'
                  f': p50 {in_node["p50"]} p99 {in_node["p99"]}')
        print(f'\n1 kHz run, {args.duration:g} s, panda:')
        result = measure_rate(robots[0], tmp, args.duration)
        for key, value in result.items():
            print(f'  {key:16} {value:.3f}' if isinstance(value, float) else
                  f'  {key:16} {value}')
        missed = 100 * result['missed'] / max(1, result['cycles'] + result['missed'])
        print(f'  missed cycles    {missed:.3f} %, achieved rate {result["node_rate"]:.1f} Hz '
              f'({100 * (result["node_rate"] / 1000 - 1):+.2f} %)')
        print('\nStart-up, process start -> first joint_torques (s):')
        for robot in robots:
            warm = measure_startup(robot, tmp, cold=False)
            cold = measure_startup(robot, tmp, cold=True)
            print(f'  {robot.name:15} warm cache {warm:6.2f}   cold cache {cold:6.2f}   '
                  f'ratio {cold / warm:.1f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
