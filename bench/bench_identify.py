"""
Benchmark of ``rnea_identify`` on a generated one-hour, 1 kHz log of a 7-DoF arm.

    .venv/bin/python bench/bench_identify.py [--minutes 60] [--rate 1000] [--keep DIR]

1. Generates, in a temporary directory, an mcap rosbag2 with ``--minutes`` of
   sensor_msgs/JointState at ``--rate`` Hz (default 3.6 M messages) of example-robot-data's
   xarm7 (7 revolute joints) on a finite Fourier series inside its joint limits: positions,
   velocities and measured effort = the URDF's torque with friction, armature and noise.
2. Runs ``python -m rnea_ros.identify BAG --urdf ... --timings`` in a fresh process (as a user
   does: interpreter start, imports and the numba cache included) and prints its split and the
   wall-clock total (target: < 60 s on the project's 2-core machine).
3. Baseline, in this process on the same number of samples: ``rnea_batch`` over them (the cost
   of one RNEA per sample) against the tool's regressor-and-normal-equations phase.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import re
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'test'))

from bench_bag import START_NS, write_joint_states  # noqa: E402, I100
from harness.bagdata import fourier_excitation  # noqa: E402, I100, I202
from harness.oracle import robot_path  # noqa: E402
from timed import fresh_run  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402

ROBOT = 'xarm7'
COULOMB, VISCOUS, ARMATURE, NOISE = 2.0, 0.5, 0.1, 0.1


def motion(model: RobotModel, t: np.ndarray):
    lower = np.array([j.lower for j in model.joints])
    upper = np.array([j.upper for j in model.joints])
    return fourier_excitation(lower, upper, t, base_frequency=0.05, harmonics=5, seed=4)


def generate(path: Path, n: int, rate: float, model: RobotModel) -> float:
    """Write the bag; returns the seconds it took."""
    def sample(rng, stamps):
        q, v, a = motion(model, (stamps - START_NS) * 1e-9)
        effort = model.rnea_batch(q, v, a) + COULOMB * np.tanh(v / 0.01) + VISCOUS * v \
            + ARMATURE * a + rng.normal(0.0, NOISE, q.shape)
        return model.joint_names, q, v, effort
    return write_joint_states(path, n, rate, 'mcap', sample)


def run_tool(bag: Path, output: Path) -> tuple[float, dict[str, float], str]:
    command = [sys.executable, '-m', 'rnea_ros.identify', str(bag), '--urdf',
               str(robot_path(ROBOT)), '--output', str(output), '--timings']
    wall, done = fresh_run(command, 'rnea_identify')
    timings = {m.group(1): float(m.group(2))
               for m in re.finditer(r'^\s+(\w[\w ]*?)\s+([0-9.]+) s$', done.stdout, re.M)}
    return wall, timings, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--minutes', type=float, default=60.0)
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--keep', metavar='DIR', help='generate into DIR and keep it')
    args = parser.parse_args()
    n = int(round(args.minutes * 60 * args.rate))
    model = RobotModel.from_urdf_file(robot_path(ROBOT))
    print(f'machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}')
    with tempfile.TemporaryDirectory(dir=args.keep) as tmp:
        bag = Path(tmp) / 'bench_identify'
        print(f'{n} joint_states messages ({args.minutes:g} min at {args.rate:g} Hz, '
              f'{ROBOT}, {model.nv} DoF) into {bag}')
        seconds = generate(bag, n, args.rate, model)
        print(f'  generated in {seconds:.1f} s')
        wall, timings, stdout = run_tool(bag, Path(tmp) / 'out')
        print('\nrnea_identify end to end (fresh process):')
        print(stdout)
        print(f'  {"wall clock":<16} {wall:7.2f} s   (target < 60 s)')

        t = np.arange(n) / args.rate
        q, v, a = motion(model, t)
        model.rnea_batch(q[:1000], v[:1000], a[:1000])
        begin = time.perf_counter()
        model.rnea_batch(q, v, a)
        rnea = time.perf_counter() - begin
        phase = timings.get('regressor', float('nan'))
        print(f'\nbaseline on {n} samples (this process): rnea_batch {rnea:.2f} s; the '
              f'regressor + normal equations phase of the tool {phase:.2f} s = '
              f'{phase / rnea:.1f}x one RNEA per sample')


if __name__ == '__main__':
    main()
