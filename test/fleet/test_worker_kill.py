"""
A worker killed mid-run: its task runs again on the other worker, the result is unchanged.

Three copies of a 40 s, 1 kHz bag (each task runs long enough to be killed in). The test's
own client subscribes to the event each task logs when it starts (``rnea_fleet.task``) and
SIGKILLs worker ``w0`` the moment one of its tasks starts; the run must still analyse every
bag, and its fleet table and per-bag torques equal those of a run without the kill.
"""
from __future__ import annotations

import shutil
import threading

from harness import bagdata
from harness.fleet_bags import dask_cluster, long_bag
from harness.fleet_runs import fleet, read_rows
import pytest

from rnea_ros.fleet.task import EVENT_TOPIC

pytestmark = pytest.mark.slow


def test_killed_worker_tasks_rerun_elsewhere_and_the_result_is_unchanged(tmp_path,
                                                                         panda_model):
    source = long_bag(tmp_path / 'long', panda_model, seconds=40.0)
    fleet_dir = tmp_path / 'fleet'
    for k in range(3):
        shutil.copytree(source, fleet_dir / 'arm_k' / f'run_{k}')
    with dask_cluster(tmp_path / 'dask') as cluster:
        starts, killed = [], threading.Event()
        names = {address: worker['name'] for address, worker
                 in cluster.client.scheduler_info()['workers'].items()}

        def on_start(event):
            message = event[1]
            starts.append((message['bag'], names[message['worker']]))
            if starts[-1][1] == 'w0' and not killed.is_set():
                cluster.workers['w0'].kill()
                killed.set()
        cluster.client.subscribe_topic(EVENT_TOPIC, on_start)
        output = tmp_path / 'out'
        status, out, err = fleet(fleet_dir, '--output', output, '--urdf', bagdata.PANDA,
                                 '--scheduler', cluster.address, '--no-plots')
        assert killed.is_set(), f'no task started on w0: {starts}'
        assert cluster.workers['w0'].wait() != 0
        assert status == 0, err
        assert '3 bags: 3 analysed, 0 reused (unchanged), 0 failed' in out
        victim = next(bag for bag, worker in starts if worker == 'w0')
        assert [w for bag, w in starts if bag == victim] == ['w0', 'w1'], starts
        assert sorted(p.name for p in (output / 'bags').iterdir()) == [
            'run_0', 'run_1', 'run_2']  # the killed task's partial folder removed

        reference = tmp_path / 'reference'
        status, out, err = fleet(fleet_dir, '--output', reference, '--urdf', bagdata.PANDA,
                                 '--scheduler', cluster.address, '--no-plots')
        assert status == 0, err
    assert read_rows(output / 'fleet.parquet') == read_rows(reference / 'fleet.parquet')
    for k in range(3):
        name = f'bags/run_{k}/torques.csv'
        assert (output / name).read_bytes() == (reference / name).read_bytes()
