"""
``rnea_bag`` on a generated bag, for ``python -m rnea_ros.precompile``.

Two runs on a short MCAP bag (joint_states with effort, desired accelerations) reach every
kernel of the bag tool: the MCAP scan and CDR decoder, the Savitzky-Golay filters, the
accelerations' assembly, the statistics passes, the CSV formatter and the MCAP chunk writer
(``--write-bag``), and the Parquet tables with estimated accelerations.
"""
from __future__ import annotations

from contextlib import redirect_stderr, redirect_stdout
import io
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import get_typestore, Stores

from rnea_ros.bag.cli import main


def run_on_generated_bag(folder: Path, robot: str) -> None:
    """
    Run ``rnea_bag`` twice on a short MCAP bag written in ``folder``.

    ``robot``: URDF text whose joints are 'shoulder' and 'slide' (``precompile.ROBOT``).
    Raises ``RuntimeError`` with the tool's output if a run fails.
    """
    path = write_bag(folder / 'bag')
    urdf = folder / 'robot.urdf'
    urdf.write_text(robot)
    common = [str(path), '--urdf', str(urdf), '--no-plots', '--overwrite']
    for k, extra in enumerate((['--format', 'csv', '--write-bag'],
                               ['--format', 'parquet', '--estimate-accelerations'])):
        output = io.StringIO()
        with redirect_stdout(output), redirect_stderr(output):
            status = main(common + ['--output', str(folder / f'out{k}')] + extra)
        if status != 0:
            raise RuntimeError(f'rnea_bag on the generated bag exited {status}:\n'
                               f'{output.getvalue()}')


def write_bag(path: Path, samples: int = 600, rate: float = 500.0) -> Path:
    """Write joint_states (with effort) and desired_accelerations of a sine motion as MCAP."""
    store = get_typestore(Stores.LATEST)
    types = store.types
    names = ['shoulder', 'slide']
    start = 1_700_000_000 * 10**9
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        states = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState',
                                       typestore=store)
        desired = writer.add_connection('/desired_accelerations',
                                        'trajectory_msgs/msg/JointTrajectory', typestore=store)
        for k in range(samples):
            t = k / rate
            ns = start + round(t * 1e9)
            stamp = types['builtin_interfaces/msg/Time'](sec=ns // 10**9, nanosec=ns % 10**9)
            header = types['std_msgs/msg/Header'](stamp=stamp, frame_id='')
            q = np.array([0.5 * np.sin(t), 0.2 * np.sin(2 * t)])
            v = np.array([0.5 * np.cos(t), 0.4 * np.cos(2 * t)])
            acc = np.array([-0.5 * np.sin(t), -0.8 * np.sin(2 * t)])
            state = types['sensor_msgs/msg/JointState'](
                header=header, name=names, position=q, velocity=v, effort=np.ones(2))
            writer.write(states, ns, store.serialize_cdr(state, 'sensor_msgs/msg/JointState'))
            point = types['trajectory_msgs/msg/JointTrajectoryPoint'](
                positions=np.zeros(0), velocities=np.zeros(0), accelerations=acc,
                effort=np.zeros(0),
                time_from_start=types['builtin_interfaces/msg/Duration'](sec=0, nanosec=0))
            message = types['trajectory_msgs/msg/JointTrajectory'](
                header=header, joint_names=names, points=[point])
            writer.write(desired, ns,
                         store.serialize_cdr(message, 'trajectory_msgs/msg/JointTrajectory'))
    return path
