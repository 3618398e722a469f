"""
The one launcher of ROS processes that the demos, the benches and the tests use.

``RosProcess`` starts a command (the node, the sim, a tool) as its own process on a private
ROS_DOMAIN_ID with discovery limited to this machine (``ros_environment``), its stdout and
stderr in one log file, unbuffered; ``wait_for_output`` waits for a line of that log; ``stop``
sends SIGINT (a clean shutdown: the node publishes its last output, the sim writes its bag),
then SIGKILL when it has not exited within its timeout, and returns the exit code.

``RclpySide`` is this process's side of the same domain: a private rclpy context, a node and a
single-threaded executor; ``spin_until`` spins until a condition holds, raising ``TimeoutError``
or ``ProcessExited`` (with the watched processes' logs) instead.

rclpy is imported inside ``RclpySide`` only: the launcher imports with the library alone.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
import os
from pathlib import Path
import signal
import subprocess
import time

# Every ROS process started here: this machine only, logs written as they come.
ROS_ENVIRONMENT = {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST', 'PYTHONUNBUFFERED': '1',
                   'RCUTILS_LOGGING_BUFFERED_STREAM': '0'}
STOP_TIMEOUT = 10.0  # s from SIGINT to SIGKILL, unless the caller says
LOG_TAIL = 3000  # characters of a log that an error message carries


def ros_environment(domain: int, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return this process's environment on ``domain``, localhost discovery, plus ``extra``."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain))
    env.update(ROS_ENVIRONMENT)
    env.update(extra or {})
    return env


class ProcessExited(RuntimeError):
    """A watched process exited while something was awaited."""


class RosProcess:
    """
    A command running on ``domain``; its output (stdout and stderr) in the file ``log_path``.

    ``proc`` is the ``subprocess.Popen``; ``started`` its ``time.perf_counter()`` at the start.
    A context manager: leaving it stops the process.
    """

    def __init__(self, command: list[str], domain: int, log_path: Path, name: str = '',
                 env: Mapping[str, str] | None = None, cwd: Path | None = None):
        """Start ``command`` (``env``: variables added to ``ros_environment(domain)``)."""
        self.name = name or Path(command[0]).name
        self.command, self.domain = list(command), domain
        self.log_path = Path(log_path)
        self._log = open(self.log_path, 'w')
        self.started = time.perf_counter()
        try:
            self.proc = subprocess.Popen(self.command, env=ros_environment(domain, env),
                                         stdout=self._log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=cwd)
        except OSError:
            self._log.close()
            raise

    def __enter__(self) -> RosProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        """Return the exit code, None while it runs."""
        return self.proc.poll()

    def running(self) -> bool:
        return self.proc.poll() is None

    def output(self) -> str:
        """Return everything the process wrote so far."""
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors='replace')

    def wait_for_output(self, text: str, timeout: float) -> str:
        """
        Return the first line of the log that contains ``text``, once it is written.

        ``TimeoutError`` after ``timeout`` s, ``ProcessExited`` if the process exits first
        (each with the log's tail).
        """
        deadline = time.monotonic() + timeout
        while True:
            exited = self.proc.poll() is not None  # before reading: its last lines are in
            for line in self.output().splitlines():
                if text in line:
                    return line
            if exited:
                raise ProcessExited(f'{self.name} exited ({self.proc.returncode}) before '
                                    f'writing {text!r}:\n{self.output()[-LOG_TAIL:]}')
            if time.monotonic() > deadline:
                raise TimeoutError(f'{self.name} did not write {text!r} within {timeout:g} s:\n'
                                   + self.output()[-LOG_TAIL:])
            try:
                self.proc.wait(0.05)  # returns early when it exits
            except subprocess.TimeoutExpired:
                pass

    def stop(self, timeout: float = STOP_TIMEOUT, signum: int = signal.SIGINT) -> int:
        """Send ``signum`` (a clean shutdown), SIGKILL after ``timeout`` s; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode


def logs(processes: Iterable[RosProcess], tail: int = LOG_TAIL) -> str:
    """Return each process's name, exit code (None: running) and the tail of its log."""
    return '\n'.join(f'--- {p.name} (exit {p.returncode}) ---\n{p.output()[-tail:]}'
                     for p in processes)


class RclpySide:
    """
    This process on ``domain``: a private rclpy context, the node ``name``, an executor.

    Sets ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST in this process's environment (rmw reads it
    there). ``close`` destroys the node and shuts the context down.
    """

    def __init__(self, domain: int, name: str):
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node
        self.domain = domain
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = ROS_ENVIRONMENT[
            'ROS_AUTOMATIC_DISCOVERY_RANGE']
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = Node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_until(self, condition: Callable[[], object], timeout: float, what: str = 'condition',
                   watch: Iterable[RosProcess] = (), tick: Callable[[], None] | None = None,
                   spin: float = 0.005):
        """
        Spin (``tick()`` before each spin of at most ``spin`` s) until ``condition()`` is truthy.

        Return its value; ``ProcessExited`` when a ``watch``ed process exits first,
        ``TimeoutError`` after ``timeout`` s (each with the watched processes' logs).
        """
        watch = tuple(watch)
        deadline = time.monotonic() + timeout
        while True:
            if tick is not None:
                tick()
            self.executor.spin_once(timeout_sec=spin)
            result = condition()
            if result:
                return result
            for process in watch:
                if not process.running():
                    raise ProcessExited(f'{process.name} exited ({process.returncode}) while '
                                        f'waiting for {what}:\n{process.output()[-LOG_TAIL:]}')
            if time.monotonic() > deadline:
                raise TimeoutError(f'timed out after {timeout:g} s waiting for {what}:\n'
                                   + logs(watch))

    def close(self) -> None:
        """Stop the executor, destroy the node, shut this context down."""
        import rclpy
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
