"""
Benchmark of the rnea node over real DDS: added latency, 1 kHz regularity, start-up time.

    .venv/bin/python bench/bench_node.py [--samples 2000] [--duration 60]
                                         [--parts latency rate startup] [--observer]
                                         [--prediction]

1. Added latency: one joint_states message at a time (ping-pong), time from publish to the
   receipt of the matching joint_torques (same stamp), for the node (``rate: 0``, answering each
   message) and for an echo node that republishes joint_states on joint_torques without computing,
   taking them the same way as the node (``TakeLoop``, same priority, same QoS); added = node -
   echo, per percentile. An echo through rclpy's executor is measured too, as a reference. The
   targets are pinged in turn, in a random order, with a short quiet time after each ping
   (``measure_latency``). Panda (7-DoF arm + finger) and talos_reduced (38-DoF free-flyer).
2. 1 kHz: the node at ``rate: 1000`` for ``--duration`` s with joint_states at 200 Hz (stamped
   with the wall clock, as a driver stamps its measurements): achieved
   rate and missed cycles (and their longest run) from its diagnostics (a report before and one
   after the run), receive gaps here, resident memory once per second. ``--cycle-trigger clock``
   (default here: the regularity of the node's own clock) or ``joint_states`` (the node's
   default: each message answered, the clock's cycles in between). ``--observer``: with the
   momentum observer on (``observer: true``, two wrench links: panda_hand and panda_link7) and
   efforts in the joint_states, so that its compute time includes the observer's.
   ``--prediction``: the 1 kHz run twice, side by side, under ``pd_feedforward`` (``GAINS``):
   ``prediction: none`` then ``model`` (each clock cycle integrates the model over the time
   since the previous one, each sample also the one-step prediction error); their compute p99
   and its ratio, beside the machine's floor (``rnea_ros.timing.floor``) measured after them.
3. Start-up: process start to the first joint_torques, with the numba cache warm and cold (an
   empty NUMBA_CACHE_DIR).
Each target runs on its own ROS_DOMAIN_ID, discovery limited to localhost. The load average and the
machine's floor (``rnea_ros.timing.floor``: a bare 1 kHz loop's wake-up lateness) are printed at
the start and the end: the machine may be shared.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import sys
import tempfile
import time

import numpy as np

from rnea_ros.demos.process import ProcessExited, RclpySide, RosProcess
from rnea_ros.timing.floor import wake_up_lateness

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'test'))


# ---------------------------------------------------------------------- the echo node
def echo_main(mode: str, priority: int) -> int:
    """
    Republish joint_states on joint_torques as they come: the cost of ROS alone.

    ``take``: from a ``TakeLoop`` thread at the node's default priority, exactly as the node takes
    joint_states, so node - echo is the node's own work. ``executor``: through rclpy's
    SingleThreadedExecutor, the usual way to write a node (a reference for the absolute numbers).
    ``priority``: the SCHED_FIFO priority of the ``TakeLoop`` (the node's default).
    """
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.node import Node
    from sensor_msgs.msg import JointState

    from rnea_ros.node.messages import COMMAND_QOS, SENSOR_QOS
    from rnea_ros.node.take_loop import TakeLoop
    rclpy.init()
    node = Node('echo')
    publisher = node.create_publisher(JointState, 'joint_torques', COMMAND_QOS)
    loop = None
    if mode == 'take':
        loop = TakeLoop(node, name='echo', priority=priority)
        loop.add(JointState, 'joint_states', SENSOR_QOS, publisher.publish)
        loop.start()
    else:
        node.create_subscription(JointState, 'joint_states', publisher.publish, SENSOR_QOS)
    executor = SingleThreadedExecutor()  # as the node (rnea_ros.node.main)
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if loop is not None:
            loop.stop()
        rclpy.try_shutdown()
    return 0


# ---------------------------------------------------------------------- harness
class Target:
    """A node process on its own domain, and rclpy in this process on the same domain."""

    _domains = iter(range(1 + os.getpid() % 50, 101))

    def __init__(self, command: list[str], env: dict | None = None):
        self.domain = next(self._domains)
        descriptor, log_path = tempfile.mkstemp(suffix='.log')
        os.close(descriptor)
        self.process = RosProcess(command, self.domain, Path(log_path), 'target', env)
        self.proc, self.started = self.process.proc, self.process.started
        self.side = RclpySide(self.domain, f'bench_{self.domain}')
        self.node, self.executor = self.side.node, self.side.executor

    def spin_until(self, condition, timeout: float, tick=None) -> None:
        try:
            self.side.spin_until(condition, timeout, 'the target', [self.process], tick, 0.001)
        except (ProcessExited, TimeoutError):
            raise RuntimeError(f'timed out; process output:\n{self.output()}') from None

    def output(self) -> str:
        return self.process.output()[-3000:]

    def rss_kib(self) -> int:
        for line in Path(f'/proc/{self.proc.pid}/status').read_text().splitlines():
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
        return 0

    def close(self) -> None:
        self.process.stop()
        self.side.close()
        os.unlink(self.process.log_path)


def node_command(params: dict, tmp: Path) -> list[str]:
    path = tmp / f'params_{len(list(tmp.iterdir()))}.yaml'
    path.write_text(json.dumps({'rnea': {'ros__parameters': params}}))
    return [sys.executable, '-m', 'rnea_ros.node', '--ros-args', '--params-file', str(path)]


class Robot:

    def __init__(self, name: str, floating: bool):
        from harness.oracle import robot_path

        from rnea_ros import RobotModel
        self.name = name
        self.floating = floating
        self.xml = robot_path(name).read_text()
        self.model = RobotModel.from_urdf_string(self.xml, floating_base=floating)
        self.joints = [j.name for j in self.model.joints if j.nv == 1]

    def params(self, **extra) -> dict:
        return dict(robot_description=self.xml, floating_base=self.floating, **extra)


def sample_joint_states(robot: Robot):
    """Make a JointState naming the robot's joints, with fixed random positions and velocities."""
    from sensor_msgs.msg import JointState
    rng = np.random.default_rng(0)
    return JointState(name=robot.joints,
                      position=rng.uniform(-1, 1, len(robot.joints)).tolist(),
                      velocity=rng.uniform(-1, 1, len(robot.joints)).tolist())


class Streams:
    """Publishers of joint_states (+ odometry) and a joint_torques subscriber on a target."""

    def __init__(self, target: Target, robot: Robot, clock_stamps: bool = False):
        from nav_msgs.msg import Odometry
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        node = target.node
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.js = sample_joint_states(robot)
        self.js_pub = node.create_publisher(JointState, 'joint_states', reliable)
        self.odometry = Odometry()
        self.odometry.pose.pose.orientation.w = 1.0
        self.odom_pub = node.create_publisher(Odometry, 'odometry', reliable)
        self.floating = robot.floating
        self.received: list = []
        self.receive_times: list[float] = []
        node.create_subscription(JointState, 'joint_torques', self._on_torques, reliable)
        self.counter = 0
        # Stamp each sample with the wall clock, as a driver stamps its measurements (the 1 kHz
        # part: the prediction integrates the model between the stamps); False: the counter in
        # nanosec, unique, which the ping-pong matches in the answer.
        self.clock_stamps = clock_stamps

    def _on_torques(self, msg) -> None:
        self.receive_times.append(time.perf_counter())
        self.received.append(msg.header.stamp.nanosec)

    def publish(self) -> int:
        """Publish one sample with a unique stamp; returns the stamp's nanosec."""
        self.counter += 1
        if self.floating and self.counter % 20 == 1:
            self.odom_pub.publish(self.odometry)
        if self.clock_stamps:
            self.js.header.stamp.sec, self.js.header.stamp.nanosec = divmod(time.time_ns(),
                                                                            10 ** 9)
        else:
            self.js.header.stamp.nanosec = self.counter
        self.js_pub.publish(self.js)
        return self.counter


# ---------------------------------------------------------------------- measurements
class Pinger:
    """
    Ping-pong on a target: publish joint_states, wait for the joint_torques with its stamp.

    The reply is waited for on a wait set holding only that subscription (as the node's
    ``TakeLoop`` does), not through this process's executor, so the measuring side adds little
    and the same to every target.
    """

    def __init__(self, target: Target, robot: Robot):
        from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState

        from rnea_ros.polling import NotByExecutor
        self.target = target
        node = target.node
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.js = sample_joint_states(robot)
        self.publisher = node.create_publisher(JointState, 'joint_states', reliable)
        self.subscription = node.create_subscription(JointState, 'joint_torques', lambda m: None,
                                                     reliable, callback_group=NotByExecutor())
        self.wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, target.context.handle)
        self.counter = 0
        if robot.floating:  # the node needs odometry before it answers
            from nav_msgs.msg import Odometry
            odometry = Odometry()
            odometry.pose.pose.orientation.w = 1.0
            self.odometry = odometry
            self.odom_pub = node.create_publisher(Odometry, 'odometry', reliable)
        else:
            self.odom_pub = None

    def ping(self, timeout: float = 0.05) -> float | None:
        """One round trip [s], or None if no reply came within ``timeout``."""
        self.counter += 1
        stamp = self.counter
        if self.odom_pub is not None and stamp % 20 == 1:
            self.odom_pub.publish(self.odometry)
        self.js.header.stamp.nanosec = stamp
        handle = self.subscription.handle
        sent = time.perf_counter()
        self.publisher.publish(self.js)
        deadline = sent + timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                return None
            self.wait_set.clear_entities()
            self.wait_set.add_subscription(handle)
            self.wait_set.wait(int(remaining * 1e9))
            while True:
                taken = handle.take_message(self.subscription.msg_type, False)
                if taken is None:
                    break
                if taken[0].header.stamp.nanosec == stamp:
                    return time.perf_counter() - sent

    def connect(self, timeout: float = 60.0) -> None:
        """Ping until the first reply (discovery, the node's start-up)."""
        deadline = time.perf_counter() + timeout
        while self.ping(0.1) is None:
            self.target.executor.spin_once(timeout_sec=0)
            if time.perf_counter() > deadline or self.target.proc.poll() is not None:
                raise RuntimeError(f'no reply; process output:\n{self.target.output()}')


