"""
Parameter values on the command line: text -> a value of a parameter type, and back.

``rnea_ctl param set NODE NAME:=VALUE`` reads VALUE as YAML, as ``ros2 param set`` does
(``true``, ``1000.0``, ``[0.0, 0.0, -9.81]``, ``panda_link8``, ``"''"`` for the empty text); an
integer (or a list of integers) given to a double parameter is sent as a double. No ROS here:
``session`` makes the messages.
"""
from __future__ import annotations

from rnea_ros.errors import InputError
from rnea_ros.files import brief, finite_number, load_yaml, YamlError

# rcl_interfaces/ParameterType: the types a value can have on the command line.
BOOL, INTEGER, DOUBLE, STRING = 1, 2, 3, 4
BOOL_ARRAY, INTEGER_ARRAY, DOUBLE_ARRAY, STRING_ARRAY = 6, 7, 8, 9
TYPE_NAMES = {0: 'not set', BOOL: 'bool', INTEGER: 'integer', DOUBLE: 'double',
              STRING: 'string', 5: 'byte array', BOOL_ARRAY: 'bool array',
              INTEGER_ARRAY: 'integer array', DOUBLE_ARRAY: 'double array',
              STRING_ARRAY: 'string array'}
SCALARS = {bool: BOOL, int: INTEGER, float: DOUBLE, str: STRING}
INT64 = (-2 ** 63, 2 ** 63 - 1)  # rcl_interfaces/ParameterValue's integer_value
EXPECTED = 'expected true/false, a number, a text or a list of one kind of them (YAML)'
ARRAYS = {BOOL: BOOL_ARRAY, INTEGER: INTEGER_ARRAY, DOUBLE: DOUBLE_ARRAY, STRING: STRING_ARRAY}


def assignment(text: str) -> tuple[str, str]:
    """Split ``NAME:=VALUE``; ``InputError`` naming the text when it is not one."""
    name, separator, value = text.partition(':=')
    if not separator or not name:
        raise InputError(f'{text!r}: expected NAME:=VALUE (VALUE as YAML, e.g. rate:=500.0)')
    return name, value


def parse_value(name: str, text: str, declared: int = 0) -> tuple[int, object]:
    """
    Return (ParameterType, value) of ``text`` read as YAML for the parameter ``name``.

    ``declared``: the parameter's declared type (0: unknown); integers become doubles for a
    double (array) parameter. Anything but a bool, number, text or a list of one of them
    raises ``InputError`` naming the parameter.
    """
    try:
        value = load_yaml(text) if text.strip() else ''
    except YamlError as exc:
        if 'malformed YAML' not in str(exc):  # an alias bomb, deep nesting, a huge integer
            raise InputError(f'parameter {name!r}: {brief(text)}: {exc}') from None
        value = text  # as ros2 param set: what YAML cannot read is a text
    integers = [item for item in (value if isinstance(value, list) else [value])
                if isinstance(item, int) and not isinstance(item, bool)]
    if declared in (DOUBLE, DOUBLE_ARRAY):
        if not all(finite_number(item) for item in integers):
            raise InputError(f'parameter {name!r}: {brief(text)}: expected numbers of magnitude '
                             'below 1.8e308 (a ROS double parameter)')
        value = _as_doubles(value)
    elif any(not INT64[0] <= item <= INT64[1] for item in integers):
        raise InputError(f'parameter {name!r}: {brief(text)}: expected integers from -2**63 '
                         'to 2**63-1 (a ROS integer parameter)')
    if type(value) in SCALARS:  # nan and inf too: the node refuses what it cannot use
        return SCALARS[type(value)], value
    if isinstance(value, list) and value and len({type(item) for item in value}) == 1 and (
            type(value[0]) in SCALARS):
        return ARRAYS[SCALARS[type(value[0])]], value
    if isinstance(value, list) and not value and declared in ARRAYS.values():
        return declared, value
    raise InputError(f'parameter {name!r}: {brief(text)}: {EXPECTED}')


def _as_doubles(value):
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, list) and all(isinstance(item, (int, float))
                                       and not isinstance(item, bool) for item in value):
        return [float(item) for item in value]
    return value


def show(value) -> str:
    """Return a parameter's value as YAML flow text (what ``param set`` reads back)."""
    if isinstance(value, float):
        return repr(value)
    import yaml  # here: every rnea_ctl call imports this module, few print a list
    return yaml.safe_dump(value, default_flow_style=True, width=1 << 20).strip().removesuffix(
        '\n...').removesuffix('...').strip()
