"""
What a ``rnea_bag`` run reads, and the options checked on the model.

The joint states' options (``add_joint_state_options``: ``rnea_ros.recording.load_joint_states``
reads the topic, for ``rnea_identify`` too), the URDF (``--urdf`` or the bag's
robot_description topic), the desired accelerations, the floating base's odometry, the
``--contacts`` links and the ``--joints`` selection.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from rnea_ros.dynamics.description import read_robot_description
from rnea_ros.errors import InputError
from rnea_ros.recording.bagio import cdr
from rnea_ros.recording.bagio.storage import (deserialize_all, JOINT_TRAJECTORY, ODOMETRY,
                                              read_raw, STRING, topic_connections)
from rnea_ros.recording.joint_states import decode_records
from rnea_ros.recording.series import base_state as base_state_at
from rnea_ros.recording.series import desired_accelerations


def add_joint_state_options(group) -> None:
    """Add the options of ``load_joint_states`` to an argparse parser or group (both tools')."""
    group.add_argument('--clock', choices=('header', 'receive'), default='header',
                       help='sample times: message header stamps (default) or receive times')
    group.add_argument('--ignore-extra-joints', action='store_true',
                       help='skip joint_states names that the URDF does not have')
    group.add_argument('--lock', metavar='JOINT=VALUE[,...]',
                       help='hold these URDF joints at a fixed position (rad, or m for '
                       'prismatic joints; inside the joint limits), e.g. a gripper the bag '
                       'does not publish; overrides the bag')
    group.add_argument('--lock-missing', action='store_true',
                       help='hold every URDF joint the bag never publishes at 0 (or at the '
                       'limit nearest to 0); listed in a warning and the summary')


def robot_description(args, reader, store) -> tuple[str, str]:
    """Return the URDF text and where it came from."""
    if args.urdf:
        path = Path(args.urdf)
        try:
            xacro_args = dict(getattr(args, 'xacro_arg', None) or ())
            return read_robot_description(path, xacro_args), str(path)
        except OSError as exc:
            raise InputError(f'cannot read --urdf {str(path)!r}: {exc.strerror}') from None
    conns = topic_connections(reader, args.robot_description, STRING, required=False)
    if not conns:
        raise InputError(f'no --urdf given and the bag has no {args.robot_description!r} '
                         'topic (std_msgs/String) to take the URDF from')
    for _, _, raw in reader.messages(conns):
        return store.deserialize_cdr(raw, STRING).data, f'topic {conns[0].topic}'
    raise InputError(f'no --urdf given and topic {conns[0].topic!r} has no message')


def desired(args, reader, store, series, lo, hi, margin) -> np.ndarray | None:
    if args.estimate_accelerations:
        return None
    conns = topic_connections(reader, args.desired_accelerations, JOINT_TRAJECTORY,
                              required=False)
    if not conns:
        return None
    timeout_ns = int(args.acceleration_timeout * 1e9)
    raw = read_raw(reader, conns, None if lo is None else lo - margin - timeout_ns,
                   None if hi is None else hi + margin)
    messages = deserialize_all(raw, JOINT_TRAJECTORY, store)
    return desired_accelerations(messages, raw.times, series.names, series.times_ns,
                                 args.acceleration_timeout)


def base_state(args, reader, store, series, lo, hi, margin, differentiate_fn):
    if not args.floating_base:
        return None
    conns = topic_connections(reader, args.odometry, ODOMETRY, required=False)
    if not conns:
        raise InputError(
            f'--floating-base needs the base state, but the bag has no nav_msgs/Odometry topic '
            f'{args.odometry!r} (pass --odometry TOPIC; topics: '
            f'{", ".join(sorted({c.topic for c in reader.connections}))})')
    raw = read_raw(reader, conns, None if lo is None else lo - margin,
                   None if hi is None else hi + margin)
    decoded = decode_records(raw, cdr.odometry_layout, store, ODOMETRY, cdr.odometry_fields,
                             conns[0].topic)
    values = np.zeros((len(raw), cdr.ODOMETRY_DOUBLES))
    for block in decoded.blocks:
        values[block.rows] = block.arrays[0]
    times = decoded.stamps if series.clock == 'header' else raw.times
    if series.clock == 'header' and not np.any(times):
        raise InputError(f'odometry topic {conns[0].topic!r} has zero header stamps while '
                         'joint_states has stamps: use --clock receive')
    return base_state_at(times, values, series.times_ns, differentiate_fn)


def contact_links(args) -> list[str]:
    """Return the --contacts link names (checked against the other options, not yet the model)."""
    if args.contacts is None:
        return []
    links = list(dict.fromkeys(name.strip() for name in args.contacts.split(',')
                               if name.strip()))
    if not links:
        raise InputError('--contacts: expected link names, e.g. --contacts LF_FOOT,RF_FOOT')
    if not args.floating_base:
        raise InputError('--contacts needs --floating-base: contact wrenches balance a '
                         'floating base (its state from the --odometry topic)')
    if not (np.isfinite(args.friction) and args.friction > 0):
        raise InputError(f'--friction must be a finite number > 0, got {args.friction}')
    return links


def contacts(args, model) -> list:
    """Return a point ``Contact`` with --friction per --contacts link, checked on the model."""
    links = contact_links(args)
    if not links:
        return []
    from rnea_ros.contacts import Contact
    unknown = [link for link in links if link not in model.link_names]
    if unknown:
        raise InputError(f'--contacts: {unknown} are not links of the model; links: '
                         f'{list(model.link_names)}')
    return [Contact(link, 'point', args.friction) for link in links]


def selected_columns(joints_arg: str | None, model, labels) -> list[int]:
    if not joints_arg:
        return list(range(len(labels)))
    wanted = [name.strip() for name in joints_arg.split(',') if name.strip()]
    unknown = [name for name in wanted if name not in model.joint_names and name not in labels]
    if unknown:
        raise InputError(f'--joints: {unknown} are not independent joints of the model; '
                         f'joints: {list(model.joint_names)}')
    return [k for k, label in enumerate(labels)
            if label in wanted or label.split('.')[0] in wanted]
