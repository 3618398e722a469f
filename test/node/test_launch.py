"""
The launch files and the example parameters, as far as this machine allows.

launch_ros has no wheel here, so the launch files cannot run under ``ros2 launch``: they run here
against recording stand-ins of ``launch``, ``launch_ros`` and ``ament_index_python``
(``generate_launch_description`` and its ``OpaqueFunction`` are called, every action and
substitution kept with its arguments), which shows the arguments they declare with their
defaults, the node they start with its parameters and remappings; the xacro command the launch
file runs is run here, and the parameters it passes (config file + URDF) are started for real in
test_node.py. The YAML must name only declared parameters, each with a valid value.
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

from harness.launch_file import (Command, LaunchConfiguration, Launched, ParameterValue, SHARE,
                                 XACRO_ARM)
import pytest
import yaml

from rnea_ros.control.settings import Settings
from rnea_ros.ctl.names import TRAJECTORY_TOPIC
from rnea_ros.node.interfaces import INTERFACES, LAUNCH_REMAPPED

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ROOT / 'launch' / 'rnea.launch.py'
EFFORT_LAUNCH = ROOT / 'launch' / 'rnea_effort_controller.launch.py'
CONFIG = ROOT / 'config' / 'rnea.yaml'


@pytest.fixture(scope='module')
def launched() -> Launched:
    return Launched(LAUNCH)


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, 'id', getattr(node.func, 'attr', None)) == name]


def _keywords(call: ast.Call) -> dict[str, ast.AST]:
    return {keyword.arg: keyword.value for keyword in call.keywords}


def _imports(tree: ast.AST) -> dict[str, str]:
    """Map each imported name to its module."""
    return {alias.name: node.module for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) for alias in node.names}


def _common_parameters() -> list:
    return [LaunchConfiguration('params_file'), {'use_sim_time': ParameterValue(
        LaunchConfiguration('use_sim_time'), value_type=bool)}]


def test_launch_file_declares_params_file_urdf_and_xacro_args(launched):
    assert set(launched.arguments) == {'params_file', 'urdf', 'xacro_args', 'namespace',
                                       'use_sim_time'} | {f'{topic}_topic' for topic in TOPICS}
    # The installed config/rnea.yaml.
    assert launched.default('params_file') == f'{SHARE}/rnea_ros/config/rnea.yaml'
    assert launched.default('urdf') == launched.default('xacro_args') == ''


def test_launch_file_expands_the_urdf_with_xacro_into_robot_description(launched, tmp_path):
    """The usual ROS 2 way: ParameterValue(Command(['xacro ', urdf, ' ', args]), str)."""
    (node,) = launched.nodes(urdf='/robots/arm.urdf.xacro')
    assert (node.kwargs['package'], node.kwargs['executable'], node.kwargs['name']) == (
        'rnea_ros', 'rnea_node', 'rnea')
    expanded = Command(['xacro ', LaunchConfiguration('urdf'), ' ',
                        LaunchConfiguration('xacro_args')])
    description = {'robot_description': ParameterValue(expanded, value_type=str)}
    assert node.kwargs['parameters'] == [*_common_parameters(), description]
    (node,) = launched.nodes(urdf='/robots/arm.urdf', xacro_args='prefix:=left_')
    assert node.kwargs['parameters'][-1] == description  # xacro_args given: xacro too
    # Any other file is passed as it is, never run through xacro.
    plain = tmp_path / 'arm.urdf'
    plain.write_text('<robot name="arm"/>')
    (node,) = launched.nodes(urdf=str(plain))
    assert node.kwargs['parameters'][-1] == {
        'robot_description': ParameterValue('<robot name="arm"/>', value_type=str)}
    (node,) = launched.nodes()  # no urdf: the robot_description topic
    assert node.kwargs['parameters'] == _common_parameters()
    imports = _imports(ast.parse(LAUNCH.read_text()))
    assert imports['Command'] == 'launch.substitutions'
    assert imports['ParameterValue'] == 'launch_ros.parameter_descriptions'


def test_launch_docstring_remaps_with_set_remap_in_a_group():
    """Show what works: ``remappings`` on IncludeLaunchDescription is a TypeError."""
    docstring = ast.get_docstring(ast.parse(LAUNCH.read_text()))
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


# The node's topics rnea.launch.py remaps: those rnea_ros.node.interfaces marks so.
TOPICS = tuple(i.name for i in INTERFACES if i.launch_argument)


def test_launch_file_takes_namespace_use_sim_time_and_a_remapping_per_topic(launched):
    assert TOPICS == LAUNCH_REMAPPED and TRAJECTORY_TOPIC in TOPICS
    assert _imports(ast.parse(LAUNCH.read_text()))['LAUNCH_REMAPPED'] == 'rnea_ros.node.interfaces'
    for topic in TOPICS:  # default: the topic itself, relative (in the namespace)
        assert launched.default(f'{topic}_topic') == topic
    (node,) = launched.nodes()
    assert node.kwargs['namespace'] == LaunchConfiguration('namespace')
    assert node.kwargs['remappings'] == [(topic, LaunchConfiguration(topic + '_topic'))
                                         for topic in TOPICS]


@pytest.mark.parametrize('path', sorted(glob(str(ROOT / 'launch' / '*.launch.py'))))
def test_every_topic_argument_remaps_a_declared_topic_of_the_node(path):
    """A ``<topic>_topic`` argument names a topic of interfaces.py that it remaps."""
    launched = Launched(path)
    topics = [name[:-len('_topic')] for name in launched.arguments if name.endswith('_topic')]
    assert topics and set(topics) <= set(TOPICS), (topics, TOPICS)
    (node,) = launched.nodes()
    remapped = dict(node.kwargs['remappings'])
    assert all(remapped[topic] == LaunchConfiguration(topic + '_topic') for topic in topics)
    declared = {i.name for i in INTERFACES}
    assert set(remapped) <= declared, set(remapped) - declared


LAUNCH_FILES = sorted(glob(str(ROOT / 'launch' / '*.launch.py')))
COMMON = ('namespace', 'use_sim_time', 'params_file')


@pytest.mark.parametrize('path', LAUNCH_FILES)
def test_every_launch_file_takes_namespace_use_sim_time_and_params_file(path):
    launched = Launched(path)
    assert set(COMMON) <= set(launched.arguments)
    assert launched.default('namespace') == ''
    assert launched.default('use_sim_time') == 'false'
    assert launched.default('params_file') == f'{SHARE}/rnea_ros/config/rnea.yaml'
    (node,) = launched.nodes()
    assert node.kwargs['namespace'] == LaunchConfiguration('namespace')
    assert node.kwargs['parameters'][:2] == _common_parameters()
    assert 'params_file' in docs_node_text()  # the node page says the arguments
    for name in launched.arguments:
        assert f'`{name}`' in docs_node_text(), f'the node guide (docs/node/) does not say {name}'


@pytest.mark.parametrize('path', LAUNCH_FILES)
def test_the_common_arguments_and_the_node_are_declared_once_for_every_launch_file(path):
    """rnea_ros.node.launching declares them; a launch file names none of them itself."""
    source = Path(path).read_text()
    imports = _imports(ast.parse(source))
    assert imports['common_arguments'] == imports['rnea_node'] == 'rnea_ros.node.launching'
    for name in COMMON:
        assert f"DeclareLaunchArgument('{name}'" not in source
    assert 'Node(' not in source and "'rnea_node'" not in source


def docs_node_text() -> str:
    return '\n'.join(page.read_text() for page in sorted((ROOT / 'docs' / 'node').glob('*.md')))


def test_the_controllers_yaml_of_robots_md_is_the_effort_controller_the_launch_file_expects():
    # ros2_controllers' ForwardCommandController on the effort interface (its parameters:
    # forward_command_controller/src/forward_command_controller_parameters.yaml: joints,
    # interface_name), named as the launch file's `controller` default, on the panda's arm.
    page = (ROOT / 'docs' / 'robots.md').read_text()
    (block,) = [text.split('```')[0] for text in page.split('```yaml\n')[1:]
                if 'ForwardCommandController' in text.split('```')[0]]
    config = yaml.safe_load(block)
    name = Launched(EFFORT_LAUNCH).default('controller')
    manager = config['controller_manager']['ros__parameters']
    assert manager[name] == {'type': 'forward_command_controller/ForwardCommandController'}
    assert config[name]['ros__parameters'] == {
        'joints': [f'panda_joint{k}' for k in range(1, 8)], 'interface_name': 'effort'}
    assert 'JointGroupEffortController' not in EFFORT_LAUNCH.read_text()


def test_effort_controller_launch_file_wires_the_node_to_ros2_control():
    launched = Launched(EFFORT_LAUNCH)
    assert set(launched.arguments) == {'controller', 'params_file', 'namespace', 'use_sim_time',
                                       'joint_states_topic', 'robot_description_topic'}
    assert launched.default('controller') == 'effort_controller'
    (node,) = launched.nodes()
    assert node.kwargs['executable'] == 'rnea_node'
    # robot_description is the topic: the parameter stays empty.
    assert node.kwargs['parameters'] == _common_parameters()
    # Relative: in the namespace (none: /effort_controller/commands, /joint_states, ...).
    assert dict(node.kwargs['remappings']) == {
        'feedforward_effort': [LaunchConfiguration('controller'), '/commands'],
        'joint_states': LaunchConfiguration('joint_states_topic'),
        'robot_description': LaunchConfiguration('robot_description_topic')}
    for name, default in (('joint_states_topic', 'joint_states'),
                          ('robot_description_topic', 'robot_description')):
        assert launched.default(name) == default


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
