"""
The closed-loop demo: the node's feed-forward makes a simulated robot track better.

``python -m rnea_ros.demos.closed_loop_demo`` (``scripts/demo.sh`` runs it):

1. starts ``rnea_sim`` (MuJoCo, 1 kHz, ``clock: realtime``) with Franka's panda from
   example-robot-data (or ``--urdf``) and the default reality gap (``--gap``), its joint PD at
   100 N m/rad and 10 N m s/rad, and the node (``autostart: false``, ``rate`` 0: it answers
   each joint_states message as it comes, at the sim's 1 kHz; its
   ``feedforward_effort`` remapped to the sim's ``effort_commands``), both on a private
   ROS_DOMAIN_ID limited to this machine; configures the node (inactive: it publishes nothing);
2. sends the sim the demo trajectory (every joint at its own frequency, from rest);
3. ``--phase`` seconds of the PD alone, then activates the node (its lifecycle service) and,
   2 s later (the arm lifting from its sag), ``--phase`` seconds of PD + the node's
   feed-forward, printing each second the RMS tracking
   error (revolute joints, desired minus true position), the node's rate (its diagnostics) and
   the latency from a joint_states message to the joint_torques answering it (both heard here);
4. at the end prints the ratio of the two phases' errors, checks every joint_torques heard
   against ``RobotModel.rnea`` at its state and a desired acceleration the sim published:
   the node takes both on one thread as they come, so a cycle uses the newest acceleration it
   had taken when it ran: one of the 7 samples before the answered one, or any published after
   it until the answer arrived (a loaded machine queues several), or zero, which the node uses
   when they are older than its ``acceleration_timeout``. The newest the sim can have published
   at the answer's arrival here is estimated from its clock (it steps at most at wall speed,
   so a sample is never heard earlier than the fastest one heard says), and 2 samples more are
   tried; the answered sample's first, then outwards. A torque that matches one of the
   candidates this process heard is checked; one that matches none is a mismatch when every
   candidate was heard, else not checked (the one the node used may have been lost here: the
   topic is best effort);
   exits 0 when the feed-forward phase tracks at least 3x better, at least ``MIN_CHECKED``
   torques were checked and none mismatched, and else prints FAILED with the reasons.
"""
from __future__ import annotations

import argparse
from itertools import zip_longest
import os
from pathlib import Path
import sys
import tempfile
import time

import numpy as np

from rnea_ros.demos.closed_loop import (ClosedLoop, EFFORT_PATH_REMAPS, KD, KP, NODE_STATUS,
                                        START_TIMEOUT, tracked_joints, Tracking,
                                        trajectory_message, trajectory_points)
from rnea_ros.demos.node_demo import DOMAIN_ID, RATE, run_demo
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import Bounded

NS = 1_000_000_000
TARGET = 3.0  # the feed-forward phase must track at least this many times better
TOLERANCE = 1e-9  # relative to max(1, |tau|)
# Samples before the answered one whose acceleration a cycle may use. Fewer than the node's
# acceleration_timeout allows (node_demo.acceleration_window): this process hears only some of
# the sim's samples at load, and an answer whose candidates it did not all hear is not checked.
ACCELERATIONS_BEFORE = 7
# Samples past the newest the sim can have published when an answer arrived here (estimated from
# the fastest delivery of its samples, which errs by that delivery's latency).
ACCELERATIONS_AFTER = 2
# joint_torques the verdict needs checked, each equal to RobotModel.rnea on every joint to 1e-9.
# This process's executor, not the node, is the limit: at load 2 it takes ~350 of the 5000
# torques of a 3 s phase and can check ~80 of them against an acceleration it heard.
MIN_CHECKED = 20
SWITCH_SETTLE = 2.0  # s after the activation that neither phase counts
PHASE = Bounded(float, 1.0, 3600.0)  # s: each phase, longer than the settling


def _stamp(msg) -> int:
    return msg.header.stamp.sec * NS + msg.header.stamp.nanosec


