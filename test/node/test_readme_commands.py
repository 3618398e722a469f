"""
Every command of the first block of the node guide's front page runs as shown, with ur10.

The block is read from docs/node/index.md, not copied: a command changed there is tested as
changed.
``ros2 launch`` lines are checked statically (launch_ros has no wheel here: the file exists and
declares each argument given); ``ros2 run rnea_ros rnea_node`` runs the ``rnea_node`` console
script with the same arguments; the other lines run as they are, in a directory holding
``robot.urdf`` and ``config/``, over real DDS.
"""
from __future__ import annotations

import os
from pathlib import Path
import re
import shlex
import shutil
import subprocess
import sys

from diagnostic_msgs.msg import DiagnosticArray
from harness.launch_file import launch_arguments
from harness.oracle import ROBOTS_DIR
from harness.ros_harness import BEST_EFFORT
import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

pytestmark = pytest.mark.timeout(400)

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
UR10 = ROBOTS_DIR / 'ur_description' / 'urdf' / 'ur10_robot.urdf'
UR10_JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint',
               'wrist_2_joint', 'wrist_3_joint']


def readme_node_commands() -> list[str]:
    """Return the commands of the first bash block of the node's page, lines joined."""
    section = (ROOT / 'docs' / 'node' / 'index.md').read_text()
    block = re.search(r'```bash\n(.*?)```', section, re.S).group(1)
    joined = block.replace('\\\n', ' ')
    return [line.strip() for line in joined.splitlines()
            if line.strip() and not line.lstrip().startswith('#')]


def test_the_readme_block_is_what_this_test_covers():
    kinds = [command.split()[0] + (' ' + command.split()[1] if command.startswith('ros2')
                                   else '') for command in readme_node_commands()]
    assert kinds == ['ros2 launch'] * 4 + ['python3', 'ros2 run', '.venv/bin/rnea_node',
                                           '.venv/bin/rnea_node', '.venv/bin/python']
    assert not any('robot_description:=' in command for command in readme_node_commands())
    assert ': ' in UR10.read_text()  # the reason `-p robot_description:=...` fails


def test_readme_launch_commands_name_declared_arguments():
    for command in readme_node_commands():
        if not command.startswith('ros2 launch'):
            continue
        words = shlex.split(command.replace('[', '').replace(']', ''))
        package, launch_file = words[2:4]
        assert package == 'rnea_ros'
        declared = set(launch_arguments(ROOT / 'launch' / launch_file))
        given = {word.split(':=')[0] for word in words[4:]}
        assert given <= declared, (command, given - declared)


def test_readme_node_commands_run_with_ur10(ros, tmp_path):
    shutil.copy(UR10, tmp_path / 'robot.urdf')
    shutil.copytree(ROOT / 'config', tmp_path / 'config')
    env = dict(os.environ, PATH=f'{BIN}{os.pathsep}{os.environ["PATH"]}')
    joint_states = ros.publisher(JointState, '/joint_states', BEST_EFFORT)
    diagnostics = ros.collect(DiagnosticArray, '/diagnostics')
    commands_topic = ros.collect(Float64MultiArray, '/effort_controller/commands')

    def tick():
        joint_states.publish(JointState(name=UR10_JOINTS, position=[0.1] * 6,
                                        velocity=[0.0] * 6))
    started = 0
    for command in readme_node_commands():
        if command.startswith('ros2 launch'):
            continue
        if command.startswith('python3 -c'):  # writes robot_description.yaml
            subprocess.run(['bash', '-c', command], cwd=tmp_path, env=env, check=True,
                           timeout=60)
            continue
        words = shlex.split(command)
        if words[:3] == ['ros2', 'run', 'rnea_ros']:
            words = [str(BIN / words[3])] + words[4:]
        elif words[0] == '.venv/bin/python':
            words[0] = sys.executable
        else:
            words[0] = str(BIN / Path(words[0]).name)
        diagnostics.clear()
        process = ros.start_node({}, command=words, cwd=tmp_path)
        started += 1
        ros.wait_for(diagnostics, lambda msg: any(
            s.hardware_id == 'ur10' and s.values for s in msg.status), timeout=120, tick=tick)
        if '-r feedforward_effort:=/effort_controller/commands' in command:
            command_msg = ros.wait_for(commands_topic, timeout=60, tick=tick)
            assert len(command_msg.data) == 6
        code = process.stop(timeout=30)
        assert code == 0, process.output()
        ros.processes.remove(process)  # ended: the harness watches the running ones
    assert started == 4
