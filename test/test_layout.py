"""
The package layout: imports flow one way, and the library stays free of ROS and bag tools.

dynamics <- contacts <- {control, bag, sim}; control <- sim (its Parameter); dynamics <- recording
<- tools <- {bag, identify, excite, fleet, convert}; dynamics <- observer <- {bag, control};
control (the node's core, no ROS) <- node (the ROS adapter); no tool imports another but excite
(identify's parameter layout) and fleet (the bag pipeline it runs); timing (steady-clock sleeps and
the control threads' schedules) and polling (rclpy subscriptions served outside the executor)
under node and sim; demos above the library. node, bag and sim
never import each other; only sim imports mujoco (and the MJCF reader and writer, inside their
functions); recording (the way into a bag) and observer import dynamics only; control imports no
rclpy. Checked two ways: every import statement of every module (also those inside functions), and
what importing the library really loads (a fresh interpreter).
"""
import ast
import json
from pathlib import Path
import shutil
import subprocess
import sys
import zipfile

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / 'rnea_ros'
# package -> the rnea_ros packages it may import (besides itself, errors, params_file and the
# face).
ALLOWED = {
    'dynamics': set(),
    'timing': set(),  # steady-clock sleeps and schedules: the node's and the sim's clocks
    # polling: rclpy subscriptions served outside the executor, for the node and the sim.
    'polling': set(),
    'contacts': {'dynamics'},
    'control': {'dynamics', 'contacts', 'observer'},
    'node': {'dynamics', 'contacts', 'observer', 'control', 'timing', 'polling'},
    # demos: the library, node and closed-loop demos; the node and the sim run as processes
    # (control: the node's declared defaults that the node demo's torque check depends on).
    'demos': {'dynamics', 'control'},
    'recording': {'dynamics'},
    'observer': {'dynamics'},
    # tools: every command-line tool's options, output directory, exit status, text and plots.
    'tools': {'recording'},
    'bag': {'dynamics', 'contacts', 'recording', 'observer', 'tools'},
    # sim never imports node: the simulated robot talks to it over DDS.
    # recording: its bag writer, for --record; control: the Parameter its parameters are.
    'sim': {'dynamics', 'contacts', 'timing', 'polling', 'recording', 'control'},
    'identify': {'dynamics', 'contacts', 'recording', 'tools'},
    'fleet': {'dynamics', 'contacts', 'recording', 'tools', 'bag'},  # bag: the pipeline it runs
    # excite: identify's parameter layout and base; recording's JOINT=VALUE parser.
    'excite': {'dynamics', 'recording', 'tools', 'identify'},
    # convert: a log (CSV, Parquet, .npz, .mat) into a bag with recording's bag writer.
    'convert': {'recording', 'tools'},
    # ctl: a client over DDS (never node); demos' example robot and sim's gap folder for
    # `rnea_ctl paths`.
    'ctl': {'demos', 'sim'},
}
HEAVY = ('rclpy', 'rosbags', 'matplotlib', 'pyarrow', 'mujoco')
# Modules that read or write MJCF: they import mujoco inside their functions only (MuJoCo's
# compiler reads the file), so that importing them, and the library, does not need it.
MJCF_MODULES = ('dynamics/mjcf.py', 'identify/mjcf_out.py')


