"""
The node's life: lifecycle transitions over the real services, and clean stops by signal.

Over real DDS with the real node process (``ros_harness``). The stop test is the slow one of this
module (40 node starts, a few in parallel): it is marked ``slow_stops`` in its name and runs in
about a minute on 2 loaded cores.
"""
from __future__ import annotations

import signal
import subprocess

from diagnostic_msgs.msg import DiagnosticArray
from harness.node_calls import change_state
from harness.oracle import robot_path
from harness.ros_harness import BEST_EFFORT, RosHarness
from lifecycle_msgs.msg import State, Transition
from lifecycle_msgs.srv import GetState
import pytest
from sensor_msgs.msg import JointState

pytestmark = pytest.mark.timeout(600)

PANDA_Q = [0.1, -0.3, 0.2, -1.8, 0.1, 1.6, 0.7, 0.02, 0.02]
PANDA_JOINTS = ([f'panda_joint{k}' for k in range(1, 8)]
                + ['panda_finger_joint1', 'panda_finger_joint2'])


@pytest.fixture(scope='module')
def panda_xml() -> str:
    return robot_path('panda').read_text()


def joint_states(sequence: int = 0) -> JointState:
    """Return the panda at rest, ``sequence`` in the stamp's seconds (the answers carry it)."""
    msg = JointState(name=PANDA_JOINTS, position=PANDA_Q, velocity=[0.0] * len(PANDA_Q))
    msg.header.stamp.sec = sequence
    return msg


def lifecycle_state(ros: RosHarness) -> str:
    return ros.call(GetState, '/rnea/get_state', GetState.Request()).current_state.label


def node_status(msg: DiagnosticArray):
    for status in msg.status:
        if status.name == '/rnea: feed-forward torques':
            return status.message, {kv.key: kv.value for kv in status.values}
    return None


def test_lifecycle_transitions_gate_the_outputs(ros, panda_xml):
    """With autostart false: nothing until configure + activate; nothing after deactivate."""
    ros.start_node({'robot_description': panda_xml, 'rate': 200.0, 'autostart': False})
    publisher = ros.publisher(JointState, 'joint_states', BEST_EFFORT)
    torques = ros.collect(JointState, 'joint_torques')
    diagnostics = ros.collect(DiagnosticArray, '/diagnostics')

    sent = [0]

    def tick():
        sent[0] += 1
        publisher.publish(joint_states(sent[0]))

    def lifecycle_says(label):
        def predicate(msg):
            found = node_status(msg)
            return found is not None and found[1].get('lifecycle') == label
        return predicate

    assert lifecycle_state(ros) == 'unconfigured'
    unconfigured = ros.wait_for(diagnostics, lifecycle_says('unconfigured'), 30, tick)
    assert 'publishing nothing' in node_status(unconfigured)[0]

    assert change_state(ros, Transition.TRANSITION_CONFIGURE)
    assert lifecycle_state(ros) == 'inactive'
    inactive = ros.wait_for(diagnostics, lifecycle_says('inactive'), 30, tick)
    assert node_status(inactive)[0].startswith('inactive: publishing nothing')
    assert torques.messages == []  # two diagnostics periods of joint_states: no torques

    assert change_state(ros, Transition.TRANSITION_ACTIVATE)
    assert lifecycle_state(ros) == 'active'
    ros.wait_for(torques, timeout=30, tick=tick)
    ros.wait_for(diagnostics, lifecycle_says('active'), 30, tick)

    assert change_state(ros, Transition.TRANSITION_DEACTIVATE)
    # Nothing answers a joint_states message sent once the transition has answered; answers to
    # earlier ones may still be on their way (published before it answered).
    before = sent[0]
    received = len(torques.messages)
    ros.wait_for(diagnostics, lifecycle_says('inactive'), 30, tick)
    ros.wait_for(diagnostics, lifecycle_says('inactive'), 30, tick)
    assert sent[0] > before + 10  # two diagnostics periods of joint_states were sent
    late = [msg.header.stamp.sec for msg in torques.messages[received:]]
    assert all(sequence <= before for sequence in late), (before, late)

    assert change_state(ros, Transition.TRANSITION_ACTIVATE)  # again: answers at once
    ros.wait_for(torques, timeout=30, tick=tick)
    assert change_state(ros, Transition.TRANSITION_DEACTIVATE)
    assert change_state(ros, Transition.TRANSITION_CLEANUP)
    assert lifecycle_state(ros) == 'unconfigured'
    assert change_state(ros, Transition.TRANSITION_CONFIGURE)  # the model loads again
    assert change_state(ros, Transition.TRANSITION_ACTIVATE)
    ros.wait_for(torques, timeout=30, tick=tick)
    assert change_state(ros, Transition.TRANSITION_ACTIVE_SHUTDOWN)
    before, received = sent[0], len(torques.messages)
    assert lifecycle_state(ros) == 'finalized'
    ros.wait_for(diagnostics, lifecycle_says('finalized'), 30, tick)
    assert sent[0] > before + 10
    late = [msg.header.stamp.sec for msg in torques.messages[received:]]
    assert all(sequence <= before for sequence in late), (before, late)
    output = ros.process.output()
    assert ros.process.stop() == 0, output
    assert 'Traceback' not in output and 'FATAL' not in output


