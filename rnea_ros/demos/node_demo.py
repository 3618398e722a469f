"""
Node demo: the rnea node on a real robot over DDS, fed a smooth trajectory, summarised live.

``python -m rnea_ros.demos.node_demo`` (console script ``rnea_node_demo``; ``scripts/demo.sh``
runs it):

1. starts the node as its own process, exactly as a user would (``python -m rnea_ros.node
   --ros-args --params-file <yaml>``), with Franka's panda from ``example-robot-data`` (or
   ``--urdf``) in ``robot_description``, on a private ROS_DOMAIN_ID limited to this machine;
2. publishes, at ``--publish-rate``, joint_states of a smooth trajectory inside the joint limits
   (``demo.sinusoidal_trajectory``) and the matching desired accelerations as a one-point
   trajectory_msgs/JointTrajectory, each joint_states sample with a unique stamp;
3. prints once per second: the node's achieved rate, the latency from a joint_states publish to
   the joint_torques answering it (the node answers each sample on arrival, its default
   ``cycle_trigger``), how far the torques are from ``RobotModel.rnea`` here, and the node's
   diagnostics state; at the end a summary with the torques of a few joints;
4. stops the node with SIGINT (a clean shutdown) and exits 0 if the torques it checked (it
   says how many) matched, the node reported no fault and exited cleanly; else prints FAILED
   with the reasons. A stale joint_states input (``joint_states_stale``: this demo's
   publishing stalled on a loaded machine, and the node published its fault output, as it
   should) is reported with both sides' longest gap, not counted as a failure.

Checking the torques: each joint_torques message carries the stamp of the joint_states sample it
answers and the position/velocity it used; the node takes joint_states and the desired
accelerations on different threads, so a cycle uses the newest acceleration it had received when
it ran: one of the samples a little before the answered one, or any published after it until the
answer arrived (under load several are). A message matches when its position/velocity are the
sample's and its effort equals ``RobotModel.rnea`` at one of those accelerations (to 1e-9
relative), tried from the answered sample's outwards.
This module, like ``rnea_ros.node.node``, needs rclpy; ``rnea_ros.demos.library`` is the demo
without ROS.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import zip_longest
import json
import math
import os
from pathlib import Path
import sys
import tempfile
import time

import numpy as np

from rnea_ros.control.declaration import BY_NAME
from rnea_ros.demos.motions import robot_urdf, sinusoidal_trajectory
from rnea_ros.demos.process import RclpySide, RosProcess
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import Bounded, RneaError
from rnea_ros.files import read_text

STATUS_NAME = '/rnea: feed-forward torques'  # the node's full name first
START_TIMEOUT = 180.0  # s: the first start on a machine compiles the kernels
TOLERANCE = 1e-9  # relative to max(1, |tau|)
# The demos' numbers (the closed-loop demo's too): the node's rate as its parameter's bounds.
DURATION = Bounded(float, 0.1, 3600.0)  # s
RATE = Bounded(float, BY_NAME['rate'].low, BY_NAME['rate'].high)  # Hz
PUBLISH_RATE = Bounded(float, 1.0, 10000.0)  # Hz
DOMAIN_ID = Bounded(int, 0, 232)  # ROS_DOMAIN_ID: what DDS can map to ports
SHOWN_JOINTS = 3
# The node's state while its joint_states input is older than its input_timeout
# (rnea_ros.control.safety.JOINT_STATES_STALE): it publishes its fault output, as it should. On
# a loaded machine this demo's own publishing stalls that long at times: not a failure of the
# feed-forward, whose answers are checked one by one.
INPUT_STALLED = 'joint_states_stale'


@dataclass
class Summary:
    """What the demo measured; ``ok`` is its verdict."""

    duration: float = 0.0
    published: int = 0
    received: int = 0
    rate: float = 0.0  # joint_torques per second received here
    node_rate: float = 0.0  # cycles per second, the node's diagnostics
    missed_cycles: str = ''
    latency_us: dict[str, float] = field(default_factory=dict)
    checked: int = 0
    mismatches: int = 0
    max_error: float = 0.0  # N m, max over checked messages of max |tau - rnea|
    state: str = 'no diagnostics'
    message: str = ''
    exit_code: int | None = None
    last: tuple | None = None  # (joint names, node effort, RobotModel.rnea) of the last check
    publish_gap_ms: float = 0.0  # the longest time between two joint_states published here
    node_gap_ms: str = '?'  # the longest between two joint_states the node took, its diagnostics

    @property
    def failures(self) -> list[str]:
        """Return why the feed-forward did not work (none: it did)."""
        failures = []
        if self.checked == 0:
            failures.append('no joint_torques answering a sample of the run was heard')
        if self.mismatches:
            failures.append(f'{self.mismatches} of {self.checked} joint_torques differ from '
                            f'RobotModel.rnea (max {self.max_error:.1e} N m)')
        if self.state not in ('ok', INPUT_STALLED):
            message = f' ({self.message})' if self.message else ''
            failures.append(f'the node reported {self.state}{message}')
        if self.exit_code != 0:
            failures.append(f'the node exited with {self.exit_code} after SIGINT, not 0')
        return failures

    @property
    def ok(self) -> bool:
        return not self.failures


def _percentiles(values) -> dict[str, float]:
    if not values:
        return {}
    p50, p99 = np.percentile(values, (50, 99))
    return {'p50': p50, 'p99': p99, 'max': float(np.max(values))}


def acceleration_window(publish_rate: float) -> int:
    """
    Return how many samples before a state a cycle answering it may take its acceleration from.

    The node applies a desired acceleration until it is ``acceleration_timeout`` old (its
    default), and the two topics travel apart: under load a cycle may answer a state with an
    acceleration published that long before it.
    """
    return math.ceil(BY_NAME['acceleration_timeout'].default * publish_rate)


class NodeDemo:
    """The node process and, in this process, the publishers and checkers talking to it."""

    def __init__(self, model: RobotModel, xml: str, rate: float, publish_rate: float,
                 domain: int, workdir: Path):
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        self.model = model
        self.period = 1.0 / publish_rate
        self.before = acceleration_window(publish_rate)
        self.joints = [joint for joint in model.joints if joint.nv == 1]
        self.names = [joint.name for joint in self.joints]
        params = workdir / 'rnea_params.yaml'  # JSON is YAML: the URDF needs no quoting
        params.write_text(json.dumps({'/**': {'ros__parameters': {
            'robot_description': xml, 'rate': rate}}}))
        self.log_path = workdir / 'rnea_node.log'
        self.process = RosProcess(
            [sys.executable, '-m', 'rnea_ros.node', '--ros-args', '--params-file', str(params)],
            domain, self.log_path, 'the node')
        self.side = RclpySide(domain, 'rnea_node_demo')
        self.node, self.executor = self.side.node, self.side.executor
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.joint_states = self.node.create_publisher(JointState, 'joint_states', reliable)
        self.desired = self.node.create_publisher(JointTrajectory, 'desired_accelerations',
                                                  reliable)
        self.node.create_subscription(JointState, 'joint_torques', self._on_torques, reliable)
        self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics,
                                      reliable)
        self._js = JointState(name=self.names)
        self._point = JointTrajectoryPoint()
        self._trajectory = JointTrajectory(joint_names=self.names, points=[self._point])
        self._joint_q = np.array([joint.idx_q for joint in self.joints])
        self._joint_v = np.array([joint.idx_v for joint in self.joints])
        limits = model.effort_limits[self._joint_v]
        self._limits = np.where(np.isfinite(limits), limits, np.inf)  # the node clips to them
        self.samples: dict[int, tuple] = {}  # stamp -> (q, v, a, send time)
        self.seen: set[int] = set()  # stamps answered already (at rate > 0, several times)
        self.check_from = 0  # stamps up to this one are not checked (start-up)
        self.counter = 0
        self.start = self.next_publish = 0.0
        self.last_publish, self.longest_gap = np.inf, 0.0  # s, between two publishes
        self.diagnostics: dict | None = None
        self.last: tuple | None = None
        self.reset()

    # ------------------------------------------------------------------ traffic
    def reset(self) -> None:
        """Start a new measurement window."""
        self.latencies: list[float] = []
        self.receipts = 0
        self.window_start = time.perf_counter()
        self.errors: list[float] = []
        self.mismatches = 0

    def publish(self, t: float) -> None:
        """Publish the sample at time ``t``: desired accelerations, then joint_states."""
        q, v, a = (row[0] for row in sinusoidal_trajectory(self.model, np.array([t])))
        self.counter += 1
        stamp = self.counter
        now = time.perf_counter()
        self.longest_gap = max(self.longest_gap, now - self.last_publish)
        self.last_publish = now
        self._point.accelerations = a[self._joint_v].tolist()
        self.desired.publish(self._trajectory)
        self._js.header.stamp.sec, self._js.header.stamp.nanosec = divmod(stamp, 10**9)
        self._js.position = q[self._joint_q].tolist()
        self._js.velocity = v[self._joint_v].tolist()
        self.samples[stamp] = (q, v, a, time.perf_counter())
        self.samples.pop(stamp - 5000, None)
        self.joint_states.publish(self._js)

    def _on_torques(self, msg) -> None:
        now = time.perf_counter()
        self.receipts += 1
        stamp = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
        sample = self.samples.get(stamp)
        if sample is None or stamp in self.seen or stamp <= self.check_from:
            return  # not a sample (fault output at start-up), checked already, or start-up
        self.seen.add(stamp)
        self.seen.discard(stamp - 5000)
        q, v, _, sent = sample
        self.latencies.append((now - sent) * 1e6)
        effort = np.asarray(msg.effort)
        same_state = (np.array_equal(np.asarray(msg.position), q[self._joint_q])
                      and np.array_equal(np.asarray(msg.velocity), v[self._joint_v]))
        tolerance = TOLERANCE * max(1.0, float(np.max(np.abs(effort))))
        best, best_tau = np.inf, None
        for candidate in self._candidates(stamp):
            a = self.samples[candidate][2]
            tau = np.clip(self.model.rnea(q, v, a)[self._joint_v], -self._limits, self._limits)
            error = float(np.max(np.abs(effort - tau)))
            if error < best:
                best, best_tau = error, tau
            if best <= tolerance:
                break
        self.errors.append(best)
        if not same_state or best > tolerance:
            self.mismatches += 1
        self.last = (self.names, effort, best_tau)

    def _candidates(self, stamp: int):
        """
        Yield the samples whose acceleration the cycle answering ``stamp`` may have used.

        The answered sample's first, then alternately later and earlier ones: earlier ones down
        to ``before`` before it (the node's acceleration_timeout), later ones up to the newest
        published.
        """
        earlier = range(stamp - 1, max(stamp - self.before, 0) - 1, -1)
        later = range(stamp + 1, self.counter + 1)
        yield stamp
        for pair in zip_longest(later, earlier):
            yield from (s for s in pair if s is not None and s in self.samples)

    def _on_diagnostics(self, msg) -> None:
        for status in msg.status:
            if status.name == STATUS_NAME:
                values = {kv.key: kv.value for kv in status.values}
                self.diagnostics = dict(values, message=status.message,
                                        time=time.perf_counter())

    def spin_until(self, deadline: float, condition=lambda: False) -> bool:
        """Publish on schedule and spin until ``deadline`` or ``condition()``."""
        while time.perf_counter() < deadline:
            if condition():
                return True
            now = time.perf_counter()
            if now >= self.next_publish:
                self.publish(now - self.start)
                self.next_publish = max(self.next_publish + self.period, now)
            self.executor.spin_once(timeout_sec=min(self.period, 0.01) / 2)
            if not self.process.running():
                raise RuntimeError(f'the node exited ({self.process.returncode}):\n'
                                   + self.process.output()[-3000:])
        return condition()

    def log(self) -> str:
        return self.process.output()

    def close(self) -> int | None:
        """SIGINT the node (clean shutdown), then this process's rclpy; the node's exit code."""
        code = self.process.stop()
        self.side.close()
        return code


def run(model: RobotModel, xml: str, duration: float, rate: float, publish_rate: float,
        domain: int, out=None) -> Summary:
    """Run the demo and print as it goes (to ``out``, default stdout); returns the summary."""
    out = sys.stdout if out is None else out
    summary = Summary(duration=duration)
    with tempfile.TemporaryDirectory(prefix='rnea_node_demo_') as workdir:
        demo = NodeDemo(model, xml, rate, publish_rate, domain, Path(workdir))
        try:
            print(f'starting the node (ROS_DOMAIN_ID={domain}, rate {rate:g} Hz; the first '
                  f'start on a machine compiles the kernels) ...', file=out, flush=True)
            demo.start = demo.next_publish = time.perf_counter()
            started = time.perf_counter()
            if not demo.spin_until(started + START_TIMEOUT, lambda: demo.seen):
                raise RuntimeError('no joint_torques from the node within '
                                   f'{START_TIMEOUT:g} s:\n' + demo.log()[-3000:])
            print(f'first joint_torques after {time.perf_counter() - started:.2f} s; publishing '
                  f'joint_states + desired_accelerations at {publish_rate:g} Hz for '
                  f'{duration:g} s', file=out, flush=True)
            print(f'{"t [s]":>6} {"rate [Hz]":>10} {"latency p50/p99 [us]":>21} '
                  f'{"max|tau - rnea|":>16}  state', file=out, flush=True)
            all_latencies, first_counter = [], demo.counter
            demo.check_from = demo.counter  # the samples of the start-up are not checked
            demo.longest_gap = 0.0
            begin = time.perf_counter()
            demo.reset()
            end = begin + duration
            while time.perf_counter() < end:
                demo.spin_until(min(end, demo.window_start + 1.0))
                elapsed = time.perf_counter() - demo.window_start
                latency = _percentiles(demo.latencies)
                all_latencies += demo.latencies
                summary.received += demo.receipts
                summary.checked += len(demo.errors)
                summary.mismatches += demo.mismatches
                if demo.errors:
                    summary.max_error = max(summary.max_error, max(demo.errors))
                state = (demo.diagnostics or {}).get('state', '-')
                print(f'{time.perf_counter() - begin:6.1f} {demo.receipts / elapsed:10.1f} '
                      f'{latency.get("p50", np.nan):10.0f}/{latency.get("p99", np.nan):<10.0f} '
                      f'{max(demo.errors, default=np.nan):16.1e}  {state}',
                      file=out, flush=True)
                demo.reset()
            summary.duration = time.perf_counter() - begin
            summary.published = demo.counter - first_counter
            summary.rate = summary.received / summary.duration
            summary.latency_us = _percentiles(all_latencies)
            summary.last = demo.last
            # A diagnostics report from after the run: the node's view of it.
            finished = time.perf_counter()
            demo.spin_until(finished + 3.0, lambda: demo.diagnostics is not None
                            and demo.diagnostics['time'] > finished)
            if demo.diagnostics is not None:
                summary.state = demo.diagnostics.get('state', '?')
                summary.message = demo.diagnostics.get('message', '')
                summary.node_rate = float(demo.diagnostics.get('rate [Hz]', 'nan'))
                summary.missed_cycles = demo.diagnostics.get('missed cycles', '?')
                summary.node_gap_ms = demo.diagnostics.get('joint_states longest gap [ms]', '?')
            summary.publish_gap_ms = demo.longest_gap * 1e3
        finally:
            summary.exit_code = demo.close()
            node_log = demo.log_path.read_text(errors='replace').strip()
    print_summary(summary, rate, node_log, out)
    return summary


def print_summary(summary: Summary, rate: float, node_log: str, out) -> None:
    print('\nsummary', file=out)
    print(f'  joint_torques received: {summary.received} in {summary.duration:.1f} s '
          f'({summary.rate:.1f} Hz here; the node reports {summary.node_rate:.1f} Hz, missed '
          f'cycles {summary.missed_cycles})', file=out)
    latency = summary.latency_us
    if latency:
        print(f'  latency joint_states -> joint_torques: p50 {latency["p50"]:.0f} us, p99 '
              f'{latency["p99"]:.0f} us, max {latency["max"]:.0f} us', file=out)
    verdict = 'match' if summary.mismatches == 0 and summary.checked else 'DO NOT match'
    print(f'  torques vs RobotModel.rnea: {summary.checked} messages checked, '
          f'{summary.mismatches} mismatches, max |difference| {summary.max_error:.1e} N m: '
          f'{verdict}', file=out)
    if summary.last is not None:
        names, effort, expected = summary.last
        width = max(len(name) for name in names[:SHOWN_JOINTS])
        print(f'  last message, first {SHOWN_JOINTS} joints [N m]:', file=out)
        print(f'    {"joint":<{width}} {"node":>10} {"RobotModel.rnea":>16}', file=out)
        for k in range(min(SHOWN_JOINTS, len(names))):
            print(f'    {names[k]:<{width}} {effort[k]:10.4f} {expected[k]:16.4f}', file=out)
    message = f' ({summary.message})' if summary.message else ''
    print(f'  diagnostics: state {summary.state}{message}', file=out)
    if summary.state == INPUT_STALLED:
        print(f"  the input stalled: this demo's longest gap between two joint_states "
              f"{summary.publish_gap_ms:.0f} ms, the node's {summary.node_gap_ms} ms (a loaded "
              'machine); the node published its fault output meanwhile, as it should', file=out)
    print(f'  node exit code after SIGINT: {summary.exit_code}', file=out)
    if node_log:
        print('  node log:', file=out)
        for line in node_log.splitlines()[-8:]:
            print(f'    {line}', file=out)
    print('OK' if summary.ok else 'FAILED: ' + '; '.join(summary.failures), file=out,
          flush=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='rnea_node_demo',
        description='Start the rnea node on a robot, feed it a smooth trajectory over DDS and '
                    'print its rate, latency and torques against RobotModel.rnea.')
    parser.add_argument('--urdf', type=Path, metavar='FILE',
                        help='fixed-base robot URDF (default: panda from example-robot-data)')
    parser.add_argument('--duration', type=DURATION, default=5.0, metavar='SECONDS',
                        help='how long to stream after the node is up (default: %(default)s); '
                        f'{DURATION.expected}')
    parser.add_argument('--rate', type=RATE, default=500.0, metavar='HZ',
                        help="the node's rate parameter; 0: answer each joint_states message "
                             f'(default: %(default)s); {RATE.expected}')
    parser.add_argument('--publish-rate', type=PUBLISH_RATE, default=500.0, metavar='HZ',
                        help=f'joint_states rate (default: %(default)s); '
                        f'{PUBLISH_RATE.expected}')
    parser.add_argument('--domain-id', type=DOMAIN_ID, default=1 + os.getpid() % 100,
                        help='ROS_DOMAIN_ID of the demo (default: one derived from the process '
                             'id, so as not to talk to a running ROS system); '
                             f'{DOMAIN_ID.expected}')
    return parser


def load_robot(parser: argparse.ArgumentParser, urdf: Path | None):
    """
    Return (model, URDF text) of ``urdf`` (default: panda), or None after saying why not.

    No ``urdf`` and no example-robot-data: ``parser.error`` (exit 2). A file that does not
    load: one line on stderr, None (the demos exit 1).
    """
    urdf = robot_urdf(parser, urdf)
    try:
        xml = read_text(urdf, '--urdf')  # a FIFO or /dev/zero: refused, never read
        model = RobotModel.from_urdf_string(xml)
    except (OSError, RneaError) as exc:
        print(f'{parser.prog}: cannot load {urdf}: {exc}', file=sys.stderr)
        return None
    print(f'robot {model.name!r} from {urdf}: {model.nv} joints')
    return model, xml


def run_demo(parser: argparse.ArgumentParser, args,
             demo: Callable[[RobotModel, str], bool]) -> int:
    """
    Run a node demo as its ``main`` does; return the exit status.

    Load the robot of ``args.urdf`` (the parser refused numbers beyond their bounds), then
    ``demo(model, xml)``: 0 when it says it succeeded, 1 when not or on a RuntimeError (one
    line), 130 on Ctrl-C.
    """
    loaded = load_robot(parser, args.urdf)
    if loaded is None:
        return 1
    try:
        ok = demo(*loaded)
    except RuntimeError as exc:
        print(f'{parser.prog}: {exc}', file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return run_demo(
        parser, args, lambda model, xml: run(model, xml, args.duration, args.rate,
                                             args.publish_rate, args.domain_id).ok)


if __name__ == '__main__':
    sys.exit(main())
