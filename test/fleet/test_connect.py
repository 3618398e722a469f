"""
``rnea_fleet --scheduler`` at an address that is no Dask scheduler fails at once, in one line.

Regression tests of a silent listener that hung the client for minutes, an HTTP server whose
reply was read as a message of 3 EiB (a 45-line traceback), and a closed port that took 31 s.
Each case is bounded by pytest-timeout, not by a timing assertion.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
import socket
import subprocess
import sys
import threading

from harness import bagdata
import pytest

BIN = Path(sys.executable).parent
HTTP_REPLY = b'HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'

pytestmark = pytest.mark.timeout(60)


@contextmanager
def listener(answer: bytes | None) -> Iterator[int]:
    """
    Listen on a localhost port; yield it.

    ``answer`` None: accept connections and never say anything; else read what the client
    sends first and reply ``answer`` (as an HTTP server replies to what is not HTTP).
    """
    server = socket.create_server(('127.0.0.1', 0))
    accepted = []
    stop = threading.Event()

    def serve():
        while True:
            connection, _ = server.accept()
            accepted.append(connection)
            if stop.is_set():
                return
            if answer is not None:
                connection.recv(65536)
                connection.sendall(answer)
                connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        socket.create_connection(server.getsockname()).close()  # wakes the accept
        thread.join()
        server.close()
        for connection in accepted:
            connection.close()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


@pytest.fixture(scope='module')
def bag(tmp_path_factory) -> Path:
    return bagdata.panda_bag(tmp_path_factory.mktemp('bag') / 'run', bagdata.sample_times(10))


def rnea_fleet(bag: Path, output: Path, port: int) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / 'rnea_fleet'), str(bag), '--output', str(output),
                           '--scheduler', f'tcp://127.0.0.1:{port}', '--connect-timeout', '2'],
                          capture_output=True, text=True)


@pytest.mark.parametrize('answer, reason', [
    (None, 'no Dask answer within 2 s (not a Dask scheduler, or a busy one: see '
     '--connect-timeout)'),
    (HTTP_REPLY, 'it answers, but not as Dask does (another service, a dashboard?)'),
])
def test_a_listener_that_is_not_dask_fails_in_one_line(tmp_path, bag, answer, reason):
    with listener(answer) as port:
        result = rnea_fleet(bag, tmp_path / 'out', port)
    assert result.returncode == 1
    assert result.stderr == ('rnea_fleet: error: cannot connect to the Dask scheduler '
                             f"'tcp://127.0.0.1:{port}': {reason}\n")
    assert result.stdout == ''


def test_a_closed_port_fails_in_one_line(tmp_path, bag):
    port = closed_port()
    result = rnea_fleet(bag, tmp_path / 'out', port)
    assert result.returncode == 1
    assert result.stderr == ('rnea_fleet: error: cannot connect to the Dask scheduler '
                             f"'tcp://127.0.0.1:{port}': Connection refused\n")
