"""
The documented collision workflow on the simulated arms in real time: a held-out 20 N push.

Per robot (example-robot-data's panda and ur5), ``rnea_sim`` in real time (``clock:
realtime``) with the default reality gap, wired as ``--wiring`` says: ``trajectory`` (default:
``command_interface: trajectory_effort``, joint_trajectory_controller with an effort interface,
its PID at 1 kHz in the sim; the node on path a, the feed-forward as each point's effort; a
latched collision holds the controller) or ``effort`` (``command_interface: effort``, the
command the whole torque; the node on path b with ``control_law: pd_feedforward`` at the gains
of the closed-loop tests: its feedback closed over DDS), the workflow of docs/bag.md and
docs/node/collisions.md with the node's model as ``--model`` says (``measured_effort: motor``
either way):

0. ``identified`` (default): excite, record, identify. ``sim_identification.record`` steps the
   default-gap plant in this process along a Fourier excitation of every joint for
   ``--training`` s (60) and another seed's for ``--validation`` s (25), and writes what
   ``rnea_sim --record`` keeps as rosbag2s; ``rnea_identify TRAINING --validate VALIDATION
   --urdf URDF --offset sensor-bias --effort-delay 0.0005`` (as ``sim_identification.judge``
   runs it) from the URDF the node is given (example-robot-data's, never the plant's true one)
   writes identified.urdf and actuation.yaml: the node's ``robot_description`` and actuation
   parameters, and rnea_bag's ``--urdf`` and ``--actuation``. Printed: the validation's RMS
   residual per joint (and the URDF's range), rnea_identify's warnings. ``true``: the plant's
   true model standing for the identified one (its true URDF; the gap's armature, Coulomb and
   viscous friction and the torque readings' bias as the actuation model), without the
   minute of identification;
1. calibration: the demo motion for ``--calibration`` s (60: docs/bag.md asks for a minute
   or more of the robot's motion), recorded by the sim; ``rnea_bag
   --observer --urdf URDF --actuation actuation.yaml --measured-effort motor`` (the model's
   files) on the recording's moving part writes ``collision_thresholds.yaml``;
2. held out, twice: the same motion ``--slower`` times slower (other speeds and
   accelerations, other poses at each time), ``observer: true``, the flange as wrench link
   estimating a pure force at its origin (``wrench_point``: the ur5's six joints would
   otherwise give an exactly determined wrench, its torque absorbing the model error); once the
   arm tracks it the thresholds are set live (one atomic set, as ``rnea_ctl params`` does) and
   ``--quiet`` s later the sim pushes the flange with 20 N for 0.5 s. First with
   ``collision_reaction: none`` (the arm goes on moving: the estimate of a force on a moving
   arm), then with ``stop``.

Printed per robot and run: false alarms (collision events before the push; each on a line of
its own: its time into the held-out motion and the node's log line, the joints, the peak
residual and its threshold), the detection delay
(the detection's start in the node's diagnostics, minus the push's first step in the sim's
``truth/external_wrench``; the event follows 10 ms later, the detector's minimum duration), the
push's estimated flange force (the mean of the node's estimates from 0.1 s into the push to its
end) against the applied one, and its worst single sample (on a moving arm it peaks for a few
ms where a joint's velocity reverses: with motor torques that joint's residual is then the
friction the model smooths, not the push), and with
``stop`` the time from the event until every arm joint is below 0.01 rad/s (the sim's true
velocities) and how far a joint moved; then a verdict against the bounds: detected within 20
ms and no false alarm in both runs, the force within 10 % on the moving arm, at rest within
docs/node/collisions.md's time for the wiring (path a 5 s, path b 1 s). (Once stopped, the arm's
joints are in stiction: with torques from motor currents the estimate is then off by what the
friction holds, printed but not judged.) The load average is printed at the start and the end
(``--busy N``: N processes spinning at normal priority meanwhile). ``--clock lockstep`` runs
the same in lockstep (each sim step waits for the node's answer): the workflow without the
machine's timing (a tiny run is in the suite). Each run first holds the start ``--settle`` s
of sim time (4; ``loop_harness.run_loop``: the arm settles) before its motion. ``--keep
FOLDER`` keeps each robot's runs (the sim's bags, the logs, ``collision_thresholds.yaml``, the
model's files and with ``identified`` the excitation's recordings and rnea_identify's output)
in ``FOLDER/ROBOT``.

    .venv/bin/python bench/bench_collision.py [--robots panda ur5] [--calibration 60]
                                              [--model identified|true] [--training 60]
                                              [--validation 25]
                                              [--quiet 15] [--slower 1.25] [--settle 4]
                                              [--busy N]
                                              [--clock realtime|lockstep]
                                              [--wiring trajectory|effort]
                                              [--keep FOLDER]
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

from harness.loop_harness import (detection_start, NS, run_loop,  # noqa: E402
                                  set_thresholds, SETTLE, SimSteps, stamp_ns)
from harness.oracle import robot_path  # noqa: E402
import numpy as np  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402
from rnea_ros.bag.observing import read_thresholds  # noqa: E402
from rnea_ros.control.declaration import REST_SPEED  # noqa: E402
from rnea_ros.demos.closed_loop import KD, KP, trajectory_points  # noqa: E402
from rnea_ros.dynamics.actuation import Actuation  # noqa: E402
from rnea_ros.params import params_file  # noqa: E402
from rnea_ros.params.actuation_file import actuation_yaml  # noqa: E402
from rnea_ros.sim.gap import load_gap  # noqa: E402
from rnea_ros.sim.plant import Plant  # noqa: E402

FLANGE = {'panda': 'panda_hand', 'ur5': 'tool0'}
# Kp per joint as a share of KP (Kd the same share of KD): the panda's distal joints softer
# (test/closedloop/test_control_law_in_the_loop.py: one tick late at KP on every joint the
# panda's loop is unstable, bench/bench_control_margin.py); the ur5 takes KP on every joint.
GAIN_SHARES = {'panda': (1.0, 1.0, 0.5, 1.0, 0.25, 0.25, 0.1, 0.5)}
FORCE = np.array([12.0, -16.0, 0.0])  # N in the flange frame: 20 N
PUSH = 0.5  # s the sim applies it (wrench_timeout)
DETECT_WITHIN = 0.020  # s from the push's first step to the detection's start
# The push's force estimate (the mean of the node's estimates from 0.1 s into the push to its
# end) within this share of the applied force; the worst single sample is printed beside it.
FORCE_WITHIN = 0.10
# s from the event until every arm joint is below REST_SPEED (docs/node/collisions.md)
REST_WITHIN = 1.0
AFTER = 1.0  # s of sim time watched after the push's start beyond the wiring's time to rest
SIM = {'wrench_timeout': PUSH}
# --wiring: the sim's command interface, the loop's path, the node's control law, and the time
# to rest after the event that docs/node/collisions.md gives for that wiring's stop.
WIRINGS = {
    'trajectory': ('trajectory_effort', 'trajectory', 'feedforward', 5.0),
    'effort': ('effort', 'effort', 'pd_feedforward', REST_WITHIN),
}


def node_params(robot: str, description: str, law: str, actuation: dict) -> dict:
    """Return the node's parameters of a model: its URDF's text and its actuation terms."""
    model = RobotModel.from_urdf_string(description)
    params = {'robot_description': description, 'inertia_check': 'warn',
              'measured_effort': 'motor', 'control_law': law, **actuation}
    shares = GAIN_SHARES.get(robot, (1.0,) * len(model.joint_names))
    for joint, share in zip(model.joint_names, shares if law != 'feedforward' else ()):
        params[f'kp.{joint}'], params[f'kd.{joint}'] = share * KP, share * KD
    return params


def true_model(robot: str, urdf: str, law: str, folder: Path) -> tuple[dict, Path, Path]:
    """
    Write the plant's true model in ``folder``: the node's parameters, the URDF and actuation.

    The plant's true URDF; the gap's armature, Coulomb and viscous friction and the torque
    readings' bias as the actuation model.
    """
    plant = Plant(urdf, gap=load_gap('default'))
    actuation = Actuation.zeros(RobotModel.from_urdf_string(plant.true_urdf))
    rows = {name: k for k, name in enumerate(actuation.joint_names)}
    coulomb, viscous, armature, bias = (np.zeros(len(rows)) for _ in range(4))
    terms = {}
    for joint, offset in zip(plant.joint_names, plant.torque_offset):
        gap = plant.gap.joint_terms(joint)
        row = rows[joint]
        coulomb[row], viscous[row], armature[row], bias[row] = (
            gap['coulomb'], gap['viscous'], gap['armature'], offset)
        terms.update({f'armature.{joint}': gap['armature'],
                      f'friction.{joint}.coulomb': gap['coulomb'],
                      f'friction.{joint}.viscous': gap['viscous'],
                      f'effort_bias.{joint}': float(offset)})
    file = Actuation(actuation.joint_names, coulomb, viscous, np.zeros(len(rows)), armature,
                     effort_bias=bias)
    description, actuation_file = folder / 'true.urdf', folder / 'actuation.yaml'
    description.write_text(plant.true_urdf)
    actuation_file.write_text(actuation_yaml(file))
    return node_params(robot, plant.true_urdf, law, terms), description, actuation_file


def identified_model(robot: str, law: str, training: float, validation: float,
                     folder: Path) -> tuple[dict, Path, Path]:
    """
    Excite, record and identify the plant in ``folder``: the node's parameters and the files.

    ``sim_identification.record``: the default-gap plant in this process along a Fourier
    excitation of every joint, ``training`` s and ``validation`` s of another seed, what
    ``rnea_sim --record`` keeps; ``rnea_identify`` (as ``sim_identification.judge`` runs it)
    from the URDF the node is given (example-robot-data's) writes identified.urdf and
    actuation.yaml. Prints the validation's RMS residual per joint.
    """
    import json
    from harness import sim_identification as sim

    urdf_path = robot_path(robot)
    urdf = urdf_path.read_text()
    train = sim.record(folder / 'training', training, sim.TRAINING_SEED, urdf)
    check = sim.record(folder / 'validation', validation, sim.VALIDATION_SEED, urdf)
    out = folder / 'identified'
    command = [str(Path(sys.executable).parent / 'rnea_identify'), str(train),
               '--urdf', str(urdf_path), '--validate', str(check), '--output', str(out),
               '--no-plots', '--offset', 'sensor-bias', '--effort-delay', str(sim.EFFORT_DELAY)]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rms = json.loads((out / 'identification.json').read_text())['rms']
    shown = ', '.join(f'{joint} {value:.3f}'
                      for joint, value in rms['identified']['validation'].items())
    urdf_rms = rms['urdf']['validation'].values()
    print(f'{robot}: model identified by rnea_identify from {training:g} s of excitation; '
          f'validation ({validation:g} s) RMS residual [N m]: {shown} (the URDF: '
          f'{min(urdf_rms):.2f}-{max(urdf_rms):.2f})')
    for line in done.stderr.splitlines():
        print(f'    {line.strip()}')
    description, actuation = out / 'identified.urdf', out / 'actuation.yaml'
    terms = params_file.read(actuation, 'the actuation model')
    return node_params(robot, description.read_text(), law, terms), description, actuation


def moving_from(topics: dict, start: np.ndarray) -> float:
    """Seconds from the first joint_states sample to the first reference off ``start``."""
    first = stamp_ns(topics['joint_states'][0][1])
    moving = [stamp_ns(msg) for _, msg in topics['desired_accelerations']
              if not np.array_equal(msg.points[0].positions, start)]
    return (moving[0] - first) / NS


def calibrate(urdf: str, params: dict, sim: dict, path: str, description: Path,
              actuation: Path, seconds: float, folder: Path,
              settle: float = SETTLE) -> dict[str, float]:
    """Run the demo motion, calibrate on its recording with rnea_bag; the thresholds."""
    model = RobotModel.from_urdf_string(urdf)
    motion = trajectory_points(model, seconds)
    run = run_loop(folder, urdf, path, 'default', seconds, node_params=params,
                   sim_params=sim, motion=motion, settle_time=settle)
    assert run.exit_codes == {'sim': 0, 'node': 0}, run.logs
    start = moving_from(run.topics, motion[1][0]) + 0.5
    out = folder / 'calibrated'
    command = [str(Path(sys.executable).parent / 'rnea_bag'), str(folder / f'{path}_bag'),
               '--urdf', str(description), '--actuation', str(actuation), '--observer',
               '--measured-effort', 'motor', '--start', f'{start:.3f}', '--output', str(out)]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for line in done.stdout.splitlines():
        if 'detect' in line:
            print(f'    rnea_bag: {line.strip()}')
    names = list(model.joint_names)
    return dict(zip(names, read_thresholds(out / 'collision_thresholds.yaml', names).tolist()))


def held_out(robot: str, urdf: str, params: dict, sim: dict, path: str, thresholds: dict,
             quiet: float, slower: float, reaction: str, rest_within: float,
             folder: Path, settle: float = SETTLE) -> dict:
    """
    Push the arm on the slower motion with the thresholds set live; what was measured.

    Watched for ``rest_within`` + ``AFTER`` s of sim time from the push's start.
    """
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from geometry_msgs.msg import WrenchStamped
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    model = RobotModel.from_urdf_string(urdf)
    after = rest_within + AFTER
    duration = quiet + after + 1.0
    times, Q, V, A = trajectory_points(model, duration / slower)
    motion = (times * slower, Q, V / slower, A / slower ** 2)
    link = FLANGE[robot]
    seen: dict = {'events': [], 'wrench': [], 'diagnostics': []}
    watch = ('sim', 'node')

    def push(loop):
        steps = SimSteps(loop)
        loop.node.create_subscription(
            DiagnosticStatus, 'collision_events', seen['events'].append,
            QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.TRANSIENT_LOCAL))
        loop.subscribe(DiagnosticArray, '/diagnostics', seen['diagnostics'].append)
        set_thresholds(loop, thresholds)
        loop.spin_until(lambda: steps.counts, 60.0, "the sim's step count", watch)
        since = steps.counts[-1]
        loop.spin_until(lambda: steps.counts[-1] >= since + quiet * 1000, 60.0 * quiet,
                        f'{quiet:g} s of motion', watch)
        seen['alarms'] = len(seen['events'])
        loop.subscribe(WrenchStamped, f'estimated_wrenches/{link}', seen['wrench'].append)
        pusher = loop.publisher(WrenchStamped, 'apply_wrench')
        loop.spin_until(lambda: pusher.get_subscription_count() > 0, 60.0, 'the sim', watch)
        wrench = WrenchStamped()
        wrench.header.frame_id = link
        wrench.wrench.force.x, wrench.wrench.force.y, wrench.wrench.force.z = FORCE
        pusher.publish(wrench)
        loop.spin_until(lambda: len(seen['events']) > seen['alarms'], 60.0,
                        'the collision event', watch)
        pushed = steps.counts[-1]
        loop.spin_until(lambda: steps.counts[-1] >= pushed + after * 1000, 60.0 * after,
                        'the rest after the push', watch)
        loop.spin_until(lambda: detection_start(seen['diagnostics']) is not None, 60.0,
                        'the diagnostics of the collision', watch)

    run = run_loop(folder, urdf, path, 'default', duration,
                   node_params={**params, 'observer': True, 'wrench_estimation_links': [link],
                                f'wrench_point.{link}': [0.0, 0.0, 0.0],
                                'collision_reaction': reaction},
                   sim_params=sim, during=push, motion=motion, to_the_end=False,
                   settle_time=settle)
    assert run.exit_codes == {'sim': 0, 'node': 0}, run.logs
    return measure(run.topics, seen, model)


def measure(topics: dict, seen: dict, model: RobotModel) -> dict:
    """Return the detection delays, force error, rest time and distance of a run."""
    pushes = sorted(stamp_ns(msg) for _, msg in topics['truth/external_wrench'])
    start, end = pushes[0] / NS, pushes[-1] / NS
    event = float(kv_value(seen['events'][seen['alarms']], 'stamp [s]'))
    forces = np.array([[m.wrench.force.x, m.wrench.force.y, m.wrench.force.z]
                       for m in seen['wrench'] if start + 0.1 <= stamp_ns(m) / NS <= end])
    error = np.linalg.norm(forces - FORCE, axis=1) if forces.size else np.array([np.inf])
    arm = [joint.name for joint in model.joints if joint.kind in ('revolute', 'continuous')]
    truth = [msg for _, msg in topics['truth/joint_torques'] if stamp_ns(msg) / NS >= event]
    columns = [list(truth[0].name).index(joint) for joint in arm]
    t = np.array([stamp_ns(msg) / NS for msg in truth]) - event
    q = np.array([np.asarray(msg.position)[columns] for msg in truth])
    speed = np.array([np.abs(np.asarray(msg.velocity)[columns]).max() for msg in truth])
    moving = np.flatnonzero(speed >= REST_SPEED)
    rest = np.inf if moving.size and moving[-1] == len(t) - 1 else \
        (t[moving[-1] + 1] if moving.size else 0.0)
    references = [(stamp_ns(msg), msg.points[0].positions)
                  for _, msg in topics['desired_accelerations']]
    motion_start = next(stamp for stamp, q in references
                        if not np.array_equal(q, references[0][1])) / NS
    alarms = [f'{float(kv_value(e, "stamp [s]")) - motion_start:.2f} s into the motion: '
              f'{e.message}'
              for e in seen['events'][:seen['alarms']]]
    return {'alarms': seen['alarms'], 'alarm_lines': alarms,
            'detected': detection_start(seen['diagnostics']) - start,
            'event': event - start,
            'force_error': float(np.linalg.norm(forces.mean(axis=0) - FORCE)
                                 / np.linalg.norm(FORCE)) if forces.size else np.inf,
            'force_worst': float(error.max() / np.linalg.norm(FORCE)),
            'force_samples': len(forces), 'rest': float(rest), 'speed': float(speed[0]),
            'moved': float(np.abs(q - q[0]).max())}


def kv_value(status, key: str) -> str:
    """Return the value of ``key`` in a diagnostic_msgs/DiagnosticStatus."""
    return next(kv.value for kv in status.values if kv.key == key)


def verdict(m: dict, reaction: str, rest_within: float) -> list[str]:
    """Return the bounds a measurement of a run with ``reaction`` missed (none: it passed)."""
    missed = []
    if m['alarms']:
        missed.append(f"{m['alarms']} false alarm(s)")
    if not 0.0 <= m['detected'] <= DETECT_WITHIN:
        missed.append(f"detected {m['detected'] * 1e3:.1f} ms after the push")
    if reaction == 'none' and m['force_error'] > FORCE_WITHIN:
        missed.append(f"force off by {100 * m['force_error']:.1f} %")
    if reaction == 'stop' and m['rest'] > rest_within:
        missed.append(f"at rest {m['rest']:.2f} s after the event")
    return missed


def report(m: dict, reaction: str, quiet: float) -> str:
    """Return one run's line."""
    line = (f"  {reaction}: {quiet:g} s held out, false alarms {m['alarms']}; 20 N push: "
            f"detection started {m['detected'] * 1e3:.1f} ms after it, event at "
            f"{m['event'] * 1e3:.1f} ms; force estimate within {100 * m['force_error']:.1f} % "
            f"(the mean of {m['force_samples']} samples; the worst sample "
            f"{100 * m['force_worst']:.1f} %)")
    if reaction == 'stop':
        line += (f"; at rest {m['rest']:.2f} s after the event from {m['speed']:.2f} rad/s, "
                 f"moved at most {m['moved']:.3f} rad")
    return '\n'.join([line] + [f'    false alarm {text}' for text in m['alarm_lines']])


def load() -> str:
    return ' '.join(f'{value:.2f}' for value in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--robots', nargs='+', default=['panda', 'ur5'], choices=sorted(FLANGE))
    parser.add_argument('--calibration', type=float, default=60.0,
                        help='s of motion the thresholds are calibrated on (default: 60; '
                        'docs/bag.md asks for a minute or more)')
    parser.add_argument('--quiet', type=float, default=15.0,
                        help='s of held-out motion with the thresholds before the push')
    parser.add_argument('--slower', type=float, default=1.25,
                        help='the held-out motion is the calibration one this many times slower')
    parser.add_argument('--settle', type=float, default=SETTLE,
                        help=f's of sim time each run holds the start before its motion '
                        f'(default: {SETTLE:g})')
    parser.add_argument('--busy', type=int, default=0,
                        help='processes spinning at normal priority meanwhile')
    parser.add_argument('--clock', choices=('realtime', 'lockstep'), default='realtime',
                        help="the sim's clock")
    parser.add_argument('--wiring', choices=sorted(WIRINGS), default='trajectory',
                        help='trajectory: joint_trajectory_controller with an effort interface '
                        '(path a); effort: the node pd_feedforward as the whole torque (path b)')
    parser.add_argument('--model', choices=('identified', 'true'), default='identified',
                        help="the node's model: identified (default: excite, record and "
                        "identify the plant first) or true (the plant's own)")
    parser.add_argument('--training', type=float, default=60.0,
                        help='s of excitation the model is identified from (default: 60)')
    parser.add_argument('--validation', type=float, default=25.0,
                        help='s of excitation of another seed it is validated on (default: 25)')
    parser.add_argument('--keep', type=Path, metavar='FOLDER',
                        help="keep each robot's runs (bags, logs, thresholds, the model's files "
                        'and recordings) in FOLDER/ROBOT (a new folder) instead of a temporary '
                        'one')
    args = parser.parse_args(argv)
    busy = [subprocess.Popen([sys.executable, '-c', 'while True: pass'])
            for _ in range(args.busy)]
    failed = False
    try:
        print(f'load average at the start: {load()} ({os.cpu_count()} CPUs, '
              f'{args.busy} busy processes)')
        for robot in args.robots:
            urdf = robot_path(robot).read_text()
            interface, path, law, rest_within = WIRINGS[args.wiring]
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp) if args.keep is None else args.keep / robot
                folder.mkdir(parents=True, exist_ok=args.keep is None)
                if args.model == 'identified':
                    params, description, actuation = identified_model(
                        robot, law, args.training, args.validation, folder)
                else:
                    params, description, actuation = true_model(robot, urdf, law, folder)
                    print(f"{robot}: the plant's true model (its URDF, the gap's actuation "
                          'terms)')
                (folder / 'calibration').mkdir()
                sim = dict(SIM, clock=args.clock, command_interface=interface)
                thresholds = calibrate(urdf, params, sim, path, description, actuation,
                                       args.calibration, folder / 'calibration', args.settle)
                shown = ', '.join(f'{value:.2f}' for value in thresholds.values())
                print(f'{robot}: thresholds from {args.calibration:g} s [N m]: {shown}')
                missed = []
                for reaction in ('none', 'stop'):
                    (folder / reaction).mkdir()
                    m = held_out(robot, urdf, params, sim, path, thresholds, args.quiet,
                                 args.slower, reaction, rest_within, folder / reaction,
                                 args.settle)
                    print(report(m, reaction, args.quiet), flush=True)
                    missed += [f'{reaction}: {text}'
                               for text in verdict(m, reaction, rest_within)]
            failed |= bool(missed)
            print(f"  {robot}: {'FAILED: ' + '; '.join(missed) if missed else 'OK'}")
        print(f'load average at the end: {load()}')
    finally:
        for process in busy:
            process.kill()
            process.wait()
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
