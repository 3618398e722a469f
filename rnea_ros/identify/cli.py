"""
``rnea_identify``: the command line of identification (``rnea_ros.identify.pipeline``).

Usage::

    rnea_identify BAG [BAG...] --urdf FILE [--output DIR] [--overwrite] [--joint-states TOPIC]
                  [--holdout F | --validate BAG] [--friction MODEL]
                  [--offset {torque,sensor-bias}] [--inertial {physical,base,none}]
                  [--effort-delay S] [--lock JOINT=VALUE[,...]] [--mjcf]
                  [--effort current --anchor-payload LINK=KG --anchor-bags BAG...]
                  [--anchor-prior W] ...

Writes into DIR (default ``./<first bag name>_identified``): ``identified.urdf``,
``actuation.yaml`` (a node parameters file), ``identified.xml`` (MJCF, with ``--mjcf``),
``identification.json``, ``identification.md`` and ``validation_<group>.png``
(``rnea_ros.identify.report`` lists what each holds; ``rnea_ros.identify.outputs`` how a
directory that holds files is refused or, with ``--overwrite``, updated). The options are
the fields of ``IdentifyOptions``, declared as ``rnea_bag``'s ``BagOptions`` are; the
joint_states options (``--clock``, ``--lock``, ``--lock-missing``, ``--ignore-extra-joints``)
are ``rnea_bag``'s own fields. Bad input (no effort, unknown joints, too few samples, a
floating base, an unreadable bag or URDF) prints one ``rnea_identify: error: ...`` line and
exits with status 2; a failing machine (a full disk: the line names the file) with status 1,
as ``rnea_bag``; a Ctrl-C prints one line and exits with 130 (DIR holds the old files or all
the new ones).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
import sys
import time

import numpy as np

from rnea_ros.errors import InputError, UsageParser
from rnea_ros.identify import current, inertial_layout, outputs, payload, pipeline, samples
from rnea_ros.tools import reading
from rnea_ros.tools.options import add_fields, from_namespace, MAIN, option, positional, \
    THREADS
from rnea_ros.tools.run import run_tool
from rnea_ros.tools.staging import check as check_output
from rnea_ros.tools.text import print_timings


JOINTS = 'joints and time'
GROUPS = {MAIN: None, JOINTS: 'As rnea_bag. A held joint the bag gives no effort for adds no '
          'equations to the fit.'}


@dataclass(frozen=True)
class IdentifyOptions:
    """What one ``rnea_identify`` run reads and writes (``rnea_identify --help``)."""

    bags: list = positional(MAIN, nargs='+', metavar='BAG', help='rosbag2 directories '
                            '(sqlite3 or mcap) or .db3/.mcap files')
    urdf: str = positional(MAIN, required=True, metavar='FILE', help='the robot URDF')
    output: str | None = option(None, MAIN, metavar='DIR', help='output directory (default: '
                                './<first bag name>_identified)')
    overwrite: bool = option(False, MAIN, action='store_true', help='write into an output '
                             'directory that holds files already: replaces the outputs of '
                             'rnea_identify, keeps every other file')
    joint_states: str = option('joint_states', MAIN, metavar='TOPIC',
                               help='sensor_msgs/JointState topic with position, effort and '
                               'optionally velocity (default: %(default)s)')
    clock: str = reading.clock(JOINTS)
    ignore_extra_joints: bool = reading.ignore_extra_joints(JOINTS)
    lock: str | None = reading.lock(JOINTS)
    lock_missing: bool = reading.lock_missing(JOINTS)
    window: float | str = reading.window(JOINTS)
    effort_delay: float = option(0.0, MAIN, type=float, metavar='S',
                                 bounds=(-samples.MAX_DELAY, samples.MAX_DELAY),
                                 help='the effort stamped t is the torque that balanced the '
                                 'state of instant t - S (a sensor or logger reporting it S '
                                 'late): each effort is paired with the state interpolated at '
                                 'its stamp - S (default: %(default)s)')
    holdout: float = option(0.3, MAIN, exclusive='validation', type=float, metavar='F',
                            bounds=pipeline.HOLDOUT,
                            help='validate on the last fraction F of the time of each bag, '
                            'train on the rest (default: %(default)s)')
    validate: str | None = option(None, MAIN, exclusive='validation', metavar='BAG',
                                  help='validate on this bag, train on all of the BAGs')
    friction: str = option(inertial_layout.DEFAULT_FRICTION, MAIN,
                           choices=tuple(inertial_layout.FRICTION_MODELS),
                           help='friction per joint: fc tanh(v / %g) + fv v + offset, or none '
                           '(default: %%(default)s)' % inertial_layout.DEFAULT_VELOCITY_THRESHOLD)
    offset: str = option(outputs.OFFSETS[0], MAIN, choices=outputs.OFFSETS,
                         help='what the fitted constant per joint is: torque, a torque the '
                         'joint feels (actuation.yaml friction.<joint>.offset, the node '
                         'applies it; default), or sensor-bias, the bias of the effort sensor '
                         '(actuation.yaml effort_bias.<joint>: the node never applies it, '
                         'its observer takes it out of the measured effort)')
    inertial: str = option('physical', MAIN, choices=pipeline.INERTIAL_MODES,
                           help='physical: consistent link inertias near the URDF (default); '
                           'base: base parameters only, URDF inertias kept; none: URDF '
                           'inertias kept, only friction and armature identified')
    effort: str = option(current.EFFORTS[0], MAIN, choices=current.EFFORTS,
                         help='what the effort is: torque (default), or current, a motor '
                         "current proportional to the joint's torque: each joint's gain "
                         '(actuation.yaml effort_gain.<joint>) is fitted with the robot, '
                         'anchored by --anchor-payload in --anchor-bags')
    anchor_payload: str | None = option(None, MAIN, metavar='LINK=KG',
                                        help='--effort current: a payload of this known mass '
                                        '[kg] was fixed to LINK while --anchor-bags were '
                                        'recorded (its centre of mass and inertia unknown)')
    anchor_bags: list | None = option(None, MAIN, nargs='+', metavar='BAG',
                                      help='--effort current: bags recorded with the payload '
                                      'of --anchor-payload attached; they train the gains '
                                      'only')
    anchor_prior: float | None = option(None, MAIN, type=float, metavar='W',
                                        bounds=(current.MIN_PRIOR, current.MAX_PRIOR),
                                        help="--effort current: anchor the gains on the URDF's "
                                        'rigid bodies instead, taken as right, their torques '
                                        'within the fraction W (added to the std of the gains)')
    payload: str | None = option(None, MAIN, exclusive='payload', metavar='LINK',
                                 help='identify only a payload '
                                 'rigidly fixed to LINK, on the robot of --urdf taken as right: '
                                 'writes payload.yaml (node parameters) and payload.json into '
                                 'DIR (default ./<first bag name>_payload); every sample fits, '
                                 '--holdout, --validate and --inertial do not apply')
    mjcf: bool = option(False, MAIN, exclusive='payload', action='store_true',
                        help='write the identified model as MJCF too (identified.xml: inertias, '
                        'armature, damping = viscous, frictionloss = Coulomb friction; the '
                        'offsets dropped), for MuJoCo; needs the mujoco package')
    no_plots: bool = option(False, MAIN, action='store_true', help='skip the PNG plots')
    threads: int | None = option(None, MAIN, type=int, bounds=THREADS,
                                 help='threads of the regressor batch')
    timings: bool = option(False, MAIN, action='store_true', help='print the time spent per '
                           'phase (model, reading, regressor, fit, writing)')


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of ``rnea_identify``: the fields of ``IdentifyOptions``."""
    parser = UsageParser(
        prog='rnea_identify', description='Identify the inertial parameters, '
        'joint friction and armature of a fixed-base robot from rosbag2 bags with measured '
        'joint effort; write an identified URDF, an actuation model parameters file for the node, '
        'a report and plots.')
    add_fields(parser, IdentifyOptions, GROUPS)
    return parser


