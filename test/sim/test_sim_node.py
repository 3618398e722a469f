"""
``rnea_sim`` as users start it: bad input at start, and the robot over real DDS.

Each case runs the real ``python -m rnea_ros.sim``; the ones that step it talk to it from
rclpy on a domain of the test's own (``ros`` fixture).
"""
from __future__ import annotations

import os
from pathlib import Path
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray
from harness.oracle import robot_path
from harness.ros_harness import BEST_EFFORT, RELIABLE
from harness.sim_cases import BAD_INERTIA, MUJOCO_REFUSES, run_sim
import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = pytest.mark.timeout(300)

PANDA = str(robot_path('panda'))
PANDA_JOINTS = [f'panda_joint{k}' for k in range(1, 8)] + ['panda_finger_joint1']


def _gap(tmp_path: Path, text: str) -> str:
    path = tmp_path / 'gap.yaml'
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize('make_args, line', [
    (lambda tmp: ['--urdf', _gap(tmp, BAD_INERTIA)],
     "--urdf '{gap}': " + MUJOCO_REFUSES),
    (lambda tmp: ['--urdf', _gap(tmp, '')],
     "--urdf '{gap}': malformed XML: no element found: line 1, column 0"),
    (lambda tmp: ['--urdf', _gap(tmp, '<robot name="r"><link name="a"/></robot>')],
     "--urdf '{gap}': the robot has no actuated joint: nothing to simulate"),
    (lambda tmp: ['--urdf', str(tmp)], "cannot read --urdf '{tmp}': Is a directory"),
    (lambda tmp: ['--urdf', PANDA, '--gap', _gap(tmp, 'joints: {armature: 0.1, frictin: 1}')],
     "gap '{gap}': unknown key 'frictin' in joints; expected one of armature, coulomb, "
     'viscous, or a joint name with a mapping of them'),
    (lambda tmp: ['--urdf', PANDA, '--gap', _gap(tmp, 'payload: {link: tip, mass: -1.0}')],
     "gap '{gap}': payload.mass is -1.0: expected a number > 0"),
    (lambda tmp: ['--urdf', PANDA, '--gap', _gap(tmp, 'joint_states: {jitter: 10}')],
     "gap '{gap}': joint_states.jitter is 10: expected a number >= 0 and <= 0.01 [s]"),
    (lambda tmp: ['--urdf', PANDA, '--gap', _gap(tmp, 'links: {panda_link9: {mass_scale: 2}}')],
     "gap '{gap}': links: no link 'panda_link9' in the URDF; links: "),
    (lambda tmp: ['--urdf', PANDA, '--ros-args', '-p', 'clock:=fast'],
     "parameter 'clock' is 'fast': expected one of realtime, lockstep"),
    (lambda tmp: ['--urdf', PANDA, '--ros-args', '-p', 'thread_priority:=100'],
     "parameter 'thread_priority' is 100: expected an integer from 0 to 99"),
    (lambda tmp: ['--urdf', PANDA, '--record', str(tmp / 'bag'), '--ros-args', '-p',
                  'record_split:=0.0'],
     "parameter 'record_split' is 0.0: expected a number > 0 and <= 600"),
    (lambda tmp: ['--urdf', PANDA, '--ros-args', '-p', 'command_interface:=position'],
     "parameter 'command_interface' is 'position': expected one of drive_pd, effort, "
     'trajectory_effort'),
    (lambda tmp: ['--urdf', PANDA, '--ros-args', '-p', 'floating_base:=true', '-p',
                  'gravity_compensated_by_robot:=true'],
     "parameter 'gravity_compensated_by_robot' is True: expected false with floating_base (the "
     'robots that compensate gravity have a fixed base)'),
    (lambda tmp: ['--urdf', PANDA, '--ros-args', '-p', 'substeps:=0'],
     "parameter 'substeps' is 0: expected an integer from 1 to 100"),
    (lambda tmp: ['--urdf', PANDA, '--ros-args', '-p', 'kp:=[1.0, 2.0]'],
     "parameter 'kp' has 2 values: expected 1 or 8 (one per actuated joint)"),
    (lambda tmp: ['--urdf', PANDA, '--ros-args', '-p', "joints:=['panda_joint0']"],
     "parameter 'joints' names 'panda_joint0': expected actuated joints of the URDF: "
     + ', '.join(PANDA_JOINTS)),
    (lambda tmp: [], "parameter 'robot_description' is empty: give the URDF text or "
                     '--urdf FILE'),
    (lambda tmp: ['--urdf', PANDA, '--ros-args', '-p',
                  'initial_positions:=[0.0, 0.0, 0.0, 0.5, 0.0, 1.5, 0.0, 0.02]'],
     "parameter 'initial_positions' puts panda_joint4 at 0.5: expected a position within "
     '[-3.0718, -0.0698]'),
    (lambda tmp: ['--urdf', PANDA, '--record', str(tmp)],
     "parameter 'record' is '{tmp}': it exists; expected a new directory"),
    # Under a regular file: no directory can be made there (root is refused this too).
    (lambda tmp: ['--urdf', PANDA, '--record', str((tmp / 'file').write_text('') or
                                                   tmp / 'file' / 'bag')],
     "parameter 'record' is '{tmp}/file/bag': cannot create it (Not a directory); expected a "
     'new directory in a writable place'),
])
def test_bad_input_at_start_is_one_line_and_exit_2(tmp_path, make_args, line):
    result = run_sim(*make_args(tmp_path))
    assert result.returncode == 2, result.stderr
    expected = 'rnea_sim: ' + line.replace('{gap}', str(tmp_path / 'gap.yaml')).replace(
        '{tmp}', str(tmp_path))
    assert result.stderr.startswith(expected), result.stderr
    assert result.stderr.count('\n') == 1
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ['file'], ['gap.yaml'])


