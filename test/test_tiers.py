"""The suite's tiers: the markers registered, derived where they can be, stated in the docs."""
from __future__ import annotations

import configparser
from pathlib import Path
import re
import subprocess
import sys

from harness.tiers import SERIAL_MARKERS, SLOW_SECONDS

ROOT = Path(__file__).resolve().parents[1]


def registered() -> set[str]:
    config = configparser.ConfigParser()
    config.read(ROOT / 'pytest.ini')
    return {line.split(':')[0].strip() for line in config['pytest']['markers'].splitlines()
            if line.strip()}


def full_only() -> set[str]:
    line = re.search(r"^FULL_ONLY='([^']*)'", (ROOT / 'scripts' / 'test.sh').read_text(), re.M)
    return set(line.group(1).split(' or '))


def collected(*args: str) -> list[str]:
    done = subprocess.run([sys.executable, '-m', 'pytest', '--collect-only', '-q',
                           '-p', 'no:cacheprovider', *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode in (0, 5), done.stdout + done.stderr  # 5: nothing selected
    return [line for line in done.stdout.splitlines() if '::' in line]


def test_the_fast_tier_leaves_out_registered_markers_only():
    assert full_only() <= registered()
    assert {'ros', 'sim', 'realtime', 'slow', 'docs', 'browser'} == full_only()


def test_ros_and_sim_are_derived_from_what_a_test_uses():
    node = collected('-m', 'ros', 'test/node/test_lifecycle.py', 'test/dynamics/test_structure.py')
    assert node and all(item.startswith('test/node/test_lifecycle.py') for item in node)
    sim = collected('-m', 'sim', 'test/sim/test_plant.py', 'test/node/test_lifecycle.py')
    assert sim and all(item.startswith('test/sim/test_plant.py') for item in sim)


def test_an_unregistered_marker_is_an_error(tmp_path):
    (tmp_path / 'test_marked.py').write_text(
        'import pytest\n\n\n@pytest.mark.quick\ndef test_one():\n    pass\n')
    done = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                           '-c', str(ROOT / 'pytest.ini'), '--rootdir', str(tmp_path),
                           str(tmp_path / 'test_marked.py')], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode != 0 and "'quick' not found in `markers`" in done.stdout


def test_the_docs_state_the_slow_threshold():
    text = ' '.join((ROOT / 'docs' / 'development.md').read_text().split())
    assert f'more than {SLOW_SECONDS:g} s (`SLOW_SECONDS`' in text


def test_the_serial_phase_runs_the_serial_markers_and_the_parallel_phase_the_rest():
    files = ('test/node/test_node_timing.py', 'test/dynamics/test_structure.py')
    serial = collected('--phase', 'serial', *files)
    parallel = collected('--phase', 'parallel', *files)
    assert SERIAL_MARKERS == ('realtime',)
    assert serial and all(item.startswith('test/node/test_node_timing.py') for item in serial)
    assert parallel and all(item.startswith('test/dynamics/test_structure.py')
                            for item in parallel)
    assert sorted(serial + parallel) == sorted(collected(*files))
