"""
The payload parameters of the node over real DDS: set atomically, refused whole, given at start.

A set of the four ``payload.*`` parameters through ``set_parameters_atomically`` makes the
published torques those of ``RobotModel.with_payload`` (to 1e-12: the same arithmetic); a bad
set is refused with the parameter's name and the reason, and the node keeps publishing the
torques of the payload it had; a bad payload at start stops the node with one line, exit 2.
Same harness as ``test_node`` (the real node as a subprocess, one domain per test).
"""
from __future__ import annotations

import math
from pathlib import Path
import re
import shlex

from harness.node_calls import change_state, run_node
from harness.node_streams import (has_level, OK, random_arm_state, stamped, standing_solo, status,
                                  Streams, wrench_array)
from harness.standing import contacts
import numpy as np
import pytest
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters, SetParametersAtomically
from rclpy.parameter import Parameter as RosParameter
import yaml

from rnea_ros.contacts import ContactSolver
from rnea_ros.control.payload import describe
from rnea_ros.dynamics.payload import moving_mass, Payload
from rnea_ros.node.parameters import before_set

pytestmark = pytest.mark.timeout(120)
LINK = 'panda_link8'
COM = (0.01, -0.02, 0.08)
INERTIA = (0.01, 0.0, 0.001, 0.012, 0.0, 0.008)


def value(x) -> ParameterValue:
    """Return the ParameterValue of a Python value, typed as ros2 param set types it."""
    if isinstance(x, str):
        return ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=x)
    if isinstance(x, (list, tuple)):
        return ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY,
                              double_array_value=[float(v) for v in x])
    return ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=float(x))


def set_atomically(ros, **fields):
    """Set ``payload.<field>`` values in one set_parameters_atomically call; its result."""
    request = SetParametersAtomically.Request(parameters=[
        ParameterMsg(name=f'payload.{name}', value=value(x)) for name, x in fields.items()])
    return ros.call(SetParametersAtomically, '/rnea/set_parameters_atomically', request).result


def answer(streams: Streams, stamp, expected):
    """Wait for the torques answering ``stamp`` that equal ``expected`` (to 1e-12); return them."""
    torques = streams.torque_for(stamp, predicate=lambda m: np.allclose(
        m.effort, expected, rtol=1e-12, atol=1e-12))
    np.testing.assert_allclose(torques.effort, expected, rtol=1e-12, atol=1e-12)
    return torques


def started(ros, panda, seed: int, stamp):
    """Start the node on the panda without a payload; (model, q, v, streams) once it answers."""
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0})
    q, v, _ = random_arm_state(model, seed)
    streams = Streams(ros, model.joint_names, q, v)
    answer(streams, stamp, model.rnea(q, v, np.zeros(model.nv)))
    return model, q, v, streams


def test_an_atomic_set_installs_the_payload_in_the_torques_and_the_diagnostics(ros, panda):
    model, q, v, streams = started(ros, panda, 21, (200, 0))
    zero = np.zeros(model.nv)
    result = set_atomically(ros, link=LINK, mass=2.0, com=COM, inertia=INERTIA)
    assert result.successful, result.reason
    loaded = model.with_payload(LINK, 2.0, COM, INERTIA)
    answer(streams, (201, 0), loaded.rnea(q, v, zero))
    shown = describe(Payload(LINK, 2.0, COM, INERTIA))
    report = streams.diagnostic(has_level(OK, 'payload', shown))
    assert status(report)[2]['payload'] == shown
    # One parameter alone (ros2 param set) is merged with the others: here, no payload.
    single = ros.call(SetParameters, '/rnea/set_parameters', SetParameters.Request(
        parameters=[ParameterMsg(name='payload.link', value=value(''))])).results[0]
    assert single.successful, single.reason
    answer(streams, (202, 0), model.rnea(q, v, zero))
    streams.diagnostic(has_level(OK, 'payload', 'none'))


