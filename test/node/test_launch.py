"""
The launch file and the example parameters, as far as this machine allows.

launch_ros has no wheel here, so the launch files cannot run: they are checked statically (they
parse, declare their arguments with the right defaults, start ``rnea_node`` from ``rnea_ros``
with the right parameters and remappings), the xacro command the launch file runs is run here,
and the parameters it passes (config file + URDF) are started for real in test_node.py. The
YAML must name only declared parameters, each with a valid value.
"""
from __future__ import annotations

import ast
from glob import glob
import os
from pathlib import Path
import shlex
import subprocess
import sys
import textwrap

import pytest
import yaml

from rnea_ros.control.settings import Settings
from rnea_ros.ctl.names import TRAJECTORY_TOPIC

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ROOT / 'launch' / 'rnea.launch.py'
EFFORT_LAUNCH = ROOT / 'launch' / 'rnea_effort_controller.launch.py'
CONFIG = ROOT / 'config' / 'rnea.yaml'


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, 'id', getattr(node.func, 'attr', None)) == name]


def _keywords(call: ast.Call) -> dict[str, ast.AST]:
    return {keyword.arg: keyword.value for keyword in call.keywords}


@pytest.fixture(scope='module')
def launch_tree() -> ast.Module:
    return ast.parse(LAUNCH.read_text(), filename=str(LAUNCH))


def _remapped(tree: ast.AST) -> tuple[str, ...]:
    """Return the topics of a launch file's ``REMAPPED`` (its names resolved), or ()."""
    known = {'TRAJECTORY_TOPIC': TRAJECTORY_TOPIC}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == 'REMAPPED':
            return tuple(known[elt.id] if isinstance(elt, ast.Name) else ast.literal_eval(elt)
                         for elt in node.value.elts)
    return ()


def launch_arguments(tree: ast.AST) -> dict[str, ast.Call]:
    """Map each launch argument to its DeclareLaunchArgument; ``<topic>_topic`` per REMAPPED."""
    arguments = {}
    for call in _calls(tree, 'DeclareLaunchArgument'):
        if ast.unparse(call.args[0]) == "topic + '_topic'":  # one per REMAPPED topic
            arguments.update({f'{topic}_topic': call for topic in _remapped(tree)})
        else:
            arguments[ast.literal_eval(call.args[0])] = call
    return arguments


_arguments = launch_arguments


def _imports(tree: ast.AST) -> dict[str, str]:
    """Map each imported name to its module."""
    return {alias.name: node.module for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) for alias in node.names}


def test_launch_file_declares_params_file_urdf_and_xacro_args(launch_tree):
    arguments = _arguments(launch_tree)
    assert set(arguments) == {'params_file', 'urdf', 'xacro_args', 'namespace',
                              'use_sim_time'} | {f'{topic}_topic' for topic in TOPICS}
    default = _keywords(arguments['params_file'])['default_value']
    assert isinstance(default, ast.Name)  # the installed config/rnea.yaml
    joins = [call for call in _calls(launch_tree, 'join')
             if [ast.literal_eval(arg) for arg in call.args[1:]] == ['config', 'rnea.yaml']]
    assert joins, 'params_file should default to <share>/config/rnea.yaml'
    share = _calls(launch_tree, 'get_package_share_directory')
    assert [ast.literal_eval(call.args[0]) for call in share] == ['rnea_ros']
    assert ast.literal_eval(_keywords(arguments['urdf'])['default_value']) == ''
    assert ast.literal_eval(_keywords(arguments['xacro_args'])['default_value']) == ''