def measure_latency(commands: dict[str, list[str]], robot: Robot, samples: int,
                    in_node: dict | None = None, settle: float = 1e-3) -> dict[str, np.ndarray]:
    """
    Measure ping-pong latencies [us] of each target, interleaved.

    Ping-pong latencies [us] of each target, ``samples`` each after a warm-up, interleaved
    (one ping to each target per round, in a random order) so that load changes on the machine
    hit all alike. Each ping is followed by ``settle`` s of quiet, so that what one target still
    does after its reply (e.g. the executor echo's Python) does not slow the next one: each
    sample sees an idle system, as joint_states at 1 kHz would. ``in_node`` receives the
    compute-time percentiles of the 'node' target's diagnostics.
    """
    from diagnostic_msgs.msg import DiagnosticArray
    targets = {}
    try:
        for label, command in commands.items():
            targets[label] = Target(command)
        pingers = {label: Pinger(target, robot) for label, target in targets.items()}
        reports = []
        if 'node' in targets:
            targets['node'].node.create_subscription(DiagnosticArray, '/diagnostics',
                                                     reports.append, 10)
        for pinger in pingers.values():
            pinger.connect()
        latencies = {label: [] for label in targets}
        order = list(pingers)
        rng = np.random.default_rng(1)
        for k in range(samples + 200):
            rng.shuffle(order)
            for label in order:
                latency = pingers[label].ping(1.0)
                if latency is None:
                    raise RuntimeError(f'{label}: no reply within 1 s')
                if k >= 200:
                    latencies[label].append(latency)
                time.sleep(settle)
        if in_node is not None and 'node' in targets:
            target = targets['node']
            end = time.time()  # the first report stamped later covers every ping

            def stamp(report):
                return report.header.stamp.sec + 1e-9 * report.header.stamp.nanosec
            target.spin_until(lambda: reports and stamp(reports[-1]) > end, 5.0)
            values = {kv.key: kv.value for kv in reports[-1].status[0].values}
            in_node.update(p50=values['compute time p50 [us]'],
                           p99=values['compute time p99 [us]'],
                           scheduling=values.get('scheduling', '?'))
        return {label: np.array(values) * 1e6 for label, values in latencies.items()}
    finally:
        for target in targets.values():
            target.close()


