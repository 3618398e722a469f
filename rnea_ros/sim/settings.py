"""
The simulated robot's parameters, each declared once here (``Parameter``), all read-only.

Each with its type, default, meaning, bounds or choices.

``read_settings`` checks their values into a ``SimSettings``; ROS-free (the node reads the
values from its parameters, declared with descriptors made from ``PARAMETERS``: ``parameters``).
The parameter table of docs/sim.md is generated from ``PARAMETERS`` (``parameter_docs``:
``python -m rnea_ros.sim.parameter_docs``).

A value the robot cannot use raises ``ValueError`` with one line naming the parameter, the
value and what is expected (``rnea_sim`` prints it and exits with 2).
"""
from __future__ import annotations

from dataclasses import dataclass
import math

from rnea_ros.params.parameter import (BOOL, DOUBLE, DOUBLE_ARRAY, INTEGER, Parameter, STRING,
                                       STRING_ARRAY)

# What a joint torque is (the parameter command_interface; the torque of each: controller).
COMMAND_INTERFACES = ('drive_pd', 'effort', 'trajectory_effort')

CLOCKS = ('realtime', 'lockstep')
RATE_MAX = 1e5  # [Hz]
RECORD_SPLIT_MAX = 600.0  # [s] a longer split holds more of the run in memory
# The least double above 0: '> 0' as the inclusive bound a Parameter holds, exactly.
POSITIVE = math.ulp(0.0)


def _double(name: str, default: float, description: str, low: float = POSITIVE,
            high: float | None = None) -> Parameter:
    """Declare a number from ``low`` (``POSITIVE``: > 0) to ``high``, with its message's words."""
    words = 'a number ' + ('> 0' if low == POSITIVE else f'>= {low:g}') + (
        '' if high is None else f' and <= {high:g}')
    return Parameter(name, DOUBLE, default, description, description, low=low, high=high,
                     expected=words)


def _choice(name: str, default: str, description: str, choices: tuple[str, ...]) -> Parameter:
    return Parameter(name, STRING, default, description, description, choices=choices,
                     expected='one of ' + ', '.join(choices))


def _gains(name: str, default: list, description: str) -> Parameter:
    return Parameter(name, DOUBLE_ARRAY, default, description, description, low=0.0,
                     expected='one or more numbers >= 0')


def _plain(name: str, kind: str, default, description: str, **bounds) -> Parameter:
    return Parameter(name, kind, default, description, description, **bounds)


PARAMETERS = (
    _plain('robot_description', STRING, '',
           'URDF text of the robot (or --urdf FILE; xacro is expanded); unused with --mjcf.'),
    _plain('floating_base', BOOL, False,
           'A free joint on the URDF root link, a floor plane at z = 0; publish odometry and '
           'base_acceleration.'),
    _double('rate', 1000.0, 'Control and publishing rate [Hz]; the timestep is 1/rate.',
            high=RATE_MAX),
    _plain('substeps', INTEGER, 1,
           'Physics steps per timestep, the torques held over them: 16 integrates at '
           'timestep/16, near a continuous robot (what identification wants), for 16x the '
           'physics.', low=1, high=100),
    _choice('clock', 'realtime', 'realtime: step at wall-clock deadlines. lockstep: after '
            'publishing the state of a step, wait for the joint_torques answering it.', CLOCKS),
    _double('lockstep_timeout', 0.1, 'Longest wait [s, wall clock] for an answer in lockstep; '
            'a missed answer is counted and the previous command used.'),
    _plain('gap', STRING, 'default',
           'Reality gap: default (the shipped arm gap), none, go2 or solo12 (the shipped '
           "quadrupeds' feet), or a YAML file (or --gap). With --mjcf: none only (its default "
           'there).'),
    _choice('command_interface', 'drive_pd',
            'What a joint torque is, as the real interface makes it. drive_pd: a drive with its '
            'own PD, kp (q_d - q) + kd (v_d - v) + trajectory effort + effort command. effort: '
            'a forward_command_controller on the effort interface, the effort command is the '
            'whole torque (held until the next; zero before the first), no PD. '
            'trajectory_effort: a '
            'joint_trajectory_controller with the effort interface, a PID (kp, ki, kd) on the '
            "sampled trajectory + the point's effort; effort_commands refused.",
            COMMAND_INTERFACES),
    _plain('gravity_compensated_by_robot', BOOL, False,
           'The robot adds g(q) of its true bodies at the measured positions to every torque, '
           'as Franka and UR do: commands exclude gravity. Fixed base only.'),
    _plain('joints', STRING_ARRAY, [],
           'Joints of effort_commands, in this order. Empty: every actuated joint.',
           expected='a list of joint names'),
    _gains('kp', [100.0],
           'PD stiffness [N m/rad or N/m]: one value for all joints or one per joint.'),
    _gains('kd', [10.0], 'PD damping [N m s/rad or N s/m]: one value or one per joint.'),
    _gains('ki', [0.0], 'Integral gain [N m/(rad s) or N/(m s)] of trajectory_effort (0 with '
           'the other interfaces): one value or one per joint.'),
    _double('command_timeout', 0.1, 'Age [s, sim time] after which an effort command is stale '
            'and, with drive_pd, its feed-forward goes to zero (0: hold it forever); effort '
            'holds it, counting the stale steps.', low=0.0),
    _double('wrench_timeout', 0.1, 'Age [s, sim time] after which an apply_wrench push ends.'),
    _plain('initial_positions', DOUBLE_ARRAY, [],
           'Start positions of the actuated joints. Empty: 0, or the nearest limit when 0 is '
           'outside the joint limits.', expected='a list of finite numbers'),
    _plain('initial_base_pose', DOUBLE_ARRAY, [0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0],
           'Start pose [x y z qx qy qz qw] of a floating base in the world.', size=7,
           expected='[x y z qx qy qz qw] with a unit quaternion'),
    _plain('gravity', DOUBLE_ARRAY, [0.0, 0.0, -9.81], 'Gravity [m/s^2] in the world frame.',
           size=3, expected='3 finite numbers'),
    _plain('thread_priority', INTEGER, 50,
           'SCHED_FIFO priority (1..99) of the stepping thread with the realtime clock (its '
           'executor: 1), as a ros2_control loop runs; 0: normal scheduling. Without the '
           'permission it runs normally and says so.', low=0, high=99),
    _double('duration', 0.0, 'Stop after this sim time [s] (then close --record); 0: run until '
            'stopped.', low=0.0),
    _plain('record', STRING, '',
           'Write a rosbag2 (MCAP) directory here as the run goes (or --record BAG).'),
    _double('record_split', 5.0, 'Log time [s] per file (split) of the record bag: a file is '
            'written and listed in its metadata.yaml as it completes, so a crash loses at most '
            'the split being gathered.', high=RECORD_SPLIT_MAX),
)
BY_NAME = {parameter.name: parameter for parameter in PARAMETERS}
DEFAULTS = {parameter.name: parameter.default for parameter in PARAMETERS}


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


