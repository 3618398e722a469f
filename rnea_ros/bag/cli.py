"""
``rnea_bag``: the command line of the bag replay (``rnea_ros.bag.pipeline`` runs it).

Usage::

    rnea_bag BAG [--urdf FILE [--xacro-arg NAME:=VALUE]] [--floating-base]
                 [--joint-states TOPIC] [--output DIR] [--write-bag] [--start S] [--end S]
                 [--joints J1,J2] [--window S]
                 [--lock JOINT=VALUE[,...]] [--lock-missing]
                 [--contacts LINK,LINK [--friction MU]] ...

``rnea_bag --help`` lists every option; ``rnea_ros.bag.pipeline`` says what it does and what
comes out. Errors are printed as one ``rnea_bag: error: ...`` line; the exit status is then 2
for bad input (bag, URDF, options, an output directory that holds files without
``--overwrite``: the errors of ``rnea_ros.errors``), 1 when the machine fails (a full disk).
"""
from __future__ import annotations

import argparse
import sys

from rnea_ros.bag.inputs import add_joint_state_options
from rnea_ros.bag.pipeline import run
from rnea_ros.dynamics.description import parse_xacro_arg
from rnea_ros.errors import RneaError
from rnea_ros.recording import differentiate
from rnea_ros.recording.bagio.storage import reason


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='rnea_bag', description='Replay a rosbag2 through inverse dynamics (RNEA): '
        'predicted joint torques, their decomposition, residual against measured effort, plots.')
    parser.add_argument('bag', help='rosbag2 directory (sqlite3 or mcap) or .db3/.mcap file')
    parser.add_argument('--urdf', metavar='FILE',
                        help='robot URDF, or xacro file (.urdf.xacro) expanded with xacro '
                        '(default: the robot_description topic of the bag)')
    parser.add_argument('--xacro-arg', action='append', type=parse_xacro_arg,
                        metavar='NAME:=VALUE', help='an argument of the --urdf xacro file '
                        '(repeatable)')
    parser.add_argument('--floating-base', action='store_true',
                        help='free-flyer base; its state from the --odometry topic')
    parser.add_argument('--joint-states', default='joint_states', metavar='TOPIC',
                        help='sensor_msgs/JointState topic (default: %(default)s)')
    parser.add_argument('--output', metavar='DIR', help='output directory (default: '
                        './<bag name>_rnea)')
    parser.add_argument('--write-bag', action='store_true',
                        help='also write DIR/bag: the input topics plus joint_torques')
    parser.add_argument('--overwrite', action='store_true',
                        help='write into an output directory that holds files already: '
                        'replaces the outputs of rnea_bag, keeps every other file')
    window = parser.add_argument_group('time window and joints')
    window.add_argument('--start', type=float, metavar='S',
                        help='analyse from S seconds after the bag start')
    window.add_argument('--end', type=float, metavar='S',
                        help='analyse up to S seconds after the bag start')
    window.add_argument('--joints', metavar='J1,J2',
                        help='report only these joints (the dynamics still uses all)')
    add_joint_state_options(window)
    accel = parser.add_argument_group(
        'accelerations (Savitzky-Golay differentiator)', 'Per joint, from the positions or, '
        'where the data say that is better, from the velocities of the messages (see '
        'summary.json). Holes shorter than --max-gap are fitted through; samples within half '
        'a window of a longer gap or of the ends are left out.')
    accel.add_argument('--window', type=float, metavar='S',
                       help='fit window in seconds (default: '
                       f'{differentiate.DEFAULT_WINDOW:g}, or '
                       f'{differentiate.MIN_WINDOW_INTERVALS} median sample intervals when '
                       'longer)')
    accel.add_argument('--accelerations-from', choices=('auto', 'positions', 'velocities'),
                       default='auto', help='route of the estimated accelerations: per joint '
                       'the better one (default), or the one given (velocities only where the '
                       'messages carry them)')
    accel.add_argument('--order', type=int, default=differentiate.DEFAULT_ORDER,
                       help='polynomial degree, >= 2 (default: %(default)s)')
    accel.add_argument('--max-gap', type=float, metavar='S',
                       help='longer sample intervals split the fit (default: half the window)')
    accel.add_argument('--desired-accelerations', default='desired_accelerations',
                       metavar='TOPIC', help='trajectory_msgs/JointTrajectory topic of desired '
                       'accelerations, used when the bag has it (default: %(default)s)')
    accel.add_argument('--estimate-accelerations', action='store_true',
                       help='ignore the desired-accelerations topic')
    accel.add_argument('--acceleration-timeout', type=float, default=0.1, metavar='S',
                       help='age after which a desired acceleration no longer applies '
                       '(default: %(default)s)')
    contacts = parser.add_argument_group(
        'contacts (floating base)', 'A bag does not record a contact schedule: the links given '
        'are taken to touch the ground during the whole selected time window (--start/--end); '
        'select a window where that holds.')
    contacts.add_argument('--contacts', metavar='LINK[,LINK...]',
                          help='links in contact with the ground for the whole time window '
                          '(point contacts at the link origins, flat ground, normal +z); their '
                          'wrenches are solved per sample and enter the external term; needs '
                          '--floating-base')
    contacts.add_argument('--friction', type=float, default=0.7, metavar='MU',
                          help='Coulomb friction coefficient of the contacts (default: '
                          '%(default)s)')
    model = parser.add_argument_group('model')
    model.add_argument('--robot-description', default='robot_description', metavar='TOPIC',
                       help='std_msgs/String topic with the URDF (default: %(default)s)')
    model.add_argument('--odometry', default='odometry', metavar='TOPIC',
                       help='nav_msgs/Odometry topic of the floating base (default: '
                       '%(default)s)')
    model.add_argument('--gravity', type=float, nargs=3, metavar=('GX', 'GY', 'GZ'),
                       help='world gravity [m/s^2] (default: 0 0 -9.81)')
    model.add_argument('--inertia-check', choices=('error', 'warn'), default='error',
                       help='physically inconsistent URDF inertias: refuse or warn')
    model.add_argument('--joint-model', metavar='FILE',
                       help='joint friction and armature (a node parameters YAML file, as '
                       'rnea_identify writes joint_model.yaml): adds a friction term, the '
                       'armature to the inertial term, both to the prediction')
    out = parser.add_argument_group('output')
    out.add_argument('--format', choices=('parquet', 'csv'),
                     help='decomposition/residual tables (default: parquet if pyarrow is '
                     'installed, else csv)')
    out.add_argument('--no-plots', action='store_true', help='skip the PNG plots')
    out.add_argument('--summary-window', type=float, default=1.0, metavar='S',
                     help='length of the "worst time windows" of the summary (default: '
                     '%(default)s)')
    out.add_argument('--progress', action=argparse.BooleanOptionalAction, default=None,
                     help='progress bars on stderr (default: on a terminal, for long bags)')
    out.add_argument('--threads', type=int, metavar='N',
                     help='threads of the computations (differentiation, dynamics, tables '
                     'and summary beside the plots; 1: all in one thread, as a fleet worker '
                     'runs a bag; default: one per core)')
    out.add_argument('--timings', action='store_true',
                     help='print the time spent reading, differentiating, in the dynamics and '
                     'writing')
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result = run(args)
    except RneaError as exc:  # the input: the bag, the URDF, an option, the output directory
        print(f'rnea_bag: error: {exc}', file=sys.stderr)
        return 2
    except (ValueError, OSError) as exc:  # not the input: a full disk, a failing device
        print(f'rnea_bag: error: {reason(exc)}', file=sys.stderr)
        return 1
    for warning in result.warnings:
        print(f'rnea_bag: warning: {warning}', file=sys.stderr)
    print(f'rnea_bag: {result.samples} samples -> {result.output}')
    if args.timings:
        for phase, seconds in result.timings.items():
            print(f'  {phase:<16} {seconds:8.2f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
