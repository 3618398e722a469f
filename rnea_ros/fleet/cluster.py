"""
The Dask cluster of a fleet run: an embedded ``LocalCluster`` or an existing one by address.

Local: ``n_workers`` worker processes (default: one per core), one thread each (a bag is a
task on one core), no dashboard, their scratch space (``local_directory``) in
``DIR/.dask`` (also Dask's ``temporary-directory``), removed when the run ends: nothing is
written outside the output directory.
Remote (``--scheduler tcp://HOST:PORT``): the client connects and ships the tasks there; the
workers must be able to import this version of ``rnea_ros`` and to read the bags (and
``--urdf``) and write ``DIR`` at the same paths (shared storage), and their scratch space is
their own configuration's.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
import logging
import os
from pathlib import Path
import shutil

from rnea_ros.errors import RneaError

SCRATCH = '.dask'
CONNECT_TIMEOUT = 30.0  # s


class ClusterError(RneaError):
    """The Dask cluster cannot be started or reached."""


@contextmanager
def client(output: Path, scheduler: str | None = None,
           workers: int | None = None) -> Iterator:
    """Yield a ``distributed.Client`` on the cluster for the duration of the ``with`` block."""
    from distributed import Client, LocalCluster
    if scheduler:
        try:
            connection = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise ClusterError(f'cannot connect to the Dask scheduler {scheduler!r}: '
                               f'{exc}') from None
        try:
            yield connection
        finally:
            connection.close()
        return
    import dask
    scratch = output / SCRATCH
    scratch.mkdir(parents=True, exist_ok=True)
    # Dask's own scratch files (locks, spill) default to the system temporary directory.
    with dask.config.set({'temporary-directory': str(scratch)}):
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                               processes=True, dashboard_address=None,
                               local_directory=str(scratch), silence_logs=logging.ERROR)
    try:
        connection = Client(cluster)
        try:
            yield connection
        finally:
            connection.close()
    finally:
        cluster.close()
        shutil.rmtree(scratch, ignore_errors=True)
