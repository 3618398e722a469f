"""
Test the node's data path over real DDS.

Publishers at different rates, locked joints, armature and friction, trajectory efforts on a
floating base, model replacement while cycling.
Same harness as ``test_node`` (the real node as a subprocess, one domain per test); the logic
behind each is unit-tested in ``test_feedforward`` and ``test_joint_input``.
"""
from __future__ import annotations

import json
from pathlib import Path
import threading
import time

from harness.node_streams import (ERROR, has_level, joint_state, OK, PANDA_ARM, random_arm_state,
                                  standing_solo, STATUS, status, Streams, WARN)
from harness.ros_harness import BEST_EFFORT
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.node.model_loading import WORKER_NICENESS

pytestmark = pytest.mark.timeout(120)

FINGER = 'panda_finger_joint1'


class RatePublishers:
    """
    Publish joint_states of the panda arm and of its finger from two publishers.

    Each at its own rate, on a thread sleeping to absolute deadlines; the arm's publish times
    are recorded.
    """

    def __init__(self, ros, q, v, arm_rate: float, finger_rate: float):
        self.arm_pub = ros.publisher(JointState, 'joint_states', BEST_EFFORT)
        self.finger_pub = ros.publisher(JointState, 'joint_states', BEST_EFFORT)
        self.q, self.v = q, v
        self.rates = (arm_rate, finger_rate)
        self.arm_times: list[float] = []
        self.arm_on = True
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        start = time.monotonic()
        due = [start, start]
        while not self._stop.is_set():
            k = int(np.argmin(due))
            delay = due[k] - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            if k == 0:
                if self.arm_on:
                    self.arm_pub.publish(joint_state(PANDA_ARM, self.q[:7], self.v[:7], (1, 0)))
                    self.arm_times.append(time.monotonic())
            else:
                self.finger_pub.publish(joint_state([FINGER], self.q[7:8], self.v[7:8], (2, 0)))
            due[k] += 1.0 / self.rates[k]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


WINDOWS = 3  # windows of 600 cycles tried for one the test publisher did not pause in
INPUT_TIMEOUT = 0.15  # s: the node's input_timeout in the slow-gripper test (its docstring)
NODE_GAP = 'joint_states longest gap since last report [ms]'  # the node's diagnostics


def test_arm_and_slow_gripper_publishers_give_no_fault_output(ros, panda):
    """
    Publish the arm at 250 Hz and the finger at 4 Hz: no fault output at all.

    Then the arm publisher stops: the fault within input_timeout (+ delivery), counted in the
    diagnostics.
    input_timeout is 0.15 s, not the default 0.1, only so that this Python test publisher, on a
    shared 2-core machine, does not itself pause longer than the timeout; the finger's period
    (0.25 s) is still well beyond it, and every finger message made the node flicker before
    freshness was judged per joint.
    """
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'input_timeout': INPUT_TIMEOUT,
                    'fault_output': 'zero'})
    q, v, _ = random_arm_state(model, 21)
    q[7] = 0.02
    streams = Streams(ros, [], [], [])
    streams.send_joint_states = False
    publishers = RatePublishers(ros, q, v, 250.0, 4.0)
    try:
        good = model.rnea(q, v, np.zeros(model.nv))
        ros.wait_for(streams.command, lambda m: np.allclose(m.data, good, atol=1e-9), 30)
        streams.diagnostic(has_level(OK), timeout=15)  # a report after the first good
        # 600 cycles without a fault output. A window in which this process itself paused the
        # arm's publisher past input_timeout (a loaded machine: 0.7 s seen) is not judged: the
        # node was right to fault there. Another window is taken, at most WINDOWS in all.
        # Nor one in which the node's own process took the messages in later than that (a
        # process spinning beside the suite starved it): its diagnostics give the longest gap
        # between two joint_states it took, per report.
        seen = []
        for _ in range(WINDOWS):
            start, published = len(streams.command.messages), len(publishers.arm_times)
            reports = len(streams.diagnostics.messages)
            began = time.monotonic()
            ros.spin_until(lambda: len(streams.command.messages) - start >= 600, 30,
                           what='600 cycles')
            window = streams.command.messages[start:]
            faults = sum(1 for m in window if not np.any(m.data))
            times = [began, *publishers.arm_times[published:], time.monotonic()]
            gap = float(np.max(np.diff(times)))
            streams.diagnostic(lambda m: status(m) is not None)  # one report after the window
            taken = max(float(status(m)[2].get(NODE_GAP, '0')) * 1e-3
                        for m in streams.diagnostics.messages[reports:] if status(m))
            seen.append(f'{faults} fault outputs of {len(window)}, largest arm publish gap '
                        f'{gap:.3f} s, taken in by the node {taken:.3f} s')
            if faults == 0 or max(gap, taken) <= INPUT_TIMEOUT:
                break
        assert faults == 0, '; '.join(seen)
        np.testing.assert_allclose(window[-1].data, good, rtol=0, atol=1e-9)
        report = streams.diagnostic(has_level(OK))
        values = status(report)[2]
        assert values['fault cycles since last report'] == '0', '; '.join(seen)
        slow = values['joint_states timeouts [s] (slow publishers)']
        assert slow.startswith(FINGER) and 0.5 < float(slow.split()[1]) <= 1.0
        # The arm publisher stops: fault output within the arm's own timeout.
        publishers.arm_on = False
        fault = ros.wait_for(streams.command, lambda m: not np.any(m.data), 10)
        latency = time.monotonic() - publishers.arm_times[-1]
        assert fault is not None and latency >= INPUT_TIMEOUT
        assert latency < 1.0  # max_input_timeout: the bound for any joint (+ delivery)
        print(f'arm publisher stopped: fault output received after {latency * 1e3:.0f} ms')
        report = streams.diagnostic(has_level(ERROR, 'state', 'joint_states_stale'))
        values = status(report)[2]
        assert int(values['fault cycles (joint_states_stale)']) > 0
        assert 'panda_joint' in values['commanded joints stale']
        assert FINGER not in values['commanded joints stale']
    finally:
        publishers.stop()


