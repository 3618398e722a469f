"""The launch files run against recording stand-ins of launch, launch_ros, ament_index_python."""
from __future__ import annotations

from contextlib import contextmanager
import importlib.util
from pathlib import Path
import sys
import types

SHARE = '/opt/ros/share'  # what the stand-in get_package_share_directory answers


class Recorded:
    """A stand-in of a launch class: keeps its arguments; equal when they are."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def __eq__(self, other) -> bool:
        return (type(self).__name__ == type(other).__name__ and self.args == other.args
                and self.kwargs == other.kwargs)

    def __repr__(self) -> str:
        words = [repr(a) for a in self.args] + [f'{k}={v!r}' for k, v in self.kwargs.items()]
        return f'{type(self).__name__}({", ".join(words)})'


class LaunchConfiguration(Recorded):
    """The stand-in of a launch argument's value: ``perform`` reads it from the context."""

    def perform(self, context: dict) -> str:
        return context[self.args[0]]


STAND_INS = {
    'launch': {'LaunchDescription': Recorded},
    'launch.actions': {name: type(name, (Recorded,), {}) for name in (
        'DeclareLaunchArgument', 'OpaqueFunction', 'GroupAction', 'IncludeLaunchDescription')},
    'launch.substitutions': {'Command': type('Command', (Recorded,), {}),
                             'LaunchConfiguration': LaunchConfiguration},
    'launch_ros': {},
    'launch_ros.actions': {'Node': type('Node', (Recorded,), {}),
                           'SetRemap': type('SetRemap', (Recorded,), {})},
    'launch_ros.parameter_descriptions': {
        'ParameterValue': type('ParameterValue', (Recorded,), {})},
    'ament_index_python': {},
    'ament_index_python.packages': {
        'get_package_share_directory': lambda package: f'{SHARE}/{package}'},
}


Command = STAND_INS['launch.substitutions']['Command']


Node = STAND_INS['launch_ros.actions']['Node']


ParameterValue = STAND_INS['launch_ros.parameter_descriptions']['ParameterValue']


@contextmanager
def stand_ins():
    """Put the stand-in modules in ``sys.modules`` for the block (the real ones are absent)."""
    saved = {name: sys.modules.get(name) for name in STAND_INS}
    for name, attributes in STAND_INS.items():
        module = types.ModuleType(name)
        vars(module).update(attributes)
        sys.modules[name] = module
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


class Launched:
    """A launch file run against the stand-ins: its declared arguments and actions."""

    def __init__(self, path: Path):
        with stand_ins():
            spec = importlib.util.spec_from_file_location(Path(path).stem.replace('.', '_'),
                                                          path)
            self.module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(self.module)
            self.actions = self.module.generate_launch_description().args[0]
        self.arguments = {action.args[0]: action for action in self.actions
                          if type(action).__name__ == 'DeclareLaunchArgument'}

    def default(self, name: str) -> str:
        return self.arguments[name].kwargs['default_value']

    def defaults(self) -> dict[str, str]:
        """Return each argument's default, as ``ros2 launch`` without arguments passes them."""
        return {name: self.default(name) for name in self.arguments}

    def nodes(self, **given) -> list:
        """Return the Node actions, an OpaqueFunction's run with the arguments ``given``."""
        nodes = [action for action in self.actions if type(action).__name__ == 'Node']
        with stand_ins():
            for action in self.actions:
                if type(action).__name__ == 'OpaqueFunction':
                    nodes += action.kwargs['function']({**self.defaults(), **given})
        return nodes


def launch_arguments(path: Path) -> dict:
    """Map each launch argument of the launch file at ``path`` to its DeclareLaunchArgument."""
    return Launched(path).arguments


XACRO_ARM = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="arm">
  <xacro:arg name="prefix" default=""/>
  <xacro:property name="mass" value="2.0"/>
  <link name="base"/>
  <link name="$(arg prefix)link">
    <inertial><mass value="${mass}"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0"
      iyz="0"/></inertial>
  </link>
  <joint name="$(arg prefix)joint" type="revolute">
    <parent link="base"/><child link="$(arg prefix)link"/><axis xyz="0 0 1"/>
    <limit effort="10" velocity="1" lower="-1" upper="1"/>
  </joint>
</robot>
"""
