"""
Floating base in the loop: solo12 standing and swaying on the sim's floor, the node's contacts.

``rnea_sim`` with a floating base, solo12 (example-robot-data) on four contact spheres (a gap
with nothing else: the node's URDF is the plant's), joint PD 20 N m/rad, 0.5 N m s/rad plus the
node's feed-forward (path b), in lockstep. The legs sway the body fore and aft. The node (four
point contacts at the feet) solves the contact wrenches from the sim's odometry, base
acceleration, joint states and desired accelerations; summed in the world frame, the forces
equal the sim's total contact force (MuJoCo's contact solution) within 2 % of the weight.
They do not yet: the test is an expected failure (strict) with what was measured.
"""
from __future__ import annotations

from builtin_interfaces.msg import Duration
from geometry_msgs.msg import WrenchStamped
from loop_harness import NS, read_bag, stamp_ns
import numpy as np
from oracle import robot_path
import pytest
from ros_harness import next_domain_id
from sensor_msgs.msg import JointState
from standing import SOLO_FEET, standing
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel
from rnea_ros.node.closed_loop import ClosedLoop, START_TIMEOUT

RADIUS = 0.0175  # m: solo12's foot sphere
SWAY = 0.15  # rad of hip flexion amplitude
PERIOD = 2.0  # s
DURATION = 3.0  # s of sim time measured


def sway_trajectory(names, q0: np.ndarray) -> JointTrajectory:
    """Hip flexion joints q0 + SWAY sin(2 pi t / PERIOD) for DURATION + 1 s, points at 20 ms."""
    msg = JointTrajectory(joint_names=list(names))
    omega = 2 * np.pi / PERIOD
    hips = np.array(['HFE' in name for name in names], dtype=float)
    for t in np.arange(0.0, DURATION + 1.0, 0.02):
        point = JointTrajectoryPoint(
            positions=(q0 + hips * SWAY * np.sin(omega * t)).tolist(),
            velocities=(hips * SWAY * omega * np.cos(omega * t)).tolist(),
            accelerations=(-hips * SWAY * omega ** 2 * np.sin(omega * t)).tolist(),
            time_from_start=Duration(sec=int(t), nanosec=int(round((t % 1.0) * 1e9))))
        msg.points.append(point)
    return msg


def world_force(model: RobotModel, q: np.ndarray, wrenches: dict) -> np.ndarray:
    """Sum of the feet's forces (each in its link frame) in the world frame."""
    rotations, _ = model.link_placements(q, SOLO_FEET)
    return sum(rotation @ wrenches[foot][:3] for rotation, foot in zip(rotations, SOLO_FEET))


@pytest.mark.xfail(strict=True, reason=(
    "not yet: the node's total contact force differs from the sim's by 7 N median, 14-25 N "
    'worst, of a 24.5 N weight, mostly sideways (measured 2026-11-25); unexplained so far: '
    "the one-step-old base_acceleration against MuJoCo's stiff contacts, the desired "
    'instead of the actual joint accelerations, or the frames of odometry/base_acceleration'))
def test_the_nodes_contact_wrenches_add_up_to_the_sims(tmp_path):
    urdf = robot_path('solo12').read_text()
    model, q_stand = standing('solo12')
    names = [name for name in model.joint_names if name != 'root_joint']
    joints = q_stand[7:]
    base = [0.0, 0.0, float(q_stand[2]) + RADIUS, 0.0, 0.0, 0.0, 1.0]
    gap = tmp_path / 'feet.yaml'
    gap.write_text('seed: 1\ncontact_spheres:\n' + ''.join(
        f'  {foot}: {{radius: {RADIUS}, friction: 0.8}}\n' for foot in SOLO_FEET))
    bag = tmp_path / 'bag'
    loop = ClosedLoop(next_domain_id(), tmp_path)
    node_wrenches: dict[str, dict[int, np.ndarray]] = {foot: {} for foot in SOLO_FEET}
    try:
        loop.start_sim({'robot_description': urdf, 'floating_base': True, 'gap': str(gap),
                        'clock': 'lockstep', 'kp': [20.0], 'kd': [0.5],
                        'initial_positions': joints.tolist(), 'initial_base_pose': base},
                       record=bag)
        loop.start_node({'robot_description': urdf, 'floating_base': True, 'rate': 0.0,
                         'contacts': list(SOLO_FEET)},
                        {'feedforward_effort': 'effort_commands'})
        watch = ('sim', 'node')
        for foot in SOLO_FEET:
            def keep(msg, foot=foot):
                w = msg.wrench
                node_wrenches[foot][stamp_ns(msg)] = np.array(
                    [w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z])
            loop.subscribe(WrenchStamped, f'contact_wrenches/{foot}', keep)
        answers: list = []
        loop.subscribe(JointState, 'joint_torques', answers.append)
        loop.spin_until(lambda: answers, START_TIMEOUT, 'the node to answer', watch)
        desired: list = []
        loop.subscribe(JointTrajectory, 'desired_accelerations', desired.append, False)
        loop.spin_until(lambda: desired, 60.0, 'desired_accelerations', watch)
        publisher = loop.publisher(JointTrajectory, 'joint_trajectory')
        loop.spin_until(lambda: publisher.get_subscription_count() >= 2, 60.0,
                        'the subscribers of joint_trajectory', watch)
        loop.send(publisher, sway_trajectory(names, joints),
                  lambda: np.any(np.asarray(desired[-1].points[0].velocities) != 0.0),
                  'the sim swaying', watch)
        since = stamp_ns(desired[-1])
        loop.spin_until(lambda: stamp_ns(desired[-1]) >= since + DURATION * NS,
                        60.0 * DURATION, 'the sway', watch)
        assert loop.stop('sim') == 0
    finally:
        loop.close()
    topics = read_bag(bag)
    step = NS // 1000
    odometry = {stamp_ns(msg): msg for _, msg in topics['odometry']}
    states = {stamp_ns(msg): np.asarray(msg.position) for _, msg in topics['joint_states']}
    truth = {foot: {stamp_ns(msg) - step: msg.wrench
                    for _, msg in topics[f'truth/contact_wrenches/{foot}']}
             for foot in SOLO_FEET}
    weight = float(np.linalg.norm(model.gravity_torques(q_stand)[:3]))  # m g on the base
    compared, worst = 0, 0.0
    differences = []
    for stamp in sorted(node_wrenches[SOLO_FEET[0]]):
        if stamp < since or stamp not in odometry or stamp not in states or any(
                stamp not in node_wrenches[foot] or stamp not in truth[foot]
                for foot in SOLO_FEET):
            continue
        pose = odometry[stamp].pose.pose
        q = model.neutral_configuration()
        q[:7] = [pose.position.x, pose.position.y, pose.position.z, pose.orientation.x,
                 pose.orientation.y, pose.orientation.z, pose.orientation.w]
        q[7:] = states[stamp]
        sim = {}
        for foot in SOLO_FEET:
            force = truth[foot][stamp].force
            sim[foot] = np.array([force.x, force.y, force.z])
        node = {foot: node_wrenches[foot][stamp] for foot in SOLO_FEET}
        difference = np.linalg.norm(world_force(model, q, node) - world_force(model, q, sim))
        differences.append(difference)
        worst = max(worst, difference)
        compared += 1
    print(f'{compared} stamps compared; worst |node - sim| total force {worst:.3f} N, '
          f'weight {weight:.2f} N')
    print('|node - sim| p50/p90/p99 [N]:', np.percentile(differences, [50, 90, 99]))
    assert compared > 100
    assert worst <= 0.02 * weight
