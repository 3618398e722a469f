"""
``rnea_convert``: a time-series log (CSV, Parquet, .npz, .mat) as a rosbag2 bag of joint_states.

Usage::

    rnea_convert LOG --output BAG --joints J1,J2,... --time COLUMN [--time-unit ms]
                 [--time-offset S] --position COLUMNS [--velocity COLUMNS] [--effort COLUMNS]
                 [--position-unit deg] [--velocity-unit deg/s] [--effort-scale F]
                 [--topic joint_states] [--urdf FILE]

One ``sensor_msgs/JointState`` message per row of LOG on ``/joint_states`` (header stamp and
log time: the time column), in the new MCAP bag BAG (``rnea_ros.convert.mapping`` says how the
columns and units are given, ``rnea_ros.convert.arrays`` how the arrays of an ``.npz`` or
``.mat`` file are columns: ``q[{n}]`` for the columns of the matrix ``q``). Every column and
row is read and checked before BAG is created: a bad input (a missing column, a value that is
empty or not a finite number, times that do not increase, an option out of range, an existing
BAG; with ``--urdf``, positions in another unit than ``--position-unit``, judged against the
joint limits: ``rnea_ros.recording.plausibility``) prints one ``rnea_convert: error: ...`` line
naming the column and row (or the joint), exits with status 2 and writes nothing; a failing
machine (a full disk) exits with status 1 and removes what it wrote of BAG.
"""
from __future__ import annotations

import argparse
from pathlib import Path
import shutil
import sys

from rnea_ros.convert.mapping import (ColumnMapping, joint_names, JointSamples, MAX_OFFSET,
                                      offset_ns, POSITION_UNITS, TIME_UNITS, VELOCITY_UNITS)
from rnea_ros.convert.table import read_columns
from rnea_ros.errors import Bounded, InputError, MachineError, UsageParser
from rnea_ros.tools.run import run_tool

