"""
Benchmark of ``rnea_bag`` on a generated one-hour, 1 kHz joint_states bag of the panda.

    .venv/bin/python bench/bench_bag.py [--minutes 60] [--storage mcap|sqlite3] [--bag DIR]

1. Generates, in a temporary directory, a rosbag2 with ``--minutes`` of sensor_msgs/JointState
   at ``--rate`` Hz (default 60 min at 1 kHz: 3.6 M messages) for the panda of
   example-robot-data: the 8 independent joints plus the mimic finger, positions and velocities
   of a smooth trajectory, measured effort = the RNEA torque plus noise, stamps with 10 % jitter.
2. Runs the tool end to end in a fresh process (``python -m rnea_ros.bag BAG --urdf ...
   --timings``, the way a user runs it: interpreter start, imports and the numba cache
   included), without and then with ``--write-bag``, and prints the split of each: reading
   (bag + decoding), differentiating, dynamics, writing (tables, summary, plots, report,
   bag), the wall-clock total and the CPU time, with the load average (the machine is shared).
3. Compares the dynamics part with a Python loop over ``pin.rnea`` (Pinocchio, one call per
   term: the same three terms the tool computes, and also the total alone) on the same
   samples, in this run: the loop is timed on ``--pin-samples`` samples and extrapolated to all
   of them (said in the output).
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

from harness.oracle import load_pinocchio, robot_path  # noqa: E402, I100
from timed import fresh_run  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402
from rnea_ros.bag.decomposition import decompose  # noqa: E402
from rnea_ros.recording.bagio import cdr  # noqa: E402

NAMES = [f'panda_joint{k}' for k in range(1, 8)] + ['panda_finger_joint1', 'panda_finger_joint2']
CENTER = np.array([0.0, -0.3, 0.0, -1.8, 0.0, 1.6, 0.7, 0.02])
AMPLITUDE = np.array([0.8, 0.5, 0.6, 0.5, 0.9, 0.5, 1.0, 0.015])
OMEGA = np.array([1.3, 2.1, 1.7, 2.6, 3.0, 2.3, 3.3, 4.0])
START_NS = 1_700_000_000 * 10**9
CHUNK = 1 << 18


def motion(t: np.ndarray):
    angle = OMEGA * t[:, None]
    q = CENTER + AMPLITUDE * np.sin(angle)
    v = AMPLITUDE * OMEGA * np.cos(angle)
    a = -AMPLITUDE * OMEGA ** 2 * np.sin(angle)
    return q, v, a


def generate(path: Path, n: int, rate: float, storage: str, model: RobotModel) -> float:
    """Write the panda bag; returns the seconds it took."""
    def sample(rng, stamps):
        q, v, a = motion((stamps - START_NS) * 1e-9)
        effort = model.rnea_batch(q, v, a) + rng.normal(0.0, 0.05, q.shape)
        return (NAMES, np.column_stack([q, q[:, 7]]), np.column_stack([v, v[:, 7]]),
                np.column_stack([effort, np.zeros(stamps.size)]))
    return write_joint_states(path, n, rate, storage, sample)


def write_joint_states(path: Path, n: int, rate: float, storage: str, sample) -> float:
    """
    Write ``n`` joint_states messages at ``rate`` Hz with 10 % stamp jitter; returns seconds.

    ``sample(rng, stamps_ns)`` gives (names, position, velocity, effort) of a chunk of stamps;
    ``rng`` (seeded) also draws the jitter, so the bag is the same every time.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import get_typestore, Stores
    begin = time.perf_counter()
    rng = np.random.default_rng(1)
    plugin = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}[storage]
    period = 1e9 / rate
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        conn = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState',
                                     typestore=get_typestore(Stores.LATEST))
        write = writer.write
        for first in range(0, n, CHUNK):
            k = np.arange(first, min(n, first + CHUNK))
            stamps = START_NS + np.round((k + rng.uniform(-0.1, 0.1, k.size)) * period)
            stamps = stamps.astype(np.int64)
            matrix, _ = cdr.encode_joint_states(stamps, *sample(rng, stamps))
            for stamp, record in zip(stamps.tolist(), cdr.records(matrix)):
                write(conn, stamp, record)
            print(f'\r  generating: {min(n, first + CHUNK) / n:4.0%}', end='', flush=True)
    print()
    return time.perf_counter() - begin


def run_tool(bag: Path, output: Path, write_bag: bool) -> tuple[float, dict[str, float]]:
    """Run rnea_bag in a fresh process: (wall clock s, its --timings and 'cpu')."""
    command = [sys.executable, '-m', 'rnea_ros.bag', str(bag), '--urdf',
               str(robot_path('panda')), '--output', str(output), '--timings', '--no-progress']
    if write_bag:
        command.append('--write-bag')
    before = os.times()
    wall, done = fresh_run(command, 'rnea_bag')
    after = os.times()
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    timings = {m.group(1): float(m.group(2))
               for m in re.finditer(r'^\s+(\w[\w ]*?)\s+([0-9.]+) s$', done.stdout, re.M)}
    timings['cpu (user + system)'] = cpu
    return wall, timings