def test_autostart_reaches_active_by_itself(ros, panda_xml):
    ros.start_node({'robot_description': panda_xml, 'rate': 0.0})
    publisher = ros.publisher(JointState, 'joint_states', BEST_EFFORT)
    torques = ros.collect(JointState, 'joint_torques')
    ros.wait_for(torques, timeout=60, tick=lambda: publisher.publish(joint_states()))
    assert lifecycle_state(ros) == 'active'
    assert State.PRIMARY_STATE_ACTIVE == 3


def _first_torques_then_signal(ros: RosHarness, panda_xml: str, signals: list[int],
                               parallel: int) -> list[tuple[int, int, str]]:
    """
    Start and stop nodes by signal, ``parallel`` at a time; (signal, exit code, output) each.

    Each node cycles at 1 kHz on its own namespace and gets its signal once its first
    joint_torques message arrived here.
    """
    results = []
    for start in range(0, len(signals), parallel):
        batch = signals[start:start + parallel]
        names = [f'/n{start + k}' for k in range(len(batch))]
        processes, publishers, collectors = [], [], []
        for name in names:
            processes.append(ros.start_node(
                {'robot_description': panda_xml, 'rate': 1000.0, 'thread_priority': 0},
                extra_args=('-r', f'__ns:={name}')))
            publishers.append(ros.publisher(JointState, f'{name}/joint_states', BEST_EFFORT))
            collectors.append(ros.collect(JointState, f'{name}/joint_torques'))

        def tick():
            for publisher in publishers:
                publisher.publish(joint_states())
        for collector in collectors:
            ros.wait_for(collector, timeout=120, tick=tick, start=0)
        for process, signum in zip(processes, batch):
            process.proc.send_signal(signum)
        for process, signum in zip(processes, batch):
            try:  # no second signal: a signal during Python's finalization kills the process
                code = process.proc.wait(60)
            except subprocess.TimeoutExpired:
                code = 'no exit 60 s after the signal'
            results.append((signum, code, process.output()))
            process.stop()
        ros.processes.clear()
        for collector in collectors:
            ros.node.destroy_subscription(collector.subscription)
        for publisher in publishers:
            ros.node.destroy_publisher(publisher)
    return results


def test_slow_stops_20_sigint_20_sigterm_at_1khz_all_clean(ros, panda_xml):
    """Regression: the control thread published into the context the signal had shut down."""
    signals = [signal.SIGINT, signal.SIGTERM] * 20
    results = _first_torques_then_signal(ros, panda_xml, signals, parallel=8)
    unclean = [(signal.Signals(signum).name, code, output[-2000:])
               for signum, code, output in results
               if code != 0 or 'Traceback' in output or 'FATAL' in output]
    assert len(results) == 40
    assert not unclean, f'{len(unclean)} unclean stops of 40; first: {unclean[0]}'


def test_a_crash_prints_every_threads_python_stack(ros, panda_xml):
    """
    A fatal signal (a native crash) leaves the stacks in the log, not an empty exit -11.

    ``rate: 0`` (an answer per joint_states message, no clock cycles): once the test stops
    publishing, every thread of the node waits in a native call. faulthandler reads the other
    threads' frames while they run (Python calls that unsafe); a cycling control thread once
    cut the dump short in its first frame at load 4 (a second fault inside the handler).
    """
    process = ros.start_node({'robot_description': panda_xml, 'rate': 0.0,
                              'thread_priority': 0})
    publisher = ros.publisher(JointState, 'joint_states', BEST_EFFORT)
    torques = ros.collect(JointState, 'joint_torques')
    ros.wait_for(torques, timeout=60, tick=lambda: publisher.publish(joint_states()))
    process.proc.send_signal(signal.SIGSEGV)
    assert process.proc.wait(60) == -signal.SIGSEGV
    output = process.output()
    assert 'Fatal Python error: Segmentation fault' in output, output
    assert 'rnea_ros/node/main.py' in output and 'Thread 0x' in output, output
