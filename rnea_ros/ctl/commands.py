"""
The subcommands of ``rnea_ctl``, each on a ``Session``.

Each prints what it got and returns the exit status, or raises ``InputError`` (2),
``Unreachable`` or ``Refused`` (1).
"""
from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from rnea_ros.ctl import names, values
from rnea_ros.ctl.session import Refused, Session, Unreachable
from rnea_ros.errors import InputError, RneaError

if TYPE_CHECKING:  # imported by the trajectory command only (dataclasses, files)
    from rnea_ros.ctl.trajectory_spec import TrajectorySpec

TRANSITIONS = ('configure', 'activate', 'deactivate', 'cleanup', 'shutdown')
STATES = ('unconfigured', 'inactive', 'active', 'finalized')
LEVELS = {0: 'OK', 1: 'WARN', 2: 'ERROR', 3: 'STALE'}
PUSH_RATE = 50.0  # Hz: above the simulated robot's wrench_timeout (0.1 s), a push goes on
MIN_PUSH_SECONDS = 1e-3  # one step of the simulated robot
MAX_PUSH_SECONDS = 600.0  # a longer push is a typo (milliseconds for seconds)
MAX_FORCE, MAX_TORQUE = 1e4, 1e3  # N, N m: a push's wrench, each component
STATE_RECHECK = 1.0  # s: between two get_state calls while waiting (transition events too)


# ------------------------------------------------------------------ lifecycle
def lifecycle_state(session: Session, node: str) -> str:
    """Return the label of ``node``'s lifecycle state (``<node>/get_state``)."""
    from lifecycle_msgs.srv import GetState
    response = session.call(GetState, f'{node}/get_state', GetState.Request(), node)
    return response.current_state.label


def state(session: Session, node: str) -> int:
    print(f'{node}: {lifecycle_state(session, node)}')
    return 0


def transition(session: Session, node: str, label: str) -> int:
    """Trigger ``label`` on ``node`` when its state offers it; print the state reached."""
    from lifecycle_msgs.srv import ChangeState, GetAvailableTransitions, GetState
    session.expect((GetAvailableTransitions, f'{node}/get_available_transitions'),
                   (ChangeState, f'{node}/change_state'), (GetState, f'{node}/get_state'))
    available = session.call(GetAvailableTransitions, f'{node}/get_available_transitions',
                             GetAvailableTransitions.Request(), node)
    labels = sorted({t.transition.label for t in available.available_transitions})
    if label not in labels:
        raise Refused(f'{node} is {lifecycle_state(session, node)}: no transition {label!r} '
                      f'from there (available: {", ".join(labels) or "none"})')
    request = ChangeState.Request()
    request.transition.label = label
    response = session.call(ChangeState, f'{node}/change_state', request, node)
    now = lifecycle_state(session, node)
    if not response.success:
        raise Refused(f'{node} refused {label} (its log says why): it is {now}')
    print(f'{node}: {label} -> {now}')
    return 0


def wait(session: Session, node: str, goal: str) -> int:
    """Return once ``node`` is in state ``goal`` (transition events, get_state each second)."""
    from lifecycle_msgs.msg import TransitionEvent
    reached: list[str] = []
    subscription = session.node.create_subscription(
        TransitionEvent, f'{node}/transition_event',
        lambda event: reached.append(event.goal_state.label), 10)
    deadline = time.monotonic() + session.timeout
    try:
        while True:
            left = deadline - time.monotonic()
            try:
                current = lifecycle_state(session, node) if left > 0 else None
            except Unreachable:
                current = None
            if current == goal:
                print(f'{node}: {goal}')
                return 0
            if left <= 0:
                raise Unreachable(f'node {node} not {goal} within {session.timeout:g} s'
                                  + ('' if current is None else f' (it is {current})'))
            try:
                session.spin_until(lambda: goal in reached, 'a transition event',
                                   min(STATE_RECHECK, max(left, 0.0)))
            except Unreachable:
                pass  # look again with get_state
    finally:
        session.node.destroy_subscription(subscription)


# ------------------------------------------------------------------ parameters
def _declared(session: Session, node: str) -> list[str]:
    from rcl_interfaces.srv import ListParameters
    response = session.call(ListParameters, f'{node}/list_parameters',
                            ListParameters.Request(), node)
    return sorted(response.result.names)


def _undeclared(session: Session, node: str, asked: list[str]) -> RneaError:
    declared = set(_declared(session, node))
    unknown = next((name for name in asked if name not in declared), None)
    if unknown is None:
        return Refused(f'{node} answered for fewer parameters than asked: {", ".join(asked)}')
    return InputError(f'parameter {unknown!r}: {node} declares no such parameter (rnea_ctl '
                      f'param list {node} lists them)')