def _status(message: DiagnosticArray) -> dict:
    return {value.key: value.value for value in message.status[0].values}


def _sim_params(**extra) -> dict:
    params = {'gap': 'none', 'gravity': [0.0, 0.0, 0.0], 'kp': [0.0], 'kd': [0.0],
              'initial_positions': [0.0, 0.0, 0.0, -1.5, 0.0, 1.5, 0.0, 0.02],
              'command_timeout': 0.0}
    params.update(extra)
    return params


def _start(ros, params: dict, description_parameter: bool = False,
           env: dict[str, str] | None = None):
    """Start the panda sim; its URDF from --urdf, or the robot_description parameter."""
    source = ['--urdf', PANDA]
    if description_parameter:
        params = dict(params, robot_description=Path(PANDA).read_text())
        source = []
    return ros.start_node(params, command=[sys.executable, '-m', 'rnea_ros.sim', *source,
                                           '--ros-args', '--params-file',
                                           str(ros.tmp_path / 'rnea0_params.yaml')], env=env)


def test_joint_states_out_and_effort_commands_move_the_joint(ros):
    """No gravity, joint 1 free, the others held: a torque on joint 1 turns it; bad ones drop."""
    states = ros.collect(JointState, 'joint_states', BEST_EFFORT)
    diagnostics = ros.collect(DiagnosticArray, '/diagnostics')
    commands = ros.publisher(Float64MultiArray, 'effort_commands')
    _start(ros, _sim_params(kp=[0.0] + [100.0] * 7, kd=[0.0] + [10.0] * 7))
    first = ros.wait_for(states, timeout=60)
    assert list(first.name) == PANDA_JOINTS
    assert first.position[3] == pytest.approx(-1.5) and first.position[7] == pytest.approx(0.02)
    assert all(e == 0.0 for e in first.effort)  # gap none: the applied torque, exactly
    ros.spin_until(lambda: commands.get_subscription_count() > 0, timeout=30)

    # Wrong length, non-finite: dropped and counted (one at a time: the input keeps the last).
    for bad, reason in (([1.0] * 7, 'wrong_length'), ([float('nan')] + [0.0] * 7, 'non_finite')):
        commands.publish(Float64MultiArray(data=bad))
        ros.wait_for(diagnostics, lambda m: _status(m).get(
            f'rejected effort_commands ({reason})') == '1', timeout=30)
    assert ros.wait_for(states).effort[0] == 0.0  # neither was applied

    torque = [2.0] + [0.0] * 7
    commands.publish(Float64MultiArray(data=torque))
    moved = ros.wait_for(states, lambda m: m.position[0] > 0.05, timeout=30)
    assert moved.effort[0] == pytest.approx(2.0)
    others = max(abs(p - q) for p, q in zip(moved.position[1:], first.position[1:]))
    assert others < 0.5 * (moved.position[0] - first.position[0])  # held, up to the coupling


