"""
The node's cycle work in-process, without DDS: prediction none and model, beside a baseline tree.

    python bench/bench_cycle.py [--seconds 10] [--block 0.5] [--baseline DIR]

The node's configuration of ``bench_node.py --parts rate --observer --prediction``: the panda,
``rate: 1000``, ``pd_feedforward`` (``GAINS``), the momentum observer with two wrench links
(``OBSERVER``), no desired motion (the damped rest), joint_states with efforts every fifth
cycle (200 Hz). One thread paced at 1 kHz on the steady clock (the node's own sleep, SCHED_FIFO
where permitted) does, as the node's threads do:

- ``input``: on a joint_states cycle, what the inputs thread does under the lock
  (``ControlCore.on_joint_states``, then ``observe_queued``: the observer integrates it);
- ``cycle``: ``Cycles.run_locked`` (``ControlCore.cycle``, the messages' stamping and filling,
  the observer's outputs);
- ``publish``: its messages published by real rclpy publishers in this process (no subscriber:
  the cost of the call, not of the transport).

Each tree runs in a process of its own (``PYTHONPATH`` = the tree), both alive at once and
taking turns of ``--block`` s (baseline, this tree; prediction none, model), so that the
machine's load hits both alike; percentiles are over every turn's cycles. ``--baseline DIR``: a
checkout of the code to compare with (e.g. ``git archive main | tar -x -C DIR``); without it
this tree alone. The load average and the machine's floor
(``rnea_ros.timing.floor``) are printed at the start and the end: the machine may be shared.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import subprocess
import sys
import time

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PARTS = ('input', 'cycle', 'publish')
PREDICTIONS = ('none', 'model')


class Workload:
    """One configuration's core, messages and rclpy publishers, its cycles run by ``block``."""

    def __init__(self, node, prediction: str):
        from bench_node import GAINS, OBSERVER
        from harness.oracle import robot_path

        from rnea_ros import RobotModel
        from rnea_ros.control.core import ControlCore
        from rnea_ros.control.settings import Settings
        from rnea_ros.node import messages
        from rnea_ros.node.cycles import Cycles
        from rnea_ros.node.outputs import NodeOutputs
        # What Cycles.publish hands a publisher (the message itself in a tree before payload).
        self.payload = getattr(messages, 'payload', lambda msg: msg)
        model = RobotModel.from_urdf_string(robot_path('panda').read_text())
        self.names = [joint.name for joint in model.joints if joint.nv == 1]
        settings = Settings().updated({'rate': 1000.0, 'input_timeout': 0.5, **OBSERVER,
                                       **GAINS, 'prediction': prediction},
                                      self.names).validate()
        self.core = ControlCore(model, settings)
        outputs = NodeOutputs(node, 'rnea')
        outputs.create(settings)
        self.clock = 0.0
        self.cycles = Cycles(1000.0, lambda: self.clock, self.stamp)
        self.cycles.install(self.core, *outputs.messages_of(self.core))
        self.cycles.activate()
        rng = np.random.default_rng(0)
        q, v = rng.uniform(-1, 1, len(self.names)), rng.uniform(-1, 1, len(self.names))
        self.sample = (q.tolist(), v.tolist(), model.gravity_torques(q).tolist())
        self.block(0.5)  # warm up

    def stamp(self):
        from builtin_interfaces.msg import Time
        return Time(sec=int(self.clock), nanosec=int(self.clock % 1.0 * 1e9))

    def block(self, seconds: float) -> dict[str, list[float]]:
        """Run ``seconds`` of cycles at 1 kHz; the times [us] of each part (module docstring)."""
        from rnea_ros.timing.clock import new_timespec, sleep_until
        cycles, core, names, sample = self.cycles, self.core, self.names, self.sample
        count = int(1000 * seconds)
        times = np.zeros((count, len(PARTS)))
        timespec, period = new_timespec(), 1_000_000
        deadline = time.monotonic_ns() + period
        for k in range(count):
            sleep_until(deadline, timespec)
            deadline += period
            now = self.clock = time.monotonic()
            begin = time.perf_counter()
            if k % 5 == 0:
                with cycles.lock:
                    core.on_joint_states(names, *sample, now, self.stamp(), observe=False)
                    core.observe_queued()
            taken = time.perf_counter()
            with cycles.lock:
                messages = cycles.run_locked(core, now)
            computed = time.perf_counter()
            for publisher, msg in messages or ():
                publisher.publish(self.payload(msg))
            times[k] = (taken - begin, computed - taken, time.perf_counter() - computed)
        times *= 1e6
        return {'input': times[::5, 0].tolist(), 'cycle': times[:, 1].tolist(),
                'publish': times[:, 2].tolist()}


