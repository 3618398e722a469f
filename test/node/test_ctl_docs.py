"""
Every ``rnea_ctl`` command of the docs runs as shown against the node (panda) over DDS.

The commands are read from the pages (bash blocks and inline code), not copied: a command
changed there is tested as changed, and a kind of command this test does not judge fails
``test_every_documented_command_is_judged``. ``rnea_ctl`` runs as ``python -m rnea_ros.ctl``
(the console script's ``main``), in a folder holding the ``trajectory.yaml`` of ``rnea_excite``;
the simulated robot's ``apply_wrench`` is this test's subscriber. Every ``ros2`` command of the
docs that drives a running node has its ``rnea_ctl`` twin next to it.
"""
from __future__ import annotations

from pathlib import Path
import re
import shlex
import signal

from geometry_msgs.msg import WrenchStamped
from harness.ctl_runner import finished, run_ctl, start_ctl
from harness.oracle import robot_path
import numpy as np
import pytest
from rcl_interfaces.srv import GetParameters
from rclpy.parameter import parameter_value_to_python
from rclpy.qos import QoSProfile, ReliabilityPolicy
from trajectory_msgs.msg import JointTrajectory
import yaml

from rnea_ros.ctl.names import APPLY_WRENCH_TOPIC, TRAJECTORY_TOPIC
from rnea_ros.excite.outputs import trajectory_message

pytestmark = pytest.mark.timeout(600)

DOCS = Path(__file__).resolve().parents[2] / 'docs'
STATES = {'configure': 'inactive', 'activate': 'active', 'deactivate': 'inactive',
          'cleanup': 'unconfigured'}
JUDGED = {'wait', 'lifecycle', 'param', 'trajectory', 'push', 'reset-collision', 'status',
          'paths'}
# A ros2 command that drives a running node, and how far [characters] its twin may be.
ROS2_DRIVING = re.compile(r'ros2 (param|service call|lifecycle|topic pub)')
TWIN_DISTANCE = 700


def documented_commands() -> list[str]:
    """Return the ``rnea_ctl`` commands of every page, in page order, each once."""
    commands = []
    for page in sorted(DOCS.rglob('*.md')):
        text = page.read_text()
        for block in re.findall(r'```bash\n(.*?)```', text, re.S):
            for line in block.replace('\\\n', ' ').splitlines():
                command = re.sub(r'\s+#.*$', '', line).strip()
                if command.startswith('rnea_ctl '):
                    commands.append(' '.join(command.split()))
        prose = re.sub(r'```.*?```', '', text, flags=re.S)
        commands += [' '.join(span.split()) for span in re.findall(r'`(rnea_ctl [^`]+)`', prose)]
    return list(dict.fromkeys(commands))


def _subcommand(words: list[str]) -> str:
    k = 1
    while words[k].startswith('--'):  # --timeout S
        k += 2
    return words[k]


def test_every_documented_command_is_judged():
    commands = documented_commands()
    assert {_subcommand(shlex.split(c)) for c in commands} == JUDGED, commands


def test_every_ros2_command_driving_the_node_has_its_twin_beside_it():
    for page in sorted(DOCS.rglob('*.md')):
        text = page.read_text()
        for match in ROS2_DRIVING.finditer(text):
            around = text[max(0, match.start() - TWIN_DISTANCE):match.end() + TWIN_DISTANCE]
            line = text.count('\n', 0, match.start()) + 1
            assert 'rnea_ctl' in around, f'{page.name}:{line}: {match.group(0)} without twin'


def _parameter(ros, name: str):
    response = ros.call(GetParameters, '/rnea/get_parameters', GetParameters.Request(
        names=[name]))
    return parameter_value_to_python(response.values[0]) if response.values else None


def _write_trajectory(folder: Path) -> dict:
    times = np.array([0.0, 1.0, 2.0])
    q = np.array([[0.0, 0.0], [0.2, -0.1], [0.0, 0.0]])
    message = trajectory_message(['panda_joint1', 'panda_joint2'], times, q, 0 * q, 0 * q)
    (folder / 'trajectory.yaml').write_text(yaml.safe_dump(message, sort_keys=False))
    return message