def test_launch_file_expands_the_urdf_with_xacro_into_robot_description(launch_tree):
    """The usual ROS 2 way: ParameterValue(Command(['xacro ', urdf, ' ', args]), str)."""
    (node,) = _calls(launch_tree, 'Node')
    keywords = _keywords(node)
    assert ast.literal_eval(keywords['package']) == 'rnea_ros'
    assert ast.literal_eval(keywords['executable']) == 'rnea_node'
    assert ast.literal_eval(keywords['name']) == 'rnea'
    (command,) = _calls(launch_tree, 'Command')
    parts = command.args[0].elts
    assert ast.literal_eval(parts[0]) == 'xacro '
    assert [ast.unparse(part) for part in parts[1:]] == [
        "LaunchConfiguration('urdf')", "' '", "LaunchConfiguration('xacro_args')"]
    (value,) = [call for call in _calls(launch_tree, 'ParameterValue')
                if ast.unparse(call.args[0]) == 'description']
    assert ast.unparse(_keywords(value)['value_type']) == 'str'
    assert "{'robot_description': ParameterValue(description, value_type=str)}" in ast.unparse(
        launch_tree)
    functions = {f.name for f in ast.walk(launch_tree) if isinstance(f, ast.FunctionDef)}
    assert 'generate_launch_description' in functions
    imports = _imports(launch_tree)
    assert imports['Command'] == 'launch.substitutions'
    assert imports['ParameterValue'] == 'launch_ros.parameter_descriptions'
    assert imports['Node'] == 'launch_ros.actions'


def test_launch_docstring_remaps_with_set_remap_in_a_group(launch_tree):
    """Show what works: ``remappings`` on IncludeLaunchDescription is a TypeError."""
    docstring = ast.get_docstring(launch_tree)
    example = docstring[docstring.index('    from launch.actions'):docstring.index('\n\n``rnea_')]
    tree = ast.parse(textwrap.dedent(example))  # valid Python
    imports = _imports(tree)
    assert imports['SetRemap'] == 'launch_ros.actions'
    assert imports['GroupAction'] == imports['IncludeLaunchDescription'] == 'launch.actions'
    (group,) = _calls(tree, 'GroupAction')
    set_remap, include = group.args[0].elts
    assert ast.unparse(set_remap) == ("SetRemap(src='feedforward_effort', "
                                      "dst='/effort_controller/commands')")
    assert include.func.id == 'IncludeLaunchDescription'
    assert 'remappings' not in _keywords(include)


def test_xacro_command_of_the_launch_file_expands_xacro_and_passes_urdf(tmp_path, robots_dir):
    """What the launch file's Command runs, here: ``xacro <urdf> <xacro_args>``."""
    from rnea_ros import RobotModel
    xacro_file = tmp_path / 'arm.urdf.xacro'
    xacro_file.write_text(XACRO_ARM)

    def run(urdf, xacro_args=''):
        command = shlex.split('xacro ' + str(urdf) + ' ' + xacro_args)  # as Command splits
        # The xacro console script of this environment (a ROS install has it on PATH).
        path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get('PATH', '')])
        return subprocess.run(command, capture_output=True, text=True, check=True,
                              timeout=120, env={**os.environ, 'PATH': path}).stdout

    model = RobotModel.from_urdf_string(run(xacro_file, 'prefix:=left_'))
    assert model.joint_names == ('left_joint',)
    assert RobotModel.from_urdf_string(run(xacro_file)).joint_names == ('joint',)
    ur5 = robots_dir / 'ur_description' / 'urdf' / 'ur5_robot.urdf'
    assert (RobotModel.from_urdf_string(run(ur5)).joint_names
            == RobotModel.from_urdf_file(str(ur5)).joint_names)


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


# The node's topics rnea.launch.py remaps (the trajectory input's name said once, in ctl).
TOPICS = ('joint_states', 'desired_accelerations', TRAJECTORY_TOPIC, 'feedforward_effort',
          'joint_torques', 'joint_trajectory_with_effort', 'robot_description')


def test_launch_file_takes_namespace_use_sim_time_and_a_remapping_per_topic(launch_tree):
    arguments = _arguments(launch_tree)
    assert _remapped(launch_tree) == TOPICS
    assert _imports(launch_tree)['TRAJECTORY_TOPIC'] == 'rnea_ros.ctl.names'
    for topic in TOPICS:  # default: the topic itself, relative (in the namespace)
        default = _keywords(arguments[f'{topic}_topic'])['default_value']
        assert ast.unparse(default) == 'topic'
    (node,) = _calls(launch_tree, 'Node')
    keywords = _keywords(node)
    assert ast.unparse(keywords['namespace']) == "LaunchConfiguration('namespace')"
    assert ast.unparse(keywords['remappings']) == (
        "[(topic, LaunchConfiguration(topic + '_topic')) for topic in REMAPPED]")
    assert ("{'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'), "
            'value_type=bool)}') in ast.unparse(launch_tree)