def _imports(path: Path) -> set[str]:
    """Return every module name an import statement of ``path`` names."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            if node.module == 'rnea_ros':  # from rnea_ros import dynamics, ...
                names.update(f'rnea_ros.{alias.name}' for alias in node.names)
    return names


def _module_level_imports(path: Path) -> set[str]:
    """Return the module names imported outside any function of ``path``."""
    names = set()
    pending = list(ast.parse(path.read_text()).body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        pending.extend(ast.iter_child_nodes(node))
    return names


def _rnea_package(module: str) -> str | None:
    parts = module.split('.')
    return parts[1] if parts[0] == 'rnea_ros' and len(parts) > 1 else None


def test_every_module_belongs_to_a_known_package():
    top = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / '__init__.py').exists()}
    assert top <= set(ALLOWED), f'packages without import rules: {sorted(top - set(ALLOWED))}'


@pytest.mark.parametrize('package', sorted(ALLOWED))
def test_imports_flow_one_way(package):
    folder = PACKAGE / package
    if not folder.is_dir():
        pytest.skip(f'rnea_ros.{package} does not exist yet')
    allowed = ALLOWED[package] | {package, 'errors', 'params_file', 'RobotModel', 'InputError',
                                  'RneaError', 'URDFError', 'ModelWarning', None}
    wrong = {}
    for path in sorted(folder.rglob('*.py')):
        for module in _imports(path):
            if _rnea_package(module) not in allowed and module != 'rnea_ros':
                wrong.setdefault(path.relative_to(PACKAGE).as_posix(), []).append(module)
    assert not wrong, f'rnea_ros.{package} imports what it may not: {wrong}'


def test_library_imports_no_rclpy_and_no_ros_or_bag_libraries():
    for package in ('dynamics', 'contacts', 'observer', 'control', 'timing'):
        for path in sorted((PACKAGE / package).rglob('*.py')):
            heavy = {m for m in _imports(path)
                     if m.split('.')[0] in HEAVY or m.split('.')[0].endswith('_msgs')}
            if path.relative_to(PACKAGE).as_posix() in MJCF_MODULES:
                heavy.discard('mujoco')  # inside its functions: test_only_the_sim_imports...
            assert not heavy, f'{path.relative_to(PACKAGE)} imports {sorted(heavy)}'


def test_only_the_sim_imports_mujoco():
    importers = sorted(path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob('*.py')
                       if any(m.split('.')[0] == 'mujoco' for m in _imports(path))
                       and path.relative_to(PACKAGE).parts[0] != 'sim')
    assert set(importers) <= set(MJCF_MODULES), \
        f'modules outside rnea_ros.sim import mujoco: {importers}'
    eager = [name for name in MJCF_MODULES if (PACKAGE / name).exists() and any(
        m.split('.')[0] == 'mujoco' for m in _module_level_imports(PACKAGE / name))]
    assert not eager, f'these modules import mujoco at module level: {eager}'


def _loaded_after(statement: str) -> set[str]:
    code = (f'import sys\n{statement}\n'
            f'print(" ".join(m for m in {HEAVY!r} if m in sys.modules))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True).stdout
    return set(out.split())


@pytest.mark.parametrize('statement', [
    'import rnea_ros',
    'import rnea_ros.dynamics; from rnea_ros import RobotModel',
    'import rnea_ros.dynamics.mjcf',  # MuJoCo is imported when an MJCF is read
    'import rnea_ros.contacts; from rnea_ros.contacts import Contact, ContactSolver',
    'import rnea_ros.observer; from rnea_ros.observer import MomentumObserver',
])
def test_library_loads_no_ros_bag_or_plotting_library(statement):
    assert _loaded_after(statement) == set()


def test_bag_tool_loads_no_rclpy():
    modules = sorted('.'.join(p.relative_to(PACKAGE.parent).with_suffix('').parts)
                     for folder in ('bag', 'recording') for p in (PACKAGE / folder).rglob('*.py')
                     if p.stem not in ('__main__', '__init__'))
    assert 'rclpy' not in _loaded_after('\n'.join(f'import {m}' for m in modules))


CACHE_PROBE = """
import importlib, json, pkgutil
import numba
import rnea_ros.dynamics
from rnea_ros import RobotModel
from oracle import robot_path
RobotModel.from_urdf_file(robot_path('panda'))
hits = misses = 0
for info in pkgutil.walk_packages(rnea_ros.dynamics.__path__, 'rnea_ros.dynamics.'):
    for value in vars(importlib.import_module(info.name)).values():
        if isinstance(value, numba.core.registry.CPUDispatcher) and value.signatures:
            hits += sum(value.stats.cache_hits.values())
            misses += sum(value.stats.cache_misses.values())
print(json.dumps([hits, misses]))
"""


def test_second_start_loads_the_kernels_from_the_numba_cache():
    """The cache key survives the package layout: a second start compiles nothing."""
    env_path = str(Path(__file__).resolve().parent)
    command = [sys.executable, '-c', f'import sys; sys.path.insert(0, {env_path!r})\n'
               + CACHE_PROBE]
    subprocess.run(command, capture_output=True, text=True, check=True)  # fills the cache
    second = subprocess.run(command, capture_output=True, text=True, check=True)
    hits, misses = json.loads(second.stdout.splitlines()[-1])
    assert misses == 0 and hits > 0, f'{misses} kernels compiled again, {hits} from the cache'


def test_wheel_installs_every_module_and_the_launch_and_config_data(tmp_path):
    """What colcon's setup.py install gets: every subpackage, launch files and config."""
    root = PACKAGE.parent
    source = tmp_path / 'source'  # setuptools builds in the tree: keep the checkout clean
    shutil.copytree(root, source, ignore=shutil.ignore_patterns(
        '.venv', '.git', 'build', '*.egg-info', '__pycache__', 'test', 'bench'))
    subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation',
                    '-q', '-w', str(tmp_path), str(source)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob('*.whl')
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(root).as_posix() for p in PACKAGE.rglob('*.py')}
    assert modules <= names, f'missing from the wheel: {sorted(modules - names)}'
    assert 'rnea_ros/sim/gaps/default.yaml' in names  # read beside the code
    data = {n.split('.data/data/', 1)[1] for n in names if '.data/data/' in n}
    for folder in ('launch', 'config'):
        for path in (root / folder).iterdir():
            assert f'share/rnea_ros/{folder}/{path.name}' in data
    assert 'share/rnea_ros/package.xml' in data


def test_license_file_matches_the_declared_license():
    root = PACKAGE.parent
    assert (root / 'LICENSE').read_text().startswith('BSD 3-Clause License')
    assert '<license>BSD-3-Clause</license>' in (root / 'package.xml').read_text()
    assert "license='BSD-3-Clause'" in (root / 'setup.py').read_text()