def test_documented_commands_run_against_the_node(ros, tmp_path):
    ros.start_node({'robot_description': robot_path('panda').read_text(), 'observer': True})
    written = _write_trajectory(tmp_path)
    trajectories = ros.collect(JointTrajectory, '/joint_trajectory_with_effort')
    # Every message of a push is kept until this process spins (it does not while rnea_ctl runs).
    pushes = ros.collect(WrenchStamped, '/' + APPLY_WRENCH_TOPIC,
                         QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
    assert TRAJECTORY_TOPIC == 'planned_trajectory'  # the node's input, that it answers on
    up = run_ctl(ros, ['--timeout', '180', 'wait'], tmp_path)  # the model loaded (busy machine)
    assert up.code == 0, up
    ros.matched(trajectories)  # the node's answers, sent once, are heard
    for command in documented_commands():
        words = shlex.split(command)
        kind = _subcommand(words)
        # Discovery on this loaded 2-core machine can take longer than the 10 s default.
        arguments = words[1:] if '--timeout' in words else ['--timeout', '60', *words[1:]]
        if kind == 'status' and '--follow' in words:
            _judge_follow(ros, arguments, tmp_path)
            continue
        start = len(trajectories.messages)
        done = run_ctl(ros, arguments, tmp_path)
        assert done.code == 0 and done.stderr == '', (command, done)
        lines = done.stdout.splitlines()
        if kind == 'wait':
            assert lines == ['/rnea: active']
        elif kind == 'lifecycle' and words[2] == 'get':
            assert lines == ['/rnea: active']
        elif kind == 'lifecycle':
            assert lines == [f'/rnea: {words[4]} -> {STATES[words[4]]}']
        elif kind == 'param':
            _judge_param(ros, words, lines)
        elif kind == 'trajectory':
            names = (written['joint_names'] if '--point' not in words
                     else [w.split('=')[0] for w in words[words.index('--point') + 2:]
                           if '=' in w][:2])
            points = 3 if '--point' not in words else words.count('--point')
            assert lines == [f'/planned_trajectory: sent {points} points of {len(names)} joints '
                             f'({4.0 if points == 2 else 2.0:g} s)']
            answer = ros.wait_for(trajectories, lambda m: list(m.joint_names) == names,
                                  timeout=30, start=start)
            assert len(answer.points) == points
            assert all(len(p.effort) == len(names) for p in answer.points)
        elif kind == 'push':
            assert lines == ['/apply_wrench: pushed panda_link7 for 0.5 s (25 messages)']
            ros.spin_until(lambda: len(pushes.messages) >= 25, 10, what='the pushes')
            assert len(pushes.messages) == 25  # one every 20 ms from 0 to 0.48 s
            assert {m.header.frame_id for m in pushes.messages} == {'panda_link7'}
            assert {(m.wrench.force.z, m.wrench.torque.x) for m in pushes.messages} == {
                (-20.0, 0.0)}
            pushes.clear()
        elif kind == 'reset-collision':
            assert lines == ['/rnea: no collision to clear']
        elif kind == 'status':
            assert lines[0].startswith('/rnea: feed-forward torques [active] ')
            assert ('  lifecycle: active' in lines) == ('--all' in words)
        else:  # paths
            found = dict(line.split(': ', 1) for line in lines if ': ' in line)
            assert Path(found['config']).is_file()
            assert Path(found['example urdf (panda)']) == robot_path('panda')


def _judge_param(ros, words: list[str], lines: list[str]) -> None:
    action, names = words[2], [w for w in words[4:] if not w.startswith('--')]
    if action == 'list':
        assert {'rate', 'observer_gain', 'payload.mass'} <= set(lines)
    elif action == 'describe':
        assert lines == [f'{name} (double): ' + lines[0].split('): ', 1)[1] for name in names]
    elif action == 'get':
        assert [line.split(': ')[0] for line in lines] == names
        for name, line in zip(names, lines):
            assert yaml.safe_load(line.split(': ', 1)[1]) == _parameter(ros, name)
    elif action == 'delete':
        assert lines == [f'/rnea: {name} deleted' for name in names]
        assert all(_parameter(ros, name) is None for name in names)
    else:  # set: the node holds each value
        for name, text in (w.split(':=', 1) for w in names):
            value = yaml.safe_load(text)
            assert _parameter(ros, name) == (pytest.approx(value, abs=1e-12)
                                             if not isinstance(value, str) else value)


def _judge_follow(ros, arguments: list[str], tmp_path: Path) -> None:
    """``--follow`` prints each report until Ctrl-C, then exits 130."""
    out = tmp_path / 'follow'
    process = start_ctl(arguments, tmp_path, out)
    stdout = out.with_suffix('.stdout')
    try:
        ros.spin_until(lambda: stdout.read_text().count('\n') >= 2, 60,
                       what='two reports of rnea_ctl status --follow')
    finally:
        process.send_signal(signal.SIGINT)
    done = finished(process, out)
    assert done.code == 130 and 'Traceback' not in done.stderr, done
    assert all(line.startswith('/rnea: feed-forward torques [active] ')
               for line in done.stdout.splitlines())
