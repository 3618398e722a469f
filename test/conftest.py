"""
Shared test fixtures (the example-robot-data corpus, the Pinocchio oracle) and the tier markers.

The markers are registered in ``pytest.ini``. ``ros`` and ``sim`` are derived here from what a
test uses, so that a new test cannot forget them: ``ros`` for a test that takes the ``ros``
fixture (the node and sim harnesses) or whose module holds rclpy or one of the ROS harnesses;
``sim`` for a test whose module holds MuJoCo or the simulated robot (``rnea_ros.sim``);
``browser`` for one whose module holds the headless-browser helper
(``test/harness/browser.py``).
``slow`` is derived from measured time: a test that took more than ``tiers.SLOW_SECONDS``
(setup and call) in the run stored in ``test/durations.json`` (``scripts/test.sh
--store-durations`` stores the times of the tests it runs there) is ``slow``; a test not
measured yet is not.

``scripts/test.sh`` runs the suite in two phases: ``--phase parallel`` (on pytest-xdist
workers) leaves out the tests with a ``SERIAL_MARKERS`` marker, which ``--phase serial`` runs
alone, one at a time, as they judge the wall clock. On xdist workers the files run longest
first (by their stored times), so that no long file starts last; the controller, which sees
every worker's reports, stores the durations.
"""
from __future__ import annotations

import json
from pathlib import Path
import signal
import types

# pytest puts this folder (rootdir conftest, no __init__.py) on sys.path: the harness package
# (the shared helpers) imports from every test folder.
from harness.oracle import robot_path, ROBOTS_DIR
from harness.tiers import DURATIONS, SERIAL_MARKERS, SLOW_SECONDS
import pytest


@pytest.fixture(scope='session')
def robots_dir() -> Path:
    """Folder of the example-robot-data URDFs (installed by the pip package)."""
    if not ROBOTS_DIR.is_dir():
        pytest.fail(f'example-robot-data not installed: {ROBOTS_DIR} missing')
    return ROBOTS_DIR


@pytest.fixture(scope='session')
def ur5_path() -> Path:
    return robot_path('ur5')


@pytest.fixture(autouse=True)
def _sigint_handler_left_as_found():
    """
    Fail a test that leaves SIGINT's handler changed in this process (and restore it).

    An ignored SIGINT is inherited by every process started later: the tests of what a Ctrl-C
    does to a tool (``test/harness/writes.py``'s ``interrupt``) would then wait for a child that
    cannot be interrupted.
    """
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before if before is not None else signal.SIG_DFL)
        pytest.fail(f'the test left the SIGINT handler {after!r} (it was {before!r})')


def pytest_configure(config):
    """
    Take SIGINT back from a parent that ignored it.

    A suite started in the background by a non-interactive shell (``scripts/test.sh &``,
    ``nohup``) inherits SIGINT ignored, and so would every tool it starts, while the tests of a
    Ctrl-C expect what a terminal gives them.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_addoption(parser):
    parser.addoption('--store-durations', action='store_true',
                     help=f'store the setup + call time of each test run in {DURATIONS.name} '
                          '(kept for the others): the slow marker is derived from it')
    parser.addoption('--phase', choices=('parallel', 'serial'),
                     help='parallel: leave out the tests marked '
                          f'{" or ".join(SERIAL_MARKERS)}; serial: run only those')


def _stored_durations() -> dict:
    return json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}


# Modules (and what they define) whose presence in a test module makes its tests `ros` / `sim`.
ROS_MODULES = ('rclpy', 'harness.ros_harness', 'harness.loop_harness', 'harness.node_streams',
               'harness.observer_feeder')
SIM_MODULES = ('mujoco', 'rnea_ros.sim', 'harness.inprocess_loop', 'harness.sim_identification')
BROWSER_MODULES = ('harness.browser',)


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
    _select_phase(config, items)
    if hasattr(config, 'workerinput'):
        _longest_files_first(items, durations)


def _select_phase(config, items) -> None:
    """Keep the tests of ``--phase``: without or with a ``SERIAL_MARKERS`` marker."""
    phase = config.getoption('--phase')
    if phase is None:
        return
    serial = phase == 'serial'
    kept, left = [], []
    for item in items:
        marked = any(item.get_closest_marker(name) for name in SERIAL_MARKERS)
        (kept if marked == serial else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


def _longest_files_first(items, durations: dict) -> None:
    """Order the files by their stored time, longest first; a file's tests keep their order."""
    per_file: dict[str, float] = {}
    for item in items:
        path = item.nodeid.split('::')[0]
        per_file[path] = per_file.get(path, 0.0) + durations.get(item.nodeid, 0.0)
    items.sort(key=lambda item: -per_file[item.nodeid.split('::')[0]])


_measured: dict[str, float] = {}


def pytest_runtest_logreport(report):
    if report.when in ('setup', 'call'):
        _measured[report.nodeid] = _measured.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus):
    # An xdist worker's reports also reach the controller: only the controller writes.
    if hasattr(session.config, 'workerinput'):
        return
    if session.config.getoption('--store-durations') and _measured:
        durations = {**_stored_durations(), **{k: round(v, 3) for k, v in _measured.items()}}
        DURATIONS.write_text(json.dumps(dict(sorted(durations.items())), indent=0) + '\n')
