"""
The simulated robot's parameters, each declared once here (default, meaning).

``read_settings`` checks their values into a ``SimSettings``; ROS-free (the node reads the
values from its parameters).

A value the robot cannot use raises ``ValueError`` with one line naming the parameter, the
value and what is expected (``rnea_sim`` prints it and exits with 2).
"""
from __future__ import annotations

from dataclasses import dataclass
import math

from rnea_ros.sim.controller import COMMAND_INTERFACES

CLOCKS = ('realtime', 'lockstep')

PARAMETERS = {  # name: (default, description)
    'robot_description': ('', 'URDF text of the robot (or --urdf FILE; xacro is expanded).'),
    'floating_base': (False, 'A free joint on the URDF root link, a floor plane at z = 0; '
                             'publish odometry and base_acceleration.'),
    'rate': (1000.0, 'Control and publishing rate [Hz]; the timestep is 1/rate.'),
    'substeps': (1, 'Physics steps per timestep, the torques held over them: 16 integrates '
                    'at timestep/16, near a continuous robot (what identification wants), '
                    'for 16x the physics.'),
    'clock': ('realtime', 'realtime: step at wall-clock deadlines. lockstep: after publishing '
                          'the state of a step, wait for the joint_torques answering it.'),
    'lockstep_timeout': (0.1, 'Longest wait [s, wall clock] for an answer in lockstep; a '
                              'missed answer is counted and the previous command used.'),
    'gap': ('default', 'Reality gap: default (the shipped arm gap), none, go2 or solo12 (the '
                       "shipped quadrupeds' feet), or a YAML file (or --gap)."),
    'command_interface': ('drive_pd', 'What a joint torque is, as the real interface makes it. '
                                      'drive_pd: a drive with its own PD, kp (q_d - q) + '
                                      'kd (v_d - v) + trajectory effort + effort command. '
                                      'effort: a JointGroupEffortController, the effort '
                                      'command is the whole torque (held until the next; '
                                      'zero before the first), no PD. '
                                      'trajectory_effort: a joint_trajectory_controller with '
                                      'the effort interface, a PID (kp, ki, kd) on the sampled '
                                      "trajectory + the point's effort; effort_commands "
                                      'refused.'),
    'gravity_compensated_by_robot': (False, 'The robot adds g(q) of its true bodies at the '
                                            'measured positions to every torque, as Franka '
                                            'and UR do: commands exclude gravity. Fixed base '
                                            'only.'),
    'joints': ([], 'Joints of effort_commands, in this order. Empty: every actuated joint.'),
    'kp': ([100.0], 'PD stiffness [N m/rad or N/m]: one value for all joints or one per joint.'),
    'kd': ([10.0], 'PD damping [N m s/rad or N s/m]: one value or one per joint.'),
    'ki': ([0.0], 'Integral gain [N m/(rad s) or N/(m s)] of trajectory_effort (0 with the '
                  'other interfaces): one value or one per joint.'),
    'command_timeout': (0.1, 'Age [s, sim time] after which an effort command is stale and, '
                             'with drive_pd, its feed-forward goes to zero (0: hold it '
                             'forever); effort holds it, counting the stale steps.'),
    'wrench_timeout': (0.1, 'Age [s, sim time] after which an apply_wrench push ends.'),
    'initial_positions': ([], 'Start positions of the actuated joints. Empty: 0, or the '
                              'nearest limit when 0 is outside the joint limits.'),
    'initial_base_pose': ([0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0],
                          'Start pose [x y z qx qy qz qw] of a floating base in the world.'),
    'gravity': ([0.0, 0.0, -9.81], 'Gravity [m/s^2] in the world frame.'),
    'thread_priority': (50, 'SCHED_FIFO priority (1..99) of the stepping thread with the '
                            'realtime clock (its executor: 1), as a ros2_control loop runs; 0: '
                            'normal scheduling. Without the permission it runs normally and '
                            'says so.'),
    'duration': (0.0, 'Stop after this sim time [s] (then close --record); 0: run until '
                      'stopped.'),
    'record': ('', 'Write a rosbag2 (MCAP) directory here as the run goes (or --record BAG).'),
    'record_split': (5.0, 'Log time [s] per file (split) of the record bag: a file is written '
                          'and listed in its metadata.yaml as it completes, so a crash loses '
                          'at most the split being gathered.'),
}
RECORD_SPLIT_MAX = 600.0  # [s] a longer split holds more of the run in memory


