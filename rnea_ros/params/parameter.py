"""
What a node parameter is: ``Parameter`` (one), ``Family`` (per link or per joint), ``check``.

``declaration`` declares the node's parameters with these; ``check`` is the one rule a value
meets, with one message, at start and on a live set (the type, the range or the choices).
ROS-free.
"""
from __future__ import annotations

import array
from dataclasses import dataclass
import math
import re

__all__ = ['BOOL', 'check', 'descriptor_fields', 'DOUBLE', 'DOUBLE_ARRAY', 'Family', 'INTEGER',
           'Parameter', 'shown', 'STRING', 'STRING_ARRAY']

BOOL, INTEGER, DOUBLE, STRING = 'bool', 'integer', 'double', 'string'
DOUBLE_ARRAY, STRING_ARRAY = 'double_array', 'string_array'
_KEY = re.compile(r'\{(\w+)\}')  # a key of a family's name pattern


@dataclass(frozen=True)
class Parameter:
    """
    One parameter of the node.

    ``kind``: one of ``BOOL``, ``INTEGER``, ``DOUBLE``, ``STRING``, ``DOUBLE_ARRAY``,
    ``STRING_ARRAY``. ``default``: its value when not given; None: unset (an array parameter
    with no value, shown in the docs as ``unset``, with ``example`` in config/rnea.yaml).
    ``low``/``high``: inclusive bounds of a number (``high`` of an array: of its magnitude);
    ``choices``: the strings it may be; ``size``: the length of an array. ``live``: may be
    changed on a running node (applied between two cycles); otherwise read-only. ``summary``:
    the docs table's line; ``description``: the full text (the descriptor, config/rnea.yaml);
    ``note``: a footnote mark of the docs table. ``expected``: what a message says is
    expected, when the kind and bounds do not say it well (derived otherwise).
    """

    name: str
    kind: str
    default: object
    summary: str
    description: str
    unit: str = ''
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    size: int | None = None
    live: bool = False
    example: str = ''
    shown_default: str = ''
    note: str = ''
    expected: str = ''

    @property
    def expectation(self) -> str:
        """Say in words what the parameter takes (the end of every message about it)."""
        if self.expected:
            return self.expected
        if self.choices:
            return 'one of: ' + ', '.join(self.choices)
        words = {BOOL: 'true or false', INTEGER: 'an integer', DOUBLE: 'a number',
                 STRING: 'a string', DOUBLE_ARRAY: 'a list of numbers',
                 STRING_ARRAY: 'a list of strings'}[self.kind]
        if self.low is not None and self.high is not None:
            words += f' from {self.low:g} to {self.high:g}'
        return words


def descriptor_fields(parameter: Parameter, subject: str = '', read_only: bool | None = None
                      ) -> dict:
    """
    Return the fields of the parameter's ROS ``ParameterDescriptor`` (the node's, the sim's).

    The description (``subject`` first, the unit after), ``additional_constraints`` (what it
    takes: the end of every message about it), read-only (``read_only``; None: unless live),
    dynamically typed (an integer given for a number is that number, after the check).
    """
    text = parameter.description + (f' [{parameter.unit}]' if parameter.unit else '')
    return {'description': subject + text,
            'read_only': not parameter.live if read_only is None else read_only,
            'additional_constraints': parameter.expectation, 'dynamic_typing': True}


class _Keys(dict):
    """The keys of a family's name pattern; one not given shows as ``<key>`` (the docs)."""

    def __missing__(self, key: str) -> str:
        return f'<{key}>'


