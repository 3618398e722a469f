"""
The package as colcon and rosdep see it: declared dependencies cover every import.

A rosdep + colcon user gets what ``package.xml`` lists, plus the ``pip install`` lines of
docs/development.md for the modules without a rosdep key; ``colcon test`` runs pytest only if
``setup.py`` names it in ``extras_require['test']``. Imports are read from the sources (AST),
so a new import without a declaration fails here.
"""
from __future__ import annotations

import ast
from pathlib import Path
import re
import sys
import xml.etree.ElementTree as ET

ROOT = Path(__file__).resolve().parents[1]
# Import name -> rosdep key, for the modules that have one.
ROSDEP_KEYS = {
    'numpy': 'python3-numpy', 'numba': 'python3-numba', 'yaml': 'python3-yaml',
    'matplotlib': 'python3-matplotlib', 'scipy': 'python3-scipy', 'pytest': 'python3-pytest',
    'xacro': 'xacro', 'ament_index_python': 'ament_index_python', 'tqdm': 'python3-tqdm',
    'psutil': 'python3-psutil',
}
ROS_PACKAGES = {'rclpy', 'rcl_interfaces', 'lifecycle_msgs', 'sensor_msgs', 'std_msgs', 'std_srvs',
                'geometry_msgs', 'trajectory_msgs', 'nav_msgs', 'diagnostic_msgs', 'launch',
                'launch_ros', 'builtin_interfaces', 'rosgraph_msgs', 'ament_flake8',
                'ament_pep257'}
# Import name -> pip package, for the modules without a rosdep key.
PIP_PACKAGES = {
    'daqp': 'daqp', 'rosbags': 'rosbags', 'pyarrow': 'pyarrow', 'cvxpy': 'cvxpy',
    'clarabel': 'clarabel', 'scs': 'scs', 'dask': 'dask', 'distributed': 'distributed',
    'plotly': 'plotly', 'pinocchio': 'pin', 'example_robot_data': 'example-robot-data',
    'quadprog': 'quadprog', 'threadpoolctl': 'threadpoolctl', 'mujoco': 'mujoco',
}
# The test suite's own modules (helpers such as the oracle, and test modules others reuse).
# The tests' own modules, and the benchmark scripts some tests import from bench/.
# The helpers' package, test/harness/, imported as ``harness``.
TEST_HELPERS = {path.stem for folder in ('test', 'bench')
                for path in (ROOT / folder).rglob('*.py')} | {
    path.parent.name for path in (ROOT / 'test').rglob('__init__.py')}


def imported_modules(paths) -> dict[str, str]:
    """Top-level module of every absolute import in ``paths`` -> the first file importing it."""
    modules: dict[str, str] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                modules.setdefault(name.split('.')[0], str(path.relative_to(ROOT)))
    return modules


def package_dependencies() -> tuple[set[str], set[str]]:
    root = ET.parse(ROOT / 'package.xml').getroot()
    run = {e.text for tag in ('depend', 'exec_depend') for e in root.iter(tag)}
    test = {e.text for e in root.iter('test_depend')}
    return run, test


def readme_pip_lines() -> list[str]:
    text = (ROOT / 'docs' / 'development.md').read_text()
    section = text[text.index('## Building with colcon'):]
    return re.findall(r'^python3 -m pip install ([^\n#]+)', section, re.M)


def _third_party(modules: dict[str, str]) -> dict[str, str]:
    return {name: path for name, path in modules.items()
            if name not in sys.stdlib_module_names and name != 'rnea_ros'
            and name not in TEST_HELPERS}


def test_every_runtime_import_is_declared_in_package_xml_or_the_pip_line():
    run, _ = package_dependencies()
    pip_runtime = set(readme_pip_lines()[0].split())
    sources = [*(ROOT / 'rnea_ros').rglob('*.py'), *(ROOT / 'launch').glob('*.py')]
    undeclared = {}
    for name, path in _third_party(imported_modules(sources)).items():
        if name in ROS_PACKAGES:
            declared = name in run
        elif name in ROSDEP_KEYS:
            declared = ROSDEP_KEYS[name] in run
        else:
            declared = PIP_PACKAGES.get(name) in pip_runtime
        if not declared:
            undeclared[name] = path
    assert not undeclared, f'imported but not declared (module: first file): {undeclared}'


def test_every_test_import_is_declared_for_colcon_test():
    run, test = package_dependencies()
    pip_all = set(' '.join(readme_pip_lines()).split())
    sources = list((ROOT / 'test').rglob('*.py'))
    undeclared = {}
    for name, path in _third_party(imported_modules(sources)).items():
        key = ROSDEP_KEYS.get(name, name if name in ROS_PACKAGES else None)
        if key is not None:
            declared = key in run | test
        else:
            declared = PIP_PACKAGES.get(name) in pip_all
        if not declared:
            undeclared[name] = path
    assert not undeclared, f'imported by tests but not declared: {undeclared}'
    assert 'python3-pytest-timeout' in test  # the tests' timeout marks


def test_setup_declares_test_extras_for_colcon_test_and_no_tests_require():
    tree = ast.parse((ROOT / 'setup.py').read_text())
    (setup,) = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
                and getattr(node.func, 'id', '') == 'setup']
    keywords = {keyword.arg: keyword.value for keyword in setup.keywords}
    assert 'tests_require' not in keywords  # ignored by setuptools >= 72: colcon ran 0 tests
    extras = ast.literal_eval(keywords['extras_require'])
    assert {'pytest', 'pytest-timeout'} <= set(extras['test'])
    pip_tests = set(readme_pip_lines()[1].split())
    assert set(extras['test']) - {'pytest', 'pytest-timeout'} == pip_tests


def test_node_missing_module_message_gives_the_readme_pip_command():
    from rnea_ros.node.main import PIP_ONLY
    pip_runtime = set(readme_pip_lines()[0].split())
    assert set(PIP_ONLY.values()) <= pip_runtime
    # The MJCF reader and its table of MuJoCo's fields import mujoco when an MJCF is read
    # (RobotModel.from_mjcf): the node reads a URDF only.
    mjcf_only = {ROOT / 'rnea_ros' / 'description' / name
                 for name in ('mjcf.py', 'mjcf_fields.py')}
    node_sources = [path for sub in ('node', 'contacts', 'dynamics', 'description')
                    for path in (ROOT / 'rnea_ros' / sub).rglob('*.py')
                    if path not in mjcf_only]
    node_sources += (ROOT / 'rnea_ros').glob('*.py')
    node_imports = imported_modules(node_sources)
    assert set(PIP_ONLY) == {name for name in PIP_PACKAGES if name in node_imports}
