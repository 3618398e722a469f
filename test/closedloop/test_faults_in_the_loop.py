"""
Faults in the loop: the node stopped mid-run (SIGINT) and restarted while it drives the sim.

``rnea_sim`` in real time (``clock: realtime``: its steps do not wait for the node, as a robot's
do not), the panda without a gap (its joint_states are the exact state), path b (the node's
``feedforward_effort`` on the sim's ``effort_commands``). The sim documents what it does with a
command older than ``command_timeout`` (0.1 s of sim time): it stops adding it, leaving the PD
alone, and counts each such step. Checked on what the sim recorded: no step applied a non-finite
effort; the steps it counted stale applied exactly the PD alone (to 1e-9 N m); the restarted
node's commands were taken again and the arm tracks as before.
"""
from __future__ import annotations

from harness.loop_harness import KD, KP, NS, run_loop, stamp_ns, window_tracking
from harness.oracle import robot_path
import numpy as np
import pytest
from sensor_msgs.msg import JointState

from rnea_ros import RobotModel
from rnea_ros.demos.closed_loop import EFFORT_PATH_REMAPS, START_TIMEOUT, trajectory_points

pytestmark = pytest.mark.realtime  # the sim steps at wall-clock deadlines

OUTAGE = 0.5  # s of wall time between the node's SIGINT and its restart
BACK = 0.5  # s from the restarted node's first answer to the window its tracking is judged on
# s of trajectory: the node is stopped 1 s in and its restart took 2-7.5 s at load 1-4
DURATION = 15.0


def test_node_stopped_and_restarted_the_pd_alone_takes_over_then_the_node_again(tmp_path):
    urdf = robot_path('panda').read_text()

    back: list = []  # the stamp of the first state the restarted node answered

    def stop_and_restart(loop):
        loop.spin_for(1.0, ('sim', 'node'))
        assert loop.stop('node') == 0
        loop.spin_for(OUTAGE, ('sim',))
        loop.start_node({'robot_description': urdf, 'rate': 0.0},
                        EFFORT_PATH_REMAPS)
        answers: list = []
        loop.subscribe(JointState, 'joint_torques', answers.append)
        loop.spin_until(lambda: answers, START_TIMEOUT, 'the restarted node', ('sim', 'node'))
        back.append(stamp_ns(answers[0]))

    # One split, written at the end: a split written mid-run stalls the real-time stepping
    # thread (docs/sim.md), which is not what this test is about.
    run = run_loop(tmp_path, urdf, 'effort', 'none', DURATION,
                   sim_params={'clock': 'realtime', 'record_split': 600.0},
                   during=stop_and_restart)
    assert run.exit_codes == {'sim': 0, 'node': 0}, run.logs
    stale = run.counters['stale effort command ticks']
    assert stale >= 0.9 * (OUTAGE - 0.1) * 1000, run.counters  # at least the outage, at 1 kHz

    truth = {stamp_ns(msg): msg for _, msg in run.topics['truth/joint_torques']}
    assert all(np.all(np.isfinite(msg.effort)) for msg in truth.values())
    desired = {stamp_ns(msg): msg.points[0] for _, msg in run.topics['desired_accelerations']}
    measured = {stamp_ns(msg): msg for _, msg in run.topics['joint_states']}
    step = NS // 1000
    pd_alone = 0
    for stamp, state in measured.items():
        applied = truth.get(stamp + step)
        if applied is None or stamp not in desired:
            continue
        point = desired[stamp]
        pd = (KP * (np.asarray(point.positions) - np.asarray(state.position))
              + KD * (np.asarray(point.velocities) - np.asarray(state.velocity)))
        if np.allclose(applied.effort, pd, rtol=0.0, atol=1e-9):
            pd_alone += 1
    # Every stale step applied the PD alone (a few steps of the start: no command yet either).
    # Counted on the recorded steps: the recorder's best-effort joint_states subscription may
    # lose some on a loaded machine (a suite run lost 6 % beside other suites), hence 0.9.
    assert pd_alone >= 0.9 * stale, (pd_alone, run.counters)
    # The restarted node's commands reached the sim; the arm tracks as it does with the node.
    commands = [stamp for stamp, _ in run.topics['effort_commands']]
    assert commands and max(commands) > max(truth) - NS
    model = RobotModel.from_urdf_string(urdf)
    final = trajectory_points(model, DURATION)[1][-1]
    # The window: from BACK s after the restarted node's first answer (its start-up takes
    # longer on a loaded machine, while the sim steps on) to the end, at most the last 2 s.
    end = min(stamp for stamp, point in desired.items() if np.array_equal(point.positions, final))
    window = min(2.0, (end - back[0]) / NS - BACK)
    assert window >= 1.0, f'the restarted node answered only {(end - back[0]) / NS:.2f} s ' \
        'before the end of the trajectory'
    last = window_tracking(run.topics, model, final, window)
    # The PD alone tracks this trajectory at 0.13-0.2 rad RMS; with the node back, 0.010-0.038
    # at load 1-2.6 (a late real-time step costs a burst): 0.05 tells the two apart.
    assert last.rms < 0.05, (last, run.tracking)