@dataclass(frozen=True)
class Family:
    """
    Parameters declared per link or per joint.

    Each member's ``name`` is a pattern with ``{key}`` in it, e.g. ``contact.{link}.friction``;
    ``when``: when the node declares them; ``checked_by``: the library record that checks
    their values. ``attribute``: the field of the settings snapshot holding the values set
    (``settings.Settings``; '' for a family read into another parameter's records), a read-only
    mapping: by the member's full name for a family of several members (``kp.j1``), by its keys
    otherwise (``{joint: value}``, ``{profile: {joint: value}}``). The family owns its names:
    ``prefixes`` and ``split`` tell which of its members a parameter name is, and for what.
    """

    key: str
    members: tuple[Parameter, ...]
    when: str
    checked_by: str
    attribute: str = ''

    def name(self, member: Parameter, key: str, **others: str) -> str:
        """Return the name of ``member`` for the link or joint ``key`` (and ``others``)."""
        return member.name.format_map(_Keys({self.key: key, **others}))

    @property
    def prefixes(self) -> tuple[str, ...]:
        """Return the text each member's name starts with (``kp.``, ``friction.``)."""
        return tuple(dict.fromkeys(member.name.partition('{')[0] for member in self.members))

    def split(self, name: str, known: dict) -> tuple[Parameter, tuple[str, ...]] | None:
        """
        Return (member, keys) of the parameter ``name``, or None when it is none of the family's.

        ``known``: key -> the names it may take (the model's joints, ``collision_profiles``);
        a key not in it takes any name. Keys are separated by dots: only the last may hold
        dots (a joint's name may, a profile's may not). The members are tried in their order.
        """
        for member in self.members:
            head = member.name.partition('{')[0]
            tail = member.name[member.name.rindex('}') + 1:]
            if not (name.startswith(head) and name.endswith(tail)) or len(name) <= len(
                    head) + len(tail):
                continue
            keys = _KEY.findall(member.name)
            parts = name[len(head):len(name) - len(tail)].split('.', len(keys) - 1)
            if len(parts) == len(keys) and all(
                    part in known.get(key, (part,)) for key, part in zip(keys, parts)):
                return member, tuple(parts)
        return None

    def field(self, member: Parameter) -> str:
        """Return the last part of a member's name (``friction`` of contact.{link}.friction)."""
        return member.name.rsplit('.', 1)[1] if member.name.count('.') > 1 else \
            member.name.split('.', 1)[0]


def shown(value) -> str:
    """Show a value as a message about it does: YAML-like (true, [1.0, 2.0], 'text')."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)) or hasattr(value, 'tolist'):
        return '[' + ', '.join(shown(v) for v in list(value)) + ']'
    return repr(value)


def check(parameter: Parameter, value):
    """
    Return ``value`` as the node uses it, or raise ValueError with the one message about it.

    An integer given for a number is that number (``rate: 1000``, ``-p rate:=1000``), at start
    and on a live set alike; None (unset) stays None for a parameter without a default. The
    message: ``parameter 'rate' is -5.0: expected a number from 0 to 10000``.
    """
    if value is None and parameter.default is None:
        return None
    converted = _converted(parameter, value)
    if converted is None:
        raise ValueError(f'parameter {parameter.name!r} is {shown(_as_number(parameter, value))}: '
                         f'expected {parameter.expectation}')
    return converted


def _as_number(parameter: Parameter, value):
    """Show an integer given for a number as the number it is taken for (100 -> 100.0)."""
    def number(item):
        return float(item) if isinstance(item, int) and not isinstance(item, bool) else item
    if parameter.kind == DOUBLE:
        return number(value)
    if parameter.kind == DOUBLE_ARRAY and isinstance(value, (list, tuple)):
        return [number(item) for item in value]
    return value


def _converted(parameter: Parameter, value):
    """Return the value in the parameter's type and bounds, or None when it does not fit."""
    kind = parameter.kind
    if kind == BOOL:
        return value if isinstance(value, bool) else None
    if kind in (INTEGER, DOUBLE):
        number = _number(value, integer=kind == INTEGER)
        if number is None or (parameter.low is not None and number < parameter.low) or (
                parameter.high is not None and number > parameter.high):
            return None
        return number
    if kind == STRING:
        if not isinstance(value, str) or (parameter.choices and value not in parameter.choices):
            return None
        return value
    if isinstance(value, array.array):  # a live set's array (rclpy keeps ROS arrays so)
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or (
            parameter.size is not None and len(value) != parameter.size):
        return None
    if kind == STRING_ARRAY:
        return tuple(value) if all(isinstance(item, str) for item in value) else None
    numbers = tuple(_number(item, integer=False) for item in value)
    if None in numbers or (parameter.high is not None and math.hypot(*numbers) > parameter.high):
        return None
    return numbers


def _number(value, integer: bool):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if integer:
        return value if isinstance(value, int) else None
    return float(value) if math.isfinite(value) else None
