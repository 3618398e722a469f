"""
Floating base in the loop: solo12 standing and swaying on the sim's floor, the node's contacts.

solo12 (example-robot-data) on four contact spheres (a gap with nothing else: the node's URDF is
the plant's), joint PD 20 N m/rad, 0.5 N m s/rad plus the node's feed-forward (path b). The
legs sway the body fore and aft. The node (four point contacts at the feet) solves the contact
wrenches from the sim's odometry, base acceleration, joint states and desired accelerations;
summed in the world frame, the forces equal the sim's total contact force (MuJoCo's contact
solution) within 2 % of the weight: over DDS in lockstep, and in-process with the node's core
(``ControlCore``) and the ``Plant``, where the base acceleration the node is given is shown to
need its low-pass (``base_acceleration_time_constant``): unfiltered, the feed-forward feeds the
acceleration it causes back into itself and the standing robot shakes.
"""
from __future__ import annotations

from pathlib import Path

from builtin_interfaces.msg import Duration
from geometry_msgs.msg import WrenchStamped
from harness.loop_harness import NS, read_bag, stamp_ns
from harness.oracle import robot_path
from harness.ros_harness import next_domain_id
from harness.standing import SOLO_FEET, standing
import numpy as np
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel
from rnea_ros.contacts import Contact
from rnea_ros.control.core import ControlCore
from rnea_ros.control.settings import Settings
from rnea_ros.control.trajectory import Trajectory
from rnea_ros.demos.closed_loop import ClosedLoop, EFFORT_PATH_REMAPS, START_TIMEOUT
from rnea_ros.sim.gap import load_gap
from rnea_ros.sim.plant import Plant

RADIUS = 0.0175  # m: solo12's foot sphere
SWAY = 0.15  # rad of hip flexion amplitude
PERIOD = 2.0  # s
DURATION = 3.0  # s of sim time measured
KP, KD = 20.0, 0.5  # N m/rad, N m s/rad: the joint PD
STEP = 0.001  # s: the sim's timestep (rate 1000 Hz)
SETTLE_STEPS = 200  # in-process: steps standing before the sway
STAND = 0.5  # s of sim time standing before the sway, over DDS


