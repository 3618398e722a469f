"""
The parameter declaration: one rule per parameter, and the files made from it.

``config/rnea.yaml`` and the table of ``docs/node/parameters.md`` are generated from
``rnea_ros.control.declaration``; these tests fail when the checked-in files differ from what it
generates, when ``Settings`` and the declaration disagree, or when a value is judged otherwise
than declared.
"""
from __future__ import annotations

from dataclasses import fields, FrozenInstanceError
import math
from pathlib import Path
import re
import subprocess
import sys

import pytest

from rnea_ros.contacts import Contact
from rnea_ros.control import declaration, parameter_docs
from rnea_ros.control.declaration import BY_NAME, CONTACT
from rnea_ros.control.parameter_docs import (MARKDOWN_BEGIN, MARKDOWN_END, markdown_table,
                                             settings_text, yaml_text)
from rnea_ros.control.settings import Settings
from rnea_ros.params.parameter import check

ROOT = Path(__file__).resolve().parents[2]


def test_config_rnea_yaml_is_what_the_declaration_generates():
    assert (ROOT / 'config' / 'rnea.yaml').read_text() == yaml_text(), \
        'regenerate: python -m rnea_ros.control.parameter_docs --yaml > config/rnea.yaml'


def test_the_settings_fields_are_what_the_declaration_generates():
    assert (ROOT / 'rnea_ros' / 'control' / 'settings_fields.py').read_text() == settings_text(), \
        ('regenerate: python -m rnea_ros.control.parameter_docs --settings '
         '> rnea_ros/control/settings_fields.py')


def test_the_docs_table_is_what_the_declaration_generates():
    text = (ROOT / 'docs' / 'node' / 'parameters.md').read_text()
    begin = text.index(MARKDOWN_BEGIN)
    end = text.index(MARKDOWN_END) + len(MARKDOWN_END)
    assert text[begin:end] == markdown_table(), \
        ('regenerate: python -m rnea_ros.control.parameter_docs --markdown '
         '(into docs/node/parameters.md)')


def test_settings_has_a_field_per_parameter_with_its_declared_default():
    names = {f.name for f in fields(Settings)} - {
        family.attribute for family in declaration.FAMILIES}
    assert names == set(BY_NAME) - set(declaration.NODE_ONLY)
    settings = Settings()
    for name in names - {'contacts'}:
        default = BY_NAME[name].default
        expected = () if default is None else tuple(default) \
            if isinstance(default, (list, tuple)) else default
        assert getattr(settings, name) == expected, name


def test_the_snapshot_is_generated_from_the_declaration_and_nothing_else():
    # Adding a parameter is its declaration and its use: the snapshot's fields are exactly the
    # declared parameters the core reads and one mapping per family, in declaration order.
    declared = [p.name for p in declaration.PARAMETERS if p.name not in declaration.NODE_ONLY]
    families = [f.attribute for f in declaration.FAMILIES if f.attribute]
    assert [f.name for f in fields(Settings)] == declared + families
    source = (ROOT / 'rnea_ros' / 'control' / 'settings.py').read_text()
    assert not [name for name in declared
                if re.search(rf'^ +{name}: [^=]+= ', source, re.MULTILINE)], \
        'a field written by hand in settings.py'


def test_a_snapshot_is_read_only_and_a_live_set_makes_a_new_one():
    settings = Settings(gains={'kp.j1': 1.0}).validate()
    with pytest.raises(FrozenInstanceError):
        settings.effort_limit_scale = 0.5
    with pytest.raises(TypeError):
        settings.gains['kp.j1'] = 2.0
    new = settings.updated({'effort_limit_scale': 0.5, 'kp.j1': 2.0, 'kd.other': 1.0,
                            'collision_threshold.j.1': 3.0, 'use_sim_time': True},
                           joints=('j1', 'j.1'))
    assert (new.effort_limit_scale, dict(new.gains), dict(new.collision_thresholds)) == (
        0.5, {'kp.j1': 2.0}, {'j.1': 3.0})
    assert (settings.effort_limit_scale, dict(settings.gains)) == (1.0, {'kp.j1': 1.0})
    assert dict(new.updated({'collision_threshold.j.1': None}, ('j.1',)).collision_thresholds) \
        == {}