def test_the_effort_interface_applies_the_command_alone(ros):
    """``command_interface: effort``: the torque is the command exactly, no PD however far off."""
    states = ros.collect(JointState, 'joint_states', BEST_EFFORT)
    commands = ros.publisher(Float64MultiArray, 'effort_commands')
    _start(ros, _sim_params(command_interface='effort', kp=[100.0], kd=[10.0]))
    first = ros.wait_for(states, timeout=60)
    assert all(e == 0.0 for e in first.effort)  # no command yet: no torque
    ros.spin_until(lambda: commands.get_subscription_count() > 0, timeout=30)
    commands.publish(Float64MultiArray(data=[2.0] + [0.0] * 7))
    moved = ros.wait_for(states, lambda m: m.position[0] > 0.05, timeout=30)
    # A PD of 100 N m/rad would push back by 5 N m here, and hold the other joints.
    assert list(moved.effort) == [2.0] + [0.0] * 7


def test_lockstep_waits_for_each_answer_and_takes_its_effort_as_the_command(ros):
    """
    Let exactly one step through per joint_torques stamped like a state.

    With effort_commands wired (a publisher exists), the answer's effort is that step's command.
    """
    states = ros.collect(JointState, 'joint_states', BEST_EFFORT)
    answers = ros.publisher(JointState, 'joint_torques')
    ros.publisher(Float64MultiArray, 'effort_commands')  # wired, never publishing
    _start(ros, _sim_params(clock='lockstep', lockstep_timeout=30.0),
           description_parameter=True)
    ros.spin_until(lambda: answers.get_subscription_count() > 0, timeout=60)
    stamps, efforts = [], []
    for k in range(5):
        state = ros.wait_for(states, lambda m: not stamps or m.header.stamp != stamps[-1],
                             timeout=60)
        stamps.append(state.header.stamp)
        efforts.append(state.effort[0])
        answers.publish(JointState(header=state.header, name=PANDA_JOINTS[::-1],
                                   effort=[0.0] * 7 + [1.0 + k]))  # by name: joint1 last
    assert efforts == [0.0, 1.0, 2.0, 3.0, 4.0]  # gap none: the applied torque, exactly
    nanoseconds = [s.sec * 10**9 + s.nanosec for s in stamps]
    assert [b - a for a, b in zip(nanoseconds, nanoseconds[1:])] == [1_000_000] * 4


