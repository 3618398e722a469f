"""
Benchmark of a stall of the node's inputs with the node as the robot's only controller.

    .venv/bin/python bench/bench_stall.py [--robots panda ur5] [--gaps none default]
                                          [--settle 20] [--busy N] [--dds-profile FILE|none]
                                          [--estimate]

Per robot and reality gap (``--gaps``: ``armature``, the URDF's own dynamics with the default
gap's reflected rotor inertia, given to the node: the node knows the robot; ``none``; a shipped
gap or a YAML file), the simulated robot on its ``effort`` interface (the node's command
is the whole torque, held until the next), ``pd_feedforward`` at Kp 100 / Kd 10 on every joint
with ``prediction: model`` (the gap's armature given to the node), ``input_timeout`` 3 ms and
``collision_stop_time`` 0.02 s, the demo trajectory; 0.5 s into it the node's joint_states go
silent for 0.5 s. Printed: the fastest joint's speed when the stall begins, the largest drift of
any joint from where it began (while silent), and the largest speed from
``harness.stall.REST_AFTER`` (0.2 s) after joint_states return (docs/node/prediction.md), and
beside them the least drift any torques within the effort limits reach from the stall's state
(``harness.stall.least``). ``--estimate``: the node also estimates a payload online on the
arm's flange link (``stall_payload_estimate``; the link the gap fixes its payload to):

- in lockstep, in-process (``harness.stall.stalled``: the node's core, the
  command one tick late, the stall its ``silent`` window), as the suite measures it: every input
  silent, and the desired motion does not come back (the speed after is the hold of the first
  pose known again, the stop's);
- in real time over DDS (``rnea_sim`` with ``clock: realtime`` and the gap plus an outage of
  joint_states, ``joint_states.outage``, timed ``OUTAGE_AFTER`` after the settle; the node at
  ``rate`` 1000, ``cycle_trigger: joint_states``), the arm's truth from ``truth/joint_torques``.
  The sim's desired motion streams on through the outage (a planner on another link): once
  joint_states return the node tracks it again, so the speed after is the tracking's, not a
  rest's.

Both plants step five physics steps per millisecond (``substeps``: the blind hold is open loop,
and a plant integrated at 1 ms drifts from the continuous arm the node's model integrates). The
load average and the machine's floor (a bare 1 kHz loop's wake-up lateness) are printed at the
start and the end. Not a test: run it by hand (a tiny run is in the suite).
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'test'))  # the tests' harness package

from harness.loop_harness import NS, run_loop  # noqa: E402
from harness.oracle import robot_path  # noqa: E402
from harness.stall import (INPUT_TIMEOUT, least, REST_AFTER, SILENT, stalled,  # noqa: E402
                           STOP_TIME, SUBSTEPS, TICK)
import numpy as np  # noqa: E402
import yaml  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402
from rnea_ros.demos.closed_loop import stiff_gains  # noqa: E402
from rnea_ros.sim.gap import GAPS_DIR, load_gap, shipped_gaps  # noqa: E402
from rnea_ros.sim.true_urdf import tip_link  # noqa: E402
from rnea_ros.timing.floor import wake_up_lateness  # noqa: E402

# The stall's set-up (SILENT, REST_AFTER, the timeouts, SUBSTEPS) is harness.stall's, as
# the suite's. gain_check error: without armature (gap none) the node's check refuses Kd 10 on
# the panda's wrist (the in-process lockstep run holds it; over DDS the loop watch may stop the
# arm).
NODE = {'control_law': 'pd_feedforward', 'prediction': 'model', 'input_timeout': INPUT_TIMEOUT,
        'collision_stop_time': STOP_TIME, 'gain_check': 'error'}
# Over DDS the outage is timed on the sim's clock, this long after the settle: the trajectory is
# sent then, taken within a few hundred ms, and from 0.2 s on the demo moves at 1.5-2.1 rad/s.
OUTAGE_AFTER = 2.0
# The sim's clock runs from its start, before the node's (several seconds under load): the
# trajectory is sent at this sim time (or once the node answers, if later), so that the outage
# meets the motion.
SETTLE_STALL = 20.0


# The gaps by name: 'armature' is the true model with the default gap's reflected rotor inertia
# (given to the node: it knows the robot exactly); a shipped gap's name or a YAML file.
ARMATURE = {'joints': {'armature': 0.1}}


def gap_data(gap: str) -> dict:
    """Return the gap file's content for ``gap`` (module docstring)."""
    if gap == 'none':
        return {}
    if gap == 'armature':
        return dict(ARMATURE)
    path = GAPS_DIR / f'{gap}.yaml' if gap in shipped_gaps() else Path(gap)
    return yaml.safe_load(path.read_text()) or {}


def stiff(model: RobotModel, gap_file: Path) -> dict:
    """Kp 100 / Kd 10 on every joint and the gap's armature, as node parameters."""
    return {**stiff_gains(model),
            **load_gap(str(gap_file)).armature_parameters(model.joint_names)}


def measures(times: np.ndarray, q: np.ndarray, v: np.ndarray, stall: float,
             urdf: str, gap_file: Path) -> tuple:
    """
    (speed at the stall, largest drift while silent, the least drift, largest speed after).

    The least drift: ``harness.stall.least`` from the state where the stall began; the speed
    after: from REST_AFTER after joint_states return.
    """
    start = int(np.searchsorted(times, stall))
    back = int(np.searchsorted(times, stall + SILENT))
    after = int(np.searchsorted(times, stall + SILENT + REST_AFTER))
    return (np.abs(v[start]).max(), np.abs(q[start:back] - q[start]).max(),
            least(urdf, str(gap_file), q[start], v[start]), np.abs(v[after:]).max(initial=0.0))