class Monitor:
    """What this process hears of the loop: tracking error, latency, the node's torques."""

    def __init__(self, model: RobotModel, names: list[str], rate: float):
        self.model, self.step = model, round(NS / rate)
        self.tracked = [names.index(name) for name in tracked_joints(model)]
        self.v_rows = [model.joint(name).idx_v for name in names]
        limits = model.effort_limits[self.v_rows]
        self.limits = np.where(np.isfinite(limits), limits, np.inf)
        self.desired: dict[int, tuple] = {}  # stamp -> (positions, accelerations)
        self.heard: dict[int, float] = {}  # joint_states stamp -> receipt time
        self.errors: list = []
        self.latencies: list = []
        self.torques: list = []  # (stamp, q, v, effort, newest) of each joint_torques heard
        # Max of stamp - receipt time over the sim's samples heard [ns]: the sim's clock runs at
        # most at wall speed, so at time t it has published no stamp beyond t + lead.
        self.lead = -np.inf
        self.checked = self.mismatches = self.fault_outputs = self.unverified = 0
        self.max_difference = 0.0
        self.node_rate = np.nan

    def on_desired(self, msg) -> None:
        point = msg.points[0]
        stamp = _stamp(msg)
        self.desired[stamp] = (np.asarray(point.positions), np.asarray(point.accelerations))
        self.lead = max(self.lead, stamp - time.perf_counter_ns())

    def on_truth(self, msg) -> None:
        desired = self.desired.get(_stamp(msg) - self.step)  # the truth of the step taken
        if desired is not None:
            self.errors.append((desired[0] - np.asarray(msg.position))[self.tracked])

    def on_joint_states(self, msg) -> None:
        stamp = _stamp(msg)
        self.heard[stamp] = time.perf_counter()
        self.lead = max(self.lead, stamp - time.perf_counter_ns())
        if len(self.heard) > 4000:
            self.heard.pop(next(iter(self.heard)))

    def on_torques(self, msg) -> None:
        """Keep the message for ``check_torques`` (the executor must keep up with 1 kHz)."""
        stamp = _stamp(msg)
        heard = self.heard.get(stamp)
        if heard is not None:
            self.latencies.append((time.perf_counter() - heard) * 1e6)
        newest = time.perf_counter_ns() + self.lead  # -inf before any sample is heard
        self.torques.append((stamp, np.asarray(msg.position), np.asarray(msg.velocity),
                             np.asarray(msg.effort), newest))

    def check_torques(self) -> None:
        """Check every joint_torques kept against ``RobotModel.rnea`` (module docstring)."""
        for stamp, q, v, effort, newest in self.torques:
            self._check(stamp, q, v, effort, newest)
        self.torques = []

    def candidates(self, stamp: int, newest: float) -> list[int]:
        """
        Return the stamps whose acceleration the cycle answering ``stamp`` may have used.

        The answered stamp first, then alternately later and earlier ones: earlier ones down to
        ``ACCELERATIONS_BEFORE`` samples before it, later ones up to ``ACCELERATIONS_AFTER``
        samples past ``newest`` (the newest the sim can have published at the answer's arrival).
        """
        after = max(0, int((newest - stamp) // self.step)) if np.isfinite(newest) else 0
        later = [stamp + k * self.step for k in range(1, after + ACCELERATIONS_AFTER + 1)]
        earlier = [stamp - k * self.step for k in range(1, ACCELERATIONS_BEFORE + 1)]
        return [stamp] + [s for pair in zip_longest(later, earlier) for s in pair
                          if s is not None]

    def _check(self, stamp: int, q, v, effort, newest: float) -> None:
        if not np.any(effort) or np.allclose(effort, self._gravity(q), rtol=TOLERANCE,
                                             atol=TOLERANCE):
            self.fault_outputs += 1  # the node's fault output (zero or hold_gravity)
            return
        tolerance = TOLERANCE * max(1.0, float(np.max(np.abs(effort))))
        candidates = [self.desired.get(s) for s in self.candidates(stamp, newest)]
        heard = [desired[1] for desired in candidates if desired is not None]
        # Zero: what the node uses once desired_accelerations is older than its timeout.
        best = np.inf
        for acceleration in heard + [np.zeros(len(self.v_rows))]:
            q_full = self.model.neutral_configuration()
            v_full, a_full = np.zeros(self.model.nv), np.zeros(self.model.nv)
            q_full[self.v_rows], v_full[self.v_rows], a_full[self.v_rows] = q, v, acceleration
            tau = np.clip(self.model.rnea(q_full, v_full, a_full)[self.v_rows], -self.limits,
                          self.limits)
            best = min(best, float(np.max(np.abs(effort - tau))))
            if best <= tolerance:
                break
        matched = best <= tolerance
        if not matched and len(heard) < len(candidates):
            # The acceleration the node used may be one this process lost (best effort).
            self.unverified += 1
            return
        self.checked += 1
        self.max_difference = max(self.max_difference, best)
        self.mismatches += not matched

    def _gravity(self, q) -> np.ndarray:
        q_full = self.model.neutral_configuration()
        q_full[self.v_rows] = q
        return self.model.gravity_torques(q_full)[self.v_rows]

    def on_diagnostics(self, msg) -> None:
        for status in msg.status:
            if status.name == NODE_STATUS:
                values = {kv.key: kv.value for kv in status.values}
                self.node_rate = float(values.get('rate [Hz]', 'nan'))

    def take(self) -> tuple[Tracking, list]:
        """Return and forget the tracking and latencies since the last call."""
        errors, latencies = self.errors, self.latencies
        self.errors, self.latencies = [], []
        return Tracking.of(np.array(errors)), latencies


def run(model: RobotModel, xml: str, gap: str, phase: float, rate: float, domain: int,
        out=None) -> tuple[float, Monitor]:
    """Run both phases, printing as it goes; (ratio PD alone / with feed-forward, monitor)."""
    from diagnostic_msgs.msg import DiagnosticArray
    from lifecycle_msgs.msg import Transition
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory
    out = sys.stdout if out is None else out
    names = list(model.joint_names)
    times, Q, V, A = trajectory_points(model, 2.0 * phase + SWITCH_SETTLE + 5.0)
    monitor = Monitor(model, names, 1000.0)
    phases: dict[str, list] = {'PD alone': [], 'PD + node': []}
    with tempfile.TemporaryDirectory(prefix='rnea_closed_loop_') as workdir:
        loop = ClosedLoop(domain, Path(workdir))
        try:
            print(f'starting rnea_sim (gap {gap}, PD {KP:g} N m/rad, {KD:g} N m s/rad, 1 kHz '
                  f'real time) and the node (rate {rate:g} Hz) on ROS_DOMAIN_ID={domain} ...',
                  file=out, flush=True)
            loop.start_sim({'robot_description': xml, 'gap': gap, 'clock': 'realtime',
                            'kp': [KP], 'kd': [KD], 'initial_positions': Q[0].tolist()})
            loop.start_node({'robot_description': xml, 'rate': rate, 'autostart': False},
                            EFFORT_PATH_REMAPS)
            watch = ('sim', 'node')
            loop.subscribe(JointTrajectory, 'desired_accelerations', monitor.on_desired, False)
            loop.subscribe(JointState, 'truth/joint_torques', monitor.on_truth)
            loop.subscribe(JointState, 'joint_states', monitor.on_joint_states, False)
            loop.subscribe(JointState, 'joint_torques', monitor.on_torques)
            loop.subscribe(DiagnosticArray, '/diagnostics', monitor.on_diagnostics)
            if not loop.change_state(Transition.TRANSITION_CONFIGURE, timeout=START_TIMEOUT):
                raise RuntimeError('the node refused configure:\n' + loop.logs())
            publisher = loop.publisher(JointTrajectory, 'joint_trajectory')
            loop.spin_until(lambda: publisher.get_subscription_count() >= 1, 60.0,
                            'the subscribers of joint_trajectory', watch)
            start = Q[0]
            loop.send(publisher, trajectory_message(names, times, Q, V, A),
                      lambda: monitor.desired and not np.array_equal(
                          monitor.desired[next(reversed(monitor.desired))][0], start),
                      'the sim tracking the trajectory', watch)
            print(f'{"t [s]":>6} {"phase":<10} {"RMS error [rad]":>16} {"node rate [Hz]":>15} '
                  f'{"latency p50/p99 [us]":>21}', file=out, flush=True)
            begin = time.perf_counter()
            monitor.take()
            for name in phases:
                if name == 'PD + node':
                    if not loop.change_state(Transition.TRANSITION_ACTIVATE):
                        raise RuntimeError('the node refused activate:\n' + loop.logs())
                    # The arm lifts from its sag (its error decays as e^-2t): neither phase.
                    loop.spin_for(SWITCH_SETTLE, watch)
                    monitor.take()
                phase_end = time.perf_counter() + phase
                while time.perf_counter() < phase_end - 1e-3:
                    second = min(phase_end, time.perf_counter() + 1.0)
                    loop.spin_for(second - time.perf_counter(), watch)
                    tracking, latencies = monitor.take()
                    phases[name].append(tracking)
                    latency = (f'{np.percentile(latencies, 50):10.0f}/'
                               f'{np.percentile(latencies, 99):<10.0f}' if latencies
                               else f'{"-":>10}/{"-":<10}')
                    rate_text = f'{monitor.node_rate:15.1f}' if name == 'PD + node' \
                        else f'{"inactive":>15}'
                    print(f'{time.perf_counter() - begin:6.1f} {name:<10} '
                          f'{tracking.rms:16.5f} {rate_text} {latency}', file=out, flush=True)
        finally:
            codes = loop.close()
    rms = {name: float(np.sqrt(np.nanmean([t.rms ** 2 for t in tracks])))
           for name, tracks in phases.items()}
    ratio = rms['PD alone'] / rms['PD + node']
    print(f'\nRMS tracking error: PD alone {rms["PD alone"]:.5f} rad, PD + node '
          f'{rms["PD + node"]:.5f} rad: {ratio:.1f}x better with the feed-forward '
          f'(target >= {TARGET:g}x)', file=out)
    monitor.check_torques()
    print(f'torques vs RobotModel.rnea: {monitor.checked} joint_torques checked, '
          f'{monitor.mismatches} mismatches, max |difference| {monitor.max_difference:.1e} N m; '
          f'{monitor.unverified} not checked (an acceleration the node may have used was lost '
          f'here); {monitor.fault_outputs} fault outputs (inputs stalled)', file=out)
    print(f'exit codes after SIGINT: {codes}', file=out, flush=True)
    return ratio, monitor


def verdict(ratio: float, monitor: Monitor) -> list[str]:
    """Return why the demo failed: the tracking, too few torques checked, or mismatches."""
    failures = []
    if not ratio >= TARGET:
        failures.append(f'the feed-forward tracked {ratio:.2f}x better, less than {TARGET:g}x')
    if monitor.checked < MIN_CHECKED:
        failures.append(f'{monitor.checked} joint_torques checked, fewer than {MIN_CHECKED}')
    if monitor.mismatches:
        failures.append(f'{monitor.mismatches} joint_torques differ from RobotModel.rnea (max '
                        f'{monitor.max_difference:.1e} N m)')
    return failures


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='rnea_closed_loop_demo',
        description='Drive the simulated panda (rnea_sim, reality gap) with its PD alone, then '
                    "with the node's feed-forward, over DDS at 1 kHz; print the tracking "
                    "error, the node's rate and latency, and the ratio.")
    parser.add_argument('--urdf', type=Path, metavar='FILE',
                        help='fixed-base robot URDF (default: panda from example-robot-data)')
    parser.add_argument('--gap', default='default',
                        help='reality gap of the sim: default, none or a YAML file '
                             '(default: %(default)s)')
    parser.add_argument('--phase', type=PHASE, default=5.0, metavar='SECONDS',
                        help=f'length of each phase (default: %(default)s); {PHASE.expected}')
    parser.add_argument('--rate', type=RATE, default=0.0, metavar='HZ',
                        help="the node's rate parameter; 0: answer each joint_states message "
                             "as it comes, here at the sim's 1 kHz (default: %(default)s); "
                             f'{RATE.expected}')
    parser.add_argument('--domain-id', type=DOMAIN_ID, default=1 + os.getpid() % 100,
                        help='ROS_DOMAIN_ID (default: one derived from the process id); '
                        f'{DOMAIN_ID.expected}')
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)

    def demo(model: RobotModel, xml: str) -> bool:
        ratio, monitor = run(model, xml, args.gap, args.phase, args.rate, args.domain_id)
        failures = verdict(ratio, monitor)
        print('OK' if not failures else 'FAILED: ' + '; '.join(failures), flush=True)
        return not failures
    return run_demo(parser, args, demo)


if __name__ == '__main__':
    sys.exit(main())
