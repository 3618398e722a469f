"""
The launch file and the example parameters, as far as this machine allows.

launch_ros has no wheel here, so the launch file cannot run: it is checked statically (it parses,
declares its arguments with the right defaults, starts ``rnea_node`` from ``rnea_ros``), and the
parameters it passes (config file + URDF) are started for real in test_node.py. The YAML must
name only declared parameters, each with a valid value.
"""
from __future__ import annotations

import ast
from glob import glob
from pathlib import Path

import pytest
import yaml

from rnea_ros.node.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ROOT / 'launch' / 'rnea.launch.py'
CONFIG = ROOT / 'config' / 'rnea.yaml'


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, 'id', getattr(node.func, 'attr', None)) == name]


def _keywords(call: ast.Call) -> dict[str, ast.AST]:
    return {keyword.arg: keyword.value for keyword in call.keywords}


@pytest.fixture(scope='module')
def launch_tree() -> ast.Module:
    return ast.parse(LAUNCH.read_text(), filename=str(LAUNCH))


def test_launch_file_declares_params_file_and_urdf(launch_tree):
    arguments = {ast.literal_eval(call.args[0]): call
                 for call in _calls(launch_tree, 'DeclareLaunchArgument')}
    assert set(arguments) == {'params_file', 'urdf'}
    default = _keywords(arguments['params_file'])['default_value']
    assert isinstance(default, ast.Name)  # the installed config/rnea.yaml
    joins = [call for call in _calls(launch_tree, 'join')
             if [ast.literal_eval(arg) for arg in call.args[1:]] == ['config', 'rnea.yaml']]
    assert joins, 'params_file should default to <share>/config/rnea.yaml'
    share = _calls(launch_tree, 'get_package_share_directory')
    assert [ast.literal_eval(call.args[0]) for call in share] == ['rnea_ros']
    assert ast.literal_eval(_keywords(arguments['urdf'])['default_value']) == ''


def test_launch_file_starts_rnea_node_with_the_urdf_as_robot_description(launch_tree):
    (node,) = _calls(launch_tree, 'Node')
    keywords = _keywords(node)
    assert ast.literal_eval(keywords['package']) == 'rnea_ros'
    assert ast.literal_eval(keywords['executable']) == 'rnea_node'
    assert ast.literal_eval(keywords['name']) == 'rnea'
    source = ast.unparse(launch_tree)
    assert "{'robot_description': urdf_file.read()}" in source
    functions = {f.name for f in ast.walk(launch_tree) if isinstance(f, ast.FunctionDef)}
    assert 'generate_launch_description' in functions
    imports = {alias.name for node in ast.walk(launch_tree)
               if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert {'LaunchDescription', 'DeclareLaunchArgument', 'Node'} <= imports


def test_setup_installs_launch_and_config():
    setup = (ROOT / 'setup.py').read_text()
    assert "glob('launch/*.launch.py')" in setup and "glob('config/*.yaml')" in setup
    assert "'rnea_node = rnea_ros.node.node:main'" in setup
    import os
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        assert 'launch/rnea.launch.py' in glob('launch/*.launch.py')
        assert 'config/rnea.yaml' in glob('config/*.yaml')
    finally:
        os.chdir(cwd)


def test_config_names_declared_parameters_with_valid_values():
    rclpy = pytest.importorskip('rclpy')
    del rclpy
    from rnea_ros.node.parameters import PARAMETERS
    document = yaml.safe_load(CONFIG.read_text())
    params = document['rnea']['ros__parameters']
    assert set(params) <= set(PARAMETERS)
    commented = {'command_joints', 'contacts', 'wrench_topics'}  # lists: commented examples
    assert set(PARAMETERS) - set(params) == commented
    assert all(f'# {name}: [' in CONFIG.read_text() for name in commented)
    values = {k: v for k, v in params.items() if k != 'robot_description'}
    values['gravity'] = tuple(values['gravity'])
    Settings(**values).validate()
    for name, (default, _) in PARAMETERS.items():
        if name in params and name != 'gravity':
            assert params[name] == default, f'{name}: the example should show the default'
