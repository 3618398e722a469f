"""
The documents generated from the node's parameter declaration (``declaration``).

``yaml_text()`` is ``config/rnea.yaml`` (every parameter with its default and meaning, the families
as commented examples) and ``markdown_table()`` the parameter table of ``docs/node/parameters.md``
between its marker lines, ``settings_text()`` the fields of ``Settings`` (``settings_fields.py``).
``python -m rnea_ros.control.parameter_docs --yaml`` / ``--markdown`` / ``--settings`` prints them
(``main``); a test fails when the checked-in files differ.
"""
from __future__ import annotations

import argparse
import sys
import textwrap

from rnea_ros.control.declaration import (ACTUATION, BY_NAME, COLLISION, COLLISION_PROFILE,
                                          CONTACT, FAMILIES, GAINS, PARAMETERS, WRENCH_POINT)
from rnea_ros.control.settings import FIELDS, MAPPINGS
from rnea_ros.params.parameter import BOOL, DOUBLE, INTEGER, Parameter, STRING


YAML_HEADER = """\
# Parameters of the rnea node (rnea_ros): feed-forward joint torques from the URDF.
# Generated from rnea_ros/control/declaration.py by
# python -m rnea_ros.control.parameter_docs --yaml: edit the declaration, not this file.
# Use:  ros2 run rnea_ros rnea_node --ros-args --params-file config/rnea.yaml
#   or  ros2 launch rnea_ros rnea.launch.py urdf:=/path/robot.urdf [params_file:=...]
# Every parameter is optional; the values below are the defaults.
# `/**:` applies these parameters to every node given this file, whatever its name and
# namespace (-r __ns:=/left, a launch file's namespace); a file for one robot of several may
# key them by the node's full name instead (e.g. `/left/rnea:`).
/**:
  ros__parameters:
"""
INDENT = '    '
WIDTH = 95


