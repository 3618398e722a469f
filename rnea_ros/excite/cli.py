"""
``rnea_excite``: the command line of excitation design (``rnea_ros.excite.run``).

Usage::

    rnea_excite --urdf FILE --output DIR [--duration S] [--harmonics N] [--base-frequency HZ]
                [--joints J1,J2] [--limits-scale F] [--acceleration-limit A]
                [--rest JOINT=VALUE[,...]] [--keep-above LINK:Z ...] ...

The options are the fields of ``ExciteOptions``, declared as ``rnea_bag``'s ``BagOptions``
are (``rnea_ros.bag.options``). Bad input (a URDF joint without a velocity or effort limit, a
rest configuration outside the limits, a plane above a link in it, a duration shorter than
one period, an unreadable URDF) prints one ``rnea_excite: error: ...`` line and exits with
status 2; a failing machine (a full disk: the line names the file) with status 1; a Ctrl-C
prints one line and exits with 130 (DIR holds the old files or all the new ones).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
import sys

from rnea_ros.errors import UsageParser
from rnea_ros.excite import outputs
from rnea_ros.excite.run import (BASE_FREQUENCY, DURATION, HARMONICS, ITERATIONS,
                                 LIMITS_SCALE, MAX_HIGHEST_FREQUENCY, MAX_POINTS,
                                 POINT_INTERVAL, run, SEED)
from rnea_ros.tools.options import add_fields, from_namespace, MAIN, option
from rnea_ros.tools.run import run_tool
from rnea_ros.tools.staging import check as check_output

MOTION = 'motion'
LIMITS = 'limits'
GROUPS = {MAIN: None, MOTION: 'Per moving joint a Fourier series of HARMONICS harmonics of '
          'the base frequency, at rest at the start and at the end of every period.',
          LIMITS: 'The URDF position, velocity and effort limits times --limits-scale; the '
          "motion is checked on a grid 20 times finer than the optimiser's."}


@dataclass(frozen=True)
class ExciteOptions:
    """What one ``rnea_excite`` run designs and writes (``rnea_excite --help``)."""

    urdf: str = option(None, MAIN, required=True, metavar='FILE', help='the robot URDF')
    output: str = option(None, MAIN, required=True, metavar='DIR', help='output directory')
    overwrite: bool = option(False, MAIN, action='store_true', help='write into an output '
                             'directory that holds files already: replaces the outputs of '
                             'rnea_excite, keeps every other file')
    duration: float = option(60.0, MOTION, type=float, metavar='S', bounds=DURATION,
                             help='length of the trajectory: the whole periods that fit '
                             '(default: %(default)s)')
    harmonics: int = option(5, MOTION, type=int, metavar='N', bounds=HARMONICS,
                            help='harmonics per joint; the first is fixed by starting and ending '
                            'at rest (default: %(default)s)')
    base_frequency: float = option(0.1, MOTION, type=float, metavar='HZ',
                                   bounds=BASE_FREQUENCY,
                                   help='the first harmonic; its period is the period of the '
                                   'motion; times HARMONICS at most '
                                   f'{MAX_HIGHEST_FREQUENCY:g} Hz (default: %(default)s)')
    joints: str | None = option(None, MOTION, metavar='J1,J2', help='the joints that move '
                                '(default: all); the others are held at rest')
    rest: str | None = option(None, MOTION, metavar='JOINT=VALUE[,...]', help='the rest '
                              'configuration where the motion starts and ends [rad, or m] '
                              '(default per joint: 0 when inside the scaled limits, else the '
                              'middle of its range)')
    point_interval: float = option(0.1, MOTION, type=float, metavar='S',
                                   bounds=POINT_INTERVAL, help='time between the points of '
                                   'the trajectory: at least a 1 kHz controller cycle, at '
                                   'most a quarter period of the highest harmonic, at most '
                                   f'{MAX_POINTS} points (default: %(default)s)')
    seed: int = option(0, MOTION, type=int, bounds=SEED,
                       help='seed of the random start (default: %(default)s)')
    max_iterations: int = option(100, MOTION, type=int, metavar='N', bounds=ITERATIONS,
                                 help='SLSQP iterations at most (default: %(default)s)')
    limits_scale: float = option(0.8, LIMITS, type=float, metavar='F', bounds=LIMITS_SCALE,
                                 help='safety factor of the URDF limits '
                                 '(default: %(default)s)')
    acceleration_limit: float = option(5.0, LIMITS, type=float, metavar='A', bounds=(1e-3, 1e4),
                                       help='acceleration limit of every joint [rad/s^2, or '
                                       'm/s^2] (default: %(default)s)')
    keep_above: list | None = option(None, LIMITS, action='append', metavar='LINK:Z',
                                     help="keep a link's origin above the plane z = Z [m, "
                                     'world frame] (repeatable)')
    no_plots: bool = option(False, MAIN, action='store_true', help='skip trajectory.html')


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of ``rnea_excite``: the fields of ``ExciteOptions``."""
    parser = UsageParser(
        prog='rnea_excite', description='Design an excitation trajectory for identification: '
        'periodic Fourier-series joint motions that make the base parameters of the robot as '
        'well determined as possible within its limits; write it as a '
        'trajectory_msgs/JointTrajectory YAML, a CSV, a plot and a report.')
    add_fields(parser, ExciteOptions, GROUPS)
    return parser


def parse(argv: list[str] | None = None) -> ExciteOptions:
    """Parse the command line (default: ``sys.argv``) into ``ExciteOptions``."""
    return from_namespace(build_parser().parse_args(argv), ExciteOptions)


def main(argv: list[str] | None = None) -> int:
    """Run ``rnea_excite``; return the exit status (module docstring)."""
    args = parse(argv)
    return run_tool('rnea_excite', lambda: _design(args))


def _design(args: ExciteOptions) -> int:
    check_output(Path(args.output), args.overwrite, outputs.TOOL)  # before any work
    result = run(args, say=lambda line: print(f'rnea_excite: {line}', flush=True))
    for warning in result.report['warnings']:
        print(f'rnea_excite: warning: {warning}', file=sys.stderr)
    c, t = result.report['conditioning'], result.report['trajectory']
    print(f'rnea_excite: {t["duration"]:g} s ({t["periods"]} periods of {t["period"]:g} s) '
          f'-> {args.output}')
    print(f'  condition number {c["condition_number"]:.4g} (random sines within the same '
          f'limits: {c["random_condition_number"]:.4g}), {len(result.report["base_parameters"])} '
          'base parameters')
    return 0


if __name__ == '__main__':
    sys.exit(main())