def test_fault_cycles_between_two_reports_make_a_warn(ros, panda):
    """A joint_states pause shorter than the diagnostics period is still reported."""
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'input_timeout': 0.1,
                    'fault_output': 'zero'})
    q, v, _ = random_arm_state(model, 22)
    streams = Streams(ros, model.joint_names, q, v)
    streams.torque_for((3, 0))
    streams.diagnostic(has_level(OK))
    streams.send_joint_states = False
    ros.wait_for(streams.torques, lambda m: not np.any(m.effort), tick=streams.tick)
    streams.send_joint_states = True
    streams.torque_for((4, 0), predicate=lambda m: np.any(m.effort))
    # The first report after the recovery: WARN, the state ok, the fault cycles counted.
    report = streams.diagnostic(lambda m: status(m) is not None and status(m)[0] == WARN
                                and status(m)[2]['state'] == 'ok')
    level, message, values = status(report)
    assert 'cycles (joint_states_stale) since the last report' in message
    assert int(values['fault cycles since last report']) > 0
    assert int(values['fault cycles (joint_states_stale)']) >= int(
        values['fault cycles since last report'])


def test_locked_joint_held_and_not_commanded(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'locked_joints': [FINGER],
                    'locked_positions': [0.03]})
    q, v, a = random_arm_state(model, 23)
    streams = Streams(ros, PANDA_ARM, q[:7], v[:7])  # the finger is never published
    q_used, v_used = q.copy(), v.copy()
    q_used[7], v_used[7] = 0.03, 0.0
    expected = model.rnea(q_used, v_used, np.zeros(model.nv))
    torques = streams.torque_for((5, 0), predicate=lambda m: np.allclose(
        m.effort, expected, atol=1e-9))
    np.testing.assert_allclose(torques.effort, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(torques.position, q_used, rtol=0, atol=0)
    command = ros.wait_for(streams.command, lambda m: np.any(m.data), tick=streams.tick)
    assert len(command.data) == 7
    np.testing.assert_allclose(command.data, expected[:7], rtol=0, atol=1e-9)
    values = status(streams.diagnostic(has_level(OK)))[2]
    assert values['locked joints'] == f'{FINGER} 0.03'


@pytest.mark.parametrize('params, text', [
    ({'locked_joints': ['nope'], 'locked_positions': [0.0]},
     "parameter 'locked_joints': ['nope'] are not independent one-DoF joints of the model"),
    ({'locked_joints': [FINGER], 'locked_positions': [0.5]},
     f"parameter 'locked_positions': 0.5 for joint '{FINGER}' is outside its limits"),
    ({'locked_joints': [FINGER], 'locked_positions': [0.01, 0.02]},
     "parameter 'locked_positions' has 2 values for 1 locked_joints"),
    ({'armature.panda_joint9': 0.1},
     "parameter 'armature.panda_joint9' names no one-DoF joint of the model"),
])
def test_bad_data_parameters_exit_2_naming_the_parameter(ros, panda, params, text):
    _, xml = panda
    process = ros.start_node({'robot_description': xml, **params})
    assert process.proc.wait(60) == 2
    lines = [line for line in process.output().splitlines() if text in line]
    assert len(lines) == 1, process.output()


ACTUATION = {'friction_velocity_threshold': 0.05,
             'armature.panda_joint1': 0.3, 'armature.panda_joint4': 0.15,
             'friction.panda_joint1.coulomb': 1.5, 'friction.panda_joint1.viscous': 0.4,
             'friction.panda_joint2.offset': -0.2, 'friction.panda_joint6.coulomb': 0.8,
             'effort_bias.panda_joint3': 0.7}  # the sensor's: never in the torques


def test_armature_and_friction_from_an_actuation_params_file(ros, panda, tmp_path):
    """
    Load actuation.yaml (keyed /**:, as rnea_identify writes it) as a second params file.

    With friction_compensation the torques are RobotModel.rnea + armature * a + friction(v).
    """
    model, xml = panda
    actuation_file = tmp_path / 'actuation.yaml'
    actuation_file.write_text(json.dumps({'/**': {'ros__parameters': ACTUATION}}))
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'friction_compensation': True},
                   extra_args=('--params-file', str(actuation_file)))
    q, v, a = random_arm_state(model, 24)
    streams = Streams(ros, model.joint_names, q, v)
    desired_v = np.array([0.2, -0.1, 0.0, 0.05, 0.0, 0.0, 0.3])
    point = JointTrajectoryPoint(accelerations=[float(x) for x in a[:7]],
                                 velocities=[float(x) for x in desired_v])
    streams.desired = JointTrajectory(joint_names=list(PANDA_ARM), points=[point])
    actuation = Actuation.from_parameters(model, ACTUATION)
    a_used = np.concatenate([a[:7], [0.0]])
    v_friction = np.concatenate([desired_v, v[7:]])  # desired where given, else measured
    expected = (model.rnea(q, v, a_used) + actuation.armature * a_used
                + actuation.friction_torques(v_friction))
    torques = streams.torque_for((6, 0), predicate=lambda m: np.allclose(
        m.effort, expected, atol=1e-9))
    np.testing.assert_allclose(torques.effort, expected, rtol=0, atol=1e-12)
    values = status(streams.diagnostic(has_level(OK)))[2]
    assert values['friction compensation'] == 'on: panda_joint1, panda_joint2, panda_joint6'
    assert values['armature'] == 'panda_joint1 0.3, panda_joint4 0.15'