def get_payload(ros) -> tuple:
    """Return (link, mass, com, inertia) as the node's parameters are (ros2 param get)."""
    values = ros.call(GetParameters, '/rnea/get_parameters', GetParameters.Request(
        names=['payload.link', 'payload.mass', 'payload.com', 'payload.inertia'])).values
    return (values[0].string_value, values[1].double_value,
            list(values[2].double_array_value), list(values[3].double_array_value))


def test_a_removed_payload_leaves_no_field_and_a_later_link_alone_weighs_nothing(ros, panda):
    """payload.link '' resets mass, com and inertia: a later payload.link is massless."""
    model, q, v, streams = started(ros, panda, 25, (250, 0))
    zero = np.zeros(model.nv)
    result = set_atomically(ros, link=LINK, mass=2.0, com=COM, inertia=INERTIA)
    assert result.successful, result.reason
    answer(streams, (251, 0), model.with_payload(LINK, 2.0, COM, INERTIA).rnea(q, v, zero))
    removed = ros.call(SetParameters, '/rnea/set_parameters', SetParameters.Request(
        parameters=[ParameterMsg(name='payload.link', value=value(''))])).results
    assert [r.successful for r in removed] == [True], removed
    assert get_payload(ros) == ('', 0.0, [0.0] * 3, [0.0] * 6)
    answer(streams, (252, 0), model.rnea(q, v, zero))
    single = ros.call(SetParameters, '/rnea/set_parameters', SetParameters.Request(
        parameters=[ParameterMsg(name='payload.link', value=value(LINK))])).results[0]
    assert single.successful, single.reason
    assert get_payload(ros) == (LINK, 0.0, [0.0] * 3, [0.0] * 6)
    answer(streams, (253, 0), model.rnea(q, v, zero))  # a zero-mass payload: no torque
    streams.diagnostic(has_level(OK, 'payload', describe(Payload(LINK))))


def test_before_set_resets_the_payload_fields_with_the_link_and_only_then():
    """The pre-set callback: a removal resets the three fields, even ones given with it."""
    removal = before_set([RosParameter('payload.link', value=''),
                          RosParameter('payload.mass', value=3.0),
                          RosParameter('rate', value=100)])
    assert {p.name: p.value for p in removal} == {
        'payload.link': '', 'rate': 100.0, 'payload.mass': 0.0, 'payload.com': [0.0] * 3,
        'payload.inertia': [0.0] * 6}
    assert {p.name: p.type_ for p in removal}['payload.com'] == RosParameter.Type.DOUBLE_ARRAY
    kept = before_set([RosParameter('payload.link', value=LINK),
                       RosParameter('payload.mass', value=3)])
    assert {p.name: p.value for p in kept} == {'payload.link': LINK, 'payload.mass': 3.0}
    assert before_set([RosParameter('payload.mass', value=1.0)])[0].value == 1.0


BAD_SETS = [
    ({'mass': math.nan}, "parameter 'payload.mass' is nan: expected a number from 0 to 10000"),
    ({'mass': -1.0}, "parameter 'payload.mass' is -1.0: expected a number from 0 to 10000"),
    ({'mass': 'heavy'},
     "parameter 'payload.mass' is 'heavy': expected a number from 0 to 10000"),
    ({'inertia': (0.1, 0.0, 0.0, -0.1, 0.0, 0.1)},
     'payload.inertia [0.1, 0.0, 0.0, -0.1, 0.0, 0.1] is not positive semi-definite (smallest '
     'eigenvalue -0.1 kg m^2): no rigid body has it'),
    ({'inertia': (0.1, 0.0, 0.0, 0.1, 0.0, 0.3)},
     'payload.inertia breaks the triangle inequality: izz (0.3) exceeds the sum of the other '
     'two (0.2): no mass density has it'),
    ({'com': (0.0, 0.1)}, "parameter 'payload.com' is [0.0, 0.1]: expected 3 finite numbers "
                          '(m, link frame)'),
    ({'com': (1e6, 0.0, 0.0)},
     'payload.com [1000000.0, 0.0, 0.0] is 1e+06 m from the link origin: expected at most 3 m'),
    ({'mass': 1.5, 'inertia': (30.0, 0.0, 0.0, 30.0, 0.0, 30.0)},
     'payload.inertia has a principal moment of 30 kg m^2: expected at most mass x (3 m)^2 = '
     '13.5 kg m^2 (its matter within 3 m)'),
    ({'link': 'nowhere', 'mass': 3.0}, "parameter 'payload.link': unknown link 'nowhere'"),
    ({'link': 'panda_link0'}, "parameter 'payload.link': link 'panda_link0' is fixed to the "
                              'world: a payload there changes no joint torque'),
]