def test_a_trajectory_outside_the_limits_is_dropped_and_counted(ros):
    diagnostics = ros.collect(DiagnosticArray, '/diagnostics')
    states = ros.collect(JointState, 'joint_states', BEST_EFFORT)
    trajectories = ros.publisher(JointTrajectory, 'joint_trajectory', RELIABLE)
    process = _start(ros, _sim_params(kp=[100.0], kd=[10.0]))
    ros.wait_for(states, timeout=60)
    ros.spin_until(lambda: trajectories.get_subscription_count() > 0, timeout=30)
    point = JointTrajectoryPoint(positions=[0.0, 0.0, 0.0, 0.5, 0.0, 1.5, 0.0, 0.02],
                                 time_from_start=Duration(sec=1))
    trajectories.publish(JointTrajectory(joint_names=PANDA_JOINTS, points=[point]))
    ros.wait_for(diagnostics, lambda m: _status(m).get(
        'rejected joint_trajectory (outside_limits)') == '1', timeout=30)
    ros.spin_until(lambda: 'joint_trajectory dropped: point 0 puts panda_joint4 at 0.5, '
                   'beyond its limit -0.0698' in process.output(), timeout=10)
    state = ros.wait_for(states)
    assert state.position[3] == pytest.approx(-1.5, abs=1e-3)  # still held where it was
    # A joint the robot lacks: warned at once (another reason's warning does not hide it).
    trajectories.publish(JointTrajectory(joint_names=['panda_joint9'], points=[
        JointTrajectoryPoint(positions=[0.0], time_from_start=Duration(sec=1))]))
    ros.wait_for(diagnostics, lambda m: _status(m).get(
        'rejected joint_trajectory (unknown_joint)') == '1', timeout=30)
    ros.spin_until(lambda: "joint_trajectory dropped: unknown joint 'panda_joint9'; expected "
                   'names of ' + ', '.join(PANDA_JOINTS) in process.output(), timeout=10)

    good = JointTrajectoryPoint(positions=[0.3, 0.0, 0.0, -1.5, 0.0, 1.5, 0.0, 0.02],
                                time_from_start=Duration(sec=0, nanosec=300_000_000))
    trajectories.publish(JointTrajectory(joint_names=PANDA_JOINTS, points=[good]))
    assert ros.wait_for(states, lambda m: abs(m.position[0] - 0.3) < 0.01, timeout=30)
    assert ('joint_trajectory accepted: 1 point over 0.3 s, joints ' + ', '.join(PANDA_JOINTS)
            in process.output())
    # The diagnostics report how well the reference was tracked: it moved by 0.3 rad.
    report = _status(ros.wait_for(diagnostics, timeout=30))
    assert 1e-4 < float(report['tracking error max [rad]']) < 0.3


def test_a_stamped_trajectory_starts_at_its_stamp_and_a_copy_does_not_restart_it(ros):
    """
    A trajectory stamped (sim clock) starts at its stamp, as joint_trajectory_controller does.

    The same message again mid-motion leaves the reference where it was going: no restart.
    """
    desired = ros.collect(JointTrajectory, 'desired_accelerations', BEST_EFFORT)
    trajectories = ros.publisher(JointTrajectory, 'joint_trajectory', RELIABLE)
    _start(ros, _sim_params(kp=[100.0], kd=[10.0]))
    now = ros.wait_for(desired, timeout=60)
    ros.spin_until(lambda: trajectories.get_subscription_count() > 0, timeout=30)
    start = now.header.stamp.sec * 10**9 + now.header.stamp.nanosec + 300_000_000
    held = [0.0, 0.0, 0.0, -1.5, 0.0, 1.5, 0.0, 0.02]
    ramp = JointTrajectory(joint_names=PANDA_JOINTS, points=[
        JointTrajectoryPoint(positions=held, time_from_start=Duration(sec=0)),
        JointTrajectoryPoint(positions=[0.3] + held[1:], time_from_start=Duration(sec=1))])
    ramp.header.stamp.sec, ramp.header.stamp.nanosec = divmod(start, 10**9)
    trajectories.publish(ramp)
    ros.wait_for(desired, lambda m: m.points[0].positions[0] > 0.1, timeout=30, start=0)
    trajectories.publish(ramp)  # mid-motion: the same start, so the same reference
    ros.wait_for(desired, lambda m: m.points[0].positions[0] == 0.3, timeout=30, start=0)

    def expected(msg):  # the ramp's linear interpolation at the reference's stamp
        t = (msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec - start) * 1e-9
        return 0.3 * min(max(t, 0.0), 1.0)
    error = max(abs(m.points[0].positions[0] - expected(m)) for m in desired.messages)
    assert error < 1e-9, error
    assert any(m.points[0].positions[0] == 0.0 for m in desired.messages)  # held before it


