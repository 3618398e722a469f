"""
``rnea_ctl``: the command line, its checks and its exit codes.

Every input is checked before anything is sent. Exit status: 0 done, 1 a node not found or not
answering in time, or refusing (the line names the node), 2 bad input (one line naming the
option or field), 130 interrupted (Ctrl-C).
"""
from __future__ import annotations

import argparse
from contextlib import contextmanager
import os
import signal
import sys
import threading
from typing import Iterator, NoReturn

from rnea_ros.ctl import names
from rnea_ros.errors import Bounded, InputError, UsageParser

DEFAULT_TIMEOUT = 10.0  # s: how long a node may take to be found and to answer
TIMEOUT = Bounded(float, 1e-3, 86400.0)  # s
DESCRIPTION = """\
Drive the rnea node and the simulated robot over DDS without the ros2 command line: lifecycle
transitions, parameters, a trajectory, a push, a collision reset, the status; `paths` says where
the installed files are. NODE is a node's name (default /rnea); topics are resolved in its
namespace (--topic for a remapped one). Uses ROS_DOMAIN_ID as every ROS 2 process does.
Exit status: 0 done, 1 node not found, not answering within --timeout, or refusing (one line
naming it), 2 bad input (one line naming it), 130 interrupted."""


def _node_argument(parser, required: bool = False) -> None:
    if required:
        parser.add_argument('node', metavar='NODE', help='the node, e.g. /rnea')
    else:
        parser.add_argument('node', metavar='NODE', nargs='?', default=names.DEFAULT_NODE,
                            help=f'the node (default {names.DEFAULT_NODE})')


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of ``rnea_ctl`` and its subcommands."""
    parser = UsageParser(prog='rnea_ctl', description=DESCRIPTION,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--timeout', type=TIMEOUT, default=DEFAULT_TIMEOUT, metavar='S',
                        help=f'seconds to find the node and get an answer (default '
                             f'{DEFAULT_TIMEOUT:g}); {TIMEOUT.expected}')
    commands = parser.add_subparsers(dest='command', metavar='COMMAND', required=True,
                                     parser_class=UsageParser)
    lifecycle = commands.add_parser('lifecycle', help='get the state or trigger a transition')
    which = lifecycle.add_subparsers(dest='action', metavar='ACTION', required=True,
                                     parser_class=UsageParser)
    _node_argument(which.add_parser('get', help='print the lifecycle state'))
    transition = which.add_parser('set', help='trigger a transition')
    _node_argument(transition, required=True)
    from rnea_ros.ctl.commands import (MAX_FORCE, MAX_PUSH_SECONDS, MAX_TORQUE,
                                       MIN_PUSH_SECONDS, STATES, TRANSITIONS)
    transition.add_argument('transition', choices=TRANSITIONS)
    param = commands.add_parser('param', help='list, get, describe, set or delete parameters')
    which = param.add_subparsers(dest='action', metavar='ACTION', required=True,
                                 parser_class=UsageParser)
    _node_argument(which.add_parser('list', help='print the declared parameters'))
    for action, text in (('get', 'print values'), ('describe', 'print descriptions'),
                         ('delete', 'unset parameters (as ros2 param delete)')):
        sub = which.add_parser(action, help=text)
        _node_argument(sub, required=True)
        sub.add_argument('names', metavar='NAME', nargs='+')
    setter = which.add_parser('set', help='set parameters (VALUE as YAML)')
    _node_argument(setter, required=True)
    setter.add_argument('assignments', metavar='NAME:=VALUE', nargs='+')
    setter.add_argument('--atomic', action='store_true',
                        help='all or none, in one change (set_parameters_atomically)')
    trajectory = commands.add_parser(
        'trajectory', help=f'send a JointTrajectory to {names.TRAJECTORY_TOPIC}')
    trajectory.add_argument('file', metavar='FILE', nargs='?',
                            help="a JointTrajectory as YAML (rnea_excite's trajectory.yaml)")
    trajectory.add_argument('--point', nargs='+', action='append', default=[],
                            metavar='SECONDS NAME=POSITION',
                            help='a point instead of FILE (repeat: one per point; the joints '
                                 'rest at each)')
    trajectory.add_argument('--node', default=names.DEFAULT_NODE,
                            help=f'whose topic (default {names.DEFAULT_NODE}; the simulated '
                                 f'robot: {names.SIM_NODE})')
    trajectory.add_argument('--topic', help=f'the topic (default: <NODE namespace>/'
                                            f'{names.TRAJECTORY_TOPIC})')
    push = commands.add_parser('push', help='push a link of the simulated robot')
    push.add_argument('link', metavar='LINK')
    for flag, unit, high in (('force', 'N', MAX_FORCE), ('torque', 'N m', MAX_TORQUE)):
        bounded = Bounded(float, -high, high)
        push.add_argument(f'--{flag}', nargs=3, type=bounded, default=[0.0] * 3,
                          metavar=tuple(f'{flag[0].upper()}{axis}' for axis in 'XYZ'),
                          help=f'{unit}, link frame (default 0 0 0); each {bounded.expected}')
    seconds = Bounded(float, MIN_PUSH_SECONDS, MAX_PUSH_SECONDS)
    push.add_argument('--duration', type=seconds, required=True, metavar='S',
                      help=f'seconds the push lasts; {seconds.expected}')
    push.add_argument('--node', default=names.SIM_NODE,
                      help=f'the simulated robot (default {names.SIM_NODE})')
    push.add_argument('--topic', help=f'the topic (default: <NODE namespace>/'
                                      f'{names.APPLY_WRENCH_TOPIC})')
    _node_argument(commands.add_parser('reset-collision',
                                       help="clear a latched collision (the node's "
                                            f'~/{names.RESET_COLLISION_SERVICE})'))
    status = commands.add_parser('status', help="print the node's last status report (its "
                                                'latched ~/status, else /diagnostics)')
    _node_argument(status)
    status.add_argument('--follow', action='store_true', help='each report until Ctrl-C')
    status.add_argument('--all', action='store_true', help='every key of the report too')
    wait = commands.add_parser('wait', help='wait for the node to reach a state')
    _node_argument(wait)
    wait.add_argument('--state', choices=STATES, default='active')
    commands.add_parser('paths', help="print where rnea_ros's installed files are")
    return parser


def prepare(options: argparse.Namespace):
    """Check every input; return ``run(session)`` doing the command (InputError if bad)."""
    from rnea_ros.ctl import commands, values
    command, action = options.command, getattr(options, 'action', None)
    node = names.node_name(options.node, '--node' if command in ('trajectory', 'push')
                           else 'NODE')
    if command == 'lifecycle':
        if action == 'get':
            return lambda session: commands.state(session, node)
        return lambda session: commands.transition(session, node, options.transition)
    if command == 'param':
        if action == 'set':
            for text in options.assignments:
                values.parse_value(*values.assignment(text))
            return lambda session: commands.param_set(session, node, options.assignments,
                                                      options.atomic)
        run = {'list': lambda session: commands.param_list(session, node),
               'get': lambda session: commands.param_get(session, node, options.names),
               'describe': lambda session: commands.param_describe(session, node,
                                                                   options.names),
               'delete': lambda session: commands.param_delete(session, node, options.names)}
        return run[action]
    if command == 'trajectory':
        if (options.file is None) == (not options.point):
            raise InputError('expected a trajectory FILE or --point options, not both')
        from rnea_ros.ctl import trajectory_spec
        spec = (trajectory_spec.load_file(options.file) if options.file
                else trajectory_spec.from_inline(options.point))
        topic = names.topic_of(node, names.topic_name(options.topic or
                                                      names.TRAJECTORY_TOPIC))
        return lambda session: commands.send_trajectory(session, topic, spec)
    if command == 'push':
        wrench = options.force + options.torque
        topic = names.topic_of(node, names.topic_name(options.topic or
                                                      names.APPLY_WRENCH_TOPIC))
        commands.check_push(options.link, wrench, options.duration)
        return lambda session: commands.push(session, topic, options.link, wrench,
                                             options.duration)
    if command == 'reset-collision':
        return lambda session: commands.reset_collision(session, node)
    if command == 'status':
        return lambda session: commands.status(session, node, options.follow, options.all)
    return lambda session: commands.wait(session, node, options.state)


def main(argv: list[str] | None = None) -> int:
    """
    Run ``rnea_ctl``; the exit status (see the module docstring).

    As the program (``argv`` None: the process's command line), a call that started a DDS
    session ends the process the moment the session is closed (``end``).
    """
    options = build_parser().parse_args(argv)
    interrupted: list[bool] = []
    try:
        with _interrupts(interrupted):
            return _main(options, argv)
    except KeyboardInterrupt:
        return 130
    except Exception:
        # Ctrl-C inside rclpy's C++ (a message being converted) comes out as pybind11's
        # TypeError or RuntimeError, not as KeyboardInterrupt: it is still the interrupt.
        if interrupted:
            return 130
        raise


@contextmanager
def _interrupts(interrupted: list[bool]) -> Iterator[None]:
    """Within: Ctrl-C appends True to ``interrupted``, then raises KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():  # no handler can be set
        yield
        return

    def interrupt(signum, frame):
        interrupted.append(True)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _main(options: argparse.Namespace, argv: list[str] | None) -> int:
    if options.command == 'paths':
        from rnea_ros.ctl.paths import print_paths
        return print_paths()
    try:
        from rnea_ros.ctl.session import Session
        run = prepare(options)
    except ModuleNotFoundError as exc:
        print(f'rnea_ctl: cannot start: Python module {exc.name!r} is missing; install '
              'the ros-* wheels of requirements.txt, or source a ROS 2 install',
              file=sys.stderr)
        return 1
    except InputError as exc:
        print(f'rnea_ctl: error: {exc}', file=sys.stderr)
        return 2
    session = Session(options.timeout)
    try:
        code = _run(run, session)
    finally:
        session.close()
    return code if argv is not None else end(code)


def _run(run, session) -> int:
    from rnea_ros.ctl.session import Refused, Unreachable
    try:
        return run(session)
    except InputError as exc:
        print(f'rnea_ctl: error: {exc}', file=sys.stderr)
        return 2
    except (Unreachable, Refused) as exc:
        print(f'rnea_ctl: {exc}', file=sys.stderr)
        return 1


def end(code: int) -> NoReturn:
    """
    End the process now with ``code``, its output flushed, the session closed before.

    ``Session.close`` deleted the DDS participant (the nodes saw it leave); what a normal exit
    would add is teardown only: Fast DDS's participant factory sleeps 0.1 s in its destructor,
    and the interpreter's finalisation walks every object of rclpy, numpy and the message types
    (0.11 to 0.15 s of a call where the node is up, more on a loaded machine).
    """
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # e.g. the reader of the pipe left: as Python's own exit says it
        code = 120
    os._exit(code)


if __name__ == '__main__':
    sys.exit(main())