def sway(names, q0: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """
    Position, velocity, acceleration of the sway at time t >= 0 (joint order of ``names``).

    Hip flexion joints q0 + SWAY (1 - cos(2 pi t / PERIOD)) / 2: it starts at rest, where the
    robot stands, so the PD gets no kick.
    """
    omega = 2 * np.pi / PERIOD
    hips = np.array(['HFE' in name for name in names], dtype=float) * SWAY / 2
    return (q0 + hips * (1 - np.cos(omega * t)), hips * omega * np.sin(omega * t),
            hips * omega ** 2 * np.cos(omega * t))


def sway_trajectory(names, q0: np.ndarray) -> JointTrajectory:
    """Return the sway for DURATION + 1 s, points at 20 ms."""
    msg = JointTrajectory(joint_names=list(names))
    for t in np.arange(0.0, DURATION + 1.0, 0.02):
        q, v, a = sway(names, q0, t)
        msg.points.append(JointTrajectoryPoint(
            positions=q.tolist(), velocities=v.tolist(), accelerations=a.tolist(),
            time_from_start=Duration(sec=int(t), nanosec=int(round((t % 1.0) * 1e9)))))
    return msg


def feet_gap(path: Path) -> Path:
    """Write the gap of the tests: the feet's contact spheres, nothing else."""
    path.write_text('seed: 1\ncontact_spheres:\n' + ''.join(
        f'  {foot}: {{radius: {RADIUS}, friction: 0.8}}\n' for foot in SOLO_FEET))
    return path


def world_force(model: RobotModel, q: np.ndarray, wrenches: dict) -> np.ndarray:
    """Sum of the feet's forces (each in its link frame) in the world frame."""
    rotations, _ = model.link_placements(q, SOLO_FEET)
    return sum(rotation @ wrenches[foot][:3] for rotation, foot in zip(rotations, SOLO_FEET))


def test_the_nodes_contact_wrenches_add_up_to_the_sims(tmp_path):
    urdf = robot_path('solo12').read_text()
    model, q_stand = standing('solo12')
    names = [name for name in model.joint_names if name != 'root_joint']
    joints = q_stand[7:]
    base = [0.0, 0.0, float(q_stand[2]) + RADIUS, 0.0, 0.0, 0.0, 1.0]
    gap = feet_gap(tmp_path / 'feet.yaml')
    bag = tmp_path / 'bag'
    loop = ClosedLoop(next_domain_id(), tmp_path)
    node_wrenches: dict[str, dict[int, np.ndarray]] = {foot: {} for foot in SOLO_FEET}
    try:
        loop.start_sim({'robot_description': urdf, 'floating_base': True, 'gap': str(gap),
                        'clock': 'lockstep', 'kp': [KP], 'kd': [KD],
                        'initial_positions': joints.tolist(), 'initial_base_pose': base},
                       record=bag)
        loop.start_node({'robot_description': urdf, 'floating_base': True, 'rate': 0.0,
                         'contacts': list(SOLO_FEET)},
                        EFFORT_PATH_REMAPS)
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
        # The robot starts with its feet just touching the floor: let it settle on them.
        landed = stamp_ns(desired[0]) + STAND * NS
        loop.spin_until(lambda: stamp_ns(desired[-1]) >= landed, 60.0 * STAND,
                        'the robot standing', watch)
        publisher = loop.publisher(JointTrajectory, 'joint_trajectory')
        loop.spin_until(lambda: publisher.get_subscription_count() >= 1, 60.0,
                        'the subscribers of joint_trajectory', watch)
        loop.send(publisher, sway_trajectory(names, joints),
                  lambda: np.any(np.asarray(desired[-1].points[0].accelerations) != 0.0),
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


def in_process_loop(tmp_path, time_constant: float | None, steps: int) -> tuple[float, float]:
    """
    Run the node's core and the plant in one process; return (worst |node - sim|, roll rms).

    Each step the core gets what the sim would publish (joint states, odometry, the base
    acceleration of the step before, stamped, and the sway's desired accelerations after
    SETTLE_STEPS of standing) and its torques go to the plant with the PD. Worst total-force
    difference [N] and the rms of the base's roll acceleration [rad/s^2] after the settling.
    """
    urdf = robot_path('solo12').read_text()
    model, q_stand = standing('solo12')
    plant = Plant(urdf, floating_base=True, gap=load_gap(str(feet_gap(tmp_path / 'feet.yaml'))))
    q0 = q_stand.copy()
    q0[2] += RADIUS
    plant.reset(q0)
    settings = {} if time_constant is None else {'base_acceleration_time_constant':
                                                 time_constant}
    core = ControlCore(model, Settings(floating_base=True, contacts=tuple(
        Contact(foot) for foot in SOLO_FEET), **settings).validate())
    names = plant.joint_names
    assert core.joint_names == names
    worst, roll, acceleration = 0.0, [], None
    for k in range(steps):
        t = k * STEP
        q_d, v_d, a_d = sway(names, q0[7:], max(k - SETTLE_STEPS, 0) * STEP)
        q, v = plant.q(), plant.v()
        core.on_joint_states(names, q[7:], v[6:], [], now=t)
        core.on_odometry(q[:3], q[3:7], v[:3], v[3:6], now=t)
        if acceleration is not None:
            core.on_base_acceleration(acceleration[:3], acceleration[3:], now=t, stamp=t)
        core.on_desired(Trajectory.from_points(names, [(0.0, [], [], a_d * (k >= SETTLE_STEPS))]),
                        t, now=t)
        assert core.cycle(t, t)
        node = dict(zip(SOLO_FEET, core.torques.contacts.wrenches))
        plant.step(KP * (q_d - q[7:]) + KD * (v_d - v[6:]) + core.effort)
        acceleration = plant.base_acceleration()
        truth = plant.contact_wrenches()
        sim = {foot: truth.get(foot, np.zeros(6)) for foot in SOLO_FEET}
        if k >= SETTLE_STEPS:
            worst = max(worst, float(np.linalg.norm(world_force(model, q, node)
                                                    - world_force(model, q, sim))))
            roll.append(acceleration[3])
    return worst, float(np.sqrt(np.mean(np.square(roll))))


def test_the_cores_contact_wrenches_add_up_to_the_plants_with_the_filtered_acceleration(
        tmp_path):
    # The default low-pass: a still robot, the contact forces within 2 % of the weight
    # (measured: 0.09 N of 24.5 N over 1.3 s; the step's own acceleration would give 0.02 N).
    model, q_stand = standing('solo12')
    weight = float(np.linalg.norm(model.gravity_torques(q_stand)[:3]))  # m g on the base
    worst, roll = in_process_loop(tmp_path, None, 1500)
    print(f'filtered: worst |node - sim| {worst:.4f} N, roll acceleration rms {roll:.3g}')
    assert worst <= 0.02 * weight
    assert roll <= 1e-3  # rad/s^2: the sway is in the sagittal plane
    # Unfiltered (time constant 0), each torque carries the last acceleration, which those
    # torques reproduce: the standing robot shakes (measured: roll 160 rad/s^2 rms, forces
    # 7-14 N off).
    worst, roll = in_process_loop(tmp_path, 0.0, 600)
    print(f'unfiltered: worst |node - sim| {worst:.4f} N, roll acceleration rms {roll:.3g}')
    assert worst > 0.2 * weight
    assert roll > 10.0
