"""
The simulated robot's parameters: declared once (``Parameter``), and everything made from it.

The names and defaults are the sim's; the checks take their bounds and words from the
declaration; docs/sim.md's table is what the declaration generates; on ROS each parameter's
descriptor says what it takes, read-only, and an integer given for a number is that number.
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from rclpy.node import Node
from rclpy.parameter import Parameter as RosParameter

from rnea_ros.params.parameter import DOUBLE, INTEGER, Parameter
from rnea_ros.sim.parameter_docs import MARKDOWN_BEGIN, MARKDOWN_END, markdown_table
from rnea_ros.sim.parameters import declare_settings
from rnea_ros.sim.settings import BY_NAME, DEFAULTS, PARAMETERS, read_settings

ROOT = Path(__file__).resolve().parents[2]
NAMES_AND_DEFAULTS = {
    'robot_description': '', 'floating_base': False, 'rate': 1000.0, 'substeps': 1,
    'clock': 'realtime', 'lockstep_timeout': 0.1, 'gap': 'default',
    'command_interface': 'drive_pd', 'gravity_compensated_by_robot': False, 'joints': [],
    'kp': [100.0], 'kd': [10.0], 'ki': [0.0], 'command_timeout': 0.1, 'wrench_timeout': 0.1,
    'initial_positions': [], 'initial_base_pose': [0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0],
    'gravity': [0.0, 0.0, -9.81], 'thread_priority': 50, 'duration': 0.0, 'record': '',
    'record_split': 5.0}


def test_every_parameter_is_a_parameter_with_the_sims_name_and_default():
    assert all(isinstance(parameter, Parameter) for parameter in PARAMETERS)
    assert list(DEFAULTS.items()) == list(NAMES_AND_DEFAULTS.items())
    assert all(type(DEFAULTS[name]) is type(value) for name, value in NAMES_AND_DEFAULTS.items())
    assert not any(parameter.live for parameter in PARAMETERS)  # all read-only


def test_the_docs_table_is_what_the_declaration_generates():
    text = (ROOT / 'docs' / 'sim.md').read_text()
    begin = text.index(MARKDOWN_BEGIN)
    end = text.index(MARKDOWN_END) + len(MARKDOWN_END)
    assert text[begin:end] == markdown_table(), \
        'regenerate: python -m rnea_ros.sim.parameter_docs (into docs/sim.md)'


BOUNDED = [p for p in PARAMETERS if p.kind in (DOUBLE, INTEGER)]


@pytest.mark.parametrize('parameter', BOUNDED, ids=[p.name for p in BOUNDED])
def test_each_number_is_checked_against_its_declared_bounds(parameter):
    """The declared bounds are the check's, inclusive; '> 0' is the least double above 0."""
    if parameter.kind == INTEGER:
        below, above = parameter.low - 1, (parameter.high or 0) + 1
    else:
        below, above = (math.nextafter(bound, direction) for bound, direction in (
            (parameter.low, -math.inf), (parameter.high or 0.0, math.inf)))
    inside = [parameter.low] + ([] if parameter.high is None else [parameter.high])
    outside = [below] + ([] if parameter.high is None else [above])
    for value in inside:
        settings = read_settings({**DEFAULTS, parameter.name: value})
        assert getattr(settings, parameter.name) == value
    for value in outside + ([math.nan] if parameter.kind == DOUBLE else [1.5]):
        with pytest.raises(ValueError) as error:
            read_settings({**DEFAULTS, parameter.name: value})
        assert str(error.value) == (f"parameter '{parameter.name}' is {value!r}: expected "
                                    f'{parameter.expectation}')


def test_the_descriptors_come_from_the_declaration(ros):
    """On ROS: description, what it takes, read-only; an integer for a number is taken."""
    node = Node('rnea_sim', context=ros.context, parameter_overrides=[
        RosParameter('rate', value=500), RosParameter('joints', value=['a', 'b'])])
    try:
        settings = declare_settings(node, {'gap': 'none'})
        assert (settings.rate, settings.joints, settings.gap) == (500.0, ('a', 'b'), 'none')
        assert type(settings.rate) is float
        descriptors = node.describe_parameters([p.name for p in PARAMETERS])
        for parameter, descriptor in zip(PARAMETERS, descriptors):
            assert (descriptor.name, descriptor.description, descriptor.additional_constraints,
                    descriptor.read_only) == (parameter.name, parameter.description,
                                              parameter.expectation, True)
        assert BY_NAME['rate'].expectation == 'a number > 0 and <= 100000'
        typed = dict(zip([p.name for p in PARAMETERS], descriptors))
        assert typed['initial_positions'].type == RosParameter.Type.DOUBLE_ARRAY.value
        assert not typed['initial_positions'].dynamic_typing and typed['rate'].dynamic_typing
    finally:
        node.destroy_node()
