"""
Closed-loop runs for the tests: ``rnea_sim`` and the node over real DDS, measured from the bag.

``run_loop`` starts the sim (``clock: lockstep`` unless told, so that the result does not depend
on the machine's load: each step waits for the node's answer to its state) and, for the paths
that use it, the node (``rate: 0``, answering each joint_states message), sends the trajectory
once the node answers, waits until the sim's reference reaches the last point, stops both with
SIGINT and reads what the sim recorded (``--record``): the tracking error of the trajectory's
window, the sim's counters (its last log line) and the messages themselves.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
import re

from diagnostic_msgs.msg import DiagnosticArray
from harness.ros_harness import next_domain_id
import numpy as np
from rosbags.highlevel import AnyReader
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from rnea_ros import RobotModel
from rnea_ros.demos.closed_loop import (ClosedLoop, EFFORT_PATH_REMAPS, KD, KP, NODE_STATUS,
                                        START_TIMEOUT,
                                        tracked_joints, Tracking, trajectory_message,
                                        trajectory_points)

NS = 1_000_000_000
SETTLE = 4.0  # s of sim time for the arm to settle at the start (its error decays as e^-2t)
# s of sim time to settle for a run that judges nothing of the start or its tracking (a push, a
# kill, a residual on the motion that follows): the settling is not its subject
SHORT_SETTLE = 0.5
# s of sim time to settle for a run judged by an upper bound on its tracking error against a
# reference that starts settled (the PD alone, the law in-process): what is left of the sag at
# the start only adds to the error judged. Path b sags only until the node first answers: after
# 1 s its tracking is that after 4 s (3.144e-4 against 3.143e-4 rad RMS, panda, gap none);
# path a, held by the PD alone 1 s first (``settle``), keeps ~1e-3 rad of it.
TRACKED_SETTLE = 1.0
# s [wall clock] to wait for the sim's log to say it accepted the trajectory before sending it
# again (a message sent just after discovery can be lost): a copy, stamped 0, restarts the motion
# as joint_trajectory_controller does, so it is sent only when the sim has not taken the first.
SEND_WAIT = 5.0


@dataclass
class LoopRun:
    """What one closed-loop run gave."""

    tracking: Tracking
    counters: dict[str, int]
    topics: BagTopics = field(repr=False)  # topic -> [(stamp ns, message)] from the bag
    exit_codes: dict[str, int] = field(default_factory=dict)
    logs: str = field(default='', repr=False)


class BagTopics(Mapping):
    """
    Topic -> [(log time ns, message)] of a bag, each topic deserialized when first read.

    A closed-loop run records ~50 000 messages over half a dozen topics; most callers read two
    (deserializing one takes ~0.2 ms on a loaded core: seconds per run for the unread ones).
    """

    def __init__(self, typestore, raw: dict[str, tuple[str, list]]):
        self._typestore = typestore  # the bag's message types (its reader's, kept past closing)
        self._raw = raw  # topic -> (message type, [(log time ns, bytes)])
        self._messages: dict[str, list] = {}

    def __getitem__(self, topic: str) -> list:
        if topic not in self._messages:
            msgtype, raw = self._raw[topic]
            self._messages[topic] = [(stamp, self._typestore.deserialize_cdr(data, msgtype))
                                     for stamp, data in raw]
        return self._messages[topic]

    def __iter__(self):
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


def read_bag(path: Path) -> BagTopics:
    """
    Return topic -> [(log time ns, message)] of every message of the bag at ``path``.

    The bag's names are fully qualified (``/joint_states``); the keys are as the sim names its
    topics, relative to the root namespace (``joint_states``).
    """
    raw: dict[str, tuple[str, list]] = {}
    with AnyReader([path]) as reader:
        for connection, stamp, data in reader.messages():
            raw.setdefault(connection.topic.removeprefix('/'), (connection.msgtype, []))[
                1].append((stamp, data))
        typestore = reader.typestore  # closing the reader replaces it with an empty one
    return BagTopics(typestore, raw)


def sim_counters(log: str) -> dict[str, int]:
    """Return the counters of the sim's last ``done:`` log line (name -> count)."""
    done = [line for line in log.splitlines() if 'done: ' in line]
    if not done:
        return {}
    text = done[-1].split('done: ', 1)[1]
    return {name.strip(): int(value) for name, value in re.findall(r'([^,]+?) (\d+)(?:,|$)', text)}


