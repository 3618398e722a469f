"""
The node's momentum observer against the simulated panda in lockstep: a push on the flange.

``rnea_sim`` (lockstep: each step waits for the node's answer) with a torque sensor of 0.05 N m
noise and no other gap; the node on path b (``feedforward_effort`` on ``effort_commands``) with
``observer: true``, the flange (``panda_hand``) as wrench link and ``collision_reaction:
hold_gravity``. During the motion the collision thresholds are calibrated from one second of
the node's own collision-free residual (``calibrate_thresholds``) and set live; then the sim
pushes the flange with 20 N for 0.5 s (``apply_wrench``, ``wrench_timeout: 0.5``). Checked:
the node's detection (its diagnostics name the start stamp) comes within 20 ms of the push's
first step (the sim's truth/external_wrench); from 0.1 s into the push the estimated flange
force is within 2 N (10 %) of the applied one (its mean over the push, and the median
sample); while the collision lasts the node publishes
the gravity torques of the measured positions; ``~/reset_collision`` clears it and the
feed-forward comes back.
"""
from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from harness.loop_harness import (call, detection_start, NS, run_loop, set_thresholds,
                                  SHORT_SETTLE, stamp_ns)
from harness.observer_loop import ARM, CALIBRATION, FORCE, LINK
from harness.oracle import robot_path
import numpy as np
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from std_srvs.srv import Trigger

from rnea_ros import RobotModel
from rnea_ros.observer.collision import calibrate_thresholds, DEFAULT_MIN_DURATION

pytestmark = pytest.mark.timeout(900)
PUSH = 0.5  # s of sim time
AFTER_RESET = 0.3  # s of sim time the node's torques are heard after the reset: the run ends
WATCH = ('sim', 'node')


