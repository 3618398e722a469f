"""
Robot description files (``robot_file.py``): xacro files expanded, unexpanded xacro refused.

The xacro files are written here in ``tmp_path``: a macro, properties and an argument, compared
with the URDF written out by hand.
"""
from __future__ import annotations

import argparse
import re
import warnings

import numpy as np
import pytest

from rnea_ros import InputError, RobotModel, URDFError
from rnea_ros.description.robot_file import parse_xacro_arg
from rnea_ros.files import FileError

ARM_XACRO = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="arm">
  <xacro:arg name="prefix" default=""/>
  <xacro:arg name="tool_mass" default="0.5"/>
  <xacro:property name="prefix" value="$(arg prefix)"/>
  <xacro:property name="length" value="0.3"/>
  <xacro:macro name="segment" params="name parent mass">
    <link name="${prefix}${name}">
      <inertial><origin xyz="0 0 ${length / 2}"/><mass value="${mass}"/>
        <inertia ixx="${mass * length**2 / 12}" iyy="${mass * length**2 / 12}" izz="0.001"
                 ixy="0" ixz="0" iyz="0"/></inertial>
    </link>
    <joint name="${prefix}${name}_joint" type="revolute">
      <parent link="${prefix}${parent}"/><child link="${prefix}${name}"/>
      <origin xyz="0 0 ${length}"/><axis xyz="0 1 0"/>
      <limit lower="-2" upper="2" effort="50" velocity="2"/>
    </joint>
  </xacro:macro>
  <link name="${prefix}base"/>
  <xacro:segment name="upper" parent="base" mass="2"/>
  <xacro:segment name="fore" parent="upper" mass="$(arg tool_mass)"/>
</robot>
"""


def arm_urdf(prefix: str, tool_mass: float) -> str:
    """ARM_XACRO expanded by hand."""
    def segment(name, parent, mass):
        return (f'<link name="{prefix}{name}"><inertial><origin xyz="0 0 0.15"/>'
                f'<mass value="{mass}"/><inertia ixx="{mass * 0.09 / 12}" '
                f'iyy="{mass * 0.09 / 12}" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>'
                f'</link><joint name="{prefix}{name}_joint" type="revolute">'
                f'<parent link="{prefix}{parent}"/><child link="{prefix}{name}"/>'
                '<origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>'
                '<limit lower="-2" upper="2" effort="50" velocity="2"/></joint>')
    return (f'<robot name="arm"><link name="{prefix}base"/>{segment("upper", "base", 2.0)}'
            f'{segment("fore", "upper", tool_mass)}</robot>')


def assert_same_robot(model: RobotModel, expected: RobotModel):
    assert model.joint_names == expected.joint_names
    assert model.link_names == expected.link_names
    rng = np.random.default_rng(6)
    for _ in range(3):
        q, v, a = rng.uniform(-1, 1, (3, model.nv))
        np.testing.assert_allclose(model.rnea(q, v, a), expected.rnea(q, v, a), rtol=1e-12,
                                   atol=1e-12)


@pytest.fixture
def arm_xacro(tmp_path):
    path = tmp_path / 'arm.urdf.xacro'
    path.write_text(ARM_XACRO)
    return path


@pytest.mark.parametrize('xacro_args, prefix, tool_mass', [
    (None, '', 0.5),
    ({'prefix': 'left_'}, 'left_', 0.5),
    ({'prefix': 'right_', 'tool_mass': 1.25}, 'right_', 1.25),  # a number, as its text
])
def test_xacro_file_is_expanded_with_its_arguments(arm_xacro, xacro_args, prefix, tool_mass):
    """Issue 9 #6: ``from_urdf_file`` takes a .urdf.xacro file and name:=value arguments."""
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        model = RobotModel.from_urdf_file(arm_xacro, xacro_args=xacro_args)
    assert model.joint_names == (f'{prefix}upper_joint', f'{prefix}fore_joint')
    assert_same_robot(model, RobotModel.from_urdf_string(arm_urdf(prefix, tool_mass)))


HOW = re.escape('expand it first: `xacro robot.urdf.xacro name:=value > robot.urdf`')