def stamp_ns(msg) -> int:
    return msg.header.stamp.sec * NS + msg.header.stamp.nanosec


def window_tracking(topics: dict, model: RobotModel, final: np.ndarray, duration: float,
                    rate: float = 1000.0) -> Tracking:
    """
    Return the tracking error over the ``duration`` s ending when the reference holds ``final``.

    The desired position of the state of stamp s is desired_accelerations' (stamp s); the true
    position of that state is in truth/joint_torques of stamp s + 1 step (the truth describes
    the step taken from it). The end is the first stamp of the recording's last references, all
    ``final`` (the hold after the trajectory's end, until the sim stops): a motion may pass its
    last point earlier (the demo motion repeats every 40 s, and bit for bit at 20 s and 60 s).
    """
    names = list(topics['desired_accelerations'][0][1].joint_names)
    tracked = [names.index(name) for name in tracked_joints(model)]
    step = round(NS / rate)
    desired = {stamp_ns(msg): np.asarray(msg.points[0].positions)
               for _, msg in topics['desired_accelerations']}
    truth = {stamp_ns(msg) - step: np.asarray(msg.position)
             for _, msg in topics['truth/joint_torques']}
    ordered = sorted(desired)
    held = len(ordered)
    while held and np.array_equal(desired[ordered[held - 1]], final):
        held -= 1
    assert held < len(ordered), \
        'the reference did not hold the last point of the trajectory at the end of the recording'
    end = ordered[held]
    begin = end - round(duration * NS)  # in integers: a float stamp is 256 ns coarse
    stamps = [s for s in ordered if begin <= s < end and s in truth]
    assert len(stamps) >= 0.99 * duration * rate, (len(stamps), duration * rate)
    error = np.array([desired[s][tracked] - truth[s][tracked] for s in stamps])
    return Tracking.of(error)


def accepted(loop: ClosedLoop, points: int) -> int:
    """Return how many trajectories of ``points`` points the sim has logged as accepted."""
    return loop.processes['sim'].output().count(f'joint_trajectory accepted: {points} points')


def settle(loop: ClosedLoop, publisher, names, start, desired: list, watch,
           seconds: float = SETTLE) -> None:
    """
    Path a: hold the start through the node, then wait ``seconds`` of sim time.

    On this path the sim has the node's feed-forward only with a trajectory: until one comes,
    its PD alone holds the start and gravity sags the arm (0.1-0.2 rad). A one-point trajectory
    at the start, at rest, carries the node's gravity torques: the arm lifts back. It is sent
    until the sag has halved (the first of the node's joint_trajectory_with_effort messages
    does not always reach the sim). The sim's truth is heard (1 kHz) only until it lifted: its
    callbacks would take a share of the two cores from the sim and the node.
    """
    truth: list = []
    subscription = loop.subscribe(JointState, 'truth/joint_torques', truth.append)
    wait_sim_time(loop, desired, 1.0, watch)  # the arm sags under the PD alone

    def error():
        return np.max(np.abs(np.asarray(truth[-1].position) - start))
    sag = loop.spin_until(lambda: truth and error(), 60.0, 'truth/joint_torques', watch)
    zeros = np.zeros((1, len(names)))
    hold = trajectory_message(names, np.zeros(1), start[None, :], zeros, zeros)
    loop.send(publisher, hold, lambda: error() < 0.5 * sag, 'the arm lifted to the start',
              watch, wait=2.0)
    loop.node.destroy_subscription(subscription)
    wait_sim_time(loop, desired, seconds, watch)


