"""
The node killed (SIGKILL) mid-motion while it is the whole torque of the simulated robot.

``rnea_sim`` with ``command_interface: effort`` (ros2_controllers' forward_command_controller
on effort: the command is the joint torque, the last one held however old), the panda without
a gap, lockstep with a short ``lockstep_timeout`` (after the kill nobody answers: each step
waits that long, then uses the previous command); the node on path b with ``control_law:
pd_feedforward`` (``law_gains``) along the demo trajectory, killed ``KILL_AFTER`` s into it.
Measured on what the sim recorded, from the state the node's last answer answered: every later
step applied that answer's torque exactly (the sim's documented hold), and the arm, its torque
frozen while gravity and its motion change, does not come to rest: it keeps moving
(docs/node/control_laws.md, The damped rest, gives the numbers and what a real robot needs: a
command timeout of its own).
"""
from __future__ import annotations

from harness.inprocess_law import law_gains
from harness.loop_harness import NS, run_loop, SHORT_SETTLE, stamp_ns
from harness.oracle import robot_path
import numpy as np
import pytest
from sensor_msgs.msg import JointState

from rnea_ros import RobotModel
from rnea_ros.demos.closed_loop import tracked_joints

pytestmark = pytest.mark.timeout(300)

DURATION = 3.0  # s of trajectory (sim time)
KILL_AFTER = 1.0  # s of sim time after the trajectory is taken
WATCH = 1.0  # s of sim time after the last answer: the motion measured
# Measured in two runs: panda_joint1 moved 3.58 and 3.53 rad (into its limit); 26 and 31 rad/s
# at the end, 39 and 111 rad/s at the top (panda_joint7 in the second).
MOVED_AT_LEAST = 0.1  # rad: the most-moving joint, within WATCH of the last answer
STILL_MOVING = 0.1  # rad/s: the fastest joint at WATCH after the last answer


def test_a_killed_nodes_last_torque_is_held_and_the_arm_does_not_come_to_rest(tmp_path):
    urdf = robot_path('panda').read_text()
    model = RobotModel.from_urdf_string(urdf)

    def kill(loop):
        states: list = []
        loop.subscribe(JointState, 'joint_states', states.append, False)
        loop.spin_until(lambda: states, 60.0, 'joint_states', ('sim', 'node'))
        start = stamp_ns(states[-1])
        loop.spin_until(lambda: stamp_ns(states[-1]) >= start + KILL_AFTER * NS, 120.0,
                        'the motion before the kill', ('sim', 'node'))
        node = loop.processes['node'].proc
        node.kill()
        node.wait()

    run = run_loop(tmp_path, urdf, 'effort', 'none', DURATION, during=kill,
                   node_params={'control_law': 'pd_feedforward', **law_gains(model, 'panda')},
                   sim_params={'command_interface': 'effort', 'lockstep_timeout': 0.005},
                   settle_time=SHORT_SETTLE)
    assert run.exit_codes == {'sim': 0, 'node': -9}, run.logs
    step = NS // 1000
    answers = sorted((stamp_ns(msg), msg) for _, msg in run.topics['joint_torques'])
    last, held = answers[-1][0], np.asarray(answers[-1][1].effort)
    # The truth of stamp s + 1 step is the torque applied from the state of stamp s.
    applied = [(stamp_ns(msg) - step, np.asarray(msg.effort))
               for _, msg in run.topics['truth/joint_torques']
               if last < stamp_ns(msg) - step <= last + WATCH * NS]
    assert len(applied) >= 0.99 * WATCH * 1000, len(applied)
    for stamp, effort in applied:
        np.testing.assert_allclose(effort, held, rtol=0.0, atol=1e-9, err_msg=str(stamp))
    states = [msg for _, msg in run.topics['joint_states']
              if last <= stamp_ns(msg) <= last + WATCH * NS]
    names = list(states[0].name)
    arm = [names.index(joint) for joint in tracked_joints(model)]  # revolute: in rad
    names = [names[k] for k in arm]
    q = np.array([np.asarray(msg.position)[arm] for msg in states])
    v = np.array([np.asarray(msg.velocity)[arm] for msg in states])
    assert (stamp_ns(states[-1]) - last) / NS >= 0.99 * WATCH
    moved_per_joint = np.max(np.abs(q - q[0]), axis=0)
    moved = float(moved_per_joint.max())
    speed = np.max(np.abs(v), axis=1)
    print(f'after the last answer: {len(applied)} steps held its torque; within {WATCH:g} s '
          f'{names[int(np.argmax(moved_per_joint))]} moved {moved:.3f} rad; speed '
          f'{speed[0]:.3f} rad/s at the kill, {speed[-1]:.3f} rad/s at the end, top '
          f'{speed.max():.3f} rad/s ({names[int(np.argmax(np.max(np.abs(v), axis=0)))]})')
    assert moved >= MOVED_AT_LEAST, moved
    assert speed[-1] >= STILL_MOVING, speed[-1]