def test_the_contact_family_takes_its_defaults_from_the_library():
    library = {f.name: f.default for f in fields(Contact)}
    for member in CONTACT.members:
        field = 'kind' if CONTACT.field(member) == 'type' else CONTACT.field(member)
        default = library[field]
        assert member.default == (list(default) if isinstance(default, tuple) else default)


@pytest.mark.parametrize('name, value, expected', [
    ('rate', 1000, 1000.0),            # an integer for a number is that number
    ('rate', 0, 0.0),
    ('thread_priority', 0, 0),
    ('gravity', [0, 0, -9], (0.0, 0.0, -9.0)),
    ('command_joints', ['a', 'b'], ('a', 'b')),
    ('command_joints', None, None),    # unset
    ('fault_output', 'hold_gravity', 'hold_gravity'),
])
def test_check_accepts_and_converts(name, value, expected):
    result = check(BY_NAME[name], value)
    assert result == expected and type(result) is type(expected)


@pytest.mark.parametrize('name, value, message', [
    ('rate', -5.0, "parameter 'rate' is -5.0: expected a number from 0 to 10000"),
    ('rate', 'fast', "parameter 'rate' is 'fast': expected a number from 0 to 10000"),
    ('rate', math.nan, "parameter 'rate' is nan: expected a number from 0 to 10000"),
    ('rate', True, "parameter 'rate' is true: expected a number from 0 to 10000"),
    ('thread_priority', 1.5, "parameter 'thread_priority' is 1.5: expected an integer from 0 "
                             'to 99'),
    ('floating_base', 2, "parameter 'floating_base' is 2: expected true or false"),
    ('torque_terms', 'all', "parameter 'torque_terms' is 'all': expected one of: full, "
                            'gravity, gravity_coriolis'),
    ('input_timeout', 0.0, "parameter 'input_timeout' is 0.0: expected a number from 0.0001 "
                           'to 60'),
    ('gravity', [0.0, -9.81], "parameter 'gravity' is [0.0, -9.81]: expected 3 finite numbers "
                              'of magnitude at most 10000 (world frame, m/s^2)'),
    ('gravity', [0.0, math.inf, 0.0], "parameter 'gravity' is [0.0, inf, 0.0]: expected 3 "
                                      'finite numbers of magnitude at most 10000 (world frame, '
                                      'm/s^2)'),
    ('gravity', [1e308, 0.0, 0.0], "parameter 'gravity' is [1e+308, 0.0, 0.0]: expected 3 "
                                   'finite numbers of magnitude at most 10000 (world frame, '
                                   'm/s^2)'),
    ('command_joints', 5, "parameter 'command_joints' is 5: expected a list of strings"),
    ('locked_positions', [math.nan], "parameter 'locked_positions' is [nan]: expected a list "
                                     'of numbers'),
])
def test_check_refuses_with_one_line(name, value, message):
    with pytest.raises(ValueError) as error:
        check(BY_NAME[name], value)
    assert str(error.value) == message


def test_every_parameter_has_a_description_and_its_default_passes_its_own_check():
    for parameter in declaration.PARAMETERS:
        assert parameter.description and parameter.summary, parameter.name
        assert check(parameter, parameter.default) is not None or parameter.default is None


def test_the_generator_prints_the_files(capsys):
    assert parameter_docs.main(['--yaml']) == 0
    assert capsys.readouterr().out == yaml_text()
    assert parameter_docs.main(['--markdown']) == 0
    assert capsys.readouterr().out == markdown_table() + '\n'
    assert parameter_docs.main(['--settings']) == 0
    assert capsys.readouterr().out == settings_text()


def test_the_documented_command_prints_them():
    command = [sys.executable, '-m', 'rnea_ros.control.parameter_docs']
    out = subprocess.run(command + ['--yaml'], capture_output=True, text=True, check=True,
                         timeout=120).stdout
    assert out == yaml_text()
    out = subprocess.run(command + ['--markdown'], capture_output=True, text=True, check=True,
                         timeout=120).stdout
    assert out == markdown_table() + '\n'