def test_record_writes_a_bag_the_bag_tools_read(tmp_path):
    """``--record`` with ``duration``: the run ends by itself and its bag reads back."""
    from rosbags.highlevel import AnyReader
    bag = tmp_path / 'run'
    result = run_sim('--urdf', PANDA, '--gap', 'default', '--record', str(bag), '--ros-args',
                     '-r', '__ns:=/arm_1', '-p', 'duration:=0.2', '-p', 'clock:=lockstep', '-p',
                     'lockstep_timeout:=0.001')
    assert result.returncode == 0, result.stderr
    with AnyReader([bag]) as reader:
        counts = {c.topic: c.msgcount for c in reader.connections}
        states = [reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages()
                  if c.topic == '/arm_1/joint_states']
    # fully qualified in the node's namespace, as ros2 bag record writes them
    assert counts['/arm_1/desired_accelerations'] == counts['/arm_1/truth/joint_torques'] == 200
    assert 190 <= counts['/arm_1/joint_states'] <= 200  # the default gap drops one in a thousand
    assert list(states[0].name) == PANDA_JOINTS
    stamps = [s.header.stamp.sec * 10**9 + s.header.stamp.nanosec for s in states]
    assert all(b > a for a, b in zip(stamps, stamps[1:]))
    assert 'missed answers 200' in result.stderr  # nothing answered in lockstep: all counted


def test_a_recording_says_in_its_metadata_and_at_exit_that_the_arm_hit_a_limit(tmp_path):
    """No gains, no answers: the arm falls onto its limits; the bag and the exit say which."""
    import json
    import yaml
    bag = tmp_path / 'run'
    result = run_sim('--urdf', PANDA, '--gap', 'default', '--record', str(bag), '--ros-args',
                     '-p', 'duration:=0.5', '-p', 'clock:=lockstep', '-p',
                     'lockstep_timeout:=0.001', '-p', 'kp:=[0.0]', '-p', 'kd:=[0.0]')
    assert result.returncode == 0, result.stderr
    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    report = json.loads(info['custom_data']['rnea_sim'])
    assert report['clock'] == 'lockstep' and report['steps'] == 500
    assert report['late_steps'] == 0 and report['saturation'] == {}
    # falling, joint 6 hits its limit; joint 4 (started at its limit) and the fingers rest on
    # theirs, sunk by less than the margin
    contacts = report['limit_contacts']
    assert 'panda_joint6' in contacts
    assert 'panda_joint4' not in contacts and 'panda_finger_joint1' not in contacts
    warning = [line for line in result.stderr.splitlines()
               if line.startswith(f"rnea_sim: warning: the recording '{bag}': ")]
    assert len(warning) == 1, result.stderr
    for joint, contact in contacts.items():
        assert contact['steps'] > 0 and contact['beyond'] > 1e-3
        assert (f'{joint} beyond its joint limit by up to {contact["beyond"]:.4g} in '
                f'{contact["steps"]} steps') in warning[0]
    assert warning[0].endswith('to identify from, record in lockstep or on a quiet machine, '
                               'away from the joint limits)')


def test_a_real_time_recording_writes_its_late_steps_and_says_so_when_there_were(tmp_path):
    """How many steps come late depends on the machine: the bag and the exit line agree."""
    import json
    import yaml
    bag = tmp_path / 'run'
    result = run_sim('--urdf', PANDA, '--gap', 'none', '--record', str(bag), '--ros-args',
                     '-p', 'duration:=0.3')
    assert result.returncode == 0, result.stderr
    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    report = json.loads(info['custom_data']['rnea_sim'])
    assert report['clock'] == 'realtime' and report['steps'] == 300
    assert report['late_share'] == pytest.approx(report['late_steps'] / 300, abs=1e-6)
    warning = [line for line in result.stderr.splitlines()
               if line.startswith(f"rnea_sim: warning: the recording '{bag}': ")]
    late = f'{report["late_steps"]} of 300 steps late'
    assert [late in line for line in warning] == ([True] if report['late_steps'] else []), \
        result.stderr


def _listed(bag: Path) -> list[str]:
    """Return the splits ``bag/metadata.yaml`` lists (none before it exists)."""
    import yaml
    try:
        info = yaml.safe_load((bag / 'metadata.yaml').read_text())
    except FileNotFoundError:
        return []
    return info['rosbag2_bagfile_information']['relative_file_paths']