def _number_value(name: str, value) -> float:
    """Return the DOUBLE ``name`` within its declared bounds, or raise ValueError."""
    parameter = BY_NAME[name]
    high = math.inf if parameter.high is None else parameter.high
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not parameter.low <= value <= high:
        _fail(name, value, parameter.expectation)
    return float(value)


def _numbers(name, value, size=None) -> tuple[float, ...]:
    if not isinstance(value, (list, tuple)) or any(
            isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x)
            for x in value) or (size is not None and len(value) != size):
        _fail(name, value, f'{size} finite numbers' if size else 'a list of finite numbers')
    return tuple(float(x) for x in value)


def _integer(name: str, value) -> int:
    """Return the INTEGER ``name`` within its declared bounds, or raise ValueError."""
    parameter = BY_NAME[name]
    if isinstance(value, bool) or not isinstance(value, int) \
            or not parameter.low <= value <= parameter.high:
        _fail(name, value, parameter.expectation)
    return value


def read_settings(values: dict) -> SimSettings:
    """Check the raw parameter values (name -> value) into ``SimSettings``."""
    clock, interface = values['clock'], values['command_interface']
    for name in ('clock', 'command_interface'):
        if values[name] not in BY_NAME[name].choices:
            _fail(name, values[name], BY_NAME[name].expectation)
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
        _fail('joints', joints, BY_NAME['joints'].expectation)
    kp, kd, ki = (_numbers(name, values[name]) for name in ('kp', 'kd', 'ki'))
    for name, gains in (('kp', kp), ('kd', kd), ('ki', ki)):
        if not gains or min(gains) < BY_NAME[name].low:
            _fail(name, list(gains), BY_NAME[name].expectation)
    if any(ki) and interface != 'trajectory_effort':
        _fail('ki', list(ki), f'0 with command_interface {interface} (only trajectory_effort '
              'has an integral term)')
    pose = _numbers('initial_base_pose', values['initial_base_pose'],
                    BY_NAME['initial_base_pose'].size)
    if abs(math.sqrt(sum(x * x for x in pose[3:])) - 1.0) > 1e-6:
        _fail('initial_base_pose', list(pose), BY_NAME['initial_base_pose'].expectation)
    return SimSettings(
        robot_description=values['robot_description'],
        floating_base=values['floating_base'],
        rate=_number_value('rate', values['rate']),
        substeps=_integer('substeps', values['substeps']),
        clock=clock,
        lockstep_timeout=_number_value('lockstep_timeout', values['lockstep_timeout']),
        gap=values['gap'],
        command_interface=interface,
        gravity_compensated_by_robot=values['gravity_compensated_by_robot'],
        joints=tuple(joints),
        kp=kp, kd=kd, ki=ki,
        command_timeout=_number_value('command_timeout', values['command_timeout']),
        wrench_timeout=_number_value('wrench_timeout', values['wrench_timeout']),
        initial_positions=_numbers('initial_positions', values['initial_positions']),
        initial_base_pose=pose,
        gravity=_numbers('gravity', values['gravity'], BY_NAME['gravity'].size),
        thread_priority=_integer('thread_priority', values['thread_priority']),
        duration=_number_value('duration', values['duration']),
        record=values['record'],
        record_split=_number_value('record_split', values['record_split']))
