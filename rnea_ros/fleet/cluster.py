"""
The Dask cluster of a fleet run: an embedded ``LocalCluster`` or an existing one by address.

Local: ``n_workers`` worker processes (default: one per core), one thread each (a bag is a
task on one core), no dashboard, every port (the scheduler's and its HTTP server's, the
nannies', the workers') on 127.0.0.1 and chosen free (two runs on one machine do not
clash), their scratch space (``local_directory``) in a folder created afresh in DIR
(``DIR/.dask-*``, also Dask's ``temporary-directory``), removed when the run ends: nothing is
written outside the output directory.
Remote (``--scheduler tcp://HOST:PORT``): a ``tcp://`` address off the loopback is refused unless
``--allow-remote-scheduler`` (``unprotected``: no encryption, no authentication; ``tls://`` is
accepted). The client connects and ships the tasks there; the
workers must be able to import this version of ``rnea_ros`` and to read the bags (and
``--urdf``) and write ``DIR`` at the same paths (shared storage), and their scratch space is
their own configuration's. Before the client, a probe asks the address who it is within
``--connect-timeout`` seconds (Dask's own client waits for ever for a listener that does not
answer, and reads an HTTP reply as a message of exabytes): a refused connection, silence, a
service that is not Dask or a worker's address each fail at once with one ``ClusterError``.
"""
from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
import logging
import os
from pathlib import Path
import shutil
import signal
import socket
import sys
import tempfile
import threading

from rnea_ros.errors import InputError, MachineError

SCRATCH_PREFIX = '.dask-'
CONNECT_TIMEOUT = 5.0  # s
LOOPBACK = '127.0.0.1'  # every port of the local cluster (test/fleet/test_loopback.py)
SAFE_SCHEMES = ('tls', 'wss', 'inproc')  # TLS, or within this process
ALLOW_REMOTE = '--allow-remote-scheduler'


class ClusterError(MachineError):
    """The Dask cluster cannot be started or reached."""


@contextmanager
def client(output: Path, scheduler: str | None = None, workers: int | None = None,
           connect_timeout: float = CONNECT_TIMEOUT) -> Iterator:
    """Yield a ``distributed.Client`` on the cluster for the duration of the ``with`` block."""
    from distributed import Client, LocalCluster
    if scheduler:
        connection = connect(scheduler, connect_timeout)
        try:
            yield connection
        finally:
            connection.close()
        return
    import dask
    scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=output))
    try:
        # Dask's own scratch files (locks, spill) default to the system temporary directory.
        # Its workers' own logs stay quiet: every bag's fate is in its outcome, and a worker
        # stopped mid-bag (Ctrl-C) would log its lost heartbeats with tracebacks.
        with dask.config.set({'temporary-directory': str(scratch)}), _children_ignore_sigint():
            _start_quiet_resource_tracker()
            cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1,
                                   threads_per_worker=1, processes=True, host=LOOPBACK,
                                   dashboard_address=None, local_directory=str(scratch),
                                   silence_logs=logging.CRITICAL,
                                   # Without a dashboard the scheduler still serves HTTP, on
                                   # 8787 unless told: a second cluster on the machine warned.
                                   scheduler_kwargs={'dashboard_address': f'{LOOPBACK}:0'})
        try:
            connection = Client(cluster)
            try:
                yield connection
            finally:
                connection.close()
        finally:
            cluster.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _start_quiet_resource_tracker() -> None:
    """
    Start multiprocessing's resource tracker told to ignore its own warnings.

    The local workers' semaphores are registered with it; when a Ctrl-C ends the run it finds
    them unreleased at exit and prints a warning after the one line the tool promises. The
    tracker is a process of its own that takes its warning filters from ``sys.warnoptions``
    when it starts, so the filter is there for that moment only.
    """
    from multiprocessing import resource_tracker
    saved = list(sys.warnoptions)
    sys.warnoptions.append('ignore:resource_tracker:UserWarning')
    try:
        resource_tracker.ensure_running()
    finally:
        sys.warnoptions[:] = saved


