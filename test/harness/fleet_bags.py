"""
Fleet test fixtures: a generated fleet of panda bags and a real local Dask cluster.

The fleet (``fleet_dir``), stored as ``<robot>/<bag>`` with bags a week apart:

- ``arm_a``: 8 bags whose measured effort carries a Coulomb friction on ``panda_joint2`` that
  grows from bag to bag (0.3 N·m + 0.15 N·m per bag: a wearing gearbox) - the planted drift;
- ``arm_b``: 8 bags with a constant friction, a constant 0.3 N·m sensor offset on
  ``panda_joint4``, and one odd bag (a 1.5 N·m load on joints 2 and 4: a payload) among the
  last three, which a robust drift check must not flag;
- ``arm_c``: 2 good bags (too few for an own baseline: checked against the fleet), a corrupt
  bag (its storage file overwritten), an empty bag (no messages) and a foreign bag (a
  std_msgs/String topic only).

Every bag: 1 s of joint_states at 500 Hz of the analytic trajectory of ``bagdata``, stamps
with 10 % jitter, 1 % of the samples dropped; measured effort = the RNEA torque of the exact
motion + friction (Coulomb, tanh-smoothed at 0.02 rad/s, and viscous 0.1 N·m s/rad on every
joint) + normal noise (0.02 N·m) quantised to 0.005 N·m.

``dask_cluster()`` starts a ``dask scheduler`` (port chosen by the OS, written to a scheduler
file) and ``dask worker`` processes given its address (no nanny, so that killing one loses
it; one thread each, no dashboard, every port on 127.0.0.1), connects a client and waits for
the workers with ``client.wait_for_workers``.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
import os
from pathlib import Path
import subprocess
import sys

from harness import bagdata
import numpy as np


WEEK_NS = 7 * 24 * 3600 * 10**9
RATE = 500.0
SAMPLES = 500
DRIFT_JOINT = 1   # panda_joint2, index in the model's joints
OFFSET_JOINT = 3  # panda_joint4
DASK = Path(sys.executable).parent / 'dask'


def friction(v: np.ndarray, coulomb: np.ndarray) -> np.ndarray:
    """Coulomb (tanh-smoothed) + viscous friction torque, (N, 8)."""
    return coulomb * np.tanh(v / 0.02) + 0.1 * v


def fleet_bag(path: Path, model, start_ns: int, seed: int, coulomb: np.ndarray,
              offset: np.ndarray | None = None, description: str | None = None) -> Path:
    """
    Write one bag of the module docstring.

    ``offset`` (8,) is added to the effort; ``description``: a robot_description message.
    """
    rng = np.random.default_rng(seed)
    times = bagdata.sample_times(SAMPLES, RATE, jitter=0.1, seed=seed)
    times = np.sort(rng.choice(times, size=int(0.99 * SAMPLES), replace=False))
    times = times - bagdata.BAG_START + start_ns
    t = (times - bagdata.BAG_START) * 1e-9
    q, v, a = bagdata.trajectory(t), bagdata.trajectory(t, 1), bagdata.trajectory(t, 2)
    effort = model.rnea_batch(q, v, a) + friction(v, coulomb)
    effort += rng.normal(0.0, 0.02, effort.shape)
    if offset is not None:
        effort += offset
    effort = np.round(effort / 0.005) * 0.005
    return bagdata.panda_bag(path, times, effort=effort, description=description)


def robot_bags(root: Path, model, robot: str, count: int, robot_index: int,
               coulomb_of) -> list[Path]:
    """``count`` bags of one robot, a week apart; ``coulomb_of(k)``: (coulomb, offset)."""
    paths = []
    for k in range(count):
        coulomb, offset = coulomb_of(k)
        start = bagdata.BAG_START + k * WEEK_NS + robot_index * 3600 * 10**9
        paths.append(fleet_bag(root / robot / f'run_{k:02d}', model, start,
                               seed=100 * robot_index + k, coulomb=coulomb, offset=offset))
    return paths


def long_bag(path: Path, model, seconds: float, rate: float = 1000.0) -> Path:
    """
    Write a long bag fast: records by ``recording.bagio.cdr`` (vectorised), not by rosbags.

    The motion and effort of ``fleet_bag`` (constant friction), 10 % stamp jitter; mcap.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer

    from rnea_ros.recording.bagio import cdr
    rng = np.random.default_rng(11)
    n = int(seconds * rate)
    times = bagdata.sample_times(n, rate, jitter=0.1, seed=11)
    t = (times - bagdata.BAG_START) * 1e-9
    q, v, a = bagdata.trajectory(t), bagdata.trajectory(t, 1), bagdata.trajectory(t, 2)
    effort = model.rnea_batch(q, v, a) + friction(v, np.full(8, 0.3))
    effort = np.round((effort + rng.normal(0.0, 0.02, effort.shape)) / 0.005) * 0.005
    names = bagdata.PANDA_JOINTS + [bagdata.MIMIC]
    matrix, _ = cdr.encode_joint_states(times, names, np.column_stack([q, q[:, 7]]),
                                        np.column_stack([v, v[:, 7]]),
                                        np.column_stack([effort, np.zeros(n)]))
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection('/joint_states', bagdata.JOINT_STATE,
                                           typestore=bagdata.STORE)
        for stamp, record in zip(times.tolist(), cdr.records(matrix)):
            writer.write(connection, stamp, record)
    return path