def param_list(session: Session, node: str) -> int:
    for name in _declared(session, node):
        print(name)
    return 0


def param_get(session: Session, node: str, asked: list[str]) -> int:
    """Print ``NAME: VALUE`` per parameter (``not set`` for a declared one without value)."""
    from rcl_interfaces.srv import GetParameters, ListParameters
    from rclpy.parameter import parameter_value_to_python
    session.expect((GetParameters, f'{node}/get_parameters'),
                   (ListParameters, f'{node}/list_parameters'))
    got = []
    for name in asked:  # one call each: rclpy answers none at all for one unset name
        response = session.call(GetParameters, f'{node}/get_parameters',
                                GetParameters.Request(names=[name]), node)
        if response.values:
            got.append((name, values.show(parameter_value_to_python(response.values[0]))))
        elif name in _declared(session, node):
            got.append((name, 'not set'))
        else:
            raise _undeclared(session, node, [name])
    for name, text in got:
        print(f'{name}: {text}')
    return 0


def _descriptors(session: Session, node: str, asked: list[str]) -> list:
    from rcl_interfaces.srv import DescribeParameters
    response = session.call(DescribeParameters, f'{node}/describe_parameters',
                            DescribeParameters.Request(names=asked), node)
    if len(response.descriptors) != len(asked):
        raise _undeclared(session, node, asked)
    return list(response.descriptors)


def param_describe(session: Session, node: str, asked: list[str]) -> int:
    for descriptor in _descriptors(session, node, asked):
        print(f'{descriptor.name} ({values.TYPE_NAMES.get(descriptor.type, descriptor.type)}'
              f'{", read-only" if descriptor.read_only else ""}): {descriptor.description}')
    return 0


def param_set(session: Session, node: str, assignments: list[str], atomic: bool) -> int:
    """Set ``NAME:=VALUE`` parameters, one by one or (``atomic``) all or none."""
    from rcl_interfaces.srv import DescribeParameters, SetParameters, SetParametersAtomically
    pairs = [values.assignment(text) for text in assignments]
    session.expect((DescribeParameters, f'{node}/describe_parameters'),
                   (SetParametersAtomically, f'{node}/set_parameters_atomically') if atomic
                   else (SetParameters, f'{node}/set_parameters'))
    declared = _descriptors(session, node, [name for name, _ in pairs])
    parameters = []
    for (name, text), descriptor in zip(pairs, declared):
        kind, value = values.parse_value(name, text, descriptor.type)
        parameters.append(_parameter(name, kind, value))
    return _set(session, node, parameters, atomic, [f'{n}:={t}' for n, t in pairs])


def param_delete(session: Session, node: str, asked: list[str]) -> int:
    """Unset declared parameters (a value of type not set), as ``ros2 param delete``."""
    _descriptors(session, node, asked)
    return _set(session, node, [_parameter(name, 0, None) for name in asked], False,
                [f'{name} deleted' for name in asked])


def _parameter(name: str, kind: int, value):
    from rcl_interfaces.msg import Parameter, ParameterValue
    field = {1: 'bool_value', 2: 'integer_value', 3: 'double_value', 4: 'string_value',
             6: 'bool_array_value', 7: 'integer_array_value', 8: 'double_array_value',
             9: 'string_array_value'}.get(kind)
    message = ParameterValue(type=kind)
    if field is not None:
        setattr(message, field, value)
    return Parameter(name=name, value=message)


def _set(session: Session, node: str, parameters: list, atomic: bool, said: list[str]) -> int:
    from rcl_interfaces.srv import SetParameters, SetParametersAtomically
    kind, service = ((SetParametersAtomically, 'set_parameters_atomically') if atomic
                     else (SetParameters, 'set_parameters'))
    response = session.call(kind, f'{node}/{service}', kind.Request(parameters=parameters),
                            node)
    results = [response.result] if atomic else list(response.results)
    refused = [(text, r.reason) for text, r in zip(said, results) if not r.successful]
    for text, result in zip(said, results):
        if result.successful and not atomic:
            print(f'{node}: {text}')
    if refused:
        if atomic:
            raise Refused(f'{node} refused the set (nothing changed): {results[0].reason}')
        raise Refused('; '.join(f'{node} refused {text}: {reason}' for text, reason in refused))
    if atomic:
        print(f'{node}: ' + ', '.join(said) + ' (at once)')
    return 0