@contextmanager
def _children_ignore_sigint() -> Iterator[None]:
    """
    Ignore SIGINT while the block starts processes: they inherit it.

    A Ctrl-C in a terminal reaches every process of the group; the local workers leave it to
    this process, which closes them (else each prints a traceback).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def connect(scheduler: str, timeout: float = CONNECT_TIMEOUT):
    """Return a ``distributed.Client`` on ``scheduler``, or raise ``ClusterError`` in time."""
    import dask
    from distributed import Client
    probe(scheduler, timeout)
    try:
        with dask.config.set({'distributed.comm.timeouts.connect': timeout}):
            return Client(scheduler, timeout=timeout)
    except (OSError, ValueError) as exc:
        raise ClusterError(f'cannot connect to the Dask scheduler {scheduler!r}: '
                           f'{exc}') from None


def check_address(scheduler: str) -> None:
    """Refuse (``InputError``) a --scheduler without a scheme, or a TCP/TLS one without a port."""
    from distributed.comm.addressing import get_address_host_port
    try:
        get_address_host_port(scheduler)
    except ValueError as exc:
        if '://' not in scheduler or scheduler.startswith(('tcp://', 'tls://')):
            raise InputError(f'--scheduler {scheduler!r} is not a Dask address ({exc}): '
                             'expected tcp://HOST:PORT') from None
    except Exception:  # noqa: B902 - an unknown scheme: probe() says so
        pass


def unprotected(scheduler: str) -> str | None:
    """
    Return why ``scheduler`` is unsafe to send work to, or None.

    A scheme without TLS (``tcp://``, ``ws://``, ``ucx://``) carries no authentication and no
    encryption: whoever reaches the scheduler runs code on its workers and reads what they
    send. That is safe on this machine's loopback only: a host that is a loopback address
    (127.0.0.0/8, ::1) or ``localhost``; any other host name or address is taken as remote
    (names are not resolved). ``tls://``/``wss://`` (TLS) and ``inproc://`` are safe.
    """
    import ipaddress
    from distributed.comm.addressing import get_address_host_port, parse_address
    scheme, _ = parse_address(scheduler)
    if scheme in SAFE_SCHEMES:
        return None
    try:
        host, _ = get_address_host_port(scheduler)
    except Exception:  # noqa: B902 - no host in the address: probe() tells what it is
        return None
    try:
        local = ipaddress.ip_address(host.strip('[]')).is_loopback
    except ValueError:
        local = host.lower() == 'localhost'
    if local:
        return None
    return (f'--scheduler {scheduler!r} is not a loopback address and {scheme}:// '
            'is neither encrypted nor authenticated: anyone who reaches it can run code on '
            'its workers and read the results; use tls:// (docs/fleet.md, "Across '
            f'machines") or, on a network you trust, {ALLOW_REMOTE}')


def probe(scheduler: str, timeout: float) -> None:
    """Raise ``ClusterError`` unless a Dask scheduler at ``scheduler`` answers in ``timeout`` s."""
    from distributed.comm.addressing import get_address_host_port

    def fail(reason: str) -> ClusterError:
        return ClusterError(f'cannot connect to the Dask scheduler {scheduler!r}: {reason}')

    try:
        host, port = get_address_host_port(scheduler)
    except ValueError:
        check_address(scheduler)
        host = port = None  # not a TCP address (inproc://, ucx://): only the Dask handshake
    except Exception as exc:  # noqa: B902 - an unknown scheme is refused with any error
        raise fail(f'not a Dask address ({exc})') from None
    if host is not None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
        except TimeoutError:
            raise fail(f'no connection within {timeout:g} s (see --connect-timeout)') from None
        except OSError as exc:
            raise fail(exc.strerror or str(exc)) from None
    distributed_log = logging.getLogger('distributed')
    level = distributed_log.level
    distributed_log.setLevel(logging.CRITICAL)  # the reason is in our one line
    try:
        identity = asyncio.run(asyncio.wait_for(_identity(scheduler), timeout))
    except TimeoutError:
        raise fail(f'no Dask answer within {timeout:g} s (not a Dask scheduler, or a busy '
                   'one: see --connect-timeout)') from None
    except Exception:  # noqa: B902 - whatever the other end sent, it is not Dask
        raise fail('it answers, but not as Dask does (another service, a dashboard?)') \
            from None
    finally:
        distributed_log.setLevel(level)
    kind = identity.get('type') if isinstance(identity, dict) else None
    if kind != 'Scheduler':
        raise fail(f'it is a Dask {kind or "service"}, not the scheduler')


async def _identity(address: str):
    """Connect with Dask's handshake and ask for the ``identity`` of the other end."""
    from distributed.comm import connect
    from distributed.security import Security
    comm = await connect(address, **Security().get_connection_args('client'))
    try:
        await comm.write({'op': 'identity', 'reply': True})
        return await comm.read()
    finally:
        comm.abort()
