"""
``BagOptions``: the API of one bag analysis, every option's default and help declared once.

``rnea_bag``'s command line is built from the fields (``add_arguments``) and parsed back into
``BagOptions`` (``from_namespace``); ``rnea_fleet`` adds the per-bag fields to its own parser
the same way and varies them with ``dataclasses.replace``; ``rnea_identify`` shares the
joint_states fields (``add_joint_state_options``). A field's metadata holds its flag, its
argparse group and keywords (``help``, ``metavar``, ``type``, ``choices``...), and ``file``
for an option naming a file (``rnea_fleet`` digests it by content).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field, fields

from rnea_ros.dynamics.description import parse_xacro_arg
from rnea_ros.recording import differentiate

MAIN = ''
WINDOW = 'time window and joints'
ACCELERATIONS = 'accelerations (Savitzky-Golay differentiator)'
CONTACTS = 'contacts (floating base)'
MODEL = 'model'
OUTPUT = 'output'
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
    OUTPUT: None,
}
JOINT_STATE_OPTIONS = ('clock', 'ignore_extra_joints', 'lock', 'lock_missing')


def _option(default, group: str, *, file: bool = False, **argparse_keywords):
    """Declare a field: its default, argparse group and keywords (the flag from its name)."""
    return field(default=default, metadata={'group': group, 'file': file,
                                            'argparse': argparse_keywords})


@dataclass(frozen=True)
class BagOptions:
    """What one ``rnea_bag`` analysis reads, computes and writes (``rnea_bag --help``)."""

    bag: str = field(metadata={'group': MAIN, 'file': False, 'argparse': {
        'help': 'rosbag2 directory (sqlite3 or mcap) or .db3/.mcap file'}})
    urdf: str | None = _option(
        None, MAIN, file=True, metavar='FILE', help='robot URDF, or xacro file (.urdf.xacro) '
        'expanded with xacro (default: the robot_description topic of the bag)')
    xacro_arg: list | None = _option(
        None, MAIN, action='append', type=parse_xacro_arg, metavar='NAME:=VALUE',
        help='an argument of the --urdf xacro file (repeatable)')
    floating_base: bool = _option(False, MAIN, action='store_true',
                                  help='free-flyer base; its state from the --odometry topic')
    joint_states: str = _option('joint_states', MAIN, metavar='TOPIC',
                                help='sensor_msgs/JointState topic (default: %(default)s)')
    output: str | None = _option(None, MAIN, metavar='DIR',
                                 help='output directory (default: ./<bag name>_rnea)')
    write_bag: bool = _option(False, MAIN, action='store_true',
                              help='also write DIR/bag: the input topics plus joint_torques')
    overwrite: bool = _option(
        False, MAIN, action='store_true', help='write into an output directory that holds '
        'files already: replaces the outputs of rnea_bag, keeps every other file')
    start: float | None = _option(None, WINDOW, type=float, metavar='S',
                                  help='analyse from S seconds after the bag start')
    end: float | None = _option(None, WINDOW, type=float, metavar='S',
                                help='analyse up to S seconds after the bag start')
    joints: str | None = _option(None, WINDOW, metavar='J1,J2',
                                 help='report only these joints (the dynamics still uses all)')
    clock: str = _option('header', WINDOW, choices=('header', 'receive'),
                         help='sample times: message header stamps (default) or receive times')
    ignore_extra_joints: bool = _option(
        False, WINDOW, action='store_true',
        help='skip joint_states names that the URDF does not have')
    lock: str | None = _option(
        None, WINDOW, metavar='JOINT=VALUE[,...]', help='hold these URDF joints at a fixed '
        'position (rad, or m for prismatic joints; inside the joint limits), e.g. a gripper '
        'the bag does not publish; overrides the bag')
    lock_missing: bool = _option(
        False, WINDOW, action='store_true', help='hold every URDF joint the bag never '
        'publishes at 0 (or at the limit nearest to 0); listed in a warning and the summary')
    window: float | None = _option(
        None, ACCELERATIONS, type=float, metavar='S', help='fit window in seconds (default: '
        f'{differentiate.DEFAULT_WINDOW:g}, or {differentiate.MIN_WINDOW_INTERVALS} median '
        'sample intervals when longer)')
    accelerations_from: str = _option(
        'auto', ACCELERATIONS, choices=('auto', 'positions', 'velocities'),
        help='route of the estimated accelerations: per joint the better one (default), or '
        'the one given (velocities only where the messages carry them)')
    order: int = _option(differentiate.DEFAULT_ORDER, ACCELERATIONS, type=int,
                         help='polynomial degree, >= 2 (default: %(default)s)')
    max_gap: float | None = _option(
        None, ACCELERATIONS, type=float, metavar='S',
        help='longer sample intervals split the fit (default: half the window)')
    desired_accelerations: str = _option(
        'desired_accelerations', ACCELERATIONS, metavar='TOPIC',
        help='trajectory_msgs/JointTrajectory topic of desired accelerations, used when the '
        'bag has it (default: %(default)s)')
    estimate_accelerations: bool = _option(False, ACCELERATIONS, action='store_true',
                                           help='ignore the desired-accelerations topic')
    acceleration_timeout: float = _option(
        0.1, ACCELERATIONS, type=float, metavar='S', help='age after which a desired '
        'acceleration no longer applies (default: %(default)s)')
    contacts: str | None = _option(
        None, CONTACTS, metavar='LINK[,LINK...]', help='links in contact with the ground for '
        'the whole time window (point contacts at the link origins, flat ground, normal +z); '
        'their wrenches are solved per sample and enter the external term; needs '
        '--floating-base')
    friction: float = _option(
        0.7, CONTACTS, type=float, metavar='MU',
        help='Coulomb friction coefficient of the contacts (default: %(default)s)')
    robot_description: str = _option(
        'robot_description', MODEL, metavar='TOPIC',
        help='std_msgs/String topic with the URDF (default: %(default)s)')
    odometry: str = _option('odometry', MODEL, metavar='TOPIC',
                            help='nav_msgs/Odometry topic of the floating base (default: '
                            '%(default)s)')
    gravity: list | None = _option(None, MODEL, type=float, nargs=3,
                                   metavar=('GX', 'GY', 'GZ'),
                                   help='world gravity [m/s^2] (default: 0 0 -9.81)')
    inertia_check: str = _option('error', MODEL, choices=('error', 'warn'),
                                 help='physically inconsistent URDF inertias: refuse or warn')
    joint_model: str | None = _option(
        None, MODEL, file=True, metavar='FILE', help='joint friction and armature (a node '
        'parameters YAML file, as rnea_identify writes joint_model.yaml): adds a friction '
        'term, the armature to the inertial term, both to the prediction')
    format: str | None = _option(  # noqa: A003 - the option's name
        None, OUTPUT, choices=('parquet', 'csv'), help='decomposition/residual tables '
        '(default: parquet if pyarrow is installed, else csv)')
    no_plots: bool = _option(False, OUTPUT, action='store_true', help='skip the PNG plots')
    summary_window: float = _option(
        1.0, OUTPUT, type=float, metavar='S',
        help='length of the "worst time windows" of the summary (default: %(default)s)')
    progress: bool | None = _option(
        None, OUTPUT, action=argparse.BooleanOptionalAction,
        help='progress bars on stderr (default: on a terminal, for long bags)')
    threads: int | None = _option(
        None, OUTPUT, type=int, metavar='N', help='threads of the computations '
        '(differentiation, dynamics, tables and summary beside the plots; 1: all in one '
        'thread, as a fleet worker runs a bag; default: one per core)')
    timings: bool = _option(False, OUTPUT, action='store_true', help='print the time spent '
                            'reading, differentiating, in the dynamics and writing')


FILE_OPTIONS = frozenset(f.name for f in fields(BagOptions) if f.metadata['file'])


def add_arguments(parser: argparse.ArgumentParser, exclude=frozenset(),
                  main_title: str | None = None) -> list[str]:
    """
    Add the ``BagOptions`` fields (but ``exclude``) to ``parser`` in their groups.

    ``main_title``: put the ungrouped fields in a group of that title (None: on the parser
    itself). Returns the names of the fields added.
    """
    names = []
    for title, description in GROUPS.items():
        chosen = [f for f in fields(BagOptions)
                  if f.metadata['group'] == title and f.name not in exclude]
        if not chosen:
            continue
        if title == MAIN:
            target = parser if main_title is None else \
                parser.add_argument_group(main_title)
        else:
            target = parser.add_argument_group(title, description)
        for item in chosen:
            _add(target, item)
            names.append(item.name)
    return names


def add_joint_state_options(group) -> None:
    """Add the joint_states fields (``JOINT_STATE_OPTIONS``) to an argparse parser or group."""
    for item in fields(BagOptions):
        if item.name in JOINT_STATE_OPTIONS:
            _add(group, item)


def _add(target, item) -> None:
    keywords = dict(item.metadata['argparse'])
    if item.name == 'bag':
        target.add_argument(item.name, **keywords)
        return
    if item.default is not None and keywords.get('action') != 'store_true':
        keywords['default'] = item.default
    target.add_argument('--' + item.name.replace('_', '-'), **keywords)


def from_namespace(namespace: argparse.Namespace, **given) -> BagOptions:
    """Return the ``BagOptions`` of a parsed namespace (its fields present), with ``given``."""
    names = {f.name for f in fields(BagOptions)}
    values = {key: value for key, value in vars(namespace).items() if key in names}
    return BagOptions(**{**values, **given})
