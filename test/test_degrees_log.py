"""
A log in degrees read as radians: refused by every tool that reads recorded joints.

The log: test/harness/bagdata.py's realistic panda log (the arm inside its limits, the gripper
held), its revolute positions and velocities multiplied by 180/pi, as a log converted without
``rnea_convert --position-unit deg`` is. ``rnea_bag``, ``rnea_bag --observer``,
``rnea_identify`` and ``rnea_fleet`` each refuse it in one line naming the joint furthest beyond
its limits, its extent, the limit and the option that fixes it, with exit status 2 and nothing
written; the same log in radians passes ``rnea_bag`` without a word about units or limits.
``rnea_convert --urdf`` refuses the CSV of the log in degrees converted as radians, and
converts it with ``--position-unit deg``.
"""
from __future__ import annotations

from dataclasses import replace
import json
import os
from pathlib import Path
import subprocess
import sys

from harness.bagdata import PANDA, realistic_bag, realistic_log
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.bag.cli import main as rnea_bag
from rnea_ros.convert.cli import main as rnea_convert
from rnea_ros.identify.cli import main as rnea_identify

DEGREES = 180.0 / np.pi
ARM = slice(0, 7)  # the panda's revolute joints; the finger is prismatic
BIN = Path(sys.executable).parent
REMEDY = 'reconvert the log with rnea_convert --position-unit deg'


def degrees_log(model):
    """Return the realistic log and the same with the arm's positions, velocities in degrees."""
    log = realistic_log(model, duration=2.0, rate=250.0, seed=5, holes=None,
                        hold={'panda_finger_joint1': 0.02})
    q, v = log.q.copy(), log.v_reported.copy()
    q[:, ARM] *= DEGREES
    v[:, ARM] *= DEGREES
    return log, replace(log, q=q, v_reported=v)


@pytest.fixture(scope='module')
def logs(tmp_path_factory):
    """Return the bag in radians, the bag in degrees and the expected joint, extent, limit."""
    folder = tmp_path_factory.mktemp('logs')
    model = RobotModel.from_urdf_file(PANDA)
    log, in_degrees = degrees_log(model)
    q = in_degrees.q
    radians = realistic_bag(folder / 'radians', log)
    degrees = realistic_bag(folder / 'degrees', in_degrees)
    joints = [j for j in model.joints if j.nv == 1][ARM]
    lower = np.array([j.lower for j in joints])
    upper = np.array([j.upper for j in joints])
    below, above = lower - q[:, ARM].min(axis=0), q[:, ARM].max(axis=0) - upper
    worst = int(np.argmax(np.maximum(below, above) / (upper - lower)))
    if below[worst] >= above[worst]:
        extent, limit = q[:, worst].min(), lower[worst]
    else:
        extent, limit = q[:, worst].max(), upper[worst]
    return radians, degrees, (joints[worst].name, extent, limit)


def refused(err: str, expected) -> None:
    """Assert ``err`` is one line naming the joint, its extent, its limit and the option."""
    name, extent, limit = expected
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert f'{name} reaches {extent:.4g} rad against its limit {limit:.4g} rad' in lines[0]
    assert 'degrees read as radians' in lines[0] and lines[0].endswith(REMEDY)


@pytest.mark.parametrize('extra', [(), ('--observer',)], ids=['bag', 'observer'])
def test_rnea_bag_refuses_the_degrees_log(tmp_path, capsys, logs, extra):
    _, degrees, expected = logs
    out = tmp_path / 'out'
    assert rnea_bag([str(degrees), '--urdf', str(PANDA), '--output', str(out),
                     '--no-plots', *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith('rnea_bag: error: joint_states positions look like degrees')
    refused(err, expected)
    assert not out.exists()


def test_rnea_bag_takes_the_same_log_in_radians_without_a_word(tmp_path, capsys, logs):
    radians, _, _ = logs
    out = tmp_path / 'out'
    assert rnea_bag([str(radians), '--urdf', str(PANDA), '--output', str(out),
                     '--no-plots']) == 0, capsys.readouterr().err
    summary = json.loads((out / 'summary.json').read_text())
    assert summary['plausibility']['beyond'] == []
    assert summary['plausibility']['flagged'] == 0
    assert not [w for w in summary['warnings'] if 'limit' in w or 'degrees' in w]


def test_rnea_identify_refuses_the_degrees_log(tmp_path, capsys, logs):
    _, degrees, expected = logs
    out = tmp_path / 'out'
    assert rnea_identify([str(degrees), '--urdf', str(PANDA), '--output', str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f'rnea_identify: error: {degrees}: joint_states positions look')
    refused(err, expected)
    assert not out.exists()


def test_rnea_fleet_refuses_the_degrees_log(tmp_path, logs):
    _, degrees, expected = logs
    out = tmp_path / 'fleet'
    run = subprocess.run([str(BIN / 'rnea_fleet'), str(degrees), '--urdf', str(PANDA),
                          '--output', str(out), '--workers', '1'], capture_output=True,
                         text=True, timeout=300, env={**os.environ, 'PYTHONWARNINGS': 'ignore'})
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(f'rnea_fleet: error: {degrees}: joint_states positions')
    refused(run.stderr, expected)
    assert not out.exists()


def test_rnea_convert_with_the_urdf_refuses_the_degrees_log(tmp_path, capsys, logs):
    _, _, expected = logs
    _, log = degrees_log(RobotModel.from_urdf_file(PANDA))
    table = tmp_path / 'log.csv'
    names = [f'q{k}' for k in range(1, 8)]  # the arm's: --position-unit is every joint's
    np.savetxt(table, np.column_stack([(log.times_ns - log.times_ns[0]) * 1e-9, log.q[:, ARM]]),
               delimiter=',', header=','.join(['t', *names]), comments='', fmt='%.17g')
    mapping = ['--joints', ','.join(log.names[ARM]), '--time', 't', '--position', 'q{n}',
               '--urdf', str(PANDA)]
    out = tmp_path / 'bag'
    assert rnea_convert([str(table), '--output', str(out), *mapping]) == 2
    err = capsys.readouterr().err
    name, extent, limit = expected
    assert err == ('rnea_convert: error: joint_states positions look like degrees read as '
                   f'radians: {name} reaches {extent:.4g} rad against its limit {limit:.4g} rad '
                   f'(as deg, {extent / DEGREES:.4g} rad, within the limits); convert it with '
                   '--position-unit deg, not rad\n')
    assert not out.exists()
    # The fix the line names: the bag holds the positions in radians, without a word.
    assert rnea_convert([str(table), '--output', str(out), *mapping,
                         '--position-unit', 'deg']) == 0
    assert capsys.readouterr().err == ''
    assert out.is_dir()