def wait_sim_time(loop: ClosedLoop, desired: list, seconds: float, watch) -> None:
    """Spin until the sim's stamps (desired_accelerations) advanced ``seconds``."""
    loop.spin_until(lambda: desired, 60.0, 'desired_accelerations', watch)
    since = stamp_ns(desired[-1])
    loop.spin_until(lambda: stamp_ns(desired[-1]) >= since + seconds * NS, 60.0 * seconds,
                    f'{seconds:g} s of sim time', watch)


class SimSteps:
    """The sim's step count from its 1 Hz diagnostics (``steps``): a cheap clock to wait on."""

    def __init__(self, loop: ClosedLoop):
        self.counts: list[int] = []
        loop.subscribe(DiagnosticArray, '/diagnostics', self._on_diagnostics)

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.hardware_id == 'mujoco':
                self.counts.extend(int(kv.value) for kv in status.values if kv.key == 'steps')


def wait_for_end(loop: ClosedLoop, subscriptions: list, steps: SimSteps, since: int,
                 duration: float, final: np.ndarray, watch) -> None:
    """
    Wait until the sim's reference is ``final``: ``duration`` s of steps after step ``since``.

    Meanwhile this process hears only the sim's 1 Hz diagnostics: its own Python callbacks at
    1 kHz (desired_accelerations, joint_torques: ``subscriptions``, dropped first) would take a
    share of the machine's two cores from the sim and the node in a real-time run. At the end
    desired_accelerations is heard again until it shows ``final``.
    """
    for subscription in subscriptions:
        loop.node.destroy_subscription(subscription)
    target = since + round(duration * 1000.0)
    loop.spin_until(lambda: steps.counts and steps.counts[-1] >= target, 30.0 * duration + 60.0,
                    "the end of the trajectory (the sim's step count)", watch)
    desired: list = []
    loop.subscribe(JointTrajectory, 'desired_accelerations', desired.append, reliable=False)
    loop.spin_until(lambda: desired and np.array_equal(desired[-1].points[0].positions, final),
                    30.0 * duration + 60.0, 'the end of the trajectory', watch)


def call(loop: ClosedLoop, srv_type, name: str, request, watch=('sim', 'node')):
    """Call service ``name`` (e.g. the node's) once it is ready; its response."""
    client = loop.node.create_client(srv_type, name)
    try:
        loop.spin_until(client.service_is_ready, 60.0, f'service {name}', watch)
        future = client.call_async(request)
        loop.spin_until(future.done, 60.0, f'the answer of {name}', watch)
        return future.result()
    finally:
        loop.node.destroy_client(client)


def set_thresholds(loop: ClosedLoop, thresholds: dict) -> None:
    """Set ``collision_threshold.<joint>`` of the node live, in one atomic set; each accepted."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    result = call(loop, SetParameters, '/rnea/set_parameters', SetParameters.Request(
        parameters=[Parameter(name=f'collision_threshold.{joint}', value=ParameterValue(
            type=ParameterType.PARAMETER_DOUBLE, double_value=float(value)))
            for joint, value in thresholds.items()]))
    assert all(r.successful for r in result.results), result


def detection_start(diagnostics: list) -> float | None:
    """Return the start stamp [s] of the node's latest collision, from its diagnostics."""
    for msg in reversed(diagnostics):
        for item in msg.status:
            if item.name == NODE_STATUS:
                values = {kv.key: kv.value for kv in item.values}
                found = re.search(r'from stamp ([0-9.]+) s', values.get('last collision', ''))
                if found:
                    return float(found.group(1))
    return None


