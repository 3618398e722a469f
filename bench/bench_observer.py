"""
Offline cost of the momentum observer per sample beside ``rnea_batch``'s, in the same process.

Prints, per robot, the best-of-repeats time per sample of ``MomentumObserver.run`` (what
``rnea_bag --observer`` calls: one jitted pass per sample for p = M v, C^T v and g, then the
filter update) and of ``RobotModel.rnea_batch`` on one thread over the same samples, and their
ratio (the target: at most 2); and, for the node, the time per call of ``MomentumObserver.update``
(argument checks included) beside ``RobotModel.rnea``. Timings alternate repeat by repeat, so a
shared machine slows both alike.

    python bench/bench_observer.py [--repeats 5] [--samples 20000] [--calls 5000]
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import sys

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'test'))

from harness.oracle import robot_path  # noqa: E402, I100
from timed import per_call  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402
from rnea_ros.observer import MomentumObserver  # noqa: E402

ROBOTS = ('ur5', 'panda', 'kinova')


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--repeats', type=int, default=5)
    parser.add_argument('--samples', type=int, default=20000)
    parser.add_argument('--calls', type=int, default=5000)
    args = parser.parse_args(argv)
    print(f'load average {os.getloadavg()[0]:.2f}; best of {args.repeats}; '
          f'{args.samples} samples, {args.calls} calls')
    print('robot | run [us/sample] | rnea_batch 1 thread [us/sample] | ratio | '
          'update [us/call] | rnea [us/call]')
    rng = np.random.default_rng(0)
    for name in ROBOTS:
        model = RobotModel.from_urdf_file(robot_path(name))
        n = args.samples
        stamps = np.arange(n) * 1e-3
        Q = np.tile(model.neutral_configuration(), (n, 1)) + rng.uniform(-1, 1, (n, model.nq))
        V, A, E = rng.uniform(-1, 1, (3, n, model.nv))
        observer = MomentumObserver(model, 50.0)
        observer.run(stamps[:2], Q[:2], V[:2], E[:2])  # compiled (or loaded) before timing
        model.rnea_batch(Q[:2], V[:2], A[:2], threads=1)
        run_time = batch_time = update_time = rnea_time = float('inf')
        for _ in range(args.repeats):
            observer.reset()
            run_time = min(run_time, per_call(lambda: observer.run(stamps, Q, V, E)))
            batch_time = min(batch_time, per_call(lambda: model.rnea_batch(Q, V, A, threads=1)))
            observer.reset()
            calls = min(args.calls, n)

            def updates():
                for k in range(calls):
                    observer.update(stamps[k], Q[k], V[k], E[k])

            def rneas():
                for k in range(calls):
                    model.rnea(Q[k], V[k], A[k])
            update_time = min(update_time, per_call(updates) / calls)
            rnea_time = min(rnea_time, per_call(rneas) / calls)
        print(f'{name} | {1e6 * run_time / n:.2f} | {1e6 * batch_time / n:.2f} | '
              f'{run_time / batch_time:.2f} | {1e6 * update_time:.2f} | {1e6 * rnea_time:.2f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