def test_trajectory_effort_on_a_standing_floating_base_matches_joint_torques(ros):
    """
    Give standing solo12's trajectory points the contact solution, as joint_torques has.

    The plain RNEA would be off by up to 0.7 N m here.
    """
    model, q, streams, _ = standing_solo(ros, {'fault_output': 'zero'})
    torques = streams.torque_for((7, 0), predicate=lambda m: np.any(m.effort))  # not a fault
    out = ros.matched(ros.collect(JointTrajectory, 'joint_trajectory_with_effort'))
    publisher = ros.publisher(JointTrajectory, 'planned_trajectory')
    joints = model.joint_names[1:]
    msg = JointTrajectory(joint_names=list(joints))
    for t in (0, 1):
        point = JointTrajectoryPoint(positions=[float(x) for x in q[7:]], velocities=[0.0] * 12,
                                     accelerations=[0.0] * 12)
        point.time_from_start.sec = t
        msg.points.append(point)
    ros.spin_until(lambda: publisher.get_subscription_count() > 0, what='the node subscribed')
    publisher.publish(msg)
    result = ros.wait_for(out, start=0, timeout=20)
    for point in result.points:
        np.testing.assert_allclose(point.effort, torques.effort, rtol=0, atol=1e-9)
    plain = model.rnea(q, np.zeros(model.nv), np.zeros(model.nv))[6:]
    assert np.max(np.abs(plain - np.asarray(torques.effort))) > 0.5


def hardware_id(msg) -> str | None:
    for item in msg.status:
        if item.name == STATUS:
            return item.hardware_id
    return None


