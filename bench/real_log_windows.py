"""
``rnea_bag`` residuals on the Kinova Gen3 logs with the automatic window and fixed ones.

Each log (``kinova_gen3/data/*.csv`` of the shared real logs: 1 kHz positions, the robot's
velocities and the joint torque sensors) is converted by ``rnea_convert`` (the command of
docs/logs.md) into a /joint_states bag, stamped at its sample times, or, with
``--stamp-error S``, at its sample times plus normal noise of S seconds (what a jittery logger
does: the log is written again with those times, sorted, then converted), and replayed by
``rnea_bag`` with ``--window auto`` (the default) and fixed windows. Printed per log and
window: the peak and RMS residual over the arm (measured - predicted torque, N m), the windows
chosen and the time base::

    python bench/real_log_windows.py [--logs DIR] [--stamp-error S] [--windows W ...]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
import sys
import tempfile

import numpy as np

from rnea_ros.bag.cli import main as rnea_bag
from rnea_ros.convert.cli import main as rnea_convert

LOGS = Path('/work/shared/real_logs/kinova_gen3')
URDF = 'GEN3-7DOF-VISION_ARM_URDF_V12.urdf'
JOINTS = [f'joint_{k}' for k in range(1, 8)]
FIELDS = ('Position', 'Velocity', 'TorqueSm')
# The column mapping of the Kinova logs, as docs/logs.md shows it.
MAPPING = ['--joints', ','.join(JOINTS), '--time', 'Time', '--time-unit', 'ms',
           '--position', 'Position{n}', '--velocity', 'Velocity{n}', '--effort', 'TorqueSm{n}']


def convert(log: Path, bag: Path) -> Path:
    """Write the Kinova log ``log`` as the bag ``bag`` with ``rnea_convert``."""
    code = rnea_convert([str(log), '--output', str(bag), *MAPPING])
    if code:
        raise SystemExit(f'rnea_convert exited with {code}')
    return bag


def rewrite(path: Path, out: Path, seconds: float | None, stamp_error: float, rng) -> Path:
    """
    Write the mapped columns of the log ``path`` into the CSV ``out``, cut and jittered.

    The first ``seconds`` only (None: all); the times (ms) plus normal noise of ``stamp_error``
    seconds, the rows sorted by them and a row whose time repeats the previous one's dropped,
    then every time shifted so that none is negative.
    """
    data = np.genfromtxt(path, delimiter=',', names=True)
    names = ['Time'] + [f'{field}{k}' for field in FIELDS for k in range(1, 8)]
    table = np.column_stack([data[name] for name in names])
    if seconds is not None:
        table = table[table[:, 0] * 1e-3 <= table[0, 0] * 1e-3 + seconds]
    table[:, 0] += stamp_error * 1e3 * rng.standard_normal(table.shape[0])
    table = table[np.argsort(table[:, 0], kind='stable')]
    table = table[np.concatenate([[True], np.diff(np.round(table[:, 0] * 1e6)) > 0])]
    # A log that starts at time 0 (the Kinova logs) must not start before it: rnea_convert
    # takes the times as seconds since the epoch. Shifting every time keeps the intervals.
    table[:, 0] -= min(0.0, table[0, 0])
    np.savetxt(out, table, delimiter=',', header=','.join(names), comments='', fmt='%.17g')
    return out


def run(bag: Path, urdf: Path, out: Path, window: str) -> dict:
    """Replay ``bag`` with ``--window window``; return summary.json."""
    code = rnea_bag([str(bag), '--urdf', str(urdf), '--output', str(out), '--no-plots',
                     '--format', 'csv', '--window', window])
    if code:
        raise SystemExit(f'rnea_bag exited with {code}')
    return json.loads((out / 'summary.json').read_text())


def residual_rows(logs: Path, windows: list[str], stamp_error: float = 0.0,
                  seconds: float | None = None):
    """
    Yield per log (sorted) and window the residual over the arm and the windows chosen.

    Each a dict: ``log`` (the file's stem), ``window``, ``peak`` and ``rms`` (N m, over every
    joint), ``windows`` (the sorted distinct windows chosen, s) and ``time_base``.
    """
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as scratch:
        for path in sorted((logs / 'data').glob('*.csv')):
            log = path
            if seconds is not None or stamp_error:
                log = rewrite(path, Path(scratch) / path.name, seconds, stamp_error, rng)
            bag = convert(log, Path(scratch) / path.stem)
            for window in windows:
                summary = run(bag, logs / URDF, Path(scratch) / f'{path.stem}_{window}', window)
                joints = summary['joints']
                diff = summary['run']['differentiation']
                yield {'log': path.stem, 'window': window,
                       'peak': max(j['peak_residual'] for j in joints),
                       'rms': float(np.sqrt(np.mean([j['rms_residual'] ** 2 for j in joints]))),
                       'windows': sorted(set(diff['windows'].values())),
                       'time_base': diff['time_base']}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0].strip())
    parser.add_argument('--logs', type=Path, default=LOGS, help='the kinova_gen3 folder')
    parser.add_argument('--stamp-error', type=float, default=0.0, metavar='S',
                        help='normal stamp noise added [s] (default: none)')
    parser.add_argument('--windows', nargs='+', default=['auto', '0.05', '0.1'])
    parser.add_argument('--seconds', type=float, default=None,
                        help='only the first S seconds of each log')
    args = parser.parse_args(argv)
    print(f'stamp noise {args.stamp_error:g} s; residual = measured - predicted [N m], '
          'over joint_1..joint_7')
    print('| log | window | peak residual | RMS residual (all joints) | windows chosen [s] | '
          'time base |')
    print('|---|---|---|---|---|---|')
    for row in residual_rows(args.logs, args.windows, args.stamp_error, args.seconds):
        chosen = row['windows']
        span = f'{chosen[0]:.3g}' if len(chosen) == 1 else f'{chosen[0]:.3g}-{chosen[-1]:.3g}'
        print(f'| {row["log"]} | {row["window"]} | {row["peak"]:.2f} | {row["rms"]:.3f} | '
              f'{span} | {row["time_base"]} |')
    return 0


if __name__ == '__main__':
    sys.exit(main())