def estimating(urdf: str, estimate: bool) -> dict:
    """``stall_payload_estimate`` on the arm's flange with ``estimate``; nothing without."""
    return {'stall_payload_estimate': tip_link(ET.fromstring(urdf))} if estimate else {}


def in_lockstep(name: str, gap: str, folder: Path, estimate: bool) -> tuple:
    """(speed at the stall, largest drift, the least drift, largest speed after), lockstep."""
    urdf = robot_path(name).read_text()
    model = RobotModel.from_urdf_string(urdf)
    gap_file = folder / 'lockstep_gap.yaml'
    gap_file.write_text(yaml.safe_dump(gap_data(gap)))
    run = stalled(urdf, str(gap_file),
                  {**NODE, **stiff(model, gap_file), **estimating(urdf, estimate)}, whole=True)
    return run.speed, run.drift, least(urdf, str(gap_file), run.q, run.v), run.settled


def over_dds(name: str, gap: str, folder: Path, settle: float, estimate: bool) -> tuple:
    """Run over DDS in real time; the stall at the outage, ``OUTAGE_AFTER`` s after the settle."""
    urdf = robot_path(name).read_text()
    model = RobotModel.from_urdf_string(urdf)
    data = gap_data(gap)
    outage = settle + OUTAGE_AFTER  # the motion started (the demo's speed: 1.5-2.1 rad/s)
    data.setdefault('joint_states', {})['outage'] = {'start': outage, 'duration': SILENT}
    gap_file = folder / 'gap.yaml'
    gap_file.write_text(yaml.safe_dump(data))
    run = run_loop(folder, urdf, 'effort', str(gap_file), OUTAGE_AFTER + SILENT + 1.0,
                   node_params={'rate': 1000.0, 'cycle_trigger': 'joint_states', **NODE,
                                **stiff(model, gap_file), **estimating(urdf, estimate)},
                   sim_params={'clock': 'realtime', 'command_interface': 'effort',
                               'substeps': SUBSTEPS}, settle_time=settle)
    # The outage is where the recorded joint_states stop (the sim's clock origin is not known
    # here): its first missing step is the stall.
    published = np.array([stamp for stamp, _ in run.topics['joint_states']])
    gap_at = int(np.argmax(np.diff(published)))
    stall = published[gap_at] + round(TICK * NS)
    truth = run.topics['truth/joint_torques']
    times = np.array([(stamp - stall) / NS for stamp, _ in truth])
    q = np.array([msg.position for _, msg in truth])
    v = np.array([msg.velocity for _, msg in truth])
    counted = run.counters.get('joint_states withheld (gap outage)', '?')
    return measures(times, q, v, 0.0, urdf, gap_file) + (counted,)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robots', nargs='+', default=['panda', 'ur5'])
    parser.add_argument('--gaps', nargs='+', default=['armature', 'default'],
                        help="none, armature (the true model with the default gap's armature, "
                        'given to the node), a shipped gap or a YAML file')
    parser.add_argument('--settle', type=float, default=SETTLE_STALL, metavar='SECONDS',
                        help='sim time each run over DDS holds the start before the trajectory '
                        '(the outage begins 2 s after it)')
    parser.add_argument('--busy', type=int, default=0, metavar='N',
                        help='processes spinning at normal priority during the runs')
    parser.add_argument('--estimate', action='store_true',
                        help="the node estimates a payload on the arm's flange "
                        '(stall_payload_estimate)')
    parser.add_argument('--dds-profile', default=str(ROOT / 'config' / 'fastdds_realtime.xml'),
                        metavar='FILE', help="Fast DDS profile of every process; 'none': none")
    args = parser.parse_args(argv)
    if args.dds_profile != 'none':
        os.environ['FASTDDS_DEFAULT_PROFILES_FILE'] = args.dds_profile
    busy = [subprocess.Popen([sys.executable, '-c', 'while True: pass'])
            for _ in range(args.busy)]
    print(f'{args.busy} busy processes; load average at start: {os.getloadavg()}', flush=True)
    print(wake_up_lateness().describe(), flush=True)
    try:
        print('| robot | gap | run | speed at the stall [rad/s] | largest drift [rad] | '
              'least drift within the effort limits [rad] | '
              f'largest speed from {REST_AFTER:g} s after [rad/s] |')
        print('|---|---|---|---|---|---|---|')
        with tempfile.TemporaryDirectory(prefix='bench_stall_') as workdir:
            for name in args.robots:
                for gap in args.gaps:
                    folder = Path(workdir) / f'{name}_{len(list(Path(workdir).iterdir()))}'
                    folder.mkdir()
                    label = f'{gap}, payload estimated' if args.estimate else gap
                    speed, drift, bound, after = in_lockstep(name, gap, folder, args.estimate)
                    print(f'| {name} | {label} | lockstep, in-process | {speed:.2f} | '
                          f'{drift:.3f} | {bound:.3f} | {after:.3f} |', flush=True)
                    speed, drift, bound, after, counted = over_dds(name, gap, folder,
                                                                   args.settle, args.estimate)
                    print(f'| {name} | {label} | real time, over DDS ({counted} joint_states '
                          f'withheld) | {speed:.2f} | {drift:.3f} | {bound:.3f} | {after:.3f} '
                          '(tracking the streamed reference again) |', flush=True)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    print(f'load average at end: {os.getloadavg()}', flush=True)
    print(wake_up_lateness().describe(), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