def _bag_stamps(bag: Path) -> list[int]:
    """Return the joint_states header stamps of ``bag`` as rnea_bag reads them [ns]."""
    from rnea_ros.dynamics.model import RobotModel
    from rnea_ros.recording.joint_states import load_joint_states
    urdf = Path(PANDA).read_text()
    series = load_joint_states(bag, RobotModel.from_urdf_string(urdf), urdf)
    return series.times_ns.tolist()


LISTENER = """
import os, sys
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from rnea_ros.demos.process import RclpySide
domain, tally = int(sys.argv[1]), sys.argv[2]
side = RclpySide(domain, 'rnea_listener')
heard = [0, 0]
def hear(m):
    heard[0] += 1
    heard[1] = max(heard[1], m.header.stamp.sec * 10**9 + m.header.stamp.nanosec)
side.node.create_subscription(JointState, 'joint_states', hear,
                              QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
while True:
    side.executor.spin_once(timeout_sec=0.05)
    with open(tally + '.new', 'w') as f:
        f.write(f'{heard[0]} {heard[1]}')
    os.replace(tally + '.new', tally)
"""


def test_a_killed_recording_keeps_every_split_written(ros):
    """
    SIGKILL mid-run: the bag reads back with every step up to the splits not yet written.

    The sim is frozen (SIGSTOP) once its bag lists a third split, so that what it published
    and what its bag holds stand still while the states in flight are heard (a loaded test
    process hears them late), then killed. Lost: the split being gathered (up to a tenth of a
    split past its end, the hold) and, on a loaded machine, the one handed to the writer and
    not written yet (at most one waits): never more than 2.1 splits.

    The sim and the process that hears its states talk over UDP only
    (``FASTDDS_BUILTIN_TRANSPORTS``): a peer frozen and killed in the middle of a write into a
    reader's Fast DDS shared-memory segments is where that transport has crashed its readers
    (eProsima/Fast-DDS#6501). The listener is a child process (``LISTENER``, its tally in a
    file) that is SIGKILLed in turn, never destroying its subscription: a pytest worker
    crashed in ``destroy_node`` of a subscription matched with the killed sim (rclpy/Fast DDS,
    not this package), which then took the rest of the worker's tests with it.
    """
    import signal

    from rnea_ros.demos.process import RosProcess
    split = 0.5
    bag = ros.tmp_path / 'run'
    tally = ros.tmp_path / 'heard.txt'
    udp = {'FASTDDS_BUILTIN_TRANSPORTS': 'UDPv4'}
    listener = RosProcess([sys.executable, '-c', LISTENER, str(ros.domain), str(tally)],
                          ros.domain, ros.tmp_path / 'listener.txt', 'listener', env=udp)
    try:
        _start(ros, _sim_params(record=str(bag), record_split=split, thread_priority=0),
               env=udp)

        def tallied() -> tuple[int, int]:  # states heard, the newest stamp [ns]
            assert listener.running(), listener.output()
            try:
                count, last = tally.read_text().split()
            except FileNotFoundError:
                return 0, 0
            return int(count), int(last)
        # The event awaited: the bag's metadata lists a third complete split.
        ros.spin_until(lambda: len(_listed(bag)) >= 3 and tallied()[0] > 0, timeout=120,
                       what='a third split, and states heard')
        os.kill(ros.process.proc.pid, signal.SIGSTOP)
        heard = [tallied()[0], time.monotonic()]

        def quiet_for(seconds: float) -> bool:  # nothing more can come: the sim is frozen
            if tallied()[0] != heard[0]:
                heard[:] = [tallied()[0], time.monotonic()]
            return time.monotonic() - heard[1] >= seconds
        ros.spin_until(lambda: quiet_for(0.5), timeout=30, what='the states in flight')
        last = tallied()[1]
        assert ros.process.stop(signum=signal.SIGKILL) == -signal.SIGKILL
    finally:
        stopped = listener.stop(signum=signal.SIGKILL)
    assert stopped == -signal.SIGKILL, listener.output()  # it ran to the end
    stamps = _bag_stamps(bag)
    step = 1_000_000
    assert stamps == list(range(stamps[0], stamps[-1] + step, step))  # every step, gap none
    assert len(stamps) >= round(3 * split * 1000)  # three splits of 1 kHz states
    lost = last - stamps[-1]
    assert 0 < lost <= 2.1 * split * 1e9, lost