@dataclass(frozen=True)
class SimSettings:
    """Checked parameter values (see ``PARAMETERS`` for their meaning)."""

    robot_description: str
    floating_base: bool
    rate: float
    substeps: int
    clock: str
    lockstep_timeout: float
    gap: str
    command_interface: str
    gravity_compensated_by_robot: bool
    joints: tuple[str, ...]
    kp: tuple[float, ...]
    kd: tuple[float, ...]
    ki: tuple[float, ...]
    command_timeout: float
    wrench_timeout: float
    initial_positions: tuple[float, ...]
    initial_base_pose: tuple[float, ...]
    gravity: tuple[float, ...]
    thread_priority: int
    duration: float
    record: str
    record_split: float


def _fail(name: str, value, expected: str):
    raise ValueError(f"parameter '{name}' is {value!r}: expected {expected}")


def _number(name, value, low=0.0, low_open=True, high=math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < low or (low_open and value == low) or value > high:
        bound = f'> {low:g}' if low_open else f'>= {low:g}'
        upper = f' and <= {high:g}' if high < math.inf else ''
        _fail(name, value, f'a number {bound}{upper}')
    return float(value)


def _numbers(name, value, size=None) -> tuple[float, ...]:
    if not isinstance(value, (list, tuple)) or any(
            isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x)
            for x in value) or (size is not None and len(value) != size):
        _fail(name, value, f'{size} finite numbers' if size else 'a list of finite numbers')
    return tuple(float(x) for x in value)


def _integer(name, value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        _fail(name, value, f'an integer from {low} to {high}')
    return value


def read_settings(values: dict) -> SimSettings:
    """Check the raw parameter values (name -> value) into ``SimSettings``."""
    clock = values['clock']
    if clock not in CLOCKS:
        _fail('clock', clock, 'one of ' + ', '.join(CLOCKS))
    interface = values['command_interface']
    if interface not in COMMAND_INTERFACES:
        _fail('command_interface', interface, 'one of ' + ', '.join(COMMAND_INTERFACES))
    for name in ('robot_description', 'gap', 'record'):
        if not isinstance(values[name], str):
            _fail(name, values[name], 'a string')
    for name in ('floating_base', 'gravity_compensated_by_robot'):
        if not isinstance(values[name], bool):
            _fail(name, values[name], 'true or false')
    if values['gravity_compensated_by_robot'] and values['floating_base']:
        _fail('gravity_compensated_by_robot', True, 'false with floating_base (the robots that '
              'compensate gravity have a fixed base)')
    joints = values['joints']
    if not isinstance(joints, (list, tuple)) or not all(isinstance(j, str) for j in joints):
        _fail('joints', joints, 'a list of joint names')
    kp, kd, ki = (_numbers(name, values[name]) for name in ('kp', 'kd', 'ki'))
    for name, gains in (('kp', kp), ('kd', kd), ('ki', ki)):
        if not gains or min(gains) < 0:
            _fail(name, list(gains), 'one or more numbers >= 0')
    if any(ki) and interface != 'trajectory_effort':
        _fail('ki', list(ki), f'0 with command_interface {interface} (only trajectory_effort '
              'has an integral term)')
    pose = _numbers('initial_base_pose', values['initial_base_pose'], 7)
    if abs(math.sqrt(sum(x * x for x in pose[3:])) - 1.0) > 1e-6:
        _fail('initial_base_pose', list(pose), '[x y z qx qy qz qw] with a unit quaternion')
    return SimSettings(
        robot_description=values['robot_description'],
        floating_base=values['floating_base'],
        rate=_number('rate', values['rate'], high=1e5),
        substeps=_integer('substeps', values['substeps'], 1, 100),
        clock=clock,
        lockstep_timeout=_number('lockstep_timeout', values['lockstep_timeout']),
        gap=values['gap'],
        command_interface=interface,
        gravity_compensated_by_robot=values['gravity_compensated_by_robot'],
        joints=tuple(joints),
        kp=kp, kd=kd, ki=ki,
        command_timeout=_number('command_timeout', values['command_timeout'], low_open=False),
        wrench_timeout=_number('wrench_timeout', values['wrench_timeout']),
        initial_positions=_numbers('initial_positions', values['initial_positions']),
        initial_base_pose=pose,
        gravity=_numbers('gravity', values['gravity'], 3),
        thread_priority=_integer('thread_priority', values['thread_priority'], 0, 99),
        duration=_number('duration', values['duration'], low_open=False),
        record=values['record'],
        record_split=_number('record_split', values['record_split'], high=RECORD_SPLIT_MAX))