def test_xacro_text_in_a_urdf_named_file_is_refused(tmp_path):
    """Only a .xacro name or xacro_args expand a file: a "URDF" that is xacro runs nothing."""
    path = tmp_path / 'arm.urdf'
    path.write_text(ARM_XACRO)
    with pytest.raises(URDFError, match=f'^this is unexpanded xacro, not URDF '
                                        f'\\(element <xacro:arg>\\): {HOW}'):
        RobotModel.from_urdf_file(path)
    # Asked for by its arguments, the same file is expanded.
    assert_same_robot(RobotModel.from_urdf_file(path, xacro_args={'prefix': 'left_'}),
                      RobotModel.from_urdf_string(arm_urdf('left_', 0.5)))


@pytest.mark.parametrize('xml, evidence', [
    (ARM_XACRO, 'element <xacro:arg>'),
    (ARM_XACRO.replace(' xmlns:xacro="http://www.ros.org/wiki/xacro"', ''),
     'element <xacro:arg> (xacro namespace not declared)'),
    (arm_urdf('', 0.5).replace('<origin xyz="0 0 0.3"/>', '<origin xyz="0 0 ${length}"/>'),
     """joint 'upper_joint': <origin xyz="0 0 ${length}">"""),
    (arm_urdf('', 0.5).replace('<link name="base"/>', '<link name="$(arg prefix)base"/>'),
     """link '$(arg prefix)base': <link name="$(arg prefix)base">"""),
], ids=['macro', 'undeclared_namespace', 'property', 'substitution_arg'])
def test_unexpanded_xacro_given_as_urdf_text_is_refused_as_xacro(xml, evidence):
    """Issue 9 #6: xacro text as URDF failed with 'child link ... does not exist'."""
    with pytest.raises(URDFError, match=f'^this is unexpanded xacro, not URDF '
                                        f'\\({re.escape(evidence)}\\): {HOW}'):
        RobotModel.from_urdf_string(xml)


def test_dollar_signs_outside_links_and_joints_are_not_xacro():
    """A gazebo plugin parameter may hold '$(...)' text; the dynamics never reads it."""
    xml = arm_urdf('', 0.5).replace(
        '</robot>', '<gazebo><plugin name="p" filename="x.so" args="$(find pkg)"/></gazebo>'
        '</robot>')
    assert RobotModel.from_urdf_string(xml).nv == 2


def test_xacro_failures_are_urdf_errors_naming_the_file(tmp_path):
    def refused(path, message):
        prefix = f'^xacro cannot expand {re.escape(repr(str(path)))}: '
        return pytest.raises(URDFError, match=prefix + message)

    missing_include = tmp_path / 'include.urdf.xacro'
    missing_include.write_text(ARM_XACRO.replace(
        '<xacro:arg name="prefix" default=""/>',
        '<xacro:arg name="prefix" default=""/><xacro:include filename="no_such.xacro"/>'))
    with refused(missing_include, 'XacroException: No such file or directory: .*no_such.xacro'):
        RobotModel.from_urdf_file(missing_include)
    undefined_arg = tmp_path / 'arg.urdf.xacro'
    undefined_arg.write_text(ARM_XACRO.replace('$(arg tool_mass)', '$(arg payload)'))
    with refused(undefined_arg, 'XacroException: Undefined substitution argument payload'):
        RobotModel.from_urdf_file(undefined_arg)
    broken = tmp_path / 'broken.urdf.xacro'
    broken.write_text(ARM_XACRO.replace('</robot>', ''))
    with refused(broken, 'ExpatError: '):
        RobotModel.from_urdf_file(broken)
    with pytest.raises(FileError, match=r"^cannot read the robot description '.*absent.urdf."
                                        r"xacro': No such file or directory$"):
        RobotModel.from_urdf_file(tmp_path / 'absent.urdf.xacro')


def test_xacro_args_must_be_a_mapping(arm_xacro):
    with pytest.raises(InputError, match=r'^xacro_args: expected a mapping name -> value, '
                                         r'got str$'):
        RobotModel.from_urdf_file(arm_xacro, xacro_args='prefix:=left_')


def test_command_line_mappings_are_parsed():
    assert parse_xacro_arg('prefix:=left_') == ('prefix', 'left_')
    assert parse_xacro_arg('name:=a:=b') == ('name', 'a:=b')
    assert parse_xacro_arg('empty:=') == ('empty', '')
    for bad in ('prefix=left_', ':=x', 'prefix'):
        with pytest.raises(argparse.ArgumentTypeError,
                           match=f'^expected a xacro argument name:=value, got '
                                 f'{re.escape(repr(bad))}$'):
            parse_xacro_arg(bad)