MAX_EFFORT_SCALE = 1e6  # |--effort-scale|: past it, a unit mistake rather than a scale
# The numbers of the command line: seconds as exact decimal text (whole ns), the effort scale.
TIME_OFFSET = Bounded(float, -MAX_OFFSET, MAX_OFFSET, exact=True)
EFFORT_SCALE = Bounded(float, -MAX_EFFORT_SCALE, MAX_EFFORT_SCALE)


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of ``rnea_convert``."""
    parser = UsageParser(prog='rnea_convert', description='Write a time-series log (CSV, '
                         'Parquet, NumPy .npz or MATLAB .mat) as a rosbag2 MCAP bag of '
                         'sensor_msgs/JointState messages, one per row, for rnea_bag, '
                         'rnea_identify and rnea_fleet.')
    parser.add_argument('log', metavar='LOG', help='the log: a .csv file (a header line, '
                        'comma separated), a .parquet file, or a NumPy .npz or MATLAB .mat '
                        '(v7 or older) file of named arrays: a vector is the column of its '
                        'name, a matrix of one row per sample the columns NAME[1], NAME[2], ...')
    parser.add_argument('--output', required=True, metavar='BAG',
                        help='the bag directory to create (must not exist)')
    parser.add_argument('--joints', required=True, metavar='J1,J2,...',
                        help='the joint names, in the order of the columns ({n} = 1, 2, ...)')
    parser.add_argument('--time', required=True, metavar='COLUMN', help='the time column')
    parser.add_argument('--time-unit', default='s', choices=tuple(TIME_UNITS),
                        help='unit of the time column (default: %(default)s)')
    parser.add_argument('--time-offset', default='0', metavar='S', type=TIME_OFFSET,
                        help='seconds added to the time column: the stamps are seconds since '
                        f'the epoch (default: %(default)s); {TIME_OFFSET.expected}')
    for field, what in (('position', 'positions (required)'), ('velocity', 'velocities'),
                        ('effort', 'efforts (torque, N m; N for a prismatic joint)')):
        parser.add_argument(f'--{field}', required=field == 'position', metavar='COLUMNS',
                            help=f'the {what}: a template with {{n}} (the place of the joint '
                            'from 1) or {joint} (its name), e.g. Position{n} or q[{n}] (the '
                            'columns of the matrix q), or one column per joint separated by '
                            'commas')
    parser.add_argument('--position-unit', default='rad', choices=tuple(POSITION_UNITS),
                        help='unit of the position columns (default: %(default)s)')
    parser.add_argument('--velocity-unit', default='rad/s', choices=tuple(VELOCITY_UNITS),
                        help='unit of the velocity columns (default: %(default)s)')
    parser.add_argument('--effort-scale', type=EFFORT_SCALE, default=1.0, metavar='F',
                        help='effort = F x the column (default: %(default)s); nonzero, '
                        f'{EFFORT_SCALE.expected}')
    parser.add_argument('--topic', default='/joint_states',
                        help='the topic of the messages (default: %(default)s)')
    parser.add_argument('--urdf', metavar='FILE', help="the robot's URDF: the converted "
                        'positions checked against its joint limits before the bag is written '
                        '(a log in another unit than --position-unit refused, joints beyond '
                        'the limits warned about)')
    return parser


def mapping_of(args: argparse.Namespace) -> ColumnMapping:
    """Return the column mapping of the parsed options (``InputError`` naming a bad one)."""
    scale = args.effort_scale
    if not EFFORT_SCALE.within(scale) or scale == 0.0:
        raise InputError(f'--effort-scale {scale:g}: expected a nonzero number of magnitude '
                         f'at most {MAX_EFFORT_SCALE:g}')
    if not args.topic.strip('/') or any(c.isspace() for c in args.topic):
        raise InputError(f'--topic {args.topic!r}: expected a topic name')
    return ColumnMapping(time=args.time, joints=joint_names(args.joints),
                         position=args.position, velocity=args.velocity, effort=args.effort,
                         time_unit=args.time_unit, time_offset_ns=offset_ns(args.time_offset),
                         position_unit=args.position_unit, velocity_unit=args.velocity_unit,
                         effort_scale=scale)


def check_output(path: Path) -> None:
    """Refuse a BAG that exists, or whose folder does not (nothing is created outside it)."""
    if path.exists() or path.is_symlink():
        raise InputError(f'--output {str(path)!r}: it exists; expected a new directory')
    if not path.parent.is_dir():
        raise InputError(f'--output {str(path)!r}: its folder {str(path.parent)!r} is not a '
                         'directory')


def write_bag(path: Path, samples: JointSamples, topic: str) -> int:
    """Write ``samples`` as the MCAP bag ``path``; return the number of messages."""
    from rnea_ros.recording.bagio import cdr
    from rnea_ros.recording.bagio.splitwrite import SplitBagWriter
    from rnea_ros.recording.bagio.storage import JOINT_STATE
    matrix, _ = cdr.encode_joint_states(samples.stamps_ns, samples.names, samples.position,
                                        samples.velocity, samples.effort)
    bag = SplitBagWriter(path)
    bag.write_split([(stamp, topic, JOINT_STATE, record) for stamp, record in
                     zip(samples.stamps_ns.tolist(), cdr.records(matrix))])
    return bag.written


def check_limits(urdf: str, samples: JointSamples, unit: str) -> list[str]:
    """
    Judge the converted positions against the joint limits of ``urdf``; return the warnings.

    ``rnea_ros.recording.plausibility``: positions that fit the limits only in another unit
    than ``unit`` (--position-unit) are refused naming it; joints of the log the URDF does not
    have as one-DoF joints are left to the tools that read the bag.
    """
    from rnea_ros import RobotModel
    from rnea_ros.errors import RneaError
    from rnea_ros.recording import plausibility
    try:
        model = RobotModel.from_urdf_file(urdf)
    except (RneaError, OSError) as exc:
        raise InputError(f'--urdf {urdf!r}: {exc}') from None
    known = {j.name: j for j in model.joints if j.nv == 1}
    columns = [k for k, name in enumerate(samples.names) if name in known]
    joints = [known[samples.names[k]] for k in columns]
    velocity = samples.velocity[:, columns] if samples.velocity.shape[1] else None
    try:
        judged = plausibility.check(joints, samples.position[:, columns], velocity)
    except plausibility.UnitError as exc:
        raise exc.worded(f'convert it with --position-unit {exc.unit}, not {unit}') from None
    return judged.warnings()


def main(argv: list[str] | None = None) -> int:
    """Run ``rnea_convert``; return the exit status (``rnea_ros.tools.run``)."""
    args = build_parser().parse_args(argv)
    return run_tool('rnea_convert', lambda: _convert(args))


def _convert(args: argparse.Namespace) -> int:
    output = Path(args.output)
    mapping = mapping_of(args)
    check_output(output)
    samples = mapping.samples(read_columns(args.log, mapping.all_columns()), args.log)
    if args.urdf is not None:
        for warning in check_limits(args.urdf, samples, args.position_unit):
            print(f'rnea_convert: warning: {warning}', file=sys.stderr)
    try:
        count = write_bag(output, samples, '/' + args.topic.lstrip('/'))
    except OSError as exc:
        shutil.rmtree(output, ignore_errors=True)  # created by this run: it did not exist
        raise MachineError(f'cannot write {str(output)!r}: {exc.strerror or exc}') from None
    except KeyboardInterrupt:
        shutil.rmtree(output, ignore_errors=True)
        raise
    seconds = (samples.stamps_ns[-1] - samples.stamps_ns[0]) * 1e-9
    print(f'rnea_convert: {count} joint_states of {len(samples.names)} joints ({seconds:.6g} s) '
          f'-> {output}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
