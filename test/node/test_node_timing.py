"""
When the node's cycles run, over real DDS: on each joint_states arrival, by the clock in a stall.

A publisher thread sends joint_states at a steady 500 Hz (absolute steady-clock deadlines) and the
node's joint_torques are taken on a thread of their own (``TakeLoop``, as the node takes its
inputs), so that what is measured is the node, not this process's executor.
"""
from __future__ import annotations

import os
from pathlib import Path
import signal
import threading
import time

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from harness.oracle import robot_path
from harness.ros_harness import BEST_EFFORT, RELIABLE
import numpy as np
import pytest
from sensor_msgs.msg import JointState

from rnea_ros import RobotModel
from rnea_ros.node.take_loop import TakeLoop
from rnea_ros.timing import realtime

pytestmark = [pytest.mark.timeout(120), pytest.mark.realtime]

STATUS = '/rnea: feed-forward torques'
RATE = 500.0
PERIOD_NS = round(1e9 / RATE)
PHASES, SAMPLES = 8, 200  # phases of the publisher against the node, samples at each
# Diagnostics keys.
CLOCK_CYCLES = 'cycles by the clock (no joint_states for 1.5 periods)'
GAP = 'joint_states longest gap [ms]'
GAP_WINDOW = 'joint_states longest gap since last report [ms]'
RUN = 'missed cycles, longest run'
PROFILE = Path(__file__).parents[2] / 'config' / 'fastdds_realtime.xml'


@pytest.fixture(scope='module')
def panda() -> tuple[RobotModel, str]:
    xml = robot_path('panda').read_text()
    return RobotModel.from_urdf_string(xml), xml


def values(msg: DiagnosticArray) -> dict | None:
    for item in msg.status:
        if item.name == STATUS:
            return {kv.key: kv.value for kv in item.values}
    return None