def _nice(pid: int) -> int:
    # /proc/<pid>/stat: field 19 is the niceness (after the command in parentheses).
    return int(Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[16])


def _descendants(pid: int) -> list[tuple[int, int]]:
    """Return (pid, niceness) of every process below ``pid``."""
    parent = {}
    for entry in Path('/proc').iterdir():
        if entry.name.isdigit():
            try:
                parent[int(entry.name)] = int(
                    (entry / 'stat').read_text().rsplit(')', 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, up in parent.items() if up in frontier]
        found += children
        frontier = children
    return [(child, _nice(child)) for child in found if Path(f'/proc/{child}').exists()]


@pytest.mark.realtime  # missed cycles are the wall clock's: in the parallel phase the other
# worker's test made 25 missed over 11 periods against quiet windows of 2.2 (load 6)
def test_a_20_mb_description_replaces_the_model_without_stalling_the_cycles(ros, panda):
    """
    Replace the model with a 20 MB robot_description at 500 Hz: no stall, few missed cycles.

    The panda with 20 MB of comments is received and parsed in a worker process, only the
    finished model is installed under the lock. Parsed on the node's own threads it would stall
    the cycles for the whole parse (a second idle, 8 s at load 6: one run of hundreds to
    thousands of missed cycles). So the longest run of missed cycles stays under 250 (0.5 s),
    and the replacement costs at most the scatter of a loaded machine more than a quiet window
    of the same number of diagnostics periods: 10 cycles, or 2 per period in a longer window
    (6 against a median of 2.5 over a few periods beside a full test run; 11 over 10 periods at
    load 6, where the quiet record was too short for windows of that length).
    """
    model, xml = panda
    node = ros.start_node({'rate': 500.0})
    description = ros.latched_publisher(String, 'robot_description')
    description.publish(String(data=xml))
    q, v, _ = random_arm_state(model, 25)
    streams = Streams(ros, model.joint_names, q, v)
    good = model.rnea(q, v, np.zeros(model.nv))
    streams.torque_for((8, 0), timeout=30, predicate=lambda m: np.allclose(m.effort, good))
    # The worker parses at a lower CPU priority than the node's control thread.
    niceness = dict(_descendants(node.proc.pid))
    assert WORKER_NICENESS > 0 and _nice(node.proc.pid) + WORKER_NICENESS in \
        niceness.values(), niceness

    def missed(msg, key='missed cycles') -> int:
        return int(status(msg)[2][key])
    # The worker is up (the model came through it); let the start-up settle, then 6 quiet
    # reports (5 quiet windows of one period).
    for _ in range(2):
        streams.diagnostic(has_level(OK))
    quiet = [streams.diagnostic(has_level(OK)) for _ in range(6)]
    big = xml.replace('<robot name="panda"', '<robot name="panda_big"', 1)
    comment = '<!-- ' + 'padding: a URDF as large as an inlined mesh. ' * 8 + '-->\n'
    big = big.replace('</robot>', comment * (20_000_000 // len(comment)) + '</robot>')
    assert len(big) > 20e6
    before = quiet[-1]
    description.publish(String(data=big))
    streams.diagnostic(lambda m: hardware_id(m) == 'panda_big', timeout=60)
    after = streams.diagnostic(has_level(OK))  # the window ends one report after the install
    messages = streams.diagnostics.messages
    periods = messages.index(after) - messages.index(before)
    replacement = missed(after) - missed(before)
    # Quiet windows of the same number of reports; the typical one (median) is the reference.
    windows = [missed(quiet[k + periods]) - missed(quiet[k])
               for k in range(len(quiet) - periods)]
    if not windows:  # the replacement took longer than the quiet record: scale the whole
        windows = [(missed(quiet[-1]) - missed(quiet[0])) * periods / (len(quiet) - 1)]
    longest = [missed(msg, 'missed cycles, longest run') for msg in (before, after)]
    print(f'missed cycles: {replacement} over {periods} reports with the 20 MB replacement, '
          f'{windows} in quiet windows of as many reports; longest run {longest}')
    assert replacement <= np.median(windows) + max(10, 2 * periods), (replacement, windows)
    assert longest[1] <= max(longest[0], 250), longest
    torques = streams.torque_for((9, 0), predicate=lambda m: np.allclose(m.effort, good))
    np.testing.assert_allclose(torques.effort, good, rtol=0, atol=1e-12)
