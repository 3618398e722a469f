"""
``BagOptions``: the API of one bag analysis, every option's default and help declared once.

Declared with ``rnea_ros.tools.options`` (``option``, ``positional``), as every tool's options
are: ``rnea_bag``'s command line is built from the fields (``add_arguments``) and parsed back
into ``BagOptions`` (``rnea_ros.tools.options.from_namespace``); ``rnea_fleet`` adds the per-bag
fields to its own parser the same way and varies them with ``dataclasses.replace``;
``rnea_identify`` takes the joint_states fields from here (``shared``).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, fields

from rnea_ros.description.robot_file import parse_xacro_arg
from rnea_ros.observer.momentum import DEFAULT_GAIN, MAX_GAIN, MEASURED_EFFORTS, MIN_GAIN
from rnea_ros.recording import differentiate
from rnea_ros.tools import reading
from rnea_ros.tools.options import add_fields, MAIN, option, positional, SPAN, THREADS, TIME

WINDOW = 'time window and joints'
ACCELERATIONS = 'accelerations (Savitzky-Golay differentiator)'
CONTACTS = 'contacts (floating base)'
MODEL = 'model'
OBSERVER = 'external torques and collisions (momentum observer)'
OUTPUT = 'output'
FRICTION = (1e-3, 10.0)  # --friction: a Coulomb coefficient; rubber on concrete is about 1
GROUPS = {  # title -> description, in the order of --help
    MAIN: None,
    WINDOW: None,
    ACCELERATIONS: 'Per joint, from the positions or, where the data say that is better, from '
    'the velocities of the messages (see summary.json). Holes shorter than --max-gap are '
    'fitted through; samples within half a window of a longer gap or of the ends are left out.',
    CONTACTS: 'A bag does not record a contact schedule: the links given are taken to touch '
    'the ground during the whole selected time window (--start/--end); select a window where '
    'that holds.',
    MODEL: None,
    OBSERVER: 'The node observer over the samples: external_torques.csv; without '
    '--collision-thresholds, collision_thresholds.yaml calibrated on this (collision-free) bag; '
    'with it, the collisions detected (summary.json). Fixed base only.',
    OUTPUT: None,
}


@dataclass(frozen=True)
class BagOptions:
    """What one ``rnea_bag`` analysis reads, computes and writes (``rnea_bag --help``)."""

    bag: str = positional(MAIN, numbers=False,
                          help='rosbag2 directory (sqlite3 or mcap) or .db3/.mcap file')
    urdf: str | None = option(
        None, MAIN, file=True, metavar='FILE', help='robot URDF, or xacro file (.urdf.xacro) '
        'expanded with xacro (default: the robot_description topic of the bag)')
    xacro_arg: list | None = option(
        None, MAIN, action='append', type=parse_xacro_arg, metavar='NAME:=VALUE',
        help='an argument of the --urdf xacro file (repeatable)')
    floating_base: bool = option(False, MAIN, action='store_true',
                                 help='free-flyer base; its state from the --odometry topic')
    joint_states: str = option('joint_states', MAIN, metavar='TOPIC',
                               help='sensor_msgs/JointState topic (default: %(default)s)')
    output: str | None = option(None, MAIN, numbers=False, metavar='DIR',
                                help='output directory (default: ./<bag name>_rnea)')
    write_bag: bool = option(False, MAIN, action='store_true',
                             help='also write DIR/bag: the input topics plus joint_torques')
    overwrite: bool = option(
        False, MAIN, numbers=False, action='store_true', help='write into an output directory '
        'that holds files already: replaces the outputs of rnea_bag, keeps every other file')
    start: float | None = option(None, WINDOW, type=float, metavar='S', bounds=TIME,
                                 help='analyse from S seconds after the bag start')
    end: float | None = option(None, WINDOW, type=float, metavar='S', bounds=TIME,
                               help='analyse up to S seconds after the bag start')
    joints: str | None = option(None, WINDOW, metavar='J1,J2',
                                help='report only these joints (the dynamics still uses all)')
    clock: str = reading.clock(WINDOW)
    ignore_extra_joints: bool = reading.ignore_extra_joints(WINDOW)
    lock: str | None = reading.lock(WINDOW)
    lock_missing: bool = reading.lock_missing(WINDOW)
    window: float | str = reading.window(ACCELERATIONS)
    accelerations_from: str = option(
        'auto', ACCELERATIONS, choices=('auto', 'positions', 'velocities'),
        help='route of the estimated accelerations: per joint the better one (default), or '
        'the one given (velocities only where the messages carry them)')
    order: int = option(differentiate.DEFAULT_ORDER, ACCELERATIONS, type=int, bounds=(2, 12),
                        help='polynomial degree (default: %(default)s)')
    max_gap: float | None = option(
        None, ACCELERATIONS, type=float, metavar='S', bounds=SPAN,
        help='longer sample intervals split the fit (default: half the window)')
    desired_accelerations: str = option(
        'desired_accelerations', ACCELERATIONS, metavar='TOPIC',
        help='trajectory_msgs/JointTrajectory topic of desired accelerations, used when the '
        'bag has it (default: %(default)s)')
    estimate_accelerations: bool = option(False, ACCELERATIONS, action='store_true',
                                          help='ignore the desired-accelerations topic')
    acceleration_timeout: float = option(
        0.1, ACCELERATIONS, type=float, metavar='S', bounds=SPAN, help='age after which a desired '
        'acceleration no longer applies (default: %(default)s)')
    contacts: str | None = option(
        None, CONTACTS, metavar='LINK[,LINK...]', help='links in contact with the ground for '
        'the whole time window (point contacts at the link origins, flat ground, normal +z); '
        'their wrenches are solved per sample and enter the external term; needs '
        '--floating-base')
    friction: float = option(
        0.7, CONTACTS, type=float, metavar='MU', bounds=FRICTION,
        help='Coulomb friction coefficient of the contacts (default: %(default)s)')
    robot_description: str = option(
        'robot_description', MODEL, metavar='TOPIC',
        help='std_msgs/String topic with the URDF (default: %(default)s)')
    odometry: str = option('odometry', MODEL, metavar='TOPIC',
                           help='nav_msgs/Odometry topic of the floating base (default: '
                           '%(default)s)')
    gravity: list | None = option(None, MODEL, type=float, nargs=3, bounds=(-100.0, 100.0),
                                  metavar=('GX', 'GY', 'GZ'),
                                  help='world gravity [m/s^2] (default: 0 0 -9.81), each')
    inertia_check: str = option('error', MODEL, choices=('error', 'warn'),
                                help='physically inconsistent URDF inertias: refuse or warn')
    actuation: str | None = option(
        None, MODEL, file=True, metavar='FILE', help='joint friction and armature (a node '
        'parameters YAML file, as rnea_identify writes actuation.yaml): adds a friction '
        'term, the armature to the inertial term, both to the prediction')
    observer: bool = option(False, OBSERVER, action='store_true',
                            help='run the momentum observer: external joint torques')
    observer_gain: float = option(
        DEFAULT_GAIN, OBSERVER, type=float, metavar='K', bounds=(MIN_GAIN, MAX_GAIN),
        help='observer gain [1/s]: the residual follows the external torque with time '
        'constant 1/K (default: %(default)s)')
    measured_effort: str = option(
        MEASURED_EFFORTS[0], OBSERVER, choices=MEASURED_EFFORTS,
        help='what the effort is: link-side torque (default), or motor torque from which '
        'the friction and armature of --actuation are taken out')
    collision_thresholds: str | None = option(
        None, OBSERVER, file=True, metavar='FILE', help='per-joint thresholds (a node '
        'parameters file with collision_threshold.<joint>, as --observer writes it): list the '
        'collisions on this bag')
    format: str | None = option(  # noqa: A003 - the option's name
       None, OUTPUT, choices=('parquet', 'csv'), help='decomposition/residual tables '
       '(default: parquet if pyarrow is installed, else csv)')
    no_plots: bool = option(False, OUTPUT, action='store_true', help='skip the PNG plots')
    summary_window: float = option(
        1.0, OUTPUT, type=float, metavar='S', bounds=SPAN,
        help='length of the "worst time windows" of the summary (default: %(default)s)')
    progress: bool | None = option(
        None, OUTPUT, numbers=False, action=argparse.BooleanOptionalAction,
        help='progress bars on stderr (default: on a terminal, for long bags)')
    threads: int | None = option(
        None, OUTPUT, numbers=False, type=int, metavar='N', bounds=THREADS,
        help='threads of the computations '
        '(differentiation, dynamics, tables and summary beside the plots; 1: all in one '
        'thread, as a fleet worker runs a bag; default: one per core)')
    timings: bool = option(False, OUTPUT, numbers=False, action='store_true',
                           help='print the time spent reading, differentiating, in the '
                           'dynamics and writing')


FILE_OPTIONS = frozenset(f.name for f in fields(BagOptions) if f.metadata['file'])
# The options that never change the results: where and how they are written.
RUN_OPTIONS = frozenset(f.name for f in fields(BagOptions) if not f.metadata['numbers'])


def add_arguments(parser: argparse.ArgumentParser, exclude=frozenset(),
                  main_title: str | None = None) -> list[str]:
    """
    Add the ``BagOptions`` fields (but ``exclude``) to ``parser`` in their groups.

    ``main_title``: put the ungrouped fields in a group of that title (None: on the parser
    itself). Returns the names of the fields added.
    """
    return add_fields(parser, BagOptions, GROUPS, exclude, main_title)
