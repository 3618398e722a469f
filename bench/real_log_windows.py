"""
``rnea_bag`` residuals on the Kinova Gen3 logs with the automatic window and fixed ones.

Each log (``kinova_gen3/data/*.csv`` of the shared real logs: 1 kHz positions, the robot's
velocities and the joint torque sensors) is written as a rosbag2 /joint_states bag, stamped at
its sample times, or, with ``--stamp-error S``, at its sample times plus normal noise of S
seconds (what a jittery logger does), and replayed by ``rnea_bag`` with ``--window auto`` (the
default) and fixed windows. Printed per log and window: the peak and RMS residual over the arm
(measured - predicted torque, N m), the windows chosen and the time base::

    python bench/real_log_windows.py [--logs DIR] [--stamp-error S] [--windows W ...]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
import sys
import tempfile

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'test'))

import bagdata  # noqa: E402
import numpy as np  # noqa: E402

from rnea_ros.bag.cli import main as rnea_bag  # noqa: E402

LOGS = Path('/work/shared/real_logs/kinova_gen3')
URDF = 'GEN3-7DOF-VISION_ARM_URDF_V12.urdf'
JOINTS = [f'joint_{k}' for k in range(1, 8)]


def read_log(path: Path, seconds: float | None):
    """Return t [s], q, v, tau (N, 7) of one CSV log (Time in ms)."""
    data = np.genfromtxt(path, delimiter=',', names=True)
    columns = [np.column_stack([data[f'{name}{k}'] for k in range(1, 8)])
               for name in ('Position', 'Velocity', 'TorqueSm')]
    t = data['Time'] * 1e-3
    keep = slice(None) if seconds is None else t <= t[0] + seconds
    return (t[keep], *(c[keep] for c in columns))


def run(bag: Path, urdf: Path, out: Path, window: str) -> dict:
    """Replay ``bag`` with ``--window window``; return summary.json."""
    code = rnea_bag([str(bag), '--urdf', str(urdf), '--output', str(out), '--no-plots',
                     '--format', 'csv', '--window', window])
    if code:
        raise SystemExit(f'rnea_bag exited with {code}')
    return json.loads((out / 'summary.json').read_text())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0].strip())
    parser.add_argument('--logs', type=Path, default=LOGS, help='the kinova_gen3 folder')
    parser.add_argument('--stamp-error', type=float, default=0.0, metavar='S',
                        help='normal stamp noise added [s] (default: none)')
    parser.add_argument('--windows', nargs='+', default=['auto', '0.05', '0.1'])
    parser.add_argument('--seconds', type=float, default=None,
                        help='only the first S seconds of each log')
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f'stamp noise {args.stamp_error:g} s; residual = measured - predicted [N m], '
          'over joint_1..joint_7')
    print('| log | window | peak residual | RMS residual (all joints) | windows chosen [s] | '
          'time base |')
    print('|---|---|---|---|---|---|')
    with tempfile.TemporaryDirectory() as scratch:
        for path in sorted((args.logs / 'data').glob('*.csv')):
            t, q, v, tau = read_log(path, args.seconds)
            stamps = bagdata.BAG_START + np.round(
                (t + args.stamp_error * rng.standard_normal(t.size)) * 1e9).astype(np.int64)
            order = np.argsort(stamps, kind='stable')
            stamps, q, v, tau = stamps[order], q[order], v[order], tau[order]
            unique = np.concatenate([[True], np.diff(stamps) > 0])
            bag = bagdata.joint_states_bag(Path(scratch) / path.stem, stamps[unique], JOINTS,
                                           q[unique], v[unique], tau[unique])
            for window in args.windows:
                summary = run(bag, args.logs / URDF, Path(scratch) / f'{path.stem}_{window}',
                              window)
                joints = summary['joints']
                peak = max(j['peak_residual'] for j in joints)
                rms = np.sqrt(np.mean([j['rms_residual'] ** 2 for j in joints]))
                diff = summary['run']['differentiation']
                chosen = sorted(set(diff['windows'].values()))
                span = f'{chosen[0]:.3g}' if len(chosen) == 1 else \
                    f'{chosen[0]:.3g}-{chosen[-1]:.3g}'
                print(f'| {path.stem} | {window} | {peak:.2f} | {rms:.3f} | {span} | '
                      f'{diff["time_base"]} |')
    return 0


if __name__ == '__main__':
    sys.exit(main())