def empty_bag(path: Path) -> Path:
    return bagdata.write_bag(path, {'/joint_states': (bagdata.JOINT_STATE, [])})


def foreign_bag(path: Path) -> Path:
    return bagdata.write_bag(path, {'/chatter': (bagdata.STRING, [
        (bagdata.BAG_START + k * 10**8, bagdata.string(f'hello {k}')) for k in range(5)])})


def corrupt_bag(path: Path, model) -> Path:
    fleet_bag(path, model, bagdata.BAG_START, seed=7, coulomb=np.full(8, 0.3))
    storage = next(path.glob('*.db3'))
    storage.write_bytes(b'not a sqlite database' * 100)
    return path


@dataclass
class DaskCluster:
    """A running scheduler and workers; ``workers``: name -> process."""

    address: str
    client: object
    scheduler: subprocess.Popen
    workers: dict


@contextmanager
def dask_cluster(directory: Path, workers: int = 2):
    """Start a ``dask scheduler`` and ``workers`` ``dask worker`` processes on localhost."""
    from distributed import Client
    directory.mkdir(parents=True, exist_ok=True)
    scheduler_file = directory / 'scheduler.json'
    logs = []

    def start(name, command):
        log = (directory / f'{name}.log').open('w')
        logs.append(log)
        return subprocess.Popen([str(DASK), *command], stdout=log, stderr=subprocess.STDOUT,
                                cwd=directory, env={**os.environ, 'PYTHONUNBUFFERED': '1'})

    # --no-dashboard leaves the HTTP server listening: --dashboard-address keeps it on loopback
    scheduler = start('scheduler', ['scheduler', '--host', '127.0.0.1', '--port', '0',
                                    '--no-dashboard', '--dashboard-address', '127.0.0.1:0',
                                    '--scheduler-file', str(scheduler_file)])
    processes = {}
    client = None
    try:
        # The client waits for the scheduler file; the workers then get the address, as a
        # user gives it (README: dask worker tcp://HOST:PORT --nthreads 1).
        client = Client(scheduler_file=str(scheduler_file), timeout=120)
        address = client.scheduler_info()['address']
        for k in range(workers):
            processes[f'w{k}'] = start(f'w{k}', [
                'worker', address, '--nthreads', '1', '--host', '127.0.0.1', '--no-nanny',
                '--name', f'w{k}', '--no-dashboard', '--dashboard-address', '127.0.0.1:0',
                '--local-directory',
                str(directory / f'w{k}')])
        client.wait_for_workers(workers, timeout=180)
        yield DaskCluster(address, client, scheduler, processes)
    finally:
        if client is not None:
            client.close()
        # SIGKILL: a worker's graceful close can hang when the scheduler goes first.
        for process in [*processes.values(), scheduler]:
            process.kill()
            process.wait()
        for log in logs:
            log.close()