def run_loop(tmp_path: Path, urdf: str, path: str, gap: str = 'default',
             duration: float = 10.0, node_params: dict | None = None,
             sim_params: dict | None = None, during=None, motion=None,
             to_the_end: bool = True, mjcf: Path | None = None,
             settle_time: float = SETTLE) -> LoopRun:
    """
    Run the trajectory in closed loop on ``path`` (see ``closed_loop.PATHS``); measure it.

    ``mjcf``: the sim runs this MJCF file (``rnea_sim --mjcf``) instead of ``urdf``, which
    stays the node's model and the trajectory's.

    ``during(loop)``: called once the trajectory is sent (e.g. to stop the node).
    ``motion``: (times, Q, V, A) of ``duration`` s instead of the demo trajectory.
    ``to_the_end`` False: stop once ``during`` returns (a run whose reference is held, e.g. by a
    latched collision on path a), its tracking not measured.
    ``settle_time``: s of sim time the arm settles at the start before the trajectory is sent
    (paths trajectory and effort).
    """
    model = RobotModel.from_urdf_string(urdf)
    times, Q, V, A = trajectory_points(model, duration) if motion is None else motion
    names = model.joint_names
    bag = tmp_path / f'{path}_bag'
    loop = ClosedLoop(next_domain_id(), tmp_path)
    exit_codes: dict[str, int] = {}
    try:
        sim = {'robot_description': urdf, 'clock': 'lockstep', 'gap': gap, 'kp': [KP],
               'kd': [KD], 'initial_positions': Q[0].tolist()}
        if path == 'pd':
            sim['lockstep_timeout'] = 1e-4  # nobody answers: do not wait
        sim.update(sim_params or {})
        remaps = {'joint_trajectory': 'joint_trajectory_with_effort'} if path == 'trajectory' \
            else {}
        loop.start_sim(sim, remaps, record=bag, mjcf=mjcf)
        desired: list = []
        desired_sub = loop.subscribe(JointTrajectory, 'desired_accelerations', desired.append,
                                     reliable=False)
        steps = SimSteps(loop)
        watch = ('sim',)
        if path != 'pd':
            # Path a sends the whole trajectory to the node at once: it must take it.
            params = {'robot_description': urdf, 'rate': 0.0,
                      'max_trajectory_points': max(1000, len(times))}
            params.update(node_params or {})
            loop.start_node(params, EFFORT_PATH_REMAPS if path == 'effort' else {})
            watch = ('sim', 'node')
            answers: list = []
            answers_sub = loop.subscribe(JointState, 'joint_torques', answers.append)
            loop.spin_until(lambda: answers, START_TIMEOUT, 'the node to answer', watch)
            loop.node.destroy_subscription(answers_sub)  # heard no longer (see wait_for_end)
        # Its subscriber: the sim's joint_trajectory on paths pd and effort, the node's
        # planned_trajectory on path trajectory.
        topic = 'planned_trajectory' if path == 'trajectory' else 'joint_trajectory'
        publisher = loop.publisher(JointTrajectory, topic)
        loop.spin_until(lambda: publisher.get_subscription_count() >= 1, 60.0,
                        f'the subscribers of {topic}', watch)
        start = Q[0]
        if path == 'trajectory':
            settle(loop, publisher, names, Q[0], desired, watch, settle_time)
        elif path == 'effort':  # the arm sagged until the node answered: it lifts back
            wait_sim_time(loop, desired, settle_time, watch)

        def taken():
            return desired and not np.array_equal(desired[-1].points[0].positions, start)
        before = accepted(loop, len(times))
        loop.send(publisher, trajectory_message(names, times, Q, V, A),
                  lambda: accepted(loop, len(times)) > before, 'the trajectory accepted', watch,
                  wait=SEND_WAIT)
        loop.spin_until(taken, 60.0, 'the motion started', watch)
        # The step it was taken at, or before (the last report is up to 1 s old).
        since = steps.counts[-1] if steps.counts else 0
        if during is not None:
            during(loop)
            watch = ('sim',)
        final = Q[-1]
        if to_the_end:
            wait_for_end(loop, [desired_sub], steps, since, duration, final, watch)
        exit_codes['sim'] = loop.stop('sim')
        logs = loop.logs()
    finally:
        exit_codes.update(loop.close())
    topics = read_bag(bag)
    sim_log = (tmp_path / 'sim.log').read_text(errors='replace')
    tracking = window_tracking(topics, model, final, duration) if to_the_end else Tracking.of([])
    return LoopRun(tracking, sim_counters(sim_log), topics, exit_codes, logs + sim_log[-3000:])
