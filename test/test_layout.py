"""
The package layout: imports flow one way, and the library stays free of ROS and bag tools.

dynamics <- description (URDF, MJCF and xacro in, a tree out: the parsers stand above the
algorithms; dynamics imports them only inside RobotModel's factories, LAZY_UPWARD);
dynamics <- params (ROS parameters without ROS, YAML files) <- {control, node, sim, bag,
identify};
dynamics <- contacts <- {control, bag, sim}; dynamics <- recording
<- tools <- {bag, identify, excite, fleet, convert}; dynamics <- observer <- {bag, control};
control (the node's core, no ROS) <- node (the ROS adapter); no tool imports another but excite
(identify's inertial layout) and fleet (the bag pipeline it runs); timing (steady-clock sleeps and
the control threads' schedules) and polling (rclpy subscriptions served outside the executor)
under node and sim; demos above the library. node, bag and sim
never import each other; only sim imports mujoco (and the MJCF reader and writer, inside their
functions); recording (the way into a bag) and observer import dynamics only (recording the URDF's
joint names from description too); control imports no rclpy. Checked two ways: every import
statement of every module (also those inside functions), and what importing the library really
loads (a fresh interpreter). Module by module, no two import each other, even through others
(the import graph from the sources); and no module or function is longer than its limit, but
the listed ones. The tests share helpers through test/harness/ only, never test module to test
module.
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
# package -> the rnea_ros packages it may import (besides itself, errors, files and the face).
ALLOWED = {
    'dynamics': set(),  # and the parsers, inside the factories only: LAZY_UPWARD
    # params: ROS parameters without ROS (what a parameter is, parameter files); dynamics: the
    # actuation model its file holds.
    'params': {'dynamics'},
    # description: URDF, MJCF and xacro in, a tree out; above dynamics.
    'description': {'dynamics'},
    'timing': set(),  # steady-clock sleeps and schedules: the node's and the sim's clocks
    # polling: rclpy subscriptions served outside the executor, for the node and the sim.
    'polling': set(),
    'contacts': {'dynamics'},
    'control': {'dynamics', 'contacts', 'observer', 'params'},
    'node': {'dynamics', 'description', 'contacts', 'observer', 'control', 'timing', 'polling',
             'params'},
    # demos: the library, node and closed-loop demos; the node and the sim run as processes
    # (control: the node's declared defaults that the node demo's torque check depends on).
    'demos': {'dynamics', 'description', 'control'},
    'recording': {'dynamics', 'description'},
    'observer': {'dynamics'},
    # tools: every command-line tool's options, output directory, exit status, text and plots.
    'tools': {'recording'},
    'bag': {'dynamics', 'description', 'contacts', 'recording', 'observer', 'tools', 'params'},
    # sim never imports node: the simulated robot talks to it over DDS.
    # recording: its bag writer, for --record; params: the Parameter its parameters are.
    'sim': {'dynamics', 'description', 'contacts', 'timing', 'polling', 'recording', 'params'},
    'identify': {'dynamics', 'description', 'contacts', 'recording', 'tools', 'params'},
    # fleet: bag, the pipeline it runs.
    'fleet': {'dynamics', 'description', 'contacts', 'recording', 'tools', 'bag'},
    # excite: identify's inertial layout and base; recording's JOINT=VALUE parser.
    'excite': {'dynamics', 'description', 'recording', 'tools', 'identify'},
    # convert: a log (CSV, Parquet, .npz, .mat) into a bag with recording's bag writer.
    'convert': {'recording', 'tools'},
    # ctl: a client over DDS (never node); demos' example robot and sim's gap folder for
    # `rnea_ctl paths`.
    'ctl': {'demos', 'sim'},
}
# Imports that run against the flow, inside a function only, each with its reason.
LAZY_UPWARD = {
    # RobotModel.from_urdf_string, from_urdf_file and from_mjcf are the library's public
    # factories: they delegate to the parsers, which build the tree that dynamics packs.
    'dynamics/model.py': {'rnea_ros.description.urdf', 'rnea_ros.description.robot_file',
                          'rnea_ros.description.mjcf'},
}
HEAVY = ('rclpy', 'rosbags', 'matplotlib', 'pyarrow', 'mujoco')
# Modules that read or write MJCF: they import mujoco inside their functions only (MuJoCo's
# compiler reads the file), so that importing them, and the library, does not need it.
MJCF_MODULES = ('description/mjcf.py', 'description/mjcf_fields.py', 'identify/mjcf_out.py')


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
    allowed = ALLOWED[package] | {package, 'errors', 'files', 'RobotModel', 'InputError',
                                  'RneaError', 'URDFError', 'ModelWarning', None}
    wrong = {}
    for path in sorted(folder.rglob('*.py')):
        lazy = LAZY_UPWARD.get(path.relative_to(PACKAGE).as_posix(), set())
        assert not lazy & _module_level_imports(path), f'{path} imports {lazy} at module level'
        for module in _imports(path) - lazy:
            if _rnea_package(module) not in allowed and module != 'rnea_ros':
                wrong.setdefault(path.relative_to(PACKAGE).as_posix(), []).append(module)
    assert not wrong, f'rnea_ros.{package} imports what it may not: {wrong}'


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def _runs_on_import(tree: ast.Module):
    """
    Yield each import statement and whether it is lazy (inside a function).

    Those of an ``if TYPE_CHECKING:`` block never run and are left out.
    """
    pending = [(node, False) for node in tree.body]
    while pending:
        node, lazy = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, lazy
        elif isinstance(node, ast.If) and getattr(node.test, 'id', '') == 'TYPE_CHECKING':
            pending.extend((child, lazy) for child in node.orelse)
        else:
            inner = lazy or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            pending.extend((child, inner) for child in ast.iter_child_nodes(node))


def _import_graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Return the package's modules -> the package modules they import: at import, lazily."""
    paths = {_module_name(path): path for path in PACKAGE.rglob('*.py')}
    eager, lazy = {name: set() for name in paths}, {name: set() for name in paths}
    for name, path in paths.items():
        for node, inside in _runs_on_import(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif node.level or not node.module:
                continue
            else:  # from a.b import c: the module a.b.c if there is one, else a.b
                targets = [f'{node.module}.{alias.name}' if f'{node.module}.{alias.name}'
                           in paths else node.module for alias in node.names]
            (lazy if inside else eager)[name].update(t for t in targets if t in paths)
    return eager, lazy


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_between_modules():
    """
    No module imports, even through others, one that imports it back.

    The lazy imports of LAZY_UPWARD aside: inside a function, they run after both modules are
    loaded.
    """
    eager, lazy = _import_graph()
    assert not _cycles(eager), f'modules import each other at import: {_cycles(eager)}'
    allowed = {(f'rnea_ros.{path[:-3].replace("/", ".")}', target)
               for path, targets in LAZY_UPWARD.items() for target in targets}
    graph = {name: eager[name] | {t for t in lazy[name] if (name, t) not in allowed}
             for name in eager}
    assert not _cycles(graph), f'modules import each other (inside functions): {_cycles(graph)}'


# A module of more lines than MAX_MODULE_LINES, or a function (def to its last line, docstring
# included) of more than MAX_FUNCTION_LINES, is asking to be split. The ones that are today,
# each with its reason: split one, then take it off its list.
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 80
LONG_MODULES = {
    'control/joint_input.py': "the cycle's input merges; they go to CycleState with the core",
    'control/observer_outputs.py': "the observer's torques, wrenches and collisions in one "
                                   'class; collision handling to be split out with the core',
    'demos/node_demo.py': "rnea_node_demo: the node's inputs played, its torques checked, "
                          'its options, in one script',
    'dynamics/model.py': "RobotModel's API, one class (its kinematics and inertial parameters "
                         'already apart)',
    'recording/bagio/storage.py': 'bag reading and writing: the regular-file checks, the '
                                  "mapped MCAP fast path and rosbags' reader in one module",
    'recording/accelerations.py': "each joint's route to its accelerations: the candidates and "
                                  'the choice, not yet apart',
    'sim/node.py': "the simulated robot's ROS node: interfaces and loop in one class",
    'sim/plant.py': 'MuJoCo stepping, sensors, pushes and truth in one class',
}
LONG_FUNCTIONS = {
    'bag/floattext.py:_shortest': "Ryu's d2d, one numba kernel inlined into the formatter",
    'bag/report.py:markdown': "the report's sections written in order",
    'dynamics/regressor.py:regressor_sample': 'one numba kernel: forward and backward passes',
    'fleet/cli.py:_run': "rnea_fleet's run in order: inputs, cluster, bags, table, report",
    'identify/pipeline.py:identify': "the pipeline's steps in order",
    'identify/report.py:markdown': "the report's sections written in order",
    'observer/wrench.py:wrench_kernel': 'one numba kernel: Jacobian and damped least squares',
    'recording/accelerations.py:choose': "each joint's candidate routes and the choice",
    'recording/bagio/storage.py:_read_mcap_chunks': "the fast path's one pass over the chunks",
    'recording/savgol.py:_weights': 'one numba kernel: the fit and its error gains',
    'recording/series.py:joint_series': 'nine steps and twelve parameters; to be split',
    'sim/main.py:main': "rnea_sim's start-up: options, model, plant, node, recording",
}


def _sizes():
    modules, functions = {}, {}
    for path in sorted(PACKAGE.rglob('*.py')):
        name = path.relative_to(PACKAGE).as_posix()
        text = path.read_text()
        modules[name] = len(text.splitlines())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                key = f'{name}:{node.name}'
                functions[key] = max(functions.get(key, 0), node.end_lineno - node.lineno + 1)
    return modules, functions


def test_no_module_or_function_too_long_but_the_listed():
    modules, functions = _sizes()
    long_modules = {name for name, lines in modules.items() if lines > MAX_MODULE_LINES}
    long_functions = {name for name, lines in functions.items() if lines > MAX_FUNCTION_LINES}
    assert long_modules <= set(LONG_MODULES), \
        f'modules over {MAX_MODULE_LINES} lines: {sorted(long_modules - set(LONG_MODULES))}'
    assert long_functions <= set(LONG_FUNCTIONS), f'functions over {MAX_FUNCTION_LINES} ' \
        f'lines: {sorted(long_functions - set(LONG_FUNCTIONS))}'
    # A split module or function leaves its list: the lists only shrink.
    assert set(LONG_MODULES) <= long_modules, \
        f'no longer long: take them off LONG_MODULES: {sorted(set(LONG_MODULES) - long_modules)}'
    assert set(LONG_FUNCTIONS) <= long_functions, \
        f'no longer long: take them off LONG_FUNCTIONS: ' \
        f'{sorted(set(LONG_FUNCTIONS) - long_functions)}'


TESTS = Path(__file__).resolve().parent
HARNESS = TESTS / 'harness'  # the helpers the tests share: `from harness.oracle import robot_path`


def test_tests_share_helpers_through_the_harness_only():
    """No test module imports another, nor a conftest: what tests share is in test/harness/."""
    sources = sorted(TESTS.rglob('*.py'))
    loose = [path.relative_to(TESTS).as_posix() for path in sources
             if not path.name.startswith('test_') and path.name != 'conftest.py'
             and HARNESS not in path.parents]
    assert not loose, f'helpers outside test/harness/: {loose}'
    local = {path.stem for path in sources} - {'__init__'}  # what test/'s folders hold
    offenders = {f'{path.relative_to(TESTS).as_posix()}: {name}'
                 for path in sources for name in _imports(path)
                 if name.split('.')[0] in local}
    assert not offenders, f'imports of test modules or loose helpers: {sorted(offenders)}'


def test_library_imports_no_rclpy_and_no_ros_or_bag_libraries():
    for package in ('dynamics', 'description', 'contacts', 'observer', 'control', 'timing'):
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
    'import rnea_ros.description.mjcf',  # MuJoCo is imported when an MJCF is read
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
from harness.oracle import robot_path
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
