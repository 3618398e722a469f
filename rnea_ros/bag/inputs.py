"""
What a ``rnea_bag`` run reads, and the options checked on the model.

The joint states are read by ``rnea_ros.recording.load_joint_states`` (as ``rnea_identify``
reads them); here the URDF (``--urdf`` or the bag's
robot_description topic, read and built by ``rnea_ros.description.loading``, as every tool does),
the time options' range, the desired accelerations, the floating base's odometry, the
``--contacts`` links and the ``--joints`` selection.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from rnea_ros.description.loading import read_file_option
from rnea_ros.description.robot_file import read_robot_description
from rnea_ros.errors import InputError
from rnea_ros.recording.bagio import cdr
from rnea_ros.recording.bagio.storage import (deserialize_all, JOINT_TRAJECTORY, ODOMETRY,
                                              read_raw, STRING, topic_connections)
from rnea_ros.recording.joint_states import decode_records
from rnea_ros.recording.series import base_state as base_state_at
from rnea_ros.recording.series import desired_accelerations


def robot_description(options, reader, store) -> tuple[str, str]:
    """Return the URDF text and where it came from (the file, or ``topic NAME``)."""
    if options.urdf:
        path = Path(options.urdf)
        xacro_args = dict(options.xacro_arg or ())
        text = read_file_option('--urdf', path,
                                lambda path: read_robot_description(path, xacro_args))
        return text, str(path)
    conns = topic_connections(reader, options.robot_description, STRING, required=False)
    if not conns:
        raise InputError(f'no --urdf given and the bag has no {options.robot_description!r} '
                         'topic (std_msgs/String) to take the URDF from')
    for _, _, raw in reader.messages(conns):
        return store.deserialize_cdr(raw, STRING).data, f'topic {conns[0].topic}'
    raise InputError(f'no --urdf given and topic {conns[0].topic!r} has no message')


def desired(options, reader, store, series, lo, hi, margin) -> np.ndarray | None:
    if options.estimate_accelerations:
        return None
    conns = topic_connections(reader, options.desired_accelerations, JOINT_TRAJECTORY,
                              required=False)
    if not conns:
        return None
    timeout_ns = int(options.acceleration_timeout * 1e9)
    raw = read_raw(reader, conns, None if lo is None else lo - margin - timeout_ns,
                   None if hi is None else hi + margin)
    messages = deserialize_all(raw, JOINT_TRAJECTORY, store)
    return desired_accelerations(messages, raw.times, series.names, series.times_ns,
                                 options.acceleration_timeout)


def base_state(options, reader, store, series, lo, hi, margin, differentiate_fn):
    if not options.floating_base:
        return None
    conns = topic_connections(reader, options.odometry, ODOMETRY, required=False)
    if not conns:
        raise InputError(
            f'--floating-base needs the base state, but the bag has no nav_msgs/Odometry topic '
            f'{options.odometry!r} (pass --odometry TOPIC; topics: '
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


def contact_links(options) -> list[str]:
    """Return the --contacts link names (checked against the other options, not yet the model)."""
    if options.contacts is None:
        return []
    links = list(dict.fromkeys(name.strip() for name in options.contacts.split(',')
                               if name.strip()))
    if not links:
        raise InputError('--contacts: expected link names, e.g. --contacts LF_FOOT,RF_FOOT')
    if not options.floating_base:
        raise InputError('--contacts needs --floating-base: contact wrenches balance a '
                         'floating base (its state from the --odometry topic)')
    return links


def contacts(options, model) -> list:
    """Return a point ``Contact`` with --friction per --contacts link, checked on the model."""
    links = contact_links(options)
    if not links:
        return []
    from rnea_ros.contacts import Contact
    unknown = [link for link in links if link not in model.link_names]
    if unknown:
        raise InputError(f'--contacts: {unknown} are not links of the model; links: '
                         f'{list(model.link_names)}')
    return [Contact(link, 'point', options.friction) for link in links]


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
