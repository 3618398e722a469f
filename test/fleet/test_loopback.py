"""
Every Dask process the docs start, and ``rnea_fleet``'s own local cluster, listen on 127.0.0.1.

The ``dask`` commands of docs/fleet.md are started as shown, their fixed ports (8786, 8787)
replaced by free ones; once the workers have joined, every listening socket of the scheduler,
the workers, the nannies and all their child processes must be on 127.0.0.1. The same for the
``LocalCluster`` of ``rnea_fleet`` without ``--scheduler``, dashboard included.
"""
from __future__ import annotations

from contextlib import closing
import os
from pathlib import Path
import re
import socket
import subprocess
import sys

import psutil
import pytest

from rnea_ros.fleet import cluster

ROOT = Path(__file__).resolve().parents[2]
DASK = Path(sys.executable).parent / 'dask'
LOOPBACK = '127.0.0.1'

pytestmark = pytest.mark.timeout(300)


def documented_commands() -> list[str]:
    """Return the commands of docs/fleet.md's bash blocks that start with ``dask``."""
    text = (ROOT / 'docs' / 'fleet.md').read_text()
    return [' '.join(line.split()) for block in re.findall(r'```bash\n(.*?)```', text, re.S)
            for line in block.splitlines() if line.startswith('dask ')]


def free_port() -> int:
    with closing(socket.socket()) as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def listening(pids: list[int]) -> list[tuple[int, str, int]]:
    """(pid, address, port) of every listening inet socket of ``pids`` and their children."""
    found = []
    for pid in pids:
        try:
            parent = psutil.Process(pid)
            processes = [parent, *parent.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for process in processes:
            try:
                connections = process.net_connections(kind='inet')
            except psutil.NoSuchProcess:
                continue
            found += [(process.pid, c.laddr.ip, c.laddr.port) for c in connections
                      if c.status == psutil.CONN_LISTEN]
    return found


def test_the_documented_dask_commands_listen_on_loopback_only(tmp_path):
    from distributed import Client
    commands = documented_commands()
    assert [c.split()[:2] for c in commands] == [['dask', 'scheduler'], ['dask', 'worker']]
    ports = {'8786': str(free_port()), '8787': str(free_port())}
    processes = []
    client = None
    try:
        for command in commands:
            argv = re.sub(r':(8786|8787)\b', lambda m: ':' + ports[m.group(1)], command).split()
            argv = [ports.get(arg, arg) for arg in argv]  # --port 8786
            log = (tmp_path / f'{argv[1]}.log').open('w')
            processes.append(subprocess.Popen([str(DASK), *argv[1:]], stdout=log,
                                              stderr=subprocess.STDOUT, cwd=tmp_path))
            log.close()
        workers = int(commands[1].split('--nworkers ')[1].split()[0])
        client = Client(f'tcp://{LOOPBACK}:{ports["8786"]}', timeout=120)
        client.wait_for_workers(workers, timeout=180)
        sockets = listening([p.pid for p in processes])
        # the scheduler, its dashboard, and per worker its nanny and the worker: 2 each
        assert len(sockets) >= 2 + 2 * workers, sockets
        assert {address for _, address, _ in sockets} == {LOOPBACK}, sockets
        assert (processes[0].pid, LOOPBACK, int(ports['8787'])) in sockets
    finally:
        if client is not None:
            client.close()
        for process in reversed(processes):  # SIGKILL, children first: the nannies' workers
            try:
                children = psutil.Process(process.pid).children(recursive=True)
            except psutil.NoSuchProcess:
                children = []
            for child in children:
                child.kill()
            process.kill()
            process.wait()


def test_the_fleet_local_cluster_listens_on_loopback_only(tmp_path):
    before = set(listening([os.getpid()]))
    with cluster.client(tmp_path, workers=2) as connection:
        connection.wait_for_workers(2, timeout=180)
        sockets = set(listening([os.getpid()])) - before
    assert len(sockets) >= 2 + 2 * 2, sockets  # as above
    assert {address for _, address, _ in sockets} == {LOOPBACK}, sockets


def test_the_fleet_local_cluster_takes_a_free_port_for_its_http_server(tmp_path, recwarn):
    """
    Dask's default HTTP port 8787 taken (another cluster on the machine): no warning.

    Two fleet runs at once on one machine: the second printed Dask's "Port 8787 is already in
    use" on stderr (a fleet run beside another test's cluster: its first stderr line).
    """
    with closing(socket.socket()) as holder:
        try:
            holder.bind((LOOPBACK, 8787))
            holder.listen()
        except OSError:
            pass  # taken already, by another process
        with cluster.client(tmp_path, workers=1) as connection:
            connection.wait_for_workers(1, timeout=180)
    messages = [str(warning.message) for warning in recwarn]
    assert not [m for m in messages if 'already in use' in m], messages
