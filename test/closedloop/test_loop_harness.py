"""The closed-loop harness's own measurements, on recordings built here (no sim, no node)."""
from __future__ import annotations

from builtin_interfaces.msg import Time
from harness.loop_harness import NS, window_tracking
from harness.oracle import robot_path
import numpy as np
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel
from rnea_ros.demos.closed_loop import POINT_PERIOD, trajectory_points

START_NS = 1_700_000_000 * NS


def recording(model: RobotModel, reference: np.ndarray, error: np.ndarray) -> dict:
    """Return the sim's topics of a run stepped every POINT_PERIOD: reference[k] at step k."""
    step = round(POINT_PERIOD * NS)
    topics: dict = {'desired_accelerations': [], 'truth/joint_torques': []}
    for k, (q, e) in enumerate(zip(reference, error)):
        stamp = START_NS + k * step
        desired = JointTrajectory(joint_names=list(model.joint_names),
                                  points=[JointTrajectoryPoint(positions=q.tolist())])
        desired.header.stamp = Time(sec=stamp // NS, nanosec=stamp % NS)
        truth = JointState(name=list(model.joint_names), position=(q - e).tolist())
        truth.header.stamp = Time(sec=(stamp + step) // NS, nanosec=(stamp + step) % NS)
        topics['desired_accelerations'].append((stamp, desired))
        topics['truth/joint_torques'].append((stamp + step, truth))
    return topics


def test_window_tracking_ends_at_the_final_hold_of_a_motion_that_passes_its_last_point():
    # The demo motion repeats every 40 s and its joints are at the top or bottom of their
    # sines at 20 s and 60 s: the 60 s motion's reference equals its last point bit for bit
    # at 20 s. The window is the 60 s before the hold at the end, not before that pass.
    model = RobotModel.from_urdf_string(robot_path('ur5').read_text())
    duration = 60.0
    _, Q, _, _ = trajectory_points(model, duration)
    assert np.array_equal(Q[round(20.0 / POINT_PERIOD)], Q[-1])  # the pass the test is about
    settle, hold = 300, 50  # samples holding the start, then the last point
    reference = np.vstack([np.repeat(Q[:1], settle, axis=0), Q[1:],
                           np.repeat(Q[-1:], hold, axis=0)])
    # 0.01 rad off on the motion (its first point the settling's last sample), 1 rad while
    # settling, 0.5 rad on the hold: a window reaching into either would show it.
    error = np.full(reference.shape, 0.01)
    error[:settle - 1] = 1.0
    error[settle + len(Q) - 1:] = 0.5
    tracking = window_tracking(recording(model, reference, error), model, Q[-1], duration,
                               rate=1.0 / POINT_PERIOD)
    assert tracking.samples == round(duration / POINT_PERIOD)
    assert abs(tracking.rms - 0.01) < 1e-9 and abs(tracking.peak - 0.01) < 1e-9, tracking
