"""
Benchmark of ``rnea_fleet`` on a local Dask cluster: 1 worker against 2 workers.

    .venv/bin/python bench/bench_fleet.py [--bags 8] [--minutes 10] [--data /tmp/...]

1. Generates once, into ``--data`` (default ``/tmp/rnea_fleet_bench``, reused by later runs),
   ``--bags`` rosbag2 bags (mcap) of ``--minutes`` of panda joint_states at 1 kHz (7-DoF arm
   + finger; 600 000 messages and ~300 MB per 10-minute bag), stored as ``<robot>/<bag>``
   (two robots): positions and velocities of a smooth trajectory, measured effort = RNEA + noise,
   10 % stamp jitter (``bench_bag.generate``).
2. Runs ``rnea_fleet`` on them end to end in a fresh process, with the defaults a user gets
   (plots included), ``--repeat`` times with ``--workers 1`` and with ``--workers 2`` in
   alternating order, each into a fresh output directory (no result reused) after an
   ``os.sync()`` (no write-back of the previous run's outputs left), and prints the
   wall-clock times, the ratio of their medians,
   the load average around each run, the throughput in bags per hour per core and in
   robot-hours of bags per core-hour, and the cores needed for 10 000 robot-hours a day.

The machine is shared: the load average before and after each run is printed with it.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'test'))

from bench_bag import generate  # noqa: E402
from harness.oracle import robot_path  # noqa: E402
from timed import fresh_run  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402

ROBOT_HOURS_PER_DAY = 10_000


def bags_of(data: Path, count: int, minutes: float, model: RobotModel) -> list[Path]:
    """Return the benchmark bags, generating the missing ones (complete once renamed)."""
    paths = []
    for k in range(count):
        bag = data / f'robot_{k % 2}' / f'run_{k:02d}'
        if not bag.exists():
            partial = data / f'.partial_{k:02d}'
            shutil.rmtree(partial, ignore_errors=True)
            partial.parent.mkdir(parents=True, exist_ok=True)
            print(f'  generating {bag} ...')
            generate(partial, int(minutes * 60_000), 1000.0, 'mcap', model)
            bag.parent.mkdir(parents=True, exist_ok=True)
            partial.rename(bag)
        paths.append(bag)
    return paths


def run_fleet(data: Path, output: Path, workers: int) -> tuple[float, float, float]:
    """Run rnea_fleet once: wall-clock seconds, and the 1-minute load before and after."""
    command = [sys.executable, '-m', 'rnea_ros.fleet', str(data), '--output', str(output),
               '--urdf', str(robot_path('panda')), '--workers', str(workers), '--no-progress']
    before = os.getloadavg()[0]
    wall, done = fresh_run(command, 'rnea_fleet')
    after = os.getloadavg()[0]
    print(f'  {done.stdout.strip()}')
    return wall, before, after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--bags', type=int, default=8)
    parser.add_argument('--minutes', type=float, default=10.0)
    parser.add_argument('--repeat', type=int, default=3, help='runs of each worker count')
    parser.add_argument('--data', type=Path, default=Path(tempfile.gettempdir()) /
                        'rnea_fleet_bench', help='where the bags are generated and kept')
    args = parser.parse_args()
    model = RobotModel.from_urdf_file(robot_path('panda'))
    print(f'machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}')
    bags_of(args.data, args.bags, args.minutes, model)
    robot_hours = args.bags * args.minutes / 60
    print(f'{args.bags} bags of {args.minutes:g} min at 1 kHz ({robot_hours:g} robot-hours) '
          f'in {args.data}')
    walls: dict[int, list[float]] = {1: [], 2: []}
    # Alternating order (1 2, 2 1, ...): a drift of the machine's load hits both alike.
    order = [w for r in range(args.repeat) for w in ((1, 2) if r % 2 == 0 else (2, 1))]
    with tempfile.TemporaryDirectory() as tmp:
        for run, workers in enumerate(order):
            print(f'rnea_fleet --workers {workers}:')
            # Each run starts with no dirty pages of the previous one left to write back.
            os.sync()
            wall, before, after = run_fleet(args.data, Path(tmp) / f'out_{run}', workers)
            shutil.rmtree(Path(tmp) / f'out_{run}')
            walls[workers].append(wall)
            print(f'  {wall:7.1f} s wall clock (load average {before:.2f} before, {after:.2f} '
                  'after)')
    times = {w: statistics.median(values) for w, values in walls.items()}
    print(f'\nmedian of {args.repeat} runs: 1 worker {times[1]:.1f} s, 2 workers {times[2]:.1f} s')
    ratio = times[1] / times[2]
    per_core = args.bags / (times[2] / 3600) / 2
    hours_per_core_hour = per_core * args.minutes / 60
    cores = ROBOT_HOURS_PER_DAY / 24 / hours_per_core_hour
    print(f'\n2 workers are {ratio:.2f}x faster than 1 (target >= 1.7x)')
    print(f'throughput with 2 workers: {per_core:.0f} bags per hour per core '
          f'({hours_per_core_hour:.1f} robot-hours of 1 kHz 7-DoF bags per core-hour)')
    print(f'one worker alone: {args.bags / (times[1] / 3600):.0f} bags per hour')
    print(f'sizing: {ROBOT_HOURS_PER_DAY} robot-hours of bags a day need about '
          f'{cores:.1f} cores at this rate')


if __name__ == '__main__':
    main()
