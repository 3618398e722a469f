"""
The node in a closed loop with the simulated robot: both processes, the trajectory, the measures.

``ClosedLoop`` starts ``rnea_sim`` (``python -m rnea_ros.sim``) and, when asked, the node
(``python -m rnea_ros.node``) as their own processes on a private ROS_DOMAIN_ID limited to this
machine (``rnea_ros.demos.process``), wired the two ways a ros2_control user wires them:

- ``trajectory`` (path a): the trajectory goes to the node's ``planned_trajectory``; the node's
  ``joint_trajectory_with_effort`` goes to the sim's ``joint_trajectory``, whose joint PD adds
  each point's effort (joint_trajectory_controller with an effort interface);
- ``effort`` (path b): the trajectory goes to the sim's ``joint_trajectory``; the sim publishes
  the desired accelerations of what it tracks; the node's ``feedforward_effort`` goes to the
  sim's ``effort_commands``, added to its PD (an effort controller's ``~/commands``);
- ``pd`` (no node): the PD alone.

It never imports the sim: it talks to it over DDS like any ROS user, so ``rnea_ros.node`` keeps
out of ``rnea_ros.sim`` and the reverse. What it measures is ROS-free (``tracking_error``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import json
from pathlib import Path
import sys
import time

import numpy as np

from rnea_ros.demos.motions import sinusoidal_trajectory
from rnea_ros.demos.process import logs, ProcessExited, RclpySide, RosProcess
from rnea_ros.dynamics.model import RobotModel

PATHS = ('pd', 'trajectory', 'effort')
# The node's remappings on path b: its torques to the sim's effort commands; the trajectory is
# the sim's alone (the node follows it through desired_accelerations), as in a ros2_control
# system where it goes to the robot's controller's joint_trajectory: the node's own input,
# planned_trajectory, is another topic, which nobody publishes on this path.
EFFORT_PATH_REMAPS = {'feedforward_effort': 'effort_commands'}
POINT_PERIOD = 0.01  # s between two points of the trajectory sent (quintic in between)
KP, KD = 100.0, 10.0  # N m/rad, N m s/rad: a compliant joint PD, low gains
START_TIMEOUT = 180.0  # s: the first start on a machine compiles the kernels
STOP_TIMEOUT = 30.0  # s from SIGINT to SIGKILL: the sim writes its bag
LOCKSTEP_TIMEOUT = 2.0  # s [wall clock] a lockstep sim here waits for each answer
# The node beside a lockstep sim: its steady-clock timeouts would take a stall of a shared
# machine (the sim waiting, a collection) for a stale input and publish the fault output for a
# cycle, while the sim's time stands still. ``start_node``'s defaults then; a run that tests the
# timeouts sets its own.
LOCKSTEP_NODE = {'input_timeout': 10.0, 'max_input_timeout': 10.0, 'acceleration_timeout': 10.0}
NODE_STATUS = '/rnea: feed-forward torques'
SIM_STATUS = '/rnea_sim: simulated robot'


@dataclass(frozen=True)
class Tracking:
    """Tracking error of the tracked joints over a window [rad]: RMS over time and joints, max."""

    rms: float
    peak: float
    samples: int

    @classmethod
    def of(cls, error: np.ndarray) -> Tracking:
        """Return the tracking of ``error``: (samples, joints) desired minus true position."""
        error = np.asarray(error, dtype=float)
        if error.size == 0:
            return cls(np.nan, np.nan, 0)
        return cls(float(np.sqrt(np.mean(error ** 2))), float(np.max(np.abs(error))),
                   int(error.shape[0]))


def stiff_gains(model: RobotModel) -> dict[str, float]:
    """Return the node's ``kp.<joint>``, ``kd.<joint>``: the sim's PD (KP, KD) on every joint."""
    values = {f'kp.{name}': KP for name in model.joint_names}
    values.update({f'kd.{name}': KD for name in model.joint_names})
    return values


def tracked_joints(model: RobotModel) -> list[str]:
    """Return the joints the tracking error counts: the revolute ones (fingers move in m)."""
    return [joint.name for joint in model.joints
            if joint.nv == 1 and joint.kind in ('revolute', 'continuous')]


def trajectory_points(model: RobotModel, duration: float, period: float = POINT_PERIOD):
    """
    Return times (N,), Q, V, A (N, joints) of the demo motion, ``model.joint_names`` columns.

    ``sinusoidal_trajectory`` started at rest (every joint at rest at the start), sampled every
    ``period`` up to ``duration``: a robot standing at the first point follows it without a
    jump; the joints move at different frequencies, so not in step. Fixed-base robots.
    """
    if model.floating_base:
        raise ValueError('trajectory_points: a fixed-base robot is expected')
    count = int(round(duration / period)) + 1
    times = np.arange(count) * period
    Q, V, A = sinusoidal_trajectory(model, times, start_at_rest=True)
    return times, Q, V, A


def trajectory_message(names, times, Q, V, A):
    """Return a trajectory_msgs/JointTrajectory of the points (header stamp 0: start now)."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    msg = JointTrajectory(joint_names=list(names))
    for t, q, v, a in zip(times.tolist(), Q.tolist(), V.tolist(), A.tolist()):
        seconds = int(t)
        msg.points.append(JointTrajectoryPoint(
            positions=q, velocities=v, accelerations=a,
            time_from_start=Duration(sec=seconds, nanosec=int(round((t - seconds) * 1e9)))))
    return msg


