"""
Start and stop the rnea node: ``rnea_node`` and ``python -m rnea_ros.node``.

``main`` answers ``--help`` without starting anything, refuses with one line (exit 2) a parameter
it cannot use and (exit 1) a missing Python module (with the ``pip install`` that brings it),
then runs the node: with ``autostart`` it configures and activates it at once, otherwise it waits
for the lifecycle services. SIGINT and SIGTERM are handled here, not by rclpy: the node first goes
through its ``shutdown`` transition (its threads stop publishing and end), and only then is the
ROS context shut down, so no thread ever publishes into a dead context. Exit codes: 0 after a
signal, 1 when a node thread failed or a module is missing, 2 for a bad parameter or argument,
or (``refuse_duplicate_name``) when another node of the same name runs. A fatal signal (a
crash in a native library: the middleware, MuJoCo, a compiled kernel) first prints every
thread's Python stack to stderr (``faulthandler``), so the launch log says where.
"""
from __future__ import annotations

import argparse
import faulthandler
import re
import signal
import sys
import threading
import time

from rnea_ros.errors import InputError, URDFError, UsageParser

# Python modules the node needs that rosdep cannot install (no rosdep key): the pip package.
PIP_ONLY = {'daqp': 'daqp'}
SPIN_PERIOD = 0.1  # s: how soon the main thread sees a signal (it waits in the executor)
# With refuse_duplicate_name: how long [s] discovery may take to show a node of the same name
# (Fast DDS on one host: under a second when idle, seconds on a loaded machine), and how often
# the graph is read meanwhile (rclpy has no graph event in Python; its wait_for_node reads the
# graph every 0.1 s too).
NAMESAKE_WAIT = 5.0
NAMESAKE_POLL = 0.1

DESCRIPTION = """\
The rnea node (name 'rnea'): feed-forward joint torques of the latest joint_states and desired
accelerations, from a URDF, published at the controller rate (see the README, "The node").

The model: --urdf FILE (a URDF, or a xacro file expanded in a guarded process), or the
robot_description parameter, or (both empty) the robot_description topic.

The rest is given as ROS arguments after --ros-args:
  rnea_node --urdf robot.urdf --ros-args --params-file config/rnea.yaml
  rnea_node --ros-args --params-file robot_description.yaml -p rate:=1000.0
  rnea_node --ros-args -r __ns:=/left -r feedforward_effort:=/effort_controller/commands

A managed (lifecycle) node: with autostart (default true) it configures and activates itself;
with -p autostart:=false it waits for configure/activate on <node>/change_state (rnea_ctl
lifecycle set /rnea configure, then activate).
Exit status: 0 after SIGINT/SIGTERM, 1 if a node thread failed or a Python module is missing,
2 for a parameter it cannot use (one line naming it) or, with refuse_duplicate_name, when a node
of the same name already runs.

parameters (their descriptions: rnea_ctl param describe /rnea NAME, or ros2 param describe):
"""


def build_parser(parameters: bool = True) -> argparse.ArgumentParser:
    """
    Build the parser of the arguments outside ``--ros-args`` (only ``--help``).

    ``parameters``: list the parameters in the help (imports the node's modules).
    """
    epilog = ''
    try:
        if not parameters:
            raise ImportError
        from rnea_ros.control.declaration import PARAMETERS
    except ImportError:  # a missing module is said, with what to do, when the node starts
        pass
    else:
        epilog = '\n'.join(f'  {parameter.name}: {parameter.expectation}'
                           + ('' if parameter.live else ' (read-only)')
                           for parameter in PARAMETERS)
    parser = UsageParser(
        prog='rnea_node', usage='rnea_node [-h] [--urdf FILE [--xacro-arg NAME:=VALUE ...]] '
        '[--ros-args ROS_ARGUMENTS ...]',
        description=DESCRIPTION + epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--urdf', metavar='FILE',
                        help='URDF or xacro file: the robot_description parameter (wins over '
                             '--ros-args)')
    parser.add_argument('--xacro-arg', action='append', default=[], metavar='NAME:=VALUE',
                        help='xacro argument for --urdf (repeatable; the file is then expanded '
                             'whatever its name)')
    return parser


def read_urdf_option(urdf: str | None, xacro_arg: list[str]) -> str | None:
    """
    Return the text of ``--urdf`` (xacro expanded), or None without it.

    A missing or unreadable file, a xacro file that cannot be expanded or a ``--xacro-arg``
    without ``:=`` (or without ``--urdf``) raise ``InputError`` naming the option.
    """
    from rnea_ros.description.robot_file import parse_xacro_arg, read_robot_description
    from rnea_ros.description.loading import read_file_option
    try:
        xacro_args = dict(parse_xacro_arg(text) for text in xacro_arg)
    except argparse.ArgumentTypeError as exc:
        raise InputError(f'--xacro-arg: {exc}') from None
    if urdf is None:
        if xacro_args:
            raise InputError('--xacro-arg: expected --urdf FILE to expand')
        return None
    try:
        return read_file_option('--urdf', urdf,
                                lambda path: read_robot_description(path, xacro_args))
    except URDFError as exc:
        raise InputError(f'--urdf: {exc}') from None


def missing_module_message(exc: ModuleNotFoundError) -> str:
    """One line naming the missing module and how to install it."""
    name = (exc.name or '').split('.')[0]
    if name in PIP_ONLY:
        fix = f'install it with: python3 -m pip install {PIP_ONLY[name]}'
    else:
        fix = ('install the dependencies of package.xml: rosdep install --from-paths src '
               '--ignore-src -y (see the README, "Building with colcon")')
    return f'rnea_node: cannot start: Python module {name!r} is missing; {fix}'


