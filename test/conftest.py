"""
Shared test fixtures (the example-robot-data corpus, the Pinocchio oracle) and the tier markers.

The markers are registered in ``pytest.ini``. ``ros`` and ``sim`` are derived here from what a
test uses, so that a new test cannot forget them: ``ros`` for a test that takes the ``ros``
fixture (the node and sim harnesses) or whose module holds rclpy or one of the ROS harnesses;
``sim`` for a test whose module holds MuJoCo or the simulated robot (``rnea_ros.sim``);
``browser`` for one whose module holds the headless-browser helper (``test/browser.py``).
``slow`` is derived from measured time: a test that took more than ``tiers.SLOW_SECONDS``
(setup and call) in the run stored in ``test/durations.json`` (``scripts/test.sh
--store-durations`` stores the times of the tests it runs there) is ``slow``; a test not
measured yet is not.
"""
from __future__ import annotations

import json
from pathlib import Path
import types

# pytest puts this folder (rootdir conftest, no __init__.py) on sys.path: the helpers import.
from oracle import robot_path, ROBOTS_DIR
import pytest
from tiers import DURATIONS, SLOW_SECONDS


@pytest.fixture(scope='session')
def robots_dir() -> Path:
    """Folder of the example-robot-data URDFs (installed by the pip package)."""
    if not ROBOTS_DIR.is_dir():
        pytest.fail(f'example-robot-data not installed: {ROBOTS_DIR} missing')
    return ROBOTS_DIR


@pytest.fixture(scope='session')
def ur5_path() -> Path:
    return robot_path('ur5')


def pytest_addoption(parser):
    parser.addoption('--store-durations', action='store_true',
                     help=f'store the setup + call time of each test run in {DURATIONS.name} '
                          '(kept for the others): the slow marker is derived from it')


def _stored_durations() -> dict:
    return json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}


# Modules (and what they define) whose presence in a test module makes its tests `ros` / `sim`.
ROS_MODULES = ('rclpy', 'ros_harness', 'loop_harness')
SIM_MODULES = ('mujoco', 'rnea_ros.sim', 'inprocess_loop', 'sim_identification')
BROWSER_MODULES = ('browser',)


def _module_names(module: types.ModuleType) -> set[str]:
    """Return the names of the modules a test module holds, or holds something from."""
    names = set()
    for value in vars(module).values():
        if isinstance(value, types.ModuleType):
            names.add(value.__name__)
        else:
            names.add(getattr(value, '__module__', None) or '')
    return names


def _uses(names: set[str], prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + '.')
               for name in names for prefix in prefixes)


def pytest_collection_modifyitems(config, items):
    """Add the derived tier markers ``ros``, ``sim``, ``browser`` and ``slow`` (module doc)."""
    durations = _stored_durations()
    by_module: dict = {}
    for item in items:
        module = getattr(item, 'module', None)
        if module is None:
            continue
        if module not in by_module:
            names = _module_names(module)
            by_module[module] = (_uses(names, ROS_MODULES), _uses(names, SIM_MODULES),
                                 _uses(names, BROWSER_MODULES))
        ros, sim, browser = by_module[module]
        if ros or 'ros' in item.fixturenames:
            item.add_marker(pytest.mark.ros)
        if sim:
            item.add_marker(pytest.mark.sim)
        if browser:
            item.add_marker(pytest.mark.browser)
        if durations.get(item.nodeid, 0.0) > SLOW_SECONDS:
            item.add_marker(pytest.mark.slow)


_measured: dict[str, float] = {}


def pytest_runtest_logreport(report):
    if report.when in ('setup', 'call'):
        _measured[report.nodeid] = _measured.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus):
    if session.config.getoption('--store-durations') and _measured:
        durations = {**_stored_durations(), **{k: round(v, 3) for k, v in _measured.items()}}
        DURATIONS.write_text(json.dumps(dict(sorted(durations.items())), indent=0) + '\n')
