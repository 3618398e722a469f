"""
Node parameter files: one module reads and writes them for every tool.

Each tool's file (the actuation model, ``rnea_bag --observer``'s thresholds, ``rnea_identify
--payload``'s payload) is the text it always was and reads back through ``params_file.read`` to
the values written, exactly; every reader (the actuation model, the thresholds) refuses a hostile
file with one line naming it. The model: two joints (revolute, prismatic), written inline.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.bag.observing import read_thresholds, thresholds_yaml
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.dynamics.payload import Payload
from rnea_ros.errors import InputError
from rnea_ros.identify.payload import payload_yaml
from rnea_ros.params import params_file
from rnea_ros.params.actuation_file import actuation_yaml, read_actuation

URDF = """<robot name="two">
  <link name="base"/>
  <link name="arm"><inertial><mass value="1"/><origin xyz="0.1 0 0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="tool0"><inertial><mass value="0.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="10" velocity="2"/></joint>
  <joint name="slide" type="prismatic"><parent link="arm"/><child link="tool0"/>
    <origin xyz="0.2 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-0.1" upper="0.1" effort="10" velocity="1"/></joint>
</robot>"""
ACTUATION = {'friction.shoulder.coulomb': 0.8, 'friction.slide.viscous': 1.5e-05,
             'armature.shoulder': 0.1, 'effort_bias.slide': -0.25,
             'friction_velocity_threshold': 0.02}
ACTUATION_TEXT = """\
# Actuation model of rnea_ros (rnea_ros/dynamics/actuation.py): per joint
# tau += armature*a + coulomb*tanh(v/friction_velocity_threshold) + viscous*v + offset
# (N m, N m s/rad, N m, kg m^2; N, N s/m, N, kg for prismatic joints);
# effort_bias (N m; N): the effort sensor's bias, taken out of the measured effort, never applied
/**:
  ros__parameters:
    friction_model: coulomb-viscous-offset
    friction_velocity_threshold: 0.02
    friction:
      shoulder:
        coulomb: 0.8
        viscous: 0.0
        offset: 0.0
      slide:
        coulomb: 0.0
        viscous: 1.5e-05
        offset: 0.0
    armature:
      shoulder: 0.1
      slide: 0.0
    effort_bias:
      shoulder: 0.0
      slide: -0.25
"""
THRESHOLDS_BODY = """\
/**:
  ros__parameters:
    collision_threshold.shoulder: 3.25
    collision_threshold.slide: 0.30000000000000004
"""
PAYLOAD_BODY = """\
/**:
  ros__parameters:
    payload.link: "tool0"
    payload.mass: 2.0
    payload.com: [0.01, -0.02, 0.06]
    payload.inertia: [0.004, 0.0, 0.0, 0.005, 0.0, 0.003]
"""


@pytest.fixture(scope='module')
def model() -> RobotModel:
    return RobotModel.from_urdf_string(URDF)


def _fit(payload: Payload) -> SimpleNamespace:
    """Return what ``payload_yaml`` reads of a ``PayloadFit``: the payload, its deviations."""
    return SimpleNamespace(payload=payload, std={
        'mass': np.array([0.01]), 'com': np.array([0.001, 0.002, np.inf]),
        'inertia': np.full(6, 1e-4)})


def _read_back(tmp_path, text: str, what: str = 'the parameters') -> dict:
    path = tmp_path / 'params.yaml'
    path.write_text(text)
    return params_file.read(path, what)


def test_the_actuation_file_is_unchanged_and_reads_back_exactly(tmp_path, model):
    written = Actuation.from_parameters(model, ACTUATION)
    gained = Actuation.from_parameters(model, {**ACTUATION, 'effort_gain.slide': 12.5})
    assert actuation_yaml(written) == ACTUATION_TEXT
    for actuation in (written, gained):
        params = _read_back(tmp_path, actuation_yaml(actuation))
        expected = actuation.to_parameters()
        if actuation is written:  # a gain of 1 everywhere is not written
            expected = {k: v for k, v in expected.items() if not k.startswith('effort_gain.')}
        assert params == expected and list(params) == list(expected)


def test_the_thresholds_file_is_unchanged_and_reads_back_exactly(tmp_path):
    thresholds = np.array([3.25, 0.1 + 0.2])
    text = thresholds_yaml(['shoulder', 'slide'], thresholds)
    assert text.startswith('# Collision thresholds of rnea_ros') and \
        text.endswith(THRESHOLDS_BODY)
    assert _read_back(tmp_path, text) == {'collision_threshold.shoulder': 3.25,
                                          'collision_threshold.slide': 0.30000000000000004}
    path = tmp_path / 'params.yaml'
    np.testing.assert_array_equal(read_thresholds(path, ['shoulder', 'slide']), thresholds)


def test_the_payload_file_is_unchanged_and_reads_back_exactly(tmp_path):
    payload = Payload('tool0', 2.0, (0.01, -0.02, 0.06), (0.004, 0.0, 0.0, 0.005, 0.0, 0.003))
    text = payload_yaml(_fit(payload))
    assert text.startswith('# Payload identified by rnea_identify --payload') and \
        text.endswith(PAYLOAD_BODY)
    assert _read_back(tmp_path, text) == {
        'payload.link': 'tool0', 'payload.mass': 2.0, 'payload.com': [0.01, -0.02, 0.06],
        'payload.inertia': [0.004, 0.0, 0.0, 0.005, 0.0, 0.003]}


@pytest.mark.parametrize('link, inertia', [
    ('tool0', (0.004, 0.0, 0.0, 0.005, 1e-05, 0.003)),
    ('l\U0001F600', (0.004, 0.0, 0.0, 0.005, 0.0, 0.003)),
], ids=['exponent without a point', 'link beyond the BMP'])
def test_every_payload_reads_back_as_written(tmp_path, link, inertia):
    """
    Regression: ``repr`` wrote 1e-05, which a YAML 1.1 reader takes for the string '1e-05'.

    And ``json.dumps`` wrote a link beyond the BMP as a surrogate pair, read back as two
    surrogates instead of the character.
    """
    payload = Payload(link, 1e+16 if link == 'tool0' else 2.0, (0.01, -0.02, 0.06), inertia)
    params = _read_back(tmp_path, payload_yaml(_fit(payload)))
    assert params == {'payload.link': link, 'payload.mass': payload.mass,
                      'payload.com': list(payload.com), 'payload.inertia': list(inertia)}
    assert all(type(x) is float for x in params['payload.inertia'] + [params['payload.mass']])


NUMBERS = [0.1 + 0.2, 1e-05, 1e+16, -0.0, 5e-324, 1.7976931348623157e+308, 123456789.0,
           np.float64(2.5), 7]


def test_numbers_read_back_exactly_and_lists_stay_on_one_line(tmp_path):
    text = params_file.write({'numbers': NUMBERS, 'nested': {'a': {'b': 0.1}}, 'yes': 'yes',
                              'flag': True, 'names': ['1', 'null', 'a b']}, '# numbers\n')
    assert '    numbers: [0.30000000000000004, 1.0e-05, 1.0e+16, -0.0, 5.0e-324, ' in text
    params = _read_back(tmp_path, text)
    assert params == {'numbers': [float(x) for x in NUMBERS[:-1]] + [7], 'nested.a.b': 0.1,
                      'yes': 'yes', 'flag': True, 'names': ['1', 'null', 'a b']}
    assert [type(x) for x in params['numbers']] == [float] * 8 + [int]
    assert str(params['numbers'][3]) == '-0.0'


@pytest.mark.parametrize('params, header, message', [
    ({'a': float('nan')}, '', "parameter 'a' is nan: a parameters file holds finite numbers"),
    ({'a': {'b': [1.0, float('inf')]}}, '',
     "parameter 'a.b' is inf: a parameters file holds finite numbers"),
    ({'a': 1.0}, 'no comment\n', "a parameters file header is comment lines, got 'no comment"),
    ({'a': 1.0}, '# no newline', 'a parameters file header is comment lines'),
])
def test_what_cannot_be_written_is_refused(params, header, message):
    with pytest.raises(ValueError, match='^' + message.replace('(', r'\(').replace(')', r'\)')):
        params_file.write(params, header)


def test_every_section_is_read_in_file_order_nested_names_joined(tmp_path):
    text = ('/**:\n  ros__parameters:\n    b: 1\n    a:\n      x: [1, 2]\n      y: {z: s}\n'
            'other: 3\n'
            'rnea:\n  ros__parameters:\n    c: 2.5\n    b: 4\n'
            'plain:\n  not_parameters: {d: 1}\n')
    params = _read_back(tmp_path, text)
    assert list(params.items()) == [('b', 4), ('a.x', [1, 2]), ('a.y.z', 's'), ('c', 2.5)]


NESTED = '{a: ' * 200 + '1' + '}' * 200
ALIASES = '/**:\n  ros__parameters:\n    a0: &a0 {x: 1, y: 1}\n' + ''.join(
    f'    a{k}: &a{k} {{x: *a{k - 1}, y: *a{k - 1}}}\n' for k in range(1, 40))
# A value of 9**9 strings in about 300 bytes: the repr of it in an error took hours, gigabytes.
LIST_BOMB = '/**:\n  ros__parameters:\n    a: [&a [x, x, x, x, x, x, x, x, x], ' + ', '.join(
    f'&{chr(98 + k)} [{", ".join([f"*{chr(97 + k)}"] * 9)}]' for k in range(8)) + ']\n'
HOSTILE = [
    ('[' * 100_000 + ']' * 100_000, 'cannot read {what}: nested too deeply for the parser'),
    (f'/**:\n  ros__parameters:\n    {NESTED}\n', 'parameter names nested deeper than 100 '
     f"levels under {'a.' * 40!r}..."),
    (ALIASES, 'cannot read {what}: YAML aliases repeat more than 100000 nodes (expected a '
     'document without alias bombs)'),
    (LIST_BOMB, 'cannot read {what}: YAML aliases repeat more than 100000 nodes (expected a '
     'document without alias bombs)'),
    ('/**:\n  ros__parameters:\n    a: ' + '9' * 5000 + '\n', 'cannot read {what}: a value '
     'that cannot be built (Exceeds the limit (4300 digits) for integer string conversion)'),
    ('- 1\n- 2\n', 'expected a ROS 2 parameters file: /**: ros__parameters: {{...}}'),
    ('', 'expected a ROS 2 parameters file: /**: ros__parameters: {{...}}'),
    ('/**:\n  ros__parameters: 3\n', 'expected a ROS 2 parameters file: /**: '
     'ros__parameters: {{...}}'),
    (b'\xff\xfe\x00\x80', 'cannot read {what}: not UTF-8 text (byte 0xff at offset 0)'),
    ('/**:\n  ros__parameters:\n    ? [a, b]\n    : 1\n', 'cannot read {what}: malformed '
     'YAML: found unhashable key at line 3, column 7'),
    ('/**:\n  ros__parameters:\n    a: !!python/name:os.system\n', 'cannot read {what}: '
     'malformed YAML: could not determine a constructor for the tag '
     "'tag:yaml.org,2002:python/name:os.system' at line 3, column 8"),
    (None, 'cannot read {what}: No such file or directory'),
]
HOSTILE_IDS = ['deep brackets', 'deep names', 'aliases', 'list bomb', 'huge integer',
               'not a mapping', 'empty', 'not a section', 'not text', 'unhashable key',
               'python tag', 'missing']


@pytest.mark.parametrize('text, message', HOSTILE, ids=HOSTILE_IDS)
@pytest.mark.parametrize('reader, what', [
    (lambda path, model: read_actuation(path, model), 'the actuation model'),
    (lambda path, model: read_thresholds(path, ['shoulder', 'slide']), 'collision thresholds'),
], ids=['actuation model', 'thresholds'])
def test_every_reader_refuses_a_hostile_file_in_one_line(tmp_path, model, reader, what, text,
                                                         message):
    path = tmp_path / 'params.yaml'
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text)
    with pytest.raises(InputError) as raised:
        reader(path, model)
    line = str(raised.value)
    assert line.startswith(f'{path}: {message.format(what=what)}') and '\n' not in line
