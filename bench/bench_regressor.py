"""
Per-sample cost of RobotModel.regressor_batch beside rnea_batch and Pinocchio, same process.

Prints, per robot, the best-of-repeats time per sample of
- ``model.rnea_batch`` (the baseline) and ``model.regressor_batch`` on one thread, writing into
  a reused ``out`` chunk as a streaming caller does, and their ratio (target: <= 3);
- the same two on all cores, for information;
- ``pin.computeJointTorqueRegressor`` called in a Python loop (how one would stream a log
  through Pinocchio from Python), and its ratio to ``regressor_batch``.
Timings interleave the contenders repeat by repeat, so a noisy, shared machine slows them alike;
the one-thread columns and Pinocchio's are CPU time of the calling thread (``time.thread_time``:
preemption by other processes does not count), the all-core columns wall time.
Needs the test dependencies (pin, example-robot-data).

    python bench/bench_regressor.py [--repeats 7] [--batch 4096] [--pin-calls 2000]
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import sys
import time

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'test'))

from harness.oracle import Oracle, robot_path  # noqa: E402, I100
from timed import best_per_call  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402

ROBOTS = (('ur5', False), ('panda', False), ('kinova', False), ('solo12', True),
          ('talos_reduced', True))


def best_times(contenders, repeats: int, clock=time.thread_time) -> list[float]:
    """Best time of each (function, calls) pair, per call, measured alternately."""
    return list(best_per_call(dict(enumerate(contenders)), repeats, clock).values())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeats', type=int, default=7)
    parser.add_argument('--batch', type=int, default=4096, help='samples per batch call')
    parser.add_argument('--pin-calls', type=int, default=2000,
                        help='Pinocchio calls per repeat')
    args = parser.parse_args(argv)
    import pinocchio as pin

    rng = np.random.default_rng(0)
    print(f'pinocchio {pin.__version__}, numpy {np.__version__}, {os.cpu_count()} cpus, '
          f'load {os.getloadavg()[0]:.2f}; ns per sample')
    header = (f'{"robot":14s} {"nv":>3s} {"cols":>4s} | {"rnea 1thr":>9s} {"regr 1thr":>9s} '
              f'{"ratio":>5s} | {"rnea all":>8s} {"regr all":>8s} {"ratio":>5s} | '
              f'{"pin loop":>8s} {"pin/regr":>8s}')
    print(header)
    print('-' * len(header))
    for name, floating in ROBOTS:
        path = robot_path(name)
        model = RobotModel.from_urdf_file(path, floating_base=floating)
        oracle = Oracle(model, path, floating, mimic=False)
        n = args.batch
        Q, V, A = oracle.random_states(rng, n)
        out = np.empty((n, model.nv, 10 * len(model.body_names)))
        model.regressor_batch(Q, V, A, out=out)  # compile the parallel kernels outside timing
        model.rnea_batch(Q, V, A)
        phi = model.inertial_parameters().reshape(-1)
        assert np.allclose(out @ phi, model.rnea_batch(Q, V, A), rtol=1e-10, atol=1e-10)
        rnea1, regr1 = (t / n for t in best_times([
            (lambda: model.rnea_batch(Q, V, A, threads=1), 3),
            (lambda: model.regressor_batch(Q, V, A, threads=1, out=out), 3)], args.repeats))
        rnea_all, regr_all = (t / n for t in best_times([
            (lambda: model.rnea_batch(Q, V, A), 3),
            (lambda: model.regressor_batch(Q, V, A, out=out), 3)], args.repeats,
            time.perf_counter))
        pm, pd = oracle.pm, oracle.pm.createData()
        pin_states = [(oracle.q_to_pin(q), oracle.v_to_pin(v), oracle.v_to_pin(a))
                      for q, v, a in zip(Q[:args.pin_calls], V[:args.pin_calls],
                                         A[:args.pin_calls])]

        def pin_loop():
            for q, v, a in pin_states:
                pin.computeJointTorqueRegressor(pm, pd, q, v, a)

        pin_time, = best_times([(pin_loop, 1)], max(1, args.repeats // 2))
        pin_time /= len(pin_states)
        print(f'{name:14s} {model.nv:3d} {out.shape[2]:4d} | {rnea1 * 1e9:9.0f} '
              f'{regr1 * 1e9:9.0f} {regr1 / rnea1:5.2f} | {rnea_all * 1e9:8.0f} '
              f'{regr_all * 1e9:8.0f} {regr_all / rnea_all:5.2f} | {pin_time * 1e9:8.0f} '
              f'{pin_time / regr1:8.1f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
