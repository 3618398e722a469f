"""rnea_ctl's parameter values: YAML text -> a parameter type, integers as doubles."""
from __future__ import annotations

import pytest

from rnea_ros.ctl.values import assignment, DOUBLE, DOUBLE_ARRAY, parse_value, show
from rnea_ros.errors import InputError


@pytest.mark.parametrize('text, declared, parsed', [
    ('true', 0, (1, True)),
    ('500', 0, (2, 500)),
    ('500', DOUBLE, (3, 500.0)),
    ('[0, 0, -9.81]', DOUBLE_ARRAY, (8, [0.0, 0.0, -9.81])),
    ('panda_link8', 0, (4, 'panda_link8')),
    ("''", 0, (4, '')),
    ('[a, b]', 0, (9, ['a', 'b'])),
    ('[]', DOUBLE_ARRAY, (8, [])),
])
def test_values_read_as_yaml(text, declared, parsed):
    assert parse_value('p', text, declared) == parsed


@pytest.mark.parametrize('text', ['{a: 1}', '[1, a]', '[]', '~'])
def test_values_without_a_parameter_type_are_refused_naming_it(text):
    with pytest.raises(InputError) as error:
        parse_value('payload.com', text)
    assert str(error.value) == (f"parameter 'payload.com': {text!r}: expected true/false, a "
                                'number, a text or a list of one kind of them (YAML)')


def test_assignment_and_show():
    assert assignment('payload.link:=a:=b') == ('payload.link', 'a:=b')
    with pytest.raises(InputError, match=r"^'rate=5': expected NAME:=VALUE"):
        assignment('rate=5')
    assert [show(v) for v in (2.0, [0.0, -9.81], '', 'x', True)] == [
        '2.0', '[0.0, -9.81]', "''", 'x', 'true']


@pytest.mark.parametrize('text, line', [
    (str(2 ** 63), "parameter 'rate': '9223372036854775808': expected integers from -2**63 to "
     '2**63-1 (a ROS integer parameter)'),
    ('[1, ' + '9' * 400 + ']', "parameter 'rate': '[1, 99999999999999999999999...99999999999999"
     "9999999999999]': expected integers from -2**63 to 2**63-1 (a ROS integer parameter)"),
    ('9' * 5000, "parameter 'rate': '999999999999999999999999999...999999999999999999999999999"
     "9': a value that cannot be built (Exceeds the limit (4300 digits) for integer string "
     'conversion)'),
    ('[&a [x, x, x, x, x, x, x, x, x], ' + ', '.join(
        f'&{chr(98 + k)} [{", ".join([f"*{chr(97 + k)}"] * 9)}]' for k in range(8)) + ']',
     "parameter 'rate': '[&a [x, x, x, x, x, x, x, x...*h, *h, *h, *h, *h, *h, *h]]': "
     'YAML aliases repeat more than 100000 nodes (expected a document without alias bombs)'),
    ('[' * 100_000, "parameter 'rate': '[[[[[[[[[[[[[[[[[[[[[[[[[[[...[[[[[[[[[[[[[[[[[[[[[[[[[["
     "[[': nested too deeply for the parser"),
])
def test_a_value_built_to_break_the_reader_is_one_line(text, line):
    with pytest.raises(InputError) as error:
        parse_value('rate', text)
    assert str(error.value) == line


def test_an_integer_for_a_double_is_one_a_double_holds():
    assert parse_value('rate', str(2 ** 63), DOUBLE) == (DOUBLE, 2.0 ** 63)
    with pytest.raises(InputError) as error:
        parse_value('rate', '9' * 400, DOUBLE)  # float() of it: OverflowError
    assert str(error.value) == ("parameter 'rate': '999999999999999999999999999...9999999999999"
                                "999999999999999': expected numbers of magnitude below 1.8e308 "
                                '(a ROS double parameter)')
