"""
Benchmark of the closed loop: how well the simulated robot tracks with the node's feed-forward.

    .venv/bin/python bench/bench_closed_loop.py [--robots panda ur5] [--duration 10]
                                                [--gap default] [--dds-profile FILE|none]
                                                [--busy N] [--settle 4]

Per robot (example-robot-data), ``rnea_sim`` with the reality gap, a joint PD of 100 N m/rad and
10 N m s/rad, the demo trajectory (``closed_loop.trajectory_points``) for ``--duration`` s at
1 kHz (each run over DDS first holds the start for ``--settle`` s of sim time: the arm settles),
the RMS and max tracking error (revolute joints) of:

- the PD alone, the PD + ``RobotModel.rnea`` of the URDF computed in-process (no DDS) at each
  step (path b's torques) or at the trajectory's points (path a's), the
  PD + the plant's own inverse dynamics (true rigid bodies, armature, viscous friction: the
  limit), and the same applied one step late (the answer to a state taken in the next tick,
  as an effort interface fed over a topic takes it: the limit of any node over DDS), all
  in-process on the sim's own plant and controller (``test/harness/inprocess_loop``);
- the PD + the node over real DDS with the sim in real time (``clock: realtime``: the node's
  latency is in the loop), path a (``joint_trajectory_with_effort`` -> the sim's trajectory) and
  path b (``feedforward_effort`` -> ``effort_commands``), the node given the URDF, then the
  plant's true model (its true URDF, armature and viscous friction as the node's actuation model,
  with ``friction_compensation``: the viscous friction in the torques as in the limit's);
- the node on the sim's other command interfaces (``WIRINGS``, docs/robots.md), in real time:
  ``effort`` (the command is the whole torque) with ``control_law: pd_feedforward`` at the
  gains of ``inprocess_law.law_gains``, without and with ``gravity_compensated_by_robot`` (the
  sim adding g(q), the node leaving it out), compared with the same law in-process one step
  late; ``trajectory_effort`` (joint_trajectory_controller's PID plus the point's effort) on
  path a, compared with that PID alone (``JTC_ALONE``, in-process). In-process only: the law
  with the node's g(q) left in on a robot that adds it (gravity twice), against the law.

Each run of the node is also given as a ratio to its in-process reference (``IN_PROCESS``: the
same torques without DDS; with the true model, the limit). On path b, from the sim's recording:
the share of steps whose command answered the state of the step before or of that step
(fresh), the age of the command used (p50/p99, in steps of 1 ms) and the longest stall (steps
without a new answer; at: seconds after the node's first answer). The load average and the
machine's floor (``rnea_ros.timing.floor``: a bare 1 kHz loop's wake-up lateness) are printed
at the start and the end: the machine may be shared. The node, the sim and this process load
the Fast DDS profile ``config/fastdds_realtime.xml`` (``--dds-profile``; ``none``: the
middleware's threads at normal priority), as the docs recommend wherever the node shares its
CPUs. ``--busy N`` runs N
processes spinning at normal priority meanwhile (a known load beside the loop's own, which is
about 1.2 on this machine). Not a test: run it by hand (a tiny run is in the suite).
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import subprocess
import sys
import tempfile

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'test'))  # the tests' harness package

from harness.inprocess_law import law_gains, run_law_in_process  # noqa: E402
from harness.inprocess_loop import (model_feedforward, run_in_process,  # noqa: E402
                                    true_feedforward)
from harness.loop_harness import NS, run_loop, SETTLE, stamp_ns  # noqa: E402
from harness.oracle import robot_path  # noqa: E402
import numpy as np  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402
from rnea_ros.demos.closed_loop import stiff_gains  # noqa: E402
from rnea_ros.sim.gap import load_gap  # noqa: E402
from rnea_ros.sim.plant import Plant  # noqa: E402
from rnea_ros.timing.floor import wake_up_lateness  # noqa: E402

STEP = NS // 1000


def answer_ages(topics: dict) -> dict:
    """
    Per step, the age of the node's latest answer the sim had heard (recorded joint_torques).

    The sim logs an input at the step being taken; a joint_torques message carries the stamp of
    the state it answers: age = that step - the answered state's stamp, in steps.
    """
    steps = sorted(stamp_ns(msg) for _, msg in topics['desired_accelerations'])
    answers = sorted((log, stamp_ns(msg)) for log, msg in topics.get('joint_torques', []))
    if not answers:
        return {'fresh': 0.0, 'p50': np.nan, 'p99': np.nan, 'stall': len(steps), 'stall_at': 0.0}
    logs = np.array([log for log, _ in answers])
    answered = np.maximum.accumulate(np.array([stamp for _, stamp in answers]))
    first = np.searchsorted(steps, logs[0])
    at = np.searchsorted(logs, steps[first:], side='right') - 1
    ages = (np.array(steps[first:]) - answered[at]) / STEP
    gaps = np.diff(logs) / STEP
    longest = int(np.argmax(gaps)) if gaps.size else 0
    return {'fresh': float(np.mean(ages <= 1.0)), 'p50': float(np.percentile(ages, 50)),
            'p99': float(np.percentile(ages, 99)), 'stall': float(gaps.max(initial=0.0)),
            'stall_at': float((logs[longest] - logs[0]) * 1e-9) if gaps.size else 0.0}


def actuation_params(plant: Plant) -> dict:
    """Return the gap's armature and viscous friction as the node's actuation parameters."""
    params = {}
    for joint in plant.joint_names:
        terms = plant.gap.joint_terms(joint)
        params[f'armature.{joint}'] = terms['armature']
        params[f'friction.{joint}.viscous'] = terms['viscous']
    return params


IN_PROCESS = {  # the node's run -> the in-process run it is compared with
    ('URDF', 'a'): 'PD + in-process trajectory efforts (URDF, as path a)',
    ('URDF', 'b'): 'PD + in-process rnea (URDF)',
    ('true model', 'a'): 'PD + true inverse dynamics (limit)',
    ('true model', 'b'): 'PD + true inverse dynamics (limit)',
}
JTC_ALONE = 'JTC PID alone (trajectory_effort, no point effort)'
# The node's control_law on another command interface of the sim (docs/robots.md): label ->
# (sim parameters, node parameters, in-process reference). The law's gains: law_gains.
LAW = 'pd_feedforward in-process one step late (effort)'
LAW_ROBOT_G = 'pd_feedforward in-process one step late (effort, robot adds g)'
LAW_TWICE = 'pd_feedforward in-process one step late (effort, robot adds g, node too)'
WIRINGS = {
    'node over DDS, effort, pd_feedforward': (
        {'command_interface': 'effort'}, {'control_law': 'pd_feedforward'}, LAW),
    'node over DDS, effort, pd_feedforward, robot adds g': (
        {'command_interface': 'effort', 'gravity_compensated_by_robot': True},
        {'control_law': 'pd_feedforward', 'gravity_compensated_by_robot': True}, LAW_ROBOT_G),
    'node over DDS, trajectory_effort, path a': (
        {'command_interface': 'trajectory_effort'}, {}, JTC_ALONE),
}
# The node as the robot's only controller at gains one tick of delay cannot hold without the
# prediction (Kp 100, Kd 10 on every joint: the sim's PD), with ``prediction: model`` and the
# gap's armature as the actuation file gives it; against the same law and parameters applied
# without delay in-process (the limit the prediction aims at) and one tick late with it.
STIFF = 'pd_feedforward Kp 100 / Kd 10 in-process, no delay'
STIFF_LATE = 'pd_feedforward Kp 100 / Kd 10 in-process one step late, prediction: model'
STIFF_NODE = 'node over DDS, effort, pd_feedforward Kp 100 / Kd 10, prediction: model'


def bench_robot(name: str, gap: str, duration: float, workdir: Path,
                settle: float = SETTLE) -> list[tuple]:
    """Rows (label, tracking, answer ages or None, label of the in-process reference or None)."""
    urdf = robot_path(name).read_text()
    plant = Plant(urdf, gap=load_gap(gap))
    model = RobotModel.from_urdf_string(urdf)
    in_process = [
        ('PD alone', None, {}),
        ('PD + in-process rnea (URDF)', model_feedforward(model), {}),
        ('PD + in-process trajectory efforts (URDF, as path a)', None, {'point_efforts': True}),
        ('PD + true inverse dynamics (limit)', true_feedforward, {}),
        ('PD + true inverse dynamics one step late', true_feedforward, {'late_steps': 1}),
        (JTC_ALONE, None, {'command_interface': 'trajectory_effort'})]
    rows = [(label, run_in_process(urdf, gap, feedforward, duration, **options), None, None)
            for label, feedforward, options in in_process]
    gains = law_gains(model, name)
    for label, robot_gravity, node_gravity in ((LAW, False, False), (LAW_ROBOT_G, True, True),
                                               (LAW_TWICE, True, False)):
        tracking, _, _ = run_law_in_process(urdf, gap, duration, 'pd_feedforward', gains,
                                            robot_gravity=robot_gravity,
                                            node_gravity=node_gravity)
        rows.append((label, tracking, None, LAW if label == LAW_TWICE else None))
    stiff = stiff_gains(model), plant.gap.armature_parameters(plant.joint_names)
    for label, late, params in ((STIFF, 0, {}), (STIFF_LATE, 1, {'prediction': 'model'})):
        tracking, _, _ = run_law_in_process(urdf, gap, duration, 'pd_feedforward', stiff[0],
                                            late_steps=late, params={**stiff[1], **params})
        rows.append((label, tracking, None, STIFF if label == STIFF_LATE else None))
    true_model = dict(actuation_params(plant), robot_description=plant.true_urdf,
                      inertia_check='warn', friction_compensation=True)
    runs = [(f'PD + node over DDS, path {label}, {given}', path, {}, params, IN_PROCESS[
        given, label]) for given, params in (('URDF', {}), ('true model', true_model))
        for path, label in (('trajectory', 'a'), ('effort', 'b'))]
    for label, (sim, node, reference) in WIRINGS.items():
        path = 'trajectory' if sim['command_interface'] == 'trajectory_effort' else 'effort'
        node = {**node, **gains} if node.get('control_law') else node
        runs.append((label, path, sim, node, reference))
    runs.append((STIFF_NODE, 'effort', {'command_interface': 'effort'},
                 {'control_law': 'pd_feedforward', 'prediction': 'model', **stiff[0],
                  **stiff[1]}, STIFF))
    for number, (label, path, sim, node, reference) in enumerate(runs):
        folder = workdir / f'{name}_{number}'
        folder.mkdir()
        run = run_loop(folder, urdf, path, gap, duration, node_params=node,
                       sim_params={'clock': 'realtime', **sim}, settle_time=settle)
        ages = answer_ages(run.topics) if path == 'effort' else None
        rows.append((label, run.tracking, ages, reference))
        print(f'  {label}: done, sim counters {run.counters}', flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robots', nargs='+', default=['panda', 'ur5'])
    parser.add_argument('--duration', type=float, default=10.0, metavar='SECONDS')
    parser.add_argument('--gap', default='default')
    parser.add_argument('--settle', type=float, default=SETTLE, metavar='SECONDS',
                        help='sim time each run over DDS holds the start before the trajectory')
    parser.add_argument('--busy', type=int, default=0, metavar='N',
                        help='processes spinning at normal priority during the runs')
    parser.add_argument('--dds-profile', default=str(ROOT / 'config' / 'fastdds_realtime.xml'),
                        metavar='FILE', help="Fast DDS profile of every process; 'none': none")
    args = parser.parse_args(argv)
    if args.dds_profile != 'none':  # read by every participant created from now on
        os.environ['FASTDDS_DEFAULT_PROFILES_FILE'] = args.dds_profile
    print(f'Fast DDS profile: {args.dds_profile}', flush=True)
    busy = [subprocess.Popen([sys.executable, '-c', 'while True: pass'])
            for _ in range(args.busy)]
    print(f'{args.busy} busy processes; load average at start: {os.getloadavg()}', flush=True)
    print(wake_up_lateness().describe(), flush=True)
    try:
        return run(args)
    finally:
        for process in busy:
            process.kill()
            process.wait()


def run(args) -> int:
    """Bench each robot of ``args.robots`` and print its table."""
    with tempfile.TemporaryDirectory(prefix='bench_closed_loop_') as workdir:
        for name in args.robots:
            print(f'{name}, gap {args.gap}, {args.duration:g} s at 1 kHz:', flush=True)
            rows = bench_robot(name, args.gap, args.duration, Path(workdir), args.settle)
            pd = rows[0][1].rms
            rms = {label: tracking.rms for label, tracking, _, _ in rows}
            print(f'| {name} | RMS [rad] | max [rad] | / PD alone | / in-process | fresh '
                  'answers | age p50/p99 [steps] | longest stall [steps] |')
            print('|---|---|---|---|---|---|---|---|')
            for label, tracking, ages, reference in rows:
                ratio = '' if reference is None else f'{tracking.rms / rms[reference]:.2f}'
                extra = ('| | | |' if ages is None else
                         f'| {100 * ages["fresh"]:.1f} % | {ages["p50"]:.0f} / {ages["p99"]:.0f} '
                         f'| {ages["stall"]:.0f} (at {ages["stall_at"]:.1f} s) |')
                print(f'| {label} | {tracking.rms:.5f} | {tracking.peak:.4f} | '
                      f'{tracking.rms / pd:.3f} | {ratio} {extra}', flush=True)
    print(f'load average at end: {os.getloadavg()}', flush=True)
    print(wake_up_lateness().describe(), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
