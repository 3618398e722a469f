"""
Every numeric option of every command-line tool is bounded where it is declared.

The tools are setup.py's console scripts; each module's ``build_parser()`` is its command line
(the subcommands' too). An option whose ``type`` is ``int``, ``float`` or a parse function this
test does not know to read text fails the first test: a new number must be declared with its
bounds (``option(..., bounds=(LOW, HIGH))`` for the tools' typed options, ``Bounded`` in a plain
parser). Each bounded option is then given values beyond its bounds, NaN and a word: each is
one line ``PROG: error: argument --FLAG: 'TEXT': expected ...`` naming the option and the
bounds, and its ``--help`` states them. The node's and the sim's ROS parameters (their
``--ros-args -p`` numbers) are declared with bounds too.
"""
from __future__ import annotations

import argparse
import importlib
import math
from pathlib import Path
import re

import pytest

from rnea_ros.description.robot_file import parse_xacro_arg
from rnea_ros.errors import Bounded

SETUP = Path(__file__).resolve().parents[1] / 'setup.py'
TEXT_TYPES = {parse_xacro_arg, Path}  # the types of options that are not numbers


def _scripts() -> dict[str, str]:
    """Return console script -> its module, from setup.py."""
    return dict(re.findall(r"'(rnea_\w+) = ([\w.]+):main'", SETUP.read_text()))


def _parser(module: str) -> argparse.ArgumentParser:
    built = importlib.import_module(module).build_parser()
    return built[0] if isinstance(built, tuple) else built  # rnea_fleet: and its dests


def _actions(parser: argparse.ArgumentParser, prefix: tuple = ()):
    """Yield (subcommand words, parser, action) of every argument, subcommands included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, (*prefix, name))
        else:
            yield prefix, parser, action


OPTIONS = [(script, words, action) for script, module in sorted(_scripts().items())
           for words, _, action in _actions(_parser(module))]
BOUNDED = [(script, words, action) for script, words, action in OPTIONS
           if isinstance(action.type, Bounded)]


def test_the_scripts_are_found():
    assert {'rnea_bag', 'rnea_ctl', 'rnea_convert', 'rnea_excite', 'rnea_fleet',
            'rnea_identify', 'rnea_sim', 'rnea_demo'} <= set(_scripts())
    assert len(BOUNDED) >= 40


def test_every_numeric_option_has_declared_bounds():
    unbounded = [f'{script} {" ".join(words)} {"/".join(action.option_strings) or action.dest}'
                 for script, words, action in OPTIONS
                 if action.type is not None and not isinstance(action.type, Bounded)
                 and action.type not in TEXT_TYPES and action.type is not str]
    assert unbounded == []


def test_every_numeric_ros_parameter_of_the_node_and_the_sim_has_bounds():
    """Their ``--ros-args -p`` numbers: each declared with its bounds (an array: its size)."""
    from rnea_ros.control.declaration import PARAMETERS as NODE
    from rnea_ros.sim.settings import PARAMETERS as SIM
    unbounded = [parameter.name for parameter in (*NODE, *SIM)
                 if parameter.kind in ('INTEGER', 'DOUBLE', 'DOUBLE_ARRAY')
                 and (parameter.high is None
                      or (parameter.kind != 'DOUBLE_ARRAY' and parameter.low is None))]
    assert unbounded == []


def _beyond(bounded: Bounded) -> list[str]:
    """Texts a bounded option refuses: past each bound, NaN and a word for a float."""
    low, high = bounded.low, bounded.high
    if bounded.kind is int:
        return [str(high + 1), str(low - 1), 'many']
    return [repr(high + max(1.0, abs(high))), repr(low - max(1.0, abs(low))), 'nan', '1e400',
            'many']


CASES = [pytest.param(script, words, action, text,
                      id=f'{script}{"".join("-" + w for w in words)}{action.option_strings[-1]}'
                      f'={text}')
         for script, words, action in BOUNDED for text in _beyond(action.type)]


@pytest.mark.parametrize('script, words, action, text', CASES)
def test_a_number_beyond_its_bounds_is_one_line_naming_the_option_and_them(
        capsys, script, words, action, text):
    parser = _parser(_scripts()[script])
    prog = {w: p.prog for w, p, _ in _actions(parser)}[words]
    flag = action.option_strings[-1]
    count = action.nargs if isinstance(action.nargs, int) else 1
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args([*words, flag, *[text] * count])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f'{prog}: error: argument {flag}: {text!r}: expected {action.type.expected}')


@pytest.mark.parametrize('script, words, action', [
    pytest.param(*case, id=f'{case[0]}{"".join("-" + w for w in case[1])}'
                 f'{case[2].option_strings[-1]}') for case in BOUNDED])
def test_the_help_states_the_bounds_and_the_default_is_within_them(script, words, action):
    assert action.type.expected in ' '.join(action.help.split())
    defaults = action.default if isinstance(action.default, list) else [action.default]
    for default in defaults:
        if default is not None and action.type.exact:
            assert action.type(default) == default
        elif default is not None:
            assert action.type.within(default), default


def test_bounded_takes_its_words_the_bounds_and_an_exact_text():
    window = Bounded(float, 1e-9, 1e9, words=('auto',))
    assert window('auto') == 'auto' and window('1e9') == 1e9 and window('1e-9') == 1e-9
    assert window.expected == "'auto' or a number from 1e-09 to 1e+09"
    assert Bounded(float, -4e9, 4e9, exact=True)('1700000000.000000001') == '1700000000.000000001'
    assert Bounded(int, 2, 12)('12') == 12
    for refused in ('13', '2.5', 'nan', 'auto'):
        with pytest.raises(argparse.ArgumentTypeError, match='expected an integer from 2 to 12'):
            Bounded(int, 2, 12)(refused)
    assert not Bounded(float, 0, 1).within(math.nan)
    assert not Bounded(float, 0, 1).within(10 ** 400)
    assert not Bounded(float, 0, 1).within(True)
