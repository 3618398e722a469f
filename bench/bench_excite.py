"""
Benchmark of ``rnea_excite`` on a 7-DoF arm: optimisation time and the conditioning reached.

    .venv/bin/python bench/bench_excite.py [--robot panda] [--harmonics 5] [--seeds 10]

1. Runs ``python -m rnea_ros.excite --urdf <robot> --joints <its 7 arm joints> --harmonics N``
   in a fresh process (as a user does: interpreter start, imports and the numba cache
   included; the default base frequency 0.1 Hz, one 10 s period, no plot) and prints the
   wall-clock time and the optimiser's own (target: <= 60 s for panda with 5 harmonics on the
   project's 2-core machine).
2. The condition number of the design against random sines of the same harmonics scaled to
   the same limits (``design.random_coefficients``), ``--seeds`` of them: median and range.
3. The load average before and after.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'test'))

from harness.oracle import robot_path  # noqa: E402, I100, I202
from timed import fresh_run  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402
from rnea_ros.excite import design, limits  # noqa: E402
from rnea_ros.excite.fourier import FourierBasis  # noqa: E402

ARM_JOINTS = {'panda': [f'panda_joint{k}' for k in range(1, 8)]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robot', default='panda', help='an example-robot-data robot')
    parser.add_argument('--harmonics', type=int, default=5)
    parser.add_argument('--max-iterations', type=int, default=100)
    parser.add_argument('--seeds', type=int, default=10,
                        help='random sines to compare with (default: %(default)s)')
    args = parser.parse_args()
    urdf = robot_path(args.robot)
    model = RobotModel.from_urdf_file(urdf)
    joints = ARM_JOINTS.get(args.robot, list(model.joint_names))
    print(f'load average before: {os.getloadavg()[0]:.2f}')
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, '-m', 'rnea_ros.excite', '--urdf', str(urdf), '--output',
                   folder, '--joints', ','.join(joints), '--harmonics', str(args.harmonics),
                   '--duration', '10', '--max-iterations', str(args.max_iterations),
                   '--no-plots']
        wall, _ = fresh_run(command, 'rnea_excite')
        report = json.loads((Path(folder) / 'excitation.json').read_text())
    optimiser = report['optimiser']
    conditioning = report['conditioning']
    print(f'{args.robot}: {len(joints)} moving joints, {args.harmonics} harmonics, '
          f'{len(report["base_parameters"])} base parameters')
    print(f'rnea_excite wall clock (fresh process): {wall:.1f} s; optimiser: '
          f'{optimiser["seconds"]:.1f} s, {optimiser["iterations"]} SLSQP iterations')
    lim = limits.joint_limits(model, limits.moving_joints(model, ','.join(joints)), None,
                              0.8, 5.0)
    problem = design.problem(model, lim, FourierBasis(args.harmonics, 0.1), [])
    random = np.array([design.conditioning(problem, design.random_coefficients(problem, seed))[0]
                       for seed in range(1, args.seeds + 1)])
    print(f'condition number: optimised {conditioning["condition_number"]:.4g}; random sines '
          f'within the same limits ({args.seeds} seeds): median {np.median(random):.4g} '
          f'[{random.min():.4g}-{random.max():.4g}]')
    print(f'load average after: {os.getloadavg()[0]:.2f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