def test_bad_sets_are_refused_naming_the_parameter_and_the_old_payload_stays(ros, panda):
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'payload.link': LINK,
                    'payload.mass': 1.5, 'payload.com': list(COM),
                    'payload.inertia': list(INERTIA)})
    q, v, _ = random_arm_state(model, 22)
    streams = Streams(ros, model.joint_names, q, v)
    loaded = model.with_payload(LINK, 1.5, COM, INERTIA).rnea(q, v, np.zeros(model.nv))
    answer(streams, (210, 0), loaded)
    robot = moving_mass(model.tree)  # the mass is bounded by 5 times the robot's
    heavy = ({'mass': 6 * robot}, f'payload.mass is {6 * robot:g} kg: expected at most 5 times '
                                  f"the robot's mass (5 x {robot:g} kg = {5 * robot:g} kg)")
    for k, (fields, reason) in enumerate(BAD_SETS + [heavy]):
        result = set_atomically(ros, **fields)
        assert (result.successful, result.reason) == (False, reason)
        answer(streams, (211, k), loaded)  # still publishing, with the old payload
    values = ros.call(GetParameters, '/rnea/get_parameters', GetParameters.Request(
        names=['payload.link', 'payload.mass', 'payload.com'])).values
    assert values[0].string_value == LINK and values[1].double_value == 1.5
    assert list(values[2].double_array_value) == list(COM)


@pytest.mark.parametrize('override, line', [
    ('payload.mass:=-2.0', "parameter 'payload.mass' is -2.0: expected a number from 0 to "
                           '10000'),
    ('payload.inertia:=[0.1, 0.0, 0.0, 0.1, 0.0, 0.3]',
     'payload.inertia breaks the triangle inequality: izz (0.3) exceeds the sum of the other '
     'two (0.2): no mass density has it'),
    ('payload.com:=[0.0]', "parameter 'payload.com' is [0.0]: expected 3 finite numbers (m, "
                           'link frame)'),
    ('payload.com:=[1000000.0, 0.0, 0.0]',
     'payload.com [1000000.0, 0.0, 0.0] is 1e+06 m from the link origin: expected at most 3 m'),
])
def test_a_bad_payload_at_start_exits_2_in_one_line(override, line):
    result = run_node('-p', override)
    assert result.returncode == 2, result.stderr
    assert result.stderr == f'rnea_node: {line}\n'


def test_a_payload_on_an_unknown_link_at_start_exits_2_naming_it(ros, panda):
    _, xml = panda
    process = ros.start_node({'robot_description': xml, 'payload.link': 'nowhere',
                              'payload.mass': 1.0})
    assert process.proc.wait(60) == 2
    lines = [line for line in process.output().splitlines()
             if "parameter 'payload.link': unknown link 'nowhere'" in line]
    assert len(lines) == 1, process.output()


def docs_atomic_command() -> list[str]:
    """Return the words of the set_parameters_atomically command of docs/node/parameters.md."""
    text = (Path(__file__).resolve().parents[2] / 'docs' / 'node' / 'parameters.md').read_text()
    for block in re.findall(r'```bash\n(.*?)```', text, re.S):
        for command in block.replace('\\\n', ' ').splitlines():  # beside its rnea_ctl twin
            if command.startswith('ros2 ') and 'set_parameters_atomically' in command:
                return shlex.split(command)
    raise AssertionError('docs/node/parameters.md shows no set_parameters_atomically command')