def params_file(path: Path, params: dict) -> Path:
    """Write ``params`` (keyed ``/**``) as a ROS parameters file; JSON is YAML."""
    path.write_text(json.dumps({'/**': {'ros__parameters': params}}))
    return path


class ClosedLoop:
    """
    The sim and the node on a private domain, and this process's rclpy talking to both.

    ``start_sim`` and ``start_node`` start the processes (parameters and remappings given);
    ``publisher``/``subscribe`` and ``spin_until`` are this process's side; ``change_state``
    drives the node's lifecycle; ``close`` stops everything (SIGINT: the sim writes its bag).
    """

    def __init__(self, domain: int, workdir: Path):
        self.domain, self.workdir = domain, Path(workdir)
        self.processes: dict[str, RosProcess] = {}
        self.lockstep = False  # the sim started last steps in lockstep
        self.side = RclpySide(domain, 'rnea_closed_loop')
        self.context, self.node, self.executor = self.side.context, self.side.node, \
            self.side.executor

    def start_sim(self, params: dict, remaps: dict | None = None, name: str = 'sim',
                  record: Path | None = None, mjcf: Path | None = None) -> RosProcess:
        """
        Start ``python -m rnea_ros.sim`` with ``params`` (``--record``, ``--mjcf`` when given).

        In lockstep the sim waits up to ``LOCKSTEP_TIMEOUT`` for each answer unless ``params``
        say otherwise: a missed answer is then the node not answering, not a stall of a shared
        machine (answers later than the sim's default 0.1 s were seen at load 4).
        """
        self.lockstep = params.get('clock') == 'lockstep'
        if self.lockstep:
            params = {'lockstep_timeout': LOCKSTEP_TIMEOUT, **params}
        command = [sys.executable, '-m', 'rnea_ros.sim']
        if record is not None:
            command += ['--record', str(record)]
        if mjcf is not None:
            command += ['--mjcf', str(mjcf)]
        command += self._ros_args(name, params, remaps)
        return self._start(name, command)

    def start_node(self, params: dict, remaps: dict | None = None, name: str = 'node'
                   ) -> RosProcess:
        """
        Start ``python -m rnea_ros.node`` with ``params`` and ``remaps``.

        Beside a lockstep sim (``start_sim`` first) the node's timeouts are ``LOCKSTEP_NODE``'s
        unless ``params`` say otherwise.
        """
        if self.lockstep:
            params = {**LOCKSTEP_NODE, **params}
        command = [sys.executable, '-m', 'rnea_ros.node']
        return self._start(name, command + self._ros_args(name, params, remaps))

    def _ros_args(self, name: str, params: dict, remaps: dict | None) -> list[str]:
        args = ['--ros-args', '--params-file',
                str(params_file(self.workdir / f'{name}_params.yaml', params))]
        for old, new in (remaps or {}).items():
            args += ['-r', f'{old}:={new}']
        return args

    def _start(self, name: str, command: list[str]) -> RosProcess:
        process = RosProcess(command, self.domain, self.workdir / f'{name}.log', name)
        self.processes[name] = process
        return process

    def publisher(self, msg_type, topic: str, qos=None):
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        qos = qos or QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        return self.node.create_publisher(msg_type, topic, qos)

    def subscribe(self, msg_type, topic: str, callback: Callable, reliable: bool = True):
        """Subscribe (reliable, or best effort: it hears both kinds of publisher), depth 100."""
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        reliability = ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT
        return self.node.create_subscription(
            msg_type, topic, callback, QoSProfile(depth=100, reliability=reliability))

    def spin_until(self, condition: Callable[[], object], timeout: float, what: str,
                   watch: tuple[str, ...] = ()):
        """Spin until ``condition()`` is truthy; TimeoutError or RuntimeError (exit), with logs."""
        try:
            return self.side.spin_until(condition, timeout, what,
                                        [self.processes[name] for name in watch])
        except ProcessExited as exc:
            raise RuntimeError(f'the {exc}') from None
        except TimeoutError:
            raise TimeoutError(f'timed out after {timeout:g} s waiting for {what}:\n'
                               + self.logs()) from None

    def spin_for(self, seconds: float, watch: tuple[str, ...] = ()) -> None:
        """Spin for ``seconds``; RuntimeError if a watched process exits meanwhile."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.005)
        for name in watch:
            if not self.processes[name].running():
                raise RuntimeError(f'the {name} exited:\n' + self.logs())

    def send(self, publisher, msg, taken: Callable[[], bool], what: str,
             watch: tuple[str, ...] = (), attempts: int = 20, wait: float = 1.0) -> None:
        """
        Publish ``msg`` until ``taken()`` says a subscriber acted on it.

        A volatile reliable message sent just after discovery can be lost: the publisher may
        have matched a subscriber that has not matched it yet. Nothing else tells when both
        sides are matched, so the message is sent again until its effect is seen.
        """
        for _ in range(attempts):
            publisher.publish(msg)
            try:
                self.spin_until(taken, wait, what, watch)
                return
            except TimeoutError:
                continue
        raise RuntimeError(f'{what}: not seen after {attempts} sends:\n' + self.logs())

    def change_state(self, transition: int, node: str = '/rnea', timeout: float = 60.0) -> bool:
        """Call the node's ``change_state`` service with ``transition`` (lifecycle_msgs ids)."""
        from lifecycle_msgs.msg import Transition
        from lifecycle_msgs.srv import ChangeState
        client = self.node.create_client(ChangeState, f'{node}/change_state')
        try:
            self.spin_until(client.service_is_ready, timeout, f'{node}/change_state')
            future = client.call_async(ChangeState.Request(transition=Transition(id=transition)))
            self.spin_until(future.done, timeout, f'the answer of {node}/change_state')
            return future.result().success
        finally:
            self.node.destroy_client(client)

    def logs(self) -> str:
        return logs(self.processes.values())

    def stop(self, name: str) -> int:
        """Stop one process (SIGINT, SIGKILL after 30 s: the sim writes its bag); its exit code."""
        return self.processes.pop(name).stop(STOP_TIMEOUT)

    def close(self) -> dict[str, int]:
        """Stop the processes (SIGINT: the sim writes its bag) and this rclpy; exit codes."""
        codes = {name: self.stop(name) for name in list(self.processes)}
        self.side.close()
        return codes