# The node's observer outputs as ``--observer`` runs them (two wrench links on the panda).
OBSERVER = {'observer': True, 'wrench_estimation_links': ['panda_hand', 'panda_link7']}
# ``--prediction``: a feedback law with soft gains (held one tick late on the panda), so that
# ``prediction: none`` and ``model`` run the same law.
GAINS = {'control_law': 'pd_feedforward', 'kp.panda_joint1': 10.0, 'kd.panda_joint1': 1.0}


def measure_rate(robot: Robot, tmp: Path, duration: float, trigger: str = 'clock',
                 settle: float = 3.0, observer: bool = False, extra: dict | None = None
                 ) -> dict:
    """
    Run the node at 1 kHz with joint_states at 200 Hz for ``duration`` s.

    The node at 1 kHz with joint_states at 200 Hz for ``duration`` s (after ``settle`` s):
    cycles, missed cycles and achieved rate from its diagnostics (differences between a report
    before and one after the run), receive gaps here, resident memory once per second.
    """
    from diagnostic_msgs.msg import DiagnosticArray
    params = robot.params(rate=1000.0, input_timeout=0.5, cycle_trigger=trigger,
                          **(OBSERVER if observer else {}), **(extra or {}))
    target = Target(node_command(params, tmp))

    def stamp(report) -> float:
        return report.header.stamp.sec + 1e-9 * report.header.stamp.nanosec

    def values(report) -> dict:
        return {kv.key: kv.value for kv in report.status[0].values}
    try:
        streams = Streams(target, robot, clock_stamps=True)
        if observer:  # the observer integrates samples that carry efforts
            streams.js.effort = robot.model.gravity_torques(
                np.asarray(streams.js.position)).tolist()
        reports = []
        target.node.create_subscription(DiagnosticArray, '/diagnostics', reports.append, 10)
        next_publish = time.perf_counter()

        def stream() -> None:
            nonlocal next_publish
            if time.perf_counter() >= next_publish:
                streams.publish()
                next_publish += 0.005  # joint_states at 200 Hz keep the input fresh
        target.spin_until(lambda: streams.received, 60.0, stream)
        settled = time.time() + settle
        target.spin_until(lambda: reports and stamp(reports[-1]) > settled, settle + 5.0,
                          stream)
        first_report = reports[-1]
        first = len(streams.received)
        rss = [target.rss_kib()]
        start = time.perf_counter()
        next_rss = start + 1.0
        while time.perf_counter() - start < duration:
            stream()
            target.executor.spin_once(timeout_sec=0.001)
            if time.perf_counter() >= next_rss:
                rss.append(target.rss_kib())
                next_rss += 1.0
        elapsed = time.perf_counter() - start
        count = len(streams.received) - first
        gaps = np.diff(streams.receive_times[first:]) * 1e3
        ended = time.time()
        target.spin_until(lambda: stamp(reports[-1]) > ended, 5.0, stream)
        before, after = values(first_report), values(reports[-1])
        cycles = int(after['cycles']) - int(before['cycles'])
        missed = int(after['missed cycles']) - int(before['missed cycles'])
        rss_mib = np.array(rss) / 1024
        return {
            'received_rate': count / elapsed,
            'node_rate': cycles / (stamp(reports[-1]) - stamp(first_report)),
            'cycles': cycles,
            'missed': missed,
            'max_lateness_us': after.get('max lateness [us]'),
            'longest_missed_run': after.get('missed cycles, longest run'),
            'longest_input_gap_ms': after.get('joint_states longest gap [ms]'),
            'gap_p99_ms': float(np.percentile(gaps, 99)),
            'gap_max_ms': float(gaps.max()),
            'rss_start_mib': rss_mib[0],
            'rss_end_mib': rss_mib[-1],
            'rss_max_mib': rss_mib.max(),
            'rss_growth_second_half_mib': rss_mib[-1] - rss_mib[len(rss_mib) // 2],
            'compute_p50': after.get('compute time p50 [us]'),
            'compute_p99': after.get('compute time p99 [us]'),
            'gc': after['gc collections'],
            'gc_max': after['gc max pause [us]'],
            'scheduling': after.get('scheduling'),
        }
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


def print_latency(robots: list[Robot], tmp: Path, samples: int) -> None:
    print(f'Latency, joint_states publish -> joint_torques receipt, {samples} ping-pong samples '
          f'per target, interleaved (us):')
    print(f'{"robot":15} {"target":14} {"p50":>8} {"p99":>8} {"max":>8}')
    script = str(Path(__file__).resolve())
    for robot in robots:
        commands = {
            'node': node_command(robot.params(rate=0.0, input_timeout=1.0), tmp),
            'echo': [sys.executable, script, '--echo', 'take'],
            'executor echo': [sys.executable, script, '--echo', 'executor'],
        }
        in_node: dict = {}
        results = measure_latency(commands, robot, samples, in_node)
        for label, values in results.items():
            p50, p99, peak = percentiles(values)
            print(f'{robot.name:15} {label:14} {p50:8.1f} {p99:8.1f} {peak:8.1f}')
        added = np.subtract(percentiles(results['node']), percentiles(results['echo']))
        ratio = np.percentile(results['node'], 50) / np.percentile(results['echo'], 50)
        print(f'{robot.name:15} {"added":14} {added[0]:8.1f} {added[1]:8.1f} {"":>8}'
              f'   node/echo median ratio {ratio:.2f}')
        print(f'{robot.name:15} in-node cycle (compute + 2 publishes), its diagnostics: '
              f'p50 {in_node["p50"]} p99 {in_node["p99"]}; scheduling {in_node["scheduling"]}')


def print_rate(robot: Robot, tmp: Path, duration: float, trigger: str,
               observer: bool = False) -> None:
    print(f'1 kHz run, {duration:g} s, {robot.name}, cycle_trigger {trigger}'
          + (', observer and 2 wrench links on:' if observer else ':'))
    result = measure_rate(robot, tmp, duration, trigger, observer=observer)
    for key, value in result.items():
        print(f'  {key:16} {value:.3f}' if isinstance(value, float) else f'  {key:16} {value}')
    missed = 100 * result['missed'] / max(1, result['cycles'] + result['missed'])
    print(f'  missed cycles    {missed:.3f} %, achieved rate {result["node_rate"]:.1f} Hz '
          f'({100 * (result["node_rate"] / 1000 - 1):+.2f} %)')


def print_prediction(robot: Robot, tmp: Path, duration: float, trigger: str,
                     observer: bool) -> None:
    """Run the 1 kHz run with prediction off and on, side by side; print compute times, floor."""
    print(f'1 kHz runs, {duration:g} s each, {robot.name}, cycle_trigger {trigger}, '
          f'pd_feedforward' + (', observer and 2 wrench links on' if observer else '')
          + ': prediction none, then model')
    results = {}
    for prediction in ('none', 'model'):
        results[prediction] = measure_rate(robot, tmp, duration, trigger, observer=observer,
                                           extra={**GAINS, 'prediction': prediction})
    bare = wake_up_lateness()
    for prediction, result in results.items():
        print(f'  prediction {prediction:5} compute p50 {result["compute_p50"]} us, p99 '
              f'{result["compute_p99"]} us; missed {result["missed"]} of {result["cycles"]}')
    ratio = float(results['model']['compute_p99']) / float(results['none']['compute_p99'])
    print(f'  compute p99 ratio model/none {ratio:.2f}; beside them, {bare.describe()}')


def print_startup(robots: list[Robot], tmp: Path) -> None:
    print('Start-up, process start -> first joint_torques (s):')
    for robot in robots:
        warm = measure_startup(robot, tmp, cold=False)
        cold = measure_startup(robot, tmp, cold=True)
        print(f'  {robot.name:15} warm cache {warm:6.2f}   cold cache {cold:6.2f}   '
              f'ratio {cold / warm:.1f}')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--samples', type=int, default=2000)
    parser.add_argument('--duration', type=float, default=60.0, help='1 kHz run length [s]')
    parser.add_argument('--parts', nargs='+', choices=('latency', 'rate', 'startup'),
                        default=('latency', 'rate', 'startup'))
    parser.add_argument('--cycle-trigger', choices=('clock', 'joint_states'), default='clock',
                        help='cycle_trigger of the 1 kHz run')
    parser.add_argument('--observer', action='store_true',
                        help='the 1 kHz run with the observer and two wrench links on')
    parser.add_argument('--prediction', action='store_true',
                        help='the 1 kHz run under pd_feedforward with prediction none, then model')
    parser.add_argument('--echo', choices=('take', 'executor'), help=argparse.SUPPRESS)
    parser.add_argument('--echo-priority', type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo:
        from rnea_ros.control.declaration import BY_NAME
        priority = args.echo_priority
        return echo_main(args.echo, BY_NAME['thread_priority'].default if priority is None
                         else priority)
    print(f'load average {" ".join(f"{x:.2f}" for x in os.getloadavg())}, '
          f'{os.cpu_count()} CPUs')
    print(wake_up_lateness().describe(), flush=True)
    robots = [Robot('panda', False), Robot('talos_reduced', True)]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if 'latency' in args.parts:
            print_latency(robots, tmp, args.samples)
        if 'rate' in args.parts and args.prediction:
            print_prediction(robots[0], tmp, args.duration, args.cycle_trigger, args.observer)
        elif 'rate' in args.parts:
            print_rate(robots[0], tmp, args.duration, args.cycle_trigger, args.observer)
        if 'startup' in args.parts:
            print_startup(robots, tmp)
    print(f'load average {" ".join(f"{x:.2f}" for x in os.getloadavg())} (at the end)')
    print(wake_up_lateness().describe(), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