def _yaml_value(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return "''" if value == '' else value
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(_yaml_value(v) for v in value) + ']'
    return repr(value)


def _comment(text: str, indent: str = INDENT) -> list[str]:
    return textwrap.wrap(text, WIDTH - len(indent) - 2, initial_indent=indent + '# ',
                         subsequent_indent=indent + '# ', break_on_hyphens=False)


def _with_unit(parameter: Parameter) -> str:
    text = parameter.description
    if parameter.unit:
        text += f' [{parameter.unit}]'
    if parameter.live:
        text += ' Live (ros2 param set).'
    return text


def yaml_text() -> str:
    """Return config/rnea.yaml: every parameter with its default, families as examples."""
    lines = []
    for parameter in PARAMETERS:
        lines.extend(_comment(_with_unit(parameter)))
        if parameter.default is None:
            lines.append(f'{INDENT}# {parameter.name}: {parameter.example}')
        else:
            lines.append(f'{INDENT}{parameter.name}: {_yaml_value(parameter.default)}')
        lines.append('')
    lines.extend(_comment(f'Per contact link (contact.<link>.*), declared {CONTACT.when}; '
                          'unset fields take these defaults:'))
    lines.append(f'{INDENT}# contact:')
    lines.append(f'{INDENT}#   FL_FOOT:')
    for member in CONTACT.members:
        default = 'unset' if member.default is None else _yaml_value(member.default)
        lines.append(f'{INDENT}#     {CONTACT.field(member)}: {default}  # {member.summary}')
    lines.append('')
    lines.extend(_comment("Joint friction, armature and effort sensor's bias (actuation model), "
                          'usually from the '
                          'actuation.yaml that rnea_identify writes (a second --params-file, '
                          f'keyed /**:); declared {ACTUATION.when}; unset: 0. A name that is '
                          'no joint of the model stops the node at start (exit 2):'))
    for member in ACTUATION.members:
        lines.extend(_comment(f'{member.name.format(joint="<joint>")}: {member.description} '
                              f'[{member.unit}]'))
    lines.append(f'{INDENT}# armature.joint1: 0.1')
    lines.append(f'{INDENT}# friction.joint1.coulomb: 2.0')
    lines.append('')
    member, = COLLISION.members
    lines.extend(_comment(f'{member.name.format(joint="<joint>")}: {_with_unit(member)} '
                          f'Declared {COLLISION.when}; a name that is no joint of the model '
                          'stops the node at start (exit 2):'))
    lines.append(f'{INDENT}# {COLLISION.name(member, "joint1")}: 5.0')
    member, = COLLISION_PROFILE.members
    lines.extend(_comment(f'{COLLISION_PROFILE.name(member, "<joint>")}: '
                          f'{_with_unit(member)} Declared {COLLISION_PROFILE.when}:'))
    lines.append(f'{INDENT}# {COLLISION_PROFILE.name(member, "joint1", profile="carrying")}: '
                 '8.0')
    lines.append('')
    lines.extend(_comment(f'Gains of the feedback control laws (control_law), declared '
                          f'{GAINS.when} (live); unset: 0. A name that is no joint of the model '
                          'stops the node at start (exit 2):'))
    for member in GAINS.members:
        lines.extend(_comment(f'{member.name.format(joint="<joint>")}: {_with_unit(member)}'))
    lines.append(f'{INDENT}# kp.joint1: 100.0')
    lines.append(f'{INDENT}# kd.joint1: 10.0')
    lines.append('')
    member, = WRENCH_POINT.members
    lines.extend(_comment(f'{member.name.format(link="<link>")}: {_with_unit(member)} '
                          f'Declared {WRENCH_POINT.when}, for its links only:'))
    lines.append(f'{INDENT}# wrench_point.panda_hand: [0.0, 0.0, 0.1]')
    return YAML_HEADER + '\n'.join(lines) + '\n'


MARKDOWN_BEGIN = ('<!-- parameters: generated by python -m rnea_ros.control.parameter_docs '
                  '--markdown -->')
MARKDOWN_END = '<!-- parameters: end -->'


def _markdown_row(name: str, parameter: Parameter) -> str:
    default = parameter.shown_default or f'`{_yaml_value(parameter.default)}`'
    unit = f' [{parameter.unit}]' if parameter.unit else ''
    flags = '' if parameter.live else ' (RO)'
    note = f' ({parameter.note})' if parameter.note else ''
    return f'| `{name}` | {default} | {parameter.summary}{unit}{flags}{note} |'


def markdown_table() -> str:
    """Return the parameter table of docs/node/parameters.md, between its two marker lines."""
    rows = [MARKDOWN_BEGIN, '', '| parameter | default | meaning |', '|---|---|---|']
    rows += [_markdown_row(parameter.name, parameter) for parameter in PARAMETERS]
    rows += [_markdown_row(family.name(member, f'<{family.key}>'), member)
             for family in FAMILIES for member in family.members]
    return '\n'.join(rows + ['', MARKDOWN_END])


SETTINGS_HEADER = '''"""
The fields of ``Settings``: one per declared parameter the core reads, one mapping per family.

Generated from rnea_ros/control/declaration.py by
python -m rnea_ros.control.parameter_docs --settings: edit the declaration, not this file.
``settings.Settings`` holds them with its behaviour (``updated``, ``validate``); its mappings
are frozen when a snapshot is made.
"""
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SettingsFields:
    """The snapshot's fields, with the declared defaults (arrays: tuples, unset: ())."""

'''
_TYPES = {BOOL: 'bool', INTEGER: 'int', DOUBLE: 'float', STRING: 'str'}


def _default(parameter: Parameter):
    """Return the declared default as a snapshot holds it (arrays: tuples, unset: ())."""
    default = parameter.default
    return () if default is None else tuple(default) if isinstance(default, (list, tuple)) \
        else default


def settings_text() -> str:
    """Return rnea_ros/control/settings_fields.py: ``SettingsFields``, a field per parameter."""
    lines = [f'    {name}: {_TYPES.get(BY_NAME[name].kind, "tuple")} = '
             f'{_default(BY_NAME[name])!r}' for name in FIELDS]
    lines += [f'    {name}: Mapping = field(default_factory=dict)' for name in MAPPINGS]
    return SETTINGS_HEADER + '\n'.join(lines) + '\n'


def main(argv: list[str] | None = None) -> int:
    """Print config/rnea.yaml, the docs' parameter table or the settings' fields."""
    parser = argparse.ArgumentParser(prog='python -m rnea_ros.control.parameter_docs',
                                     description='Print a document generated from the '
                                     "node's parameter declaration.")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument('--yaml', action='store_true', help='config/rnea.yaml')
    which.add_argument('--markdown', action='store_true', help="docs/node/parameters.md's table")
    which.add_argument('--settings', action='store_true',
                       help='rnea_ros/control/settings_fields.py')
    args = parser.parse_args(argv)
    sys.stdout.write(yaml_text() if args.yaml else settings_text() if args.settings
                     else markdown_table() + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