def child() -> int:
    """Serve blocks: read 'PREDICTION SECONDS' lines, answer each with its times as JSON."""
    sys.path.insert(0, str(ROOT / 'test'))
    sys.path.insert(0, str(HERE))
    import rclpy

    from rnea_ros.timing.clock import set_timer_slack
    from rnea_ros.timing.scheduling import set_fifo_priority
    rclpy.init()
    node = rclpy.create_node('bench_cycle')
    try:
        workloads = {prediction: Workload(node, prediction) for prediction in PREDICTIONS}
        set_timer_slack()
        set_fifo_priority(80)  # as the node's control thread, where permitted
        print('ready', flush=True)
        for line in sys.stdin:
            prediction, seconds = line.split()
            print(json.dumps(workloads[prediction].block(float(seconds))), flush=True)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


class Tree:
    """A child process running the bench on a tree's code (``PYTHONPATH`` = the tree)."""

    def __init__(self, tree: Path):
        self.tree = tree
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), '--child'],
            env={**os.environ, 'PYTHONPATH': str(tree)}, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)
        self.results: dict[str, dict[str, list]] = {p: {} for p in PREDICTIONS}

    def ready(self) -> None:
        if self.process.stdout.readline().strip() != 'ready':
            sys.exit(f'the bench on {self.tree} did not start')

    def block(self, prediction: str, seconds: float) -> None:
        self.process.stdin.write(f'{prediction} {seconds}\n')
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            sys.exit(f'the bench on {self.tree} exited')
        for part, values in json.loads(line).items():
            self.results[prediction].setdefault(part, []).extend(values)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def percentiles(values) -> tuple[float, float]:
    p50, p99 = np.percentile(values, (50, 99))
    return float(p50), float(p99)


def report(results: dict[str, dict]) -> None:
    """Print p50/p99 per tree, prediction and part, and this tree / baseline side by side."""
    trees = list(results)
    print(f'{"prediction":10} {"part":8} ' + ' '.join(f'{tree:>21}' for tree in trees)
          + ('   ratio this/baseline (p50, p99)' if len(trees) == 2 else ''))
    print(f'{"":19} ' + ' '.join(f'{"p50 [us]":>10} {"p99 [us]":>10}' for _ in trees))
    for prediction in PREDICTIONS:
        for part in (*PARTS, 'total'):
            figures = []
            for tree in trees:
                runs = results[tree][prediction]
                if part == 'total':  # a cycle's run_locked + publish, as the node times it
                    values = np.add(runs['cycle'], runs['publish'])
                else:
                    values = runs[part]
                figures.append(percentiles(values))
            line = f'{prediction:10} {part:8} ' + ' '.join(
                f'{p50:10.1f} {p99:10.1f}' for p50, p99 in figures)
            if len(trees) == 2:
                (b50, b99), (t50, t99) = figures
                line += f'   {t50 / b50:5.2f} {t99 / b99:5.2f}'
            print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=10.0,
                        help='of cycles per tree and prediction')
    parser.add_argument('--block', type=float, default=0.5, help='s of cycles per turn')
    parser.add_argument('--baseline', type=Path, help='a tree of the code to compare with')
    parser.add_argument('--child', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child()
    from rnea_ros.timing.floor import wake_up_lateness
    print(f'load average {" ".join(f"{x:.2f}" for x in os.getloadavg())}, '
          f'{os.cpu_count()} CPUs')
    print(wake_up_lateness().describe(), flush=True)
    paths = {} if args.baseline is None else {'baseline': args.baseline.resolve()}
    paths['this tree'] = ROOT
    trees = {label: Tree(path) for label, path in paths.items()}
    try:
        for tree in trees.values():
            tree.ready()
        for _ in range(max(1, round(args.seconds / args.block))):
            for prediction in PREDICTIONS:
                for tree in trees.values():
                    tree.block(prediction, args.block)
    finally:
        for tree in trees.values():
            tree.close()
    print(f'panda, 1 kHz, pd_feedforward, observer with 2 wrench links, joint_states at 200 Hz; '
          f'{args.seconds:g} s per tree and prediction in turns of {args.block:g} s; "input": '
          f'the joint_states cycles')
    report({label: tree.results for label, tree in trees.items()})
    print(f'load average {" ".join(f"{x:.2f}" for x in os.getloadavg())} (at the end)')
    print(wake_up_lateness().describe(), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