INJECT_FULL_DISK = """
import errno, os, sys
from rnea_ros.recording.bagio.splitwrite import SplitBagWriter
from rnea_ros.sim.main import main
write_split = SplitBagWriter.write_split
def full_at_the_third(self, messages):
    if len(self.files) == 2:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return write_split(self, messages)
SplitBagWriter.write_split = full_at_the_third
sys.exit(main())
"""


def test_a_full_disk_mid_run_stops_the_sim_with_one_line_and_a_readable_bag(tmp_path):
    """The third split cannot be written (injected ENOSPC): exit 1 before the duration ends."""
    bag = tmp_path / 'run'
    result = subprocess.run(
        [sys.executable, '-c', INJECT_FULL_DISK, '--urdf', PANDA, '--gap', 'none', '--record',
         str(bag), '--ros-args', '-p', 'duration:=30.0', '-p', 'clock:=lockstep', '-p',
         'lockstep_timeout:=0.0001', '-p', 'record_split:=0.05'],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith('rnea_sim: ')]
    assert lines == [f"rnea_sim: cannot write {str(bag / 'run_2')!r} of the recording (No "
                     f'space left on device); the recording stops with the 2 splits written '
                     f'in {str(bag)!r}'], result.stderr
    assert 'Traceback' not in result.stderr
    steps = int(next(line for line in result.stderr.splitlines() if 'done: ' in line)
                .split('steps ')[1].split(',')[0])
    assert steps < 5000  # stopped at the failure, not after the 30 s of the duration
    stamps = _bag_stamps(bag)
    assert _listed(bag) == ['run_0.mcap', 'run_1.mcap'] and len(stamps) == 100


INJECT_SLOW_CALLBACK = """
import sys, time
from rnea_ros.sim.main import main
from rnea_ros.sim.node import SimNode
init = SimNode.__init__
def slow():
    print('slow callback', file=sys.stderr, flush=True)
    time.sleep(4.0)
    print('slow callback ended', file=sys.stderr, flush=True)
def with_a_slow_timer(self, *args, **kwargs):  # the executor busy 4 s of every 4.05 s
    init(self, *args, **kwargs)
    self.slow = self.create_timer(0.05, slow)
SimNode.__init__ = with_a_slow_timer
sys.exit(main())
"""


def test_a_sim_stopped_while_a_callback_runs_destroys_its_node_after_it(ros):
    """SIGINT while the executor runs a 4 s callback: the node outlives it, exit 0, no trace."""
    import signal
    process = ros.start_node(_sim_params(duration=0.0), command=[
        sys.executable, '-c', INJECT_SLOW_CALLBACK, '--urdf', PANDA, '--ros-args',
        '--params-file', str(ros.tmp_path / 'rnea0_params.yaml')])
    process.wait_for_output('slow callback', timeout=120)  # the 4 s have begun
    assert process.stop(timeout=60, signum=signal.SIGINT) == 0, process.output()
    output = process.output()
    assert 'Traceback' not in output and 'Exception' not in output, output
    # The process waited for the callback to end (before, it left 3 s after SIGINT, destroying
    # the node under the executor's thread: its next use raised InvalidHandle on a busy machine).
    assert 'slow callback ended' in output, output