@pytest.mark.parametrize('path', sorted(glob(str(ROOT / 'launch' / '*.launch.py'))))
def test_every_launch_file_takes_namespace_use_sim_time_and_params_file(path):
    tree = ast.parse(Path(path).read_text(), filename=path)
    arguments = _arguments(tree)
    assert {'namespace', 'use_sim_time', 'params_file'} <= set(arguments)
    assert ast.literal_eval(_keywords(arguments['namespace'])['default_value']) == ''
    assert ast.literal_eval(_keywords(arguments['use_sim_time'])['default_value']) == 'false'
    source = ast.unparse(tree)
    assert "namespace=LaunchConfiguration('namespace')" in source
    assert "{'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'), " in source
    assert 'params_file' in docs_node_text()  # the node page says the arguments
    for name in arguments:
        assert f'`{name}`' in docs_node_text(), f'docs/node.md does not say {name}'


def docs_node_text() -> str:
    return (ROOT / 'docs' / 'node.md').read_text()


def test_effort_controller_launch_file_wires_the_node_to_ros2_control():
    tree = ast.parse(EFFORT_LAUNCH.read_text(), filename=str(EFFORT_LAUNCH))
    arguments = _arguments(tree)
    assert set(arguments) == {'controller', 'params_file', 'namespace', 'use_sim_time',
                              'joint_states_topic', 'robot_description_topic'}
    assert ast.literal_eval(_keywords(arguments['controller'])['default_value']) == (
        'effort_controller')
    (node,) = _calls(tree, 'Node')
    keywords = _keywords(node)
    assert ast.literal_eval(keywords['executable']) == 'rnea_node'
    assert ast.unparse(keywords['parameters']) == (
        "[LaunchConfiguration('params_file'), {'use_sim_time': ParameterValue("
        "LaunchConfiguration('use_sim_time'), value_type=bool)}]")
    remappings = {ast.literal_eval(pair.elts[0]): ast.unparse(pair.elts[1])
                  for pair in keywords['remappings'].elts}
    # Relative: in the namespace (none: /effort_controller/commands, /joint_states, ...).
    assert remappings == {'feedforward_effort': "[controller, '/commands']",
                          'joint_states': "LaunchConfiguration('joint_states_topic')",
                          'robot_description': "LaunchConfiguration('robot_description_topic')"}
    for name, default in (('joint_states_topic', 'joint_states'),
                          ('robot_description_topic', 'robot_description')):
        assert ast.literal_eval(_keywords(arguments[name])['default_value']) == default
    assert "controller = LaunchConfiguration('controller')" in ast.unparse(tree)
    assert "'robot_description'" not in ast.unparse(keywords['parameters'])  # the topic
    imports = _imports(tree)
    assert imports['Node'] == 'launch_ros.actions'
    assert imports['LaunchConfiguration'] == 'launch.substitutions'


def test_setup_installs_launch_and_config():
    setup = (ROOT / 'setup.py').read_text()
    assert "glob('launch/*.launch.py')" in setup and "glob('config/*.yaml')" in setup
    assert "'rnea_node = rnea_ros.node.main:main'" in setup
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        assert {'launch/rnea.launch.py', str(EFFORT_LAUNCH.relative_to(ROOT))} <= set(
            glob('launch/*.launch.py'))
        assert 'config/rnea.yaml' in glob('config/*.yaml')
    finally:
        os.chdir(cwd)


def test_config_names_declared_parameters_with_valid_values():
    from rnea_ros.control.declaration import BY_NAME, NODE_ONLY
    document = yaml.safe_load(CONFIG.read_text())
    params = document['/**']['ros__parameters']
    assert set(params) <= set(BY_NAME)
    commented = {'command_joints', 'contacts', 'wrench_topics', 'locked_joints',
                 'locked_positions', 'wrench_estimation_links',
                 'collision_profiles'}  # lists: commented examples
    assert set(BY_NAME) - set(params) == commented
    assert all(f'# {name}: [' in CONFIG.read_text() for name in commented)
    values = {k: v for k, v in params.items() if k not in NODE_ONLY}
    values['gravity'] = tuple(values['gravity'])
    Settings(**values).validate()
    for name, parameter in BY_NAME.items():
        if name in params:
            assert params[name] == _plain(parameter.default), \
                f'{name}: the example should show the default'


def _plain(value):
    return list(value) if isinstance(value, tuple) else value