def pin_loop(q, v, a, terms: int) -> float:
    """Seconds per sample of a Python loop over pin.rnea computing ``terms`` terms."""
    import pinocchio as pin
    pmodel = load_pinocchio(robot_path('panda'), False)
    data = pmodel.createData()
    zero = np.zeros(pmodel.nv)
    rnea = pin.rnea
    weightless = pmodel.copy()
    weightless.gravity = pin.Motion.Zero()
    data0 = weightless.createData()
    begin = time.perf_counter()
    if terms == 1:
        for k in range(q.shape[0]):
            rnea(pmodel, data, q[k], v[k], a[k])
    else:
        for k in range(q.shape[0]):
            rnea(pmodel, data, q[k], zero, zero)          # gravity
            rnea(weightless, data0, q[k], zero, a[k])     # inertial
            rnea(weightless, data0, q[k], v[k], zero)     # velocity product
    return (time.perf_counter() - begin) / q.shape[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--minutes', type=float, default=60.0)
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--storage', choices=('mcap', 'sqlite3'), default='mcap')
    parser.add_argument('--no-write-bag', action='store_true',
                        help='do not time the run with --write-bag')
    parser.add_argument('--pin-samples', type=int, default=200_000)
    parser.add_argument('--bag', metavar='DIR', type=Path,
                        help='use the bag DIR, generating it there first if it does not exist '
                        '(kept for the next run); default: a temporary directory')
    parser.add_argument('--generate-only', action='store_true',
                        help='only generate the bag (with --bag)')
    args = parser.parse_args()
    n = int(round(args.minutes * 60 * args.rate))
    model = RobotModel.from_urdf_file(robot_path('panda'))
    print(f'machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; '
          f'numba threads {os.environ.get("NUMBA_NUM_THREADS", "default")}')
    with tempfile.TemporaryDirectory() as tmp:
        bag = args.bag or Path(tmp) / 'bench_bag'
        if bag.exists():
            print(f'reusing the bag {bag}')
        else:
            print(f'{n} joint_states messages ({args.minutes:g} min at {args.rate:g} Hz, '
                  f'{args.storage}) into {bag}')
            seconds = generate(bag, n, args.rate, args.storage, model)
            print(f'  generated in {seconds:.1f} s')
        size = sum(f.stat().st_size for f in bag.iterdir()) / 1e9
        print(f'  {size:.2f} GB')
        if args.generate_only:
            return

        runs = {}
        for write_bag in (False,) if args.no_write_bag else (False, True):
            load = os.getloadavg()[0]
            wall, timings = run_tool(bag, Path(tmp) / f'out{int(write_bag)}', write_bag)
            runs['with --write-bag' if write_bag else 'without --write-bag'] = (
                wall, timings, (load + os.getloadavg()[0]) / 2)
        print('\nrnea_bag end to end (fresh process), seconds:')
        print(f'  {"phase":<22}' + ''.join(f'{name:>22}' for name in runs))
        phases = list(dict.fromkeys(p for _, t, _ in runs.values() for p in t))
        for phase in phases:
            values = [t.get(phase, float('nan')) for _, t, _ in runs.values()]
            print(f'  {phase:<22}' + ''.join(f'{value:22.2f}' for value in values))
        print(f'  {"wall clock":<22}' + ''.join(f'{w:22.2f}' for w, _, _ in runs.values())
              + '   (targets 25 s and 45 s)')
        loads = [a for _, _, a in runs.values()]
        print(f'  {"load average (mean)":<22}' + ''.join(f'{a:22.2f}' for a in loads))
        timings = runs['without --write-bag'][1]

        # The dynamics part on the same samples, in this process, against pin.rnea.
        t = np.arange(n) / args.rate
        q, v, a = motion(t)
        decompose(model, q[:1000], v[:1000], a[:1000])
        begin = time.perf_counter()
        decompose(model, q, v, a)
        ours = time.perf_counter() - begin
        m = min(n, args.pin_samples)
        pin3 = pin_loop(q[:m], v[:m], a[:m], 3) * n
        pin1 = pin_loop(q[:m], v[:m], a[:m], 1) * n
        print(f'\ndynamics on {n} samples (this process, {model.nv} DoF):')
        print(f'  rnea_ros decompose (rnea_terms_batch)      {ours:7.2f} s')
        print(f'  pin.rnea loop, same 3 terms (timed on {m}, extrapolated) {pin3:7.2f} s  '
              f'-> {pin3 / ours:.1f}x')
        print(f'  pin.rnea loop, total only (timed on {m}, extrapolated)   {pin1:7.2f} s  '
              f'-> {pin1 / ours:.1f}x')
        print(f'  the tool\'s own dynamics phase: {timings.get("dynamics", float("nan")):.2f} s'
              f' -> {pin3 / timings.get("dynamics", float("nan")):.1f}x the 3-term loop')


if __name__ == '__main__':
    main()