# ------------------------------------------------------------------ topics and services
def send_trajectory(session: Session, topic: str, spec: TrajectorySpec) -> int:
    """Publish ``spec`` on ``topic`` once (reliable) and wait for its delivery."""
    from builtin_interfaces.msg import Duration, Time
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from rnea_ros.ctl.trajectory_spec import NANOSECONDS
    message = JointTrajectory(joint_names=list(spec.joint_names))
    message.header.stamp = Time(sec=spec.stamp[0], nanosec=spec.stamp[1])
    message.header.frame_id = spec.frame_id
    for point in spec.points:
        sec, nanosec = divmod(point.time_from_start, NANOSECONDS)
        message.points.append(JointTrajectoryPoint(
            positions=list(point.positions), velocities=list(point.velocities),
            accelerations=list(point.accelerations), effort=list(point.effort),
            time_from_start=Duration(sec=sec, nanosec=nanosec)))
    publisher = session.publisher(JointTrajectory, topic)
    publisher.publish(message)
    session.delivered(publisher, topic)
    last = spec.points[-1].time_from_start / NANOSECONDS
    print(f'{topic}: sent {len(spec.points)} points of {len(spec.joint_names)} joints '
          f'({last:g} s)')
    return 0


def check_push(link: str, wrench: list[float], seconds: float) -> None:
    """Raise ``InputError`` naming the option when a push is not one to send."""
    if not link:
        raise InputError('LINK: expected the name of a link of the simulated robot')
    limits = (MAX_FORCE,) * 3 + (MAX_TORQUE,) * 3
    bad = next((k for k, x in enumerate(wrench)
                if not (math.isfinite(x) and abs(x) <= limits[k])), None)
    if bad is not None:
        field = ('--force', '--torque')[bad // 3]
        raise InputError(f'{field}: {wrench[bad]!r}: expected numbers from {-limits[bad]:g} '
                         f'to {limits[bad]:g}')
    if not MIN_PUSH_SECONDS <= seconds <= MAX_PUSH_SECONDS:
        raise InputError(f'--duration: {seconds!r}: expected a number from '
                         f'{MIN_PUSH_SECONDS:g} to {MAX_PUSH_SECONDS:g}')


def push(session: Session, topic: str, link: str, wrench: list[float], seconds: float) -> int:
    """
    Publish the wrench on ``link`` at ``PUSH_RATE`` for ``seconds``; then nothing (it ends).

    The simulated robot keeps a push ``wrench_timeout`` (0.1 s) after its last message.
    """
    from geometry_msgs.msg import WrenchStamped
    check_push(link, wrench, seconds)
    message = WrenchStamped()
    message.header.frame_id = link
    f, t = message.wrench.force, message.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = wrench
    count = max(1, math.ceil(seconds * PUSH_RATE - 1e-9))  # one every 1 / PUSH_RATE from 0
    # Its history holds the whole push: a reliable writer keeping the last 10 would drop the
    # samples a slow subscriber had not acknowledged yet.
    publisher = session.publisher(WrenchStamped, topic, depth=count)
    start = time.monotonic()
    for sent in range(count):  # each at its time, none skipped on a late wake-up
        while (ahead := start + sent / PUSH_RATE - time.monotonic()) > 0:
            session.executor.spin_once(timeout_sec=ahead)
        message.header.stamp = session.node.get_clock().now().to_msg()
        publisher.publish(message)
    session.delivered(publisher, topic)
    print(f'{topic}: pushed {link} for {seconds:g} s ({count} messages)')
    return 0


def reset_collision(session: Session, node: str) -> int:
    from std_srvs.srv import Trigger
    response = session.call(Trigger, f'{node}/{names.RESET_COLLISION_SERVICE}',
                            Trigger.Request(), node)
    if not response.success:
        raise Refused(f'{node}: {response.message}')
    print(f'{node}: {response.message}')
    return 0


def _level(status) -> str:
    level = status.level[0] if isinstance(status.level, bytes) else int(status.level)
    return LEVELS.get(level, str(level))


def status(session: Session, node: str, follow: bool, every_key: bool) -> int:
    """Print ``node``'s status reports (``Session.diagnostics``): one, or each (``follow``)."""
    def show(report) -> bool:
        keys = {kv.key: kv.value for kv in report.values}
        state = keys.get(names.LIFECYCLE_KEY, '?')
        print(f'{report.name} [{state}] {_level(report)}: {report.message}', flush=True)
        if every_key:
            for key, value in keys.items():
                print(f'  {key}: {value}', flush=True)
        return follow
    session.diagnostics(node, show)
    return 0
