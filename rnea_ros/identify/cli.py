"""
``rnea_identify``: the command line of identification (``rnea_ros.identify.pipeline``).

Usage::

    rnea_identify BAG [BAG...] --urdf FILE --output DIR [--overwrite] [--joint-states TOPIC]
                  [--holdout F | --validate BAG] [--friction MODEL]
                  [--inertial {physical,base,none}]

Writes into DIR: ``identified.urdf``, ``joint_model.yaml`` (a node parameters file),
``identification.json``, ``identification.md`` and ``validation_<group>.png``
(``rnea_ros.identify.report`` lists what each holds; ``rnea_ros.identify.outputs`` how a
directory that holds files is refused or, with ``--overwrite``, updated). Bad input (no
effort, unknown joints, too few samples, a floating base, an unreadable bag or URDF) prints
one ``rnea_identify: error: ...`` line and exits with status 2; a Ctrl-C prints one line and
exits with 130 (DIR holds the old files or all the new ones).
"""
from __future__ import annotations

import argparse
from pathlib import Path
import sys
import time

import numpy as np

from rnea_ros.bag.outputs import check as check_output
from rnea_ros.errors import RneaError
from rnea_ros.identify import outputs, parameters, pipeline


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='rnea_identify', description='Identify the inertial parameters, '
        'joint friction and armature of a fixed-base robot from rosbag2 bags with measured '
        'joint effort; write an identified URDF, a joint model parameters file for the node, '
        'a report and plots.')
    parser.add_argument('bags', nargs='+', metavar='BAG',
                        help='rosbag2 directories (sqlite3 or mcap) or .db3/.mcap files')
    parser.add_argument('--urdf', required=True, metavar='FILE', help='the robot URDF')
    parser.add_argument('--output', required=True, metavar='DIR', help='output directory')
    parser.add_argument('--overwrite', action='store_true',
                        help='write into an output directory that holds files already: '
                        'replaces the outputs of rnea_identify, keeps every other file')
    parser.add_argument('--joint-states', default='joint_states', metavar='TOPIC',
                        help='sensor_msgs/JointState topic with position, effort and '
                        'optionally velocity (default: %(default)s)')
    check = parser.add_mutually_exclusive_group()
    check.add_argument('--holdout', type=float, default=0.3, metavar='F',
                       help='validate on the last fraction F of the time of each bag, train '
                       'on the rest (default: %(default)s)')
    check.add_argument('--validate', metavar='BAG',
                       help='validate on this bag, train on all of the BAGs')
    parser.add_argument('--friction', default=parameters.DEFAULT_FRICTION,
                        choices=tuple(parameters.FRICTION_MODELS),
                        help='friction per joint: fc tanh(v / %g) + fv v + offset, or none '
                        '(default: %%(default)s)' % parameters.DEFAULT_VELOCITY_THRESHOLD)
    parser.add_argument('--inertial', default='physical', choices=pipeline.INERTIAL_MODES,
                        help='physical: consistent link inertias near the URDF (default); '
                        'base: base parameters only, URDF inertias kept; none: URDF inertias '
                        'kept, only friction and armature identified')
    parser.add_argument('--no-plots', action='store_true', help='skip the PNG plots')
    parser.add_argument('--threads', type=int, help='threads of the regressor batch')
    parser.add_argument('--timings', action='store_true',
                        help='print the time spent per phase (model, reading, regressor, fit, '
                        'writing)')
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_output(Path(args.output), args.overwrite, outputs.TOOL)  # before any work
        result = pipeline.identify(args.bags, args.urdf, joint_states=args.joint_states,
                                   holdout=0.0 if args.validate else args.holdout,
                                   validate=args.validate, friction=args.friction,
                                   inertial=args.inertial, threads=args.threads)
        settings = {'bags': args.bags, 'urdf': args.urdf, 'joint_states': args.joint_states,
                    'validation': f'bag {args.validate}' if args.validate else
                    f'last {args.holdout:g} of each bag', 'friction': args.friction,
                    'velocity_threshold': result.layout.velocity_threshold,
                    'inertial': args.inertial}
        begin = time.perf_counter()
        outputs.write(result, Path(args.output), settings, plots=not args.no_plots,
                      overwrite=args.overwrite)
        result.timings['writing'] = time.perf_counter() - begin
    except (RneaError, ValueError, OSError) as exc:
        print(f'rnea_identify: error: {exc}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print('rnea_identify: interrupted (no output is left half-written)', file=sys.stderr)
        return 130
    for warning in result.warnings:
        print(f'rnea_identify: warning: {warning}', file=sys.stderr)
    rms = result.rms
    data = 'validation' if result.counts['validation'] else 'training'
    print(f'rnea_identify: {result.counts["training"]} training samples -> {args.output}')
    print(f'  RMS residual on {data} data, per joint: ' + ', '.join(result.layout.joint_names))
    for name in pipeline.MODELS:
        print(f'  {name:<14} ' + ' '.join(f'{x:8.4g}' for x in np.asarray(rms[name][data])))
    if args.timings:
        for phase, seconds in result.timings.items():
            print(f'  {phase:<16} {seconds:8.2f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