def test_a_floating_base_publishes_odometry_and_its_contact_truth(ros):
    """solo12 dropped on the floor: odometry in odom, the feet's contact wrenches carry it."""
    from geometry_msgs.msg import AccelStamped, WrenchStamped
    from nav_msgs.msg import Odometry
    feet = ('FL_FOOT', 'FR_FOOT', 'HL_FOOT', 'HR_FOOT')
    gap = ros.tmp_path / 'feet.yaml'
    gap.write_text('contact_spheres:\n' + ''.join(f'  {f}: {{radius: 0.015}}\n' for f in feet))
    odometry = ros.collect(Odometry, 'odometry', BEST_EFFORT)
    accelerations = ros.collect(AccelStamped, 'base_acceleration', BEST_EFFORT)
    contacts = {f: ros.collect(WrenchStamped, f'truth/contact_wrenches/{f}') for f in feet}
    ros.start_node({'floating_base': True, 'gap': str(gap), 'clock': 'realtime',
                    'kp': [3.0], 'kd': [0.1],
                    'initial_base_pose': [0.0, 0.0, 0.4, 0.0, 0.0, 0.0, 1.0]},
                   command=[sys.executable, '-m', 'rnea_ros.sim', '--urdf',
                            str(robot_path('solo12')), '--ros-args', '--params-file',
                            str(ros.tmp_path / 'rnea0_params.yaml')])
    first = ros.wait_for(odometry, timeout=60)
    assert (first.header.frame_id, first.child_frame_id) == ('odom', 'base_link')
    assert ros.wait_for(accelerations).header.frame_id == 'base_link'
    # After a second of sim time the robot rests on its feet: they carry its weight.
    settled = ros.wait_for(odometry, lambda m: (m.header.stamp.sec * 10**9 + m.header.stamp.nanosec
                                                - first.header.stamp.sec * 10**9
                                                - first.header.stamp.nanosec) > 1.5e9,
                           timeout=120)
    assert settled.pose.pose.position.z < 0.35
    stamp = settled.header.stamp
    forces = [ros.wait_for(contacts[f], lambda m: m.header.stamp.sec > stamp.sec or (
        m.header.stamp.sec == stamp.sec and m.header.stamp.nanosec >= stamp.nanosec),
        timeout=30, start=0).wrench.force.z for f in feet]
    masses = ET.parse(robot_path('solo12')).getroot().iter('mass')
    weight = 9.81 * sum(float(mass.get('value')) for mass in masses)
    assert sum(forces) == pytest.approx(weight, rel=0.1)


def test_apply_wrench_pushes_a_link_and_the_truth_says_so(ros):
    from geometry_msgs.msg import WrenchStamped
    states = ros.collect(JointState, 'joint_states', BEST_EFFORT)
    applied = ros.collect(WrenchStamped, 'truth/external_wrench')
    diagnostics = ros.collect(DiagnosticArray, '/diagnostics')
    pushes = ros.publisher(WrenchStamped, 'apply_wrench')
    _start(ros, _sim_params(kp=[0.0], kd=[1.0], wrench_timeout=0.05))
    first = ros.wait_for(states, timeout=60)
    ros.spin_until(lambda: pushes.get_subscription_count() > 0, timeout=30)
    push = WrenchStamped()
    push.header.frame_id = 'panda_link9'
    pushes.publish(push)
    ros.wait_for(diagnostics, lambda m: _status(m).get(
        'rejected apply_wrench (unknown_link)') == '1', timeout=30)
    push.header.frame_id = 'panda_link7'
    push.wrench.force.y = 20.0
    pushes.publish(push)
    truth = ros.wait_for(applied, timeout=30)
    assert truth.header.frame_id == 'panda_link7' and truth.wrench.force.y == 20.0
    moved = ros.wait_for(states, lambda m: max(abs(p - q) for p, q in zip(
        m.position[:7], first.position[:7])) > 0.01, timeout=30)
    assert moved.effort[0] != 0.0  # the damping answers the motion the push caused
    # The push ends wrench_timeout (50 ms) after its message: a diagnostics period later
    # (1 s), no step pushes any more.
    ros.wait_for(diagnostics, timeout=30)
    count = len(applied.messages)
    ros.wait_for(diagnostics, timeout=30)
    assert len(applied.messages) == count
    assert 10 <= count <= 200  # about 50 steps at 1 kHz, in real time