def parse(argv: list[str] | None = None) -> IdentifyOptions:
    """Parse the command line (default: ``sys.argv``) into ``IdentifyOptions``."""
    return from_namespace(build_parser().parse_args(argv), IdentifyOptions)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    output = Path(args.output) if args.output else Path.cwd() / (
        f'{Path(args.bags[0]).name}_{"identified" if args.payload is None else "payload"}')
    reading = {'clock': args.clock, 'lock': args.lock, 'lock_missing': args.lock_missing,
               'ignore_extra': args.ignore_extra_joints, 'window': args.window,
               'effort_delay': args.effort_delay}
    return run_tool('rnea_identify', lambda: _identify(args, output, reading))


def _identify(args: IdentifyOptions, output: Path, reading: dict) -> int:
    if args.payload is not None:  # a payload on a known robot: identify/payload.py
        if args.effort != 'torque' or args.anchor_payload or args.anchor_bags \
                or args.anchor_prior is not None:
            raise InputError('--payload identifies a payload from joint torques: --effort '
                             'current and the --anchor options do not apply')
        return payload.run(args, output, reading)
    check_output(output, args.overwrite, outputs.TOOL)  # before any work
    result = pipeline.identify(args.bags, args.urdf, joint_states=args.joint_states,
                               holdout=0.0 if args.validate else args.holdout,
                               validate=args.validate, friction=args.friction,
                               inertial=args.inertial, threads=args.threads,
                               reading=reading, effort=args.effort,
                               anchor_payload=args.anchor_payload,
                               anchor_bags=args.anchor_bags or (),
                               anchor_prior=args.anchor_prior)
    settings = {'bags': args.bags, 'urdf': args.urdf, 'joint_states': args.joint_states,
                'validation': f'bag {args.validate}' if args.validate else
                f'last {args.holdout:g} of each bag', 'friction': args.friction,
                'velocity_threshold': result.layout.velocity_threshold,
                'offset': args.offset, 'inertial': args.inertial, **reading}
    if args.effort != 'torque':
        settings.update(effort=args.effort, anchor_payload=args.anchor_payload,
                        anchor_bags=args.anchor_bags, anchor_prior=args.anchor_prior)
    begin = time.perf_counter()
    outputs.write(result, output, settings, plots=not args.no_plots,
                  overwrite=args.overwrite, mjcf=args.mjcf)
    result.timings['writing'] = time.perf_counter() - begin
    for warning in result.warnings:
        print(f'rnea_identify: warning: {warning}', file=sys.stderr)
    rms = result.rms
    data = 'validation' if result.counts['validation'] else 'training'
    print(f'rnea_identify: {result.counts["training"]} training samples -> {output}')
    print(f'  RMS residual on {data} data, per joint: ' + ', '.join(result.layout.joint_names))
    for name in pipeline.MODELS:
        print(f'  {name:<14} ' + ' '.join(f'{x:8.4g}' for x in np.asarray(rms[name][data])))
    if result.gains is not None:
        gains = result.gains
        print('  effort gain   ' + ' '.join(
            f'{g:8.4g}' if ok else '       -' for g, ok in zip(gains.gains, gains.determined)))
        print('  (std)         ' + ' '.join(f'{s:8.2g}' for s in gains.std))
    if args.timings:
        print_timings(result.timings)
    return 0


if __name__ == '__main__':
    sys.exit(main())
