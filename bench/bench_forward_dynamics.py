"""
Per-call cost of RobotModel.forward_dynamics beside Pinocchio's aba, in the same process.

Prints, per robot, the best-of-repeats time per call of
- ``model.forward_dynamics(q, v, tau, out=a)`` (the public API, argument checks included, into
  a preallocated array as a control loop calls it) vs ``pin.aba``, and their ratio;
- M^-1 (tau - h) through the library's ``mass_matrix`` and ``rnea`` (numpy's solve), and its
  ratio to ``pin.aba``;
- ``model.rnea(q, v, a, out=tau)`` for scale.
A ratio is our time over Pinocchio's: below 1 means rnea_ros is faster. The calls interleave
repeat by repeat, so a noisy, shared machine slows all alike. Pinocchio's aba refuses mimic
joints: the panda's finger is an independent joint in its model (9 DoF against our 8 with the
coupled finger, which costs us one more O(n) solve). Needs the test dependencies (pin,
example-robot-data).

    python bench/bench_forward_dynamics.py [--repeats 7] [--calls 20000]
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'test'))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_rnea import ROBOTS  # noqa: E402
from harness.oracle import Oracle, robot_path  # noqa: E402
import numpy as np  # noqa: E402
from timed import best_per_call  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402


def dense_forward_dynamics(model: RobotModel, q, v, tau) -> np.ndarray:
    """M^-1 (tau - h) through mass_matrix and rnea: the way before forward_dynamics."""
    return np.linalg.solve(model.mass_matrix(q), tau - model.rnea(q, v, model._zeros_v))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeats', type=int, default=7)
    parser.add_argument('--calls', type=int, default=20000, help='calls per repeat')
    args = parser.parse_args(argv)
    import pinocchio as pin

    rng = np.random.default_rng(0)
    print(f'pinocchio {pin.__version__}, numpy {np.__version__}, {os.cpu_count()} cpus, '
          f'load average {os.getloadavg()[0]:.2f}')
    header = (f'{"robot":15s} {"nv":>3s} | {"fd ns":>8s} {"pin.aba ns":>10s} {"ratio":>6s} | '
              f'{"M^-1(tau-h) ns":>14s} {"ratio":>6s} | {"rnea ns":>8s}')
    print(header)
    print('-' * len(header))
    for name, floating in ROBOTS:
        path = robot_path(name)
        model = RobotModel.from_urdf_file(path, floating_base=floating)
        oracle = Oracle(model, path, floating, mimic=False)
        q, v, _ = oracle.random_state(rng)
        tau = rng.standard_normal(model.nv)
        q_pin, v_pin = oracle.q_to_pin(q), oracle.v_to_pin(v)
        tau_pin = np.zeros(oracle.pm.nv)
        tau_pin[oracle.v_perm] = tau
        pm, pd = oracle.pm, oracle.pd
        acceleration = np.empty(model.nv)
        torque = np.empty(model.nv)
        fd = model.forward_dynamics(q, v, tau)
        assert np.allclose(fd, dense_forward_dynamics(model, q, v, tau), rtol=1e-8, atol=1e-8)
        best = best_per_call({
            'fd': (lambda: model.forward_dynamics(q, v, tau, out=acceleration), args.calls),
            'pin': (lambda: pin.aba(pm, pd, q_pin, v_pin, tau_pin), args.calls),
            'dense': (lambda: dense_forward_dynamics(model, q, v, tau),
                      max(1, args.calls // 10)),
            'rnea': (lambda: model.rnea(q, v, fd, out=torque), args.calls),
        }, args.repeats)
        print(f'{name:15s} {model.nv:3d} | {best["fd"] * 1e9:8.0f} {best["pin"] * 1e9:10.0f} '
              f'{best["fd"] / best["pin"]:6.2f} | {best["dense"] * 1e9:14.0f} '
              f'{best["dense"] / best["pin"]:6.2f} | {best["rnea"] * 1e9:8.0f}')
    print(f'load average at the end {os.getloadavg()[0]:.2f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