def test_the_docs_atomic_set_command_installs_its_payload(ros, panda):
    """What ``ros2 service call`` sends for the docs' command: its YAML request as a message."""
    words = docs_atomic_command()
    assert words[:5] == ['ros2', 'service', 'call', '/rnea/set_parameters_atomically',
                         'rcl_interfaces/srv/SetParametersAtomically']
    request = SetParametersAtomically.Request(parameters=[
        ParameterMsg(name=p['name'], value=ParameterValue(**p['value']))
        for p in yaml.safe_load(words[5])['parameters']])
    fields = {p.name.split('.')[1]: p.value for p in request.parameters}
    payload = Payload(fields['link'].string_value, fields['mass'].double_value,
                      tuple(fields['com'].double_array_value),
                      tuple(fields['inertia'].double_array_value))
    model, q, v, streams = started(ros, panda, 23, (220, 0))
    zero = np.zeros(model.nv)
    result = ros.call(SetParametersAtomically, words[3], request).result
    assert result.successful, result.reason
    loaded = model.with_payload(payload.link, payload.mass, payload.com, payload.inertia)
    answer(streams, (221, 0), loaded.rnea(q, v, zero))


def test_a_payload_on_the_base_changes_the_contact_wrenches(ros):
    """solo12 standing: the feet carry the payload's weight, as the solver on its model says."""
    model, q, streams, feet = standing_solo(ros, {})
    zeros = np.zeros(model.nv)
    bare = ContactSolver(model, contacts('solo12')).solve(q, zeros, zeros)
    streams.torque_for((230, 0), predicate=lambda m: np.allclose(m.effort, bare.tau[6:],
                                                                 atol=1e-9))
    result = set_atomically(ros, link='base_link', mass=1.0, com=(0.05, 0.0, 0.02),
                            inertia=(0.001, 0.0, 0.0, 0.001, 0.0, 0.001))
    assert result.successful, result.reason
    inertia = (0.001, 0.0, 0.0, 0.001, 0.0, 0.001)
    loaded = model.with_payload('base_link', 1.0, (0.05, 0.0, 0.02), inertia)
    solution = ContactSolver(loaded, contacts('solo12')).solve(q, zeros, zeros)
    assert solution.feasible
    streams.torque_for((231, 0), predicate=lambda m: np.allclose(m.effort, solution.tau[6:],
                                                                 atol=1e-9))
    weight = np.zeros(3)
    for k, (link, collector) in enumerate(feet.items()):
        # Not a fault output (zero) of a cycle that judged the inputs stale at load.
        msg = ros.wait_for(collector, lambda m: stamped((231, 0))(m)
                           and wrench_array(m).any(), start=0, tick=streams.tick)
        np.testing.assert_allclose(wrench_array(msg), solution.wrenches[k], rtol=0,
                                   atol=1e-9)
        weight += model.link_placement(q, link)[0] @ wrench_array(msg)[:3]
    mass = float(model.tree.mass.sum()) + 1.0
    np.testing.assert_allclose(weight, [0.0, 0.0, 9.81 * mass], rtol=0, atol=1e-9)


def test_a_payload_set_before_the_model_loads_is_in_its_first_torques(ros, panda):
    """With autostart false, the payload set while unconfigured applies when the model loads."""
    from lifecycle_msgs.msg import Transition
    model, xml = panda
    ros.start_node({'robot_description': xml, 'rate': 200.0, 'autostart': False})
    result = set_atomically(ros, link=LINK, mass=0.7, com=COM, inertia=INERTIA)
    assert result.successful, result.reason
    assert change_state(ros, Transition.TRANSITION_CONFIGURE)
    assert change_state(ros, Transition.TRANSITION_ACTIVATE)
    q, v, _ = random_arm_state(model, 24)
    streams = Streams(ros, model.joint_names, q, v)
    loaded = model.with_payload(LINK, 0.7, COM, INERTIA)
    answer(streams, (240, 0), loaded.rnea(q, v, np.zeros(model.nv)))
