"""
Path a on joint_trajectory_controller's effort law, over DDS: the node's efforts cut its error.

``rnea_sim`` with ``command_interface: trajectory_effort`` (joint_trajectory_controller on the
``effort`` interface: a PID of 100 N m/rad, 10 N m s/rad on the sampled point plus the point's
``effort``), the ur5 with the default gap, lockstep; the trajectory goes to the node's
``planned_trajectory``, the node's ``joint_trajectory_with_effort`` (its ``feedforward``
torques as each point's effort) to the sim's ``joint_trajectory``. Its tracking RMS is at most
``RATIO`` of the same controller's PID alone on the same points without effort (in-process on
the sim's kernels, ``inprocess_loop``: the sim's lockstep without a node is that loop). The
in-process ratio of both robots: ``test_interfaces_in_process``.
"""
from __future__ import annotations

from harness.inprocess_loop import run_in_process
from harness.loop_harness import run_loop, TRACKED_SETTLE
from harness.oracle import robot_path
import pytest

pytestmark = pytest.mark.timeout(300)

DURATION = 3.0  # s of trajectory (sim time)
RATIO = 0.3  # the node's efforts: at most this share of the PID alone's RMS error


def test_the_nodes_point_efforts_track_within_0_3_of_jtcs_pid_alone(tmp_path):
    urdf = robot_path('ur5').read_text()
    run = run_loop(tmp_path, urdf, 'trajectory', 'default', DURATION,
                   sim_params={'command_interface': 'trajectory_effort'},
                   settle_time=TRACKED_SETTLE)
    assert run.exit_codes == {'sim': 0, 'node': 0}, run.logs
    pid = run_in_process(urdf, 'default', None, DURATION, command_interface='trajectory_effort')
    ratio = run.tracking.rms / pid.rms
    print(f'path a over DDS {run.tracking.rms:.4f} rad, PID alone {pid.rms:.4f} rad: '
          f'{ratio:.3f}; counters {run.counters}')
    assert pid.rms > 0.1  # the PID alone does track badly: gravity sags it
    assert ratio <= RATIO, (run.tracking, pid)