class SteadyPublisher:
    """
    joint_states at ``RATE`` from a thread on absolute deadlines; stamps count the samples.

    ``sent[k]``: the system time (ns, the clock of DDS source timestamps) sample ``k`` (stamp
    ``k`` ms) was published at; ``pause(s)`` holds the thread for that long; ``shift(fraction)``
    restarts the grid that fraction of a period later.
    """

    def __init__(self, ros, names, q, v):
        self._publisher = ros.publisher(JointState, 'joint_states', BEST_EFFORT)
        self._msg = JointState(name=list(names), position=[float(x) for x in q],
                               velocity=[float(x) for x in v])
        self.sent: dict[int, int] = {}
        self.count = 0
        self.on = True
        self._shift_ns = 0
        self._pause_s = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        realtime.set_fifo_priority(40)  # steadier where permitted; runs anyway otherwise
        timespec = realtime.new_timespec()
        deadline = time.monotonic_ns()
        while not self._stop.is_set():
            deadline += PERIOD_NS + self._shift_ns
            self._shift_ns = 0
            realtime.sleep_until(deadline, timespec)
            if self._pause_s:
                time.sleep(self._pause_s)  # the known interval of an input stall
                self._pause_s = 0.0
                deadline = time.monotonic_ns()
            if not self.on:
                continue
            stamp = (self.count + 1) * 1_000_000
            self._msg.header.stamp = Time(sec=stamp // 10**9, nanosec=stamp % 10**9)
            self.sent[self.count + 1] = time.time_ns()
            self.count += 1
            self._publisher.publish(self._msg)

    def shift(self, fraction: float) -> None:
        self._shift_ns = round(fraction * PERIOD_NS)

    def pause(self, seconds: float) -> None:
        self._pause_s = seconds

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


class Answers:
    """
    joint_torques taken on a thread of their own: (sample, sent, effort) per message.

    ``sample`` is the number of the joint_states sample it answers (its stamp in ms), ``sent``
    the system time the node published it at (its DDS source timestamp, ns).
    """

    def __init__(self, ros):
        self.records: list[tuple[int, int, np.ndarray]] = []
        self._loop = TakeLoop(ros.node, name='test_answers')
        self._loop.add(JointState, 'joint_torques', RELIABLE, self._on_torques, with_info=True)
        self._loop.start()

    def _on_torques(self, msg: JointState, info) -> None:
        sample = (msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec) // 1_000_000
        self.records.append((sample, info['source_timestamp'], np.array(msg.effort)))

    def stop(self) -> None:
        self._loop.stop()


class Loop:
    """The node at ``RATE`` with ``params``, the steady publisher, its answers, /diagnostics."""

    def __init__(self, ros, panda, params: dict):
        model, xml = panda
        self.ros = ros
        self.node = ros.start_node({'robot_description': xml, 'rate': RATE, **params})
        self.q = np.linspace(-0.5, 0.5, model.nq)
        self.publisher = SteadyPublisher(ros, model.joint_names, self.q, np.zeros(model.nv))
        self.answers = Answers(ros)
        self.diagnostics = ros.collect(DiagnosticArray, '/diagnostics')

    def __enter__(self) -> Loop:
        self.ros.spin_until(lambda: any(r[0] for r in self.answers.records), 60,
                            what='a first answer')
        return self

    def __exit__(self, *exc) -> None:
        self.answers.stop()
        self.publisher.stop()

    def report(self, predicate=lambda found: True) -> dict:
        """Return the values of the next diagnostics report that satisfy ``predicate``."""
        return values(self.ros.wait_for(self.diagnostics, lambda m: values(m) is not None
                                        and predicate(values(m)), 10))


def test_each_sample_is_answered_in_its_own_period_whatever_the_phase(ros, panda, monkeypatch):
    """
    At rate 500 with joint_states at 500 Hz, the answer to each sample comes before the next.

    The default cycle_trigger (joint_states) answers each arrival: whatever the phase of the
    publisher against the node's start, the great majority of answers are sent before the next
    sample is published (a free-running clock answers in the same period or one later, as the
    two phases fall). Judged by the answers' DDS source timestamps: this process's own delays
    in receiving them do not count. With the Fast DDS profile, as the README recommends.
    """
    monkeypatch.setenv('FASTDDS_DEFAULT_PROFILES_FILE', str(PROFILE))
    with Loop(ros, panda, {}) as loop:
        before = loop.report()
        for phase in np.arange(PHASES) / PHASES:
            loop.publisher.shift(1 / PHASES)
            first = loop.publisher.count + 2
            records = loop.answers.records  # received here when this process gets to it
            ros.spin_until(lambda: records[-1][0] >= first + SAMPLES, 30,
                           what=f'the answers to {SAMPLES} samples')
            sent = loop.publisher.sent
            window = [r for r in loop.answers.records if first < r[0] < first + SAMPLES]
            answered = {r[0] for r in window}
            in_period = sum(sent[k] <= at < sent[k + 1] for k, at, _ in window)
            fraction = in_period / max(1, len(window))
            print(f'phase {phase:.2f}: {len(window)} answers to {len(answered)} samples, '
                  f'{100 * fraction:.1f} % in their own period')
            assert len(answered) >= 0.8 * SAMPLES  # (nearly) every sample answered
            # cycle_trigger clock gave 6 % at one of the 8 phases (84-100 % at the others).
            assert fraction >= 0.7, f'{fraction:.2f} of the answers in their period'
        after = loop.report()
        # The clock stood by: its cycles only when an arrival was 1.5 periods late.
        clock_cycles = int(after[CLOCK_CYCLES]) - int(before[CLOCK_CYCLES])
        assert clock_cycles < 0.1 * (int(after['cycles']) - int(before['cycles']))


def test_a_stall_of_joint_states_is_measured_and_the_fault_output_keeps_the_rate(ros, panda):
    """
    joint_states pause for 0.6 s: the clock's cycles publish the fault output at the rate.

    The diagnostics give the longest gap between two joint_states (at least the pause), and
    the node's missed cycles stay apart from it (the node itself was never late by the pause).
    """
    pause = 0.6
    with Loop(ros, panda, {'input_timeout': 0.1}) as loop:
        gravity = RobotModel.from_urdf_string(panda[1]).gravity_torques(loop.q)
        loop.report()
        last_sample = loop.publisher.count
        loop.publisher.pause(pause)
        ros.spin_until(lambda: loop.publisher.count > last_sample + 50, 30,
                       what='the pause to end')
        paused = [r for r in loop.answers.records if last_sample <= r[0] < last_sample + 2]
        faults = [r for r in paused if np.allclose(r[2], gravity, rtol=0, atol=1e-9)]
        # hold_gravity (the default) at the rate: ~(0.6 - 0.1) s x 500 Hz = 250 messages; a
        # watchdog would give a few. At least half the rate, however loaded the machine.
        assert len(faults) >= 0.5 * (pause - 0.1) * RATE, f'{len(faults)} fault outputs'
        report = loop.report(lambda found: float(found[GAP]) >= 0.9e3 * pause)
        gap = float(report[GAP])
        print(f'pause {pause * 1e3:.0f} ms: longest gap {gap:.1f} ms, {len(faults)} fault '
              f'outputs, clock cycles {report[CLOCK_CYCLES]}, missed '
              f'{report["missed cycles"]} (longest run {report[RUN]})')
        assert gap <= 1e3 * (pause + 1.0)
        assert int(report[CLOCK_CYCLES]) >= len(faults)
        # The node ran all along: its own missed cycles are not the stall.
        assert int(report[RUN]) < 0.5 * pause * RATE
        # A later report's window no longer holds the stall; the total still does.
        later = loop.report(lambda found: float(found[GAP_WINDOW]) < 0.5e3 * pause)
        assert float(later[GAP]) == gap


def test_a_frozen_node_reports_one_long_run_of_missed_cycles(ros, panda):
    """The node stopped (SIGSTOP) for 0.4 s: its missed cycles are one run of ~200 periods."""
    frozen = 0.4
    with Loop(ros, panda, {'input_timeout': 1.0}) as loop:
        loop.report()
        os.kill(loop.node.proc.pid, signal.SIGSTOP)
        time.sleep(frozen)  # the known interval the node is stopped for
        os.kill(loop.node.proc.pid, signal.SIGCONT)
        report = loop.report(lambda found: int(found[RUN]) > 0)
        run = int(report[RUN])
        print(f'frozen {frozen * 1e3:.0f} ms: missed {report["missed cycles"]}, longest run '
              f'{run}, longest joint_states gap {report[GAP]} ms')
        assert 0.5 * frozen * RATE <= run <= int(report['missed cycles'])
        assert run <= (frozen + 1.0) * RATE
        assert float(report[GAP]) >= 0.9e3 * frozen


@pytest.mark.parametrize('profile', [True, False])
def test_the_realtime_profile_puts_the_dds_threads_under_sched_fifo(
        ros, panda, monkeypatch, profile):
    """
    config/fastdds_realtime.xml: reception and timed-event threads at SCHED_FIFO 49.

    And the executor's thread (the process's main thread) at SCHED_FIFO 1, with or without it.
    """
    if profile:
        monkeypatch.setenv('FASTDDS_DEFAULT_PROFILES_FILE', str(PROFILE))
    else:
        monkeypatch.delenv('FASTDDS_DEFAULT_PROFILES_FILE', raising=False)
    with Loop(ros, panda, {}) as loop:
        report = loop.report()
        policy = os.sched_getscheduler(loop.node.proc.pid)  # the main thread's
        executor = policy & ~os.SCHED_RESET_ON_FORK
        assert policy & os.SCHED_RESET_ON_FORK or executor == os.SCHED_OTHER
        executor_priority = os.sched_getparam(loop.node.proc.pid).sched_priority
    threads = report['dds threads']
    print(f'profile {profile}: dds threads {threads}; scheduling {report["scheduling"]}')
    # Reception (UDP and shared memory, metatraffic and user data) and timed events: >= 3.
    count = int(threads.split('(')[1].split()[0])
    assert count >= 3 and threads.endswith(f'({count} threads)')  # one group: all alike
    if profile and report['scheduling'].startswith('SCHED_FIFO'):  # permitted here
        assert threads.startswith('SCHED_FIFO 49 (')
    else:
        assert threads.startswith('normal (')
    # The executor's thread holds the GIL too: the lowest real-time priority when permitted.
    if report['scheduling'].startswith('SCHED_FIFO'):
        assert (executor, executor_priority) == (os.SCHED_FIFO, 1)
    else:
        assert executor == os.SCHED_OTHER
