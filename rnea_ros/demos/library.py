"""
Demo: load a real robot, run a smooth trajectory through ``RobotModel.rnea``, print torques.

``python -m rnea_ros.demos.library`` (console script ``rnea_demo``) loads Franka's panda from
``example-robot-data`` when that package is installed (it is a test dependency), or any URDF
given with ``--urdf`` (a xacro file is expanded, with its ``--xacro-arg NAME:=VALUE``). Each
1-DoF joint follows q(t) = c + A sin(w t + phi) inside its URDF position and velocity limits,
with v and a the analytic derivatives; a free-flyer base bobs vertically. The table shows the
joint torques at a few instants, the peak |tau| and the URDF effort limit; the last lines give
the per-call time of ``model.rnea`` and of ``rnea_batch``.
"""
from __future__ import annotations

import argparse
from pathlib import Path
import sys
import time

import numpy as np

from rnea_ros.demos.motions import robot_urdf, sinusoidal_trajectory
from rnea_ros.description.robot_file import parse_xacro_arg
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import Bounded, RneaError, UsageParser
from rnea_ros.files import FileError

BATCH_REPEATS = 5
DURATION = Bounded(float, 1e-3, 3600.0)  # s: the trajectory's time span
SAMPLES = Bounded(int, 1, 1_000_000)  # each one call timed
COLUMNS = Bounded(int, 1, 100)  # instants of the torque table
WRENCH_LABELS = ('fx', 'fy', 'fz', 'tx', 'ty', 'tz')


def v_labels(model: RobotModel) -> list[str]:
    """One label per entry of v and tau: the joint name, suffixed for multi-DoF joints."""
    labels = []
    for joint in model.joints:
        if joint.nv == 1:
            labels.append(joint.name)
        elif joint.nv == 6:
            labels += [f'{joint.name}.{axis}' for axis in WRENCH_LABELS]
        else:
            labels += [f'{joint.name}[{k}]' for k in range(joint.nv)]
    return labels


def torque_table(model: RobotModel, times: np.ndarray, taus: np.ndarray, columns: int) -> str:
    """Rows: v entries by name; columns: tau at ``columns`` instants, peak |tau|, effort limit."""
    picks = np.unique(np.linspace(0, times.size - 1, max(1, columns)).round().astype(int))
    labels = v_labels(model)
    width = max(len('joint'), *(len(label) for label in labels))
    header = [f'{"joint":<{width}}'] + [f'{times[k]:>9.2f}' for k in picks]
    header += [f'{"max|tau|":>9}', f'{"limit":>9}']
    lines = [f'{"":<{width}} tau at t [s] (N m, or N for prismatic and forces)',
             ' '.join(header)]
    limits = model.effort_limits
    for row, label in enumerate(labels):
        cells = [f'{label:<{width}}'] + [f'{taus[k, row]:>9.3f}' for k in picks]
        cells.append(f'{np.abs(taus[:, row]).max():>9.3f}')
        cells.append(f'{limits[row]:>9.1f}' if np.isfinite(limits[row]) else f'{"-":>9}')
        lines.append(' '.join(cells))
    return '\n'.join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog='rnea_demo',
        description='Load a robot URDF, run a smooth sinusoidal trajectory through '
                    'RobotModel.rnea and print the joint torques and the time per call.')
    parser.add_argument('--urdf', type=Path, metavar='FILE',
                        help='URDF file to load, or xacro file (.urdf.xacro) expanded with '
                             'xacro (default: panda from example-robot-data)')
    parser.add_argument('--xacro-arg', action='append', type=parse_xacro_arg,
                        metavar='NAME:=VALUE',
                        help='an argument of the --urdf xacro file (repeatable)')
    parser.add_argument('--floating-base', action='store_true',
                        help='add a free-flyer joint above the URDF root link')
    parser.add_argument('--duration', type=DURATION, default=4.0, metavar='SECONDS',
                        help=f'trajectory time span (default: %(default)s); '
                        f'{DURATION.expected}')
    parser.add_argument('--samples', type=SAMPLES, default=100,
                        help=f'number of trajectory samples (default: %(default)s); '
                        f'{SAMPLES.expected}')
    parser.add_argument('--columns', type=COLUMNS, default=6,
                        help='instants shown in the torque table (default: %(default)s); '
                        f'{COLUMNS.expected}')
    parser.add_argument('--inertia-check', choices=('error', 'warn'), default='error',
                        help="'warn' loads URDFs with physically inconsistent inertias "
                             '(default: %(default)s)')
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    urdf = args.urdf
    if args.xacro_arg and urdf is None:
        parser.error('--xacro-arg needs --urdf FILE (a xacro file)')
    urdf = robot_urdf(parser, urdf)

    start = time.perf_counter()
    try:
        model = RobotModel.from_urdf_file(urdf, xacro_args=dict(args.xacro_arg or ()),
                                          floating_base=args.floating_base,
                                          inertia_check=args.inertia_check)
    except FileError as exc:  # named by its option
        print(f'rnea_demo: cannot read --urdf {str(urdf)!r}: {exc.why}', file=sys.stderr)
        return 2
    except (OSError, ValueError, RneaError) as exc:  # ValueError: not UTF-8 text
        print(f'rnea_demo: cannot load {urdf}: {exc}', file=sys.stderr)
        return 2  # the input, as every tool's
    load_seconds = time.perf_counter() - start
    base = 'floating base' if model.floating_base else 'fixed base'
    print(f'robot {model.name!r} from {urdf}')
    print(f'nq={model.nq} nv={model.nv}, {base}, {len(model.link_names)} links; '
          f'loaded in {load_seconds:.2f} s (URDF parse + kernel compile or cache load)')
    if model.nv == 0:
        print('no independent joints: nothing to move')
        return 0

    times = np.linspace(0.0, args.duration, args.samples)
    Q, V, A = sinusoidal_trajectory(model, times)
    taus = np.empty((args.samples, model.nv))
    call_ns = np.empty(args.samples)
    for k in range(args.samples):
        tick = time.perf_counter_ns()
        taus[k] = model.rnea(Q[k], V[k], A[k])
        call_ns[k] = time.perf_counter_ns() - tick
    batch_ns = np.inf
    for _ in range(BATCH_REPEATS):  # the best of a few: the first may wake the thread pool
        tick = time.perf_counter_ns()
        batch = model.rnea_batch(Q, V, A)
        batch_ns = min(batch_ns, time.perf_counter_ns() - tick)

    print(f'trajectory: {args.samples} samples over {args.duration:g} s, '
          'q = c + A sin(w t + phi) per joint, v and a analytic')
    print()
    print(torque_table(model, times, taus, args.columns))
    print()
    print(f'model.rnea:       median {np.median(call_ns) / 1e3:.2f} us/call, '
          f'min {call_ns.min() / 1e3:.2f} us ({args.samples} calls, argument checks included)')
    print(f'model.rnea_batch: {batch_ns / args.samples / 1e3:.2f} us/sample '
          f'({args.samples} samples per call, best of {BATCH_REPEATS}), max |batch - single| = '
          f'{np.abs(batch - taus).max():.1e}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