class StopRequest:
    """
    SIGINT/SIGTERM set ``event``; the main thread sees it within ``SPIN_PERIOD``.

    A Python signal handler runs in the main thread between two bytecodes, possibly while that
    thread holds the node's lock in a callback: so it only records the request.
    """

    def __init__(self):
        self.event = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._handle)

    def _handle(self, signum, frame) -> None:
        self.event.set()


def ros_arguments_error(text: str) -> str:
    """Say in one line why rcl refused the ROS arguments (not the whole -p value)."""
    override = re.search(r"parse parameter override rule: '-p ([^:]+):=", text)
    if override:
        return (f'invalid ROS arguments: the value of -p {override.group(1)}:=... is not valid '
                f'YAML (rcl reads -p values as YAML); give a text such as a URDF in a '
                f'--params-file')
    return 'invalid ROS arguments: ' + text.splitlines()[0].split(', at ')[0]


def user_arguments(argv: list[str]) -> list[str]:
    """Return the arguments of ``argv[1:]`` outside ``--ros-args ... [--]``."""
    arguments, in_ros = [], False
    for argument in argv[1:]:
        if argument == '--ros-args':
            in_ros = True
        elif in_ros and argument == '--':
            in_ros = False
        elif not in_ros:
            arguments.append(argument)
    return arguments


def main(args: list[str] | None = None) -> int:
    """Run the node until SIGINT/SIGTERM; the exit status (see the module docstring)."""
    faulthandler.enable(all_threads=True)
    argv = list(sys.argv if args is None else args)
    arguments = user_arguments(argv)
    help_asked = '-h' in arguments or '--help' in arguments
    options = build_parser(help_asked).parse_args(arguments)  # --help: prints and exits 0
    try:
        description = read_urdf_option(options.urdf, options.xacro_arg)
    except InputError as exc:
        print(f'rnea_node: error: {exc}', file=sys.stderr)
        return 2
    stop = StopRequest()
    try:
        import rclpy
        from rnea_ros.node.node import RneaNode
    except ModuleNotFoundError as exc:
        print(missing_module_message(exc), file=sys.stderr)
        return 1
    from rnea_ros.polling.discovery import announce_often  # after rclpy: polling needs it
    announce_often()  # before the participant: clients find it at once (discovery.py)
    try:
        rclpy.init(args=argv, signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    except RuntimeError as exc:  # rclpy's RCLError: e.g. a -p value that is not valid YAML
        print(f'rnea_node: {ros_arguments_error(str(exc))}', file=sys.stderr)
        return 2
    overrides = []
    if description is not None:  # over any -p or --params-file value, as rnea_sim's --urdf
        from rclpy.parameter import Parameter
        overrides.append(Parameter('robot_description', Parameter.Type.STRING, description))
    try:
        node = RneaNode(parameter_overrides=overrides)
    except ValueError as exc:  # a parameter with an unusable value
        print(f'rnea_node: {exc}', file=sys.stderr)
        rclpy.try_shutdown()
        return 2
    return spin(node, stop.event)


def spin(node, stop: threading.Event) -> int:
    """Bring ``node`` up (``autostart``), spin until ``stop`` or a failure, then shut down."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.lifecycle import TransitionCallbackReturn
    from rnea_ros.timing import realtime
    from rnea_ros.timing.scheduling import SWITCH_INTERVAL

    # rclpy's EventsExecutor was tried: it did not fire the steady-clock timers and ignored
    # SIGINT here (Kilted wheels), so the SingleThreadedExecutor it is.
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    # A thread waiting for the GIL takes it after this long, not Python's 5 ms default: the
    # control thread must not wait a whole period behind the executor's Python code.
    sys.setswitchinterval(SWITCH_INTERVAL)
    # The executor's Python holds the GIL the real-time threads need: at normal priority a busy
    # machine could preempt it holding the GIL and stall them (priority inversion). What it
    # starts (threads, the description worker) begins normal (reset on fork).
    if node.settings.thread_priority > 0:
        realtime.set_fifo_priority(realtime.EXECUTOR_PRIORITY, reset_on_fork=True)
    code = 0
    try:
        namesakes = wait_for_namesakes(node, stop) if node.refuse_duplicate_name else 0
        if namesakes:
            print(f'rnea_node: {namesakes} other node(s) named '
                  f'{node.get_fully_qualified_name()} already run and refuse_duplicate_name is '
                  f'true: not starting', file=sys.stderr)
            code = 2
        elif node.autostart and node.trigger_configure() != TransitionCallbackReturn.SUCCESS:
            print('rnea_node: configure failed (the reason is logged above)', file=sys.stderr)
            code = node.lifecycle.exit_code  # 2: a parameter that does not fit the model
        else:
            node.cycles.gc_monitor.freeze()  # start-up over: collect once, then keep gc off cycles
            if node.autostart and not stop.is_set():
                node.trigger_activate()
            while not stop.is_set() and node.context.ok():
                executor.spin_once(timeout_sec=SPIN_PERIOD)
    except ExternalShutdownException:  # a node thread failed and shut the context down
        pass
    finally:
        primary = ('unconfigured', 'inactive', 'active')
        if node.context.ok() and node.lifecycle_state() in primary:
            node.trigger_shutdown()  # stops publishing and the threads, then releases
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    return 1 if node.failure is not None else code


def wait_for_namesakes(node, stop: threading.Event) -> int:
    """Return how many other nodes of ``node``'s name discovery shows within NAMESAKE_WAIT."""
    deadline = time.monotonic() + NAMESAKE_WAIT
    while not stop.is_set():
        namesakes = node.namesakes()
        if namesakes or time.monotonic() >= deadline:
            return namesakes
        stop.wait(NAMESAKE_POLL)
    return 0


if __name__ == '__main__':
    sys.exit(main())
