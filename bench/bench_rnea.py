"""
Per-call cost of RobotModel.rnea / rnea_batch beside Pinocchio's, in the same process.

Prints, per robot, the best-of-repeats time per call of
- ``model.rnea(q, v, a)`` (the public API, argument checks included) vs ``pin.rnea``, and
  ``model.rnea(q, v, a, out=tau)`` (into a preallocated array, as a control loop calls it);
- ``model.rnea_batch`` per sample vs ``pin.rneaInParallel`` with one thread, and, for
  information, both with all cores.
Ratios > 1 mean rnea_ros is faster. Timings interleave the two libraries repeat by repeat, so a
noisy, shared machine slows both alike. Needs the test dependencies (pin, example-robot-data).

    python bench/bench_rnea.py [--repeats 7] [--calls 20000] [--batch 4096]
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import sys

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'test'))

from harness.oracle import Oracle, robot_path  # noqa: E402, I100
from timed import best_per_call  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402

ROBOTS = (('ur5', False), ('panda', False), ('solo12', True), ('talos_reduced', True))


def compare(ours, theirs, repeats: int, calls: int) -> tuple[float, float]:
    """Best time per call of each (function, args), measured alternately."""
    best = best_per_call({'ours': (lambda: ours[0](*ours[1]), calls),
                          'theirs': (lambda: theirs[0](*theirs[1]), calls)}, repeats)
    return best['ours'], best['theirs']


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeats', type=int, default=7)
    parser.add_argument('--calls', type=int, default=20000, help='calls per repeat (single)')
    parser.add_argument('--batch', type=int, default=4096, help='samples per batch call')
    args = parser.parse_args(argv)
    import pinocchio as pin

    rng = np.random.default_rng(0)
    print(f'pinocchio {pin.__version__}, numpy {np.__version__}, {os.cpu_count()} cpus')
    header = (f'{"robot":15s} {"nv":>3s} | {"rnea ns":>8s} {"pin ns":>8s} {"ratio":>6s} | '
              f'{"out= ns":>8s} {"ratio":>6s} | '
              f'{"batch ns/s":>10s} {"pin 1thr":>9s} {"ratio":>6s} | {"batch all":>9s} '
              f'{"pin all":>8s}')
    print(header)
    print('-' * len(header))
    for name, floating in ROBOTS:
        path = robot_path(name)
        model = RobotModel.from_urdf_file(path, floating_base=floating)
        oracle = Oracle(model, path, floating)
        q, v, a = oracle.random_state(rng)
        q_pin, v_pin, a_pin = oracle.q_to_pin(q), oracle.v_to_pin(v), oracle.v_to_pin(a)
        assert np.allclose(model.rnea(q, v, a), oracle.rnea(q, v, a), atol=1e-9)
        single, pin_single = compare((model.rnea, (q, v, a)),
                                     (pin.rnea, (oracle.pm, oracle.pd, q_pin, v_pin, a_pin)),
                                     args.repeats, args.calls)
        tau = np.empty(model.nv)
        into, pin_into = compare((lambda: model.rnea(q, v, a, out=tau), ()),
                                 (pin.rnea, (oracle.pm, oracle.pd, q_pin, v_pin, a_pin)),
                                 args.repeats, args.calls)
        n = args.batch
        Q, V, A = oracle.random_states(rng, n)
        Q_pin = np.asfortranarray(np.array([oracle.q_to_pin(x) for x in Q]).T)
        V_pin = np.asfortranarray(np.array([oracle.v_to_pin(x) for x in V]).T)
        A_pin = np.asfortranarray(np.array([oracle.v_to_pin(x) for x in A]).T)
        tau_pin = np.zeros((oracle.pm.nv, n), order='F')
        pool = pin.ModelPool(oracle.pm, os.cpu_count() or 1)
        model.rnea_batch(Q, V, A, threads=1)
        batch_calls = max(1, args.calls // (10 * n) + 3)
        batch1, pin_batch1 = compare(
            (lambda: model.rnea_batch(Q, V, A, threads=1), ()),
            (lambda: pin.rneaInParallel(1, pool, Q_pin, V_pin, A_pin, tau_pin), ()),
            args.repeats, batch_calls)
        threads = os.cpu_count() or 1
        batch_all, pin_batch_all = compare(
            (lambda: model.rnea_batch(Q, V, A), ()),
            (lambda: pin.rneaInParallel(threads, pool, Q_pin, V_pin, A_pin, tau_pin), ()),
            args.repeats, batch_calls)
        taus = model.rnea_batch(Q, V, A)
        assert np.allclose(taus[:, :], tau_pin.T[:, oracle.v_perm], atol=1e-8)
        print(f'{name:15s} {model.nv:3d} | {single * 1e9:8.0f} {pin_single * 1e9:8.0f} '
              f'{pin_single / single:6.2f} | {into * 1e9:8.0f} {pin_into / into:6.2f} | '
              f'{batch1 / n * 1e9:10.0f} {pin_batch1 / n * 1e9:9.0f} '
              f'{pin_batch1 / batch1:6.2f} | {batch_all / n * 1e9:9.0f} '
              f'{pin_batch_all / n * 1e9:8.0f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