def test_a_push_on_the_flange_is_detected_its_force_estimated_and_reset(tmp_path):
    urdf = robot_path('panda').read_text()
    model = RobotModel.from_urdf_string(urdf)
    gap = tmp_path / 'torque_sensor.yaml'
    gap.write_text('seed: 3\ntorque_sensor:\n  noise: 0.05\n')
    seen: dict[str, list] = {'external': [], 'wrench': [], 'torques': [], 'collision': [],
                             'diagnostics': []}
    thresholds: dict[str, float] = {}

    def push_and_reset(loop):
        loop.subscribe(JointState, 'external_torques', seen['external'].append)
        loop.subscribe(WrenchStamped, f'estimated_wrenches/{LINK}', seen['wrench'].append)
        loop.subscribe(JointState, 'joint_torques', seen['torques'].append)
        loop.subscribe(DiagnosticArray, '/diagnostics', seen['diagnostics'].append)
        loop.node.create_subscription(Bool, 'collision', seen['collision'].append, QoSProfile(
            depth=10, reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL))
        pusher = loop.publisher(WrenchStamped, 'apply_wrench')
        external = seen['external']
        loop.spin_until(lambda: external and stamp_ns(external[-1]) - stamp_ns(external[0])
                        > CALIBRATION * NS, 300.0, 'collision-free residuals', WATCH)
        names = list(external[0].name)
        residuals = np.array([m.effort for m in external])[:, [names.index(j) for j in ARM]]
        # A margin over the calibration's own peaks: the motion is faster later on.
        thresholds.update(zip(ARM, calibrate_thresholds(residuals, margin=2.0, floor=0.5)))
        set_thresholds(loop, thresholds)
        assert seen['collision'] and seen['collision'][-1].data is False  # none so far
        loop.spin_until(lambda: pusher.get_subscription_count() > 0, 60.0, 'the sim', WATCH)
        push = WrenchStamped()
        push.header.frame_id = LINK
        push.wrench.force.x, push.wrench.force.y, push.wrench.force.z = FORCE
        pusher.publish(push)
        loop.spin_until(lambda: seen['collision'][-1].data, 300.0, 'collision', WATCH)
        pushed = stamp_ns(external[-1])
        loop.spin_until(lambda: stamp_ns(external[-1]) > pushed + (PUSH + 0.2) * NS, 300.0,
                        'the end of the push', WATCH)
        loop.spin_until(lambda: detection_start(seen['diagnostics']) is not None, 60.0,
                        'the diagnostics of the collision', WATCH)
        assert seen['collision'][-1].data is True  # latched: the reaction holds it
        response = call(loop, Trigger, '/rnea/reset_collision', Trigger.Request())
        assert (response.success, response.message) == (True, 'collision cleared')
        loop.spin_until(lambda: seen['collision'][-1].data is False, 60.0, 'the reset', WATCH)
        seen['reset'] = stamp_ns(external[-1])
        torques = seen['torques']
        loop.spin_until(lambda: stamp_ns(torques[-1]) > seen['reset'] + AFTER_RESET * NS, 60.0,
                        'the feed-forward after the reset', WATCH)

    run = run_loop(tmp_path, urdf, 'effort', str(gap), 6.0, during=push_and_reset,
                   node_params={'observer': True, 'wrench_estimation_links': [LINK],
                                'collision_reaction': 'hold_gravity'},
                   sim_params={'wrench_timeout': PUSH}, settle_time=SHORT_SETTLE,
                   to_the_end=False)
    assert run.exit_codes == {'sim': 0, 'node': 0}, run.logs
    pushes = sorted(stamp_ns(msg) for _, msg in run.topics['truth/external_wrench'])
    start, end = pushes[0], pushes[-1]
    assert PUSH - 0.01 <= (end - start) / NS <= PUSH + 0.01, (start, end)
    # Detected within 20 ms of the push's first step (and not before it).
    detected = detection_start(seen['diagnostics'])
    assert 0.0 <= detected - start / NS <= 0.020, (detected, start / NS, thresholds)
    assert [m.data for m in seen['collision']] == [False, True, False]
    # The flange force from 0.1 s into the push to its end, the claim of the docs: the estimate
    # within 10 % of the applied force (2 N). The estimate is the mean over the push, and the
    # typical sample (the median error) is within it too; a single sample is not bounded: it
    # carries the sensor's noise through J^T and, beside load, the odd late step (at load 4 one
    # was 3.1 N off while the mean was 1.2 N off; at load 11: mean 0.71 N off, median error
    # 0.76 N, 90th percentile 1.37 N, worst 1.49 N).
    forces = np.array([[m.wrench.force.x, m.wrench.force.y, m.wrench.force.z]
                       for m in seen['wrench']
                       if start + 0.1 * NS <= stamp_ns(m) <= end - 0.002 * NS])
    assert len(forces) >= 100, len(forces)
    tolerance = 0.1 * np.linalg.norm(FORCE)
    error = np.linalg.norm(forces - FORCE, axis=1)
    summary = (forces.mean(axis=0), np.percentile(error, [50, 90, 100]))
    assert np.linalg.norm(forces.mean(axis=0) - FORCE) <= tolerance, summary
    assert np.median(error) <= tolerance, summary
    # From the collision (the event starts at the first sample over its threshold; the
    # collision is on after DEFAULT_MIN_DURATION over it) to the reset: the gravity torques of
    # the measured positions.
    on = detected + DEFAULT_MIN_DURATION
    reacting = [m for m in seen['torques']
                if on * NS + 0.002 * NS <= stamp_ns(m) <= seen['reset'] - 0.1 * NS]
    assert len(reacting) >= 100, len(reacting)
    for msg in reacting:
        np.testing.assert_allclose(msg.effort, model.gravity_torques(np.asarray(msg.position)),
                                   rtol=0, atol=1e-9)
    after = [m for m in seen['torques'] if stamp_ns(m) > seen['reset'] + 0.1 * NS]
    assert after and not np.allclose(after[-1].effort, model.gravity_torques(
        np.asarray(after[-1].position)), rtol=0, atol=1e-6)  # the feed-forward again
