"""
``rnea_fleet --manifest FILE``: each robot with its own URDF, actuation model and bags.

A panda and a UR5 (two URDFs of example-robot-data) in one run, paths relative to the
manifest or absolute; and hostile manifests, each refused with one line naming the field,
exit status 2, nothing written.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import shutil

from harness import bagdata
from harness.fleet_bags import fleet_bag, WEEK_NS
from harness.fleet_runs import fleet
from harness.oracle import robot_path
import numpy as np
import pyarrow.parquet as pq
import pytest

from rnea_ros import RobotModel
from rnea_ros.fleet import cli

UR5 = robot_path('ur5')


def ur5_bag(path: Path, model: RobotModel, start_ns: int, seed: int) -> Path:
    """Write 1 s of a UR5 moving (sines), effort = RNEA + 0.3 N·m Coulomb friction + noise."""
    rng = np.random.default_rng(seed)
    times = start_ns + np.arange(500) * 2_000_000
    t = (times - bagdata.BAG_START) * 1e-9
    omega, phase = np.linspace(1.0, 2.5, model.nv), np.linspace(0.0, 2.0, model.nv)
    q = 0.6 * np.sin(omega * t[:, None] + phase)
    v = 0.6 * omega * np.cos(omega * t[:, None] + phase)
    a = -0.6 * omega ** 2 * np.sin(omega * t[:, None] + phase)
    effort = model.rnea_batch(q, v, a) + 0.3 * np.tanh(v / 0.02)
    effort += rng.normal(0.0, 0.02, effort.shape)
    states = [(ns, bagdata.joint_state(ns, model.joint_names, q[k], v[k], effort[k]))
              for k, ns in enumerate(times.tolist())]
    return bagdata.write_bag(path, {'/joint_states': (bagdata.JOINT_STATE, states)})


@pytest.fixture(scope='module')
def two_models(tmp_path_factory, panda_model):
    root = tmp_path_factory.mktemp('manifest_fleet')
    ur5 = RobotModel.from_urdf_file(str(UR5))
    for k in range(3):
        fleet_bag(root / 'data' / 'panda_1' / f'run_{k}', panda_model,
                  bagdata.BAG_START + k * WEEK_NS, seed=k, coulomb=np.full(8, 0.3))
        ur5_bag(root / 'data' / 'ur' / f'run_{k}', ur5, bagdata.BAG_START + k * WEEK_NS, k)
    shutil.copy(UR5, root / 'ur5.urdf')
    (root / 'fleet.yaml').write_text(
        'robots:\n'
        f'  panda_1:\n    urdf: {bagdata.PANDA}\n    bags: [data/panda_1]\n'
        '  ur_7:\n    urdf: ur5.urdf\n    bags: ["data/ur/run_*"]\n')
    output = tmp_path_factory.mktemp('manifest_out')
    status, out, err = fleet('--manifest', root / 'fleet.yaml', '--output', output,
                             '--no-plots', '--workers', '2')
    return {'status': status, 'out': out, 'err': err, 'output': output, 'root': root}


def test_robots_of_two_models_in_one_run(two_models):
    assert two_models['status'] == 0, two_models['err']
    assert two_models['out'].startswith('rnea_fleet: drift: 0 joints drifting, 14 judged '
                                        'stable (')
    rows = pq.read_table(two_models['output'] / 'fleet.parquet').to_pylist()
    robots = {(r['robot'], r['model']) for r in rows}
    assert robots == {('panda_1', 'panda'), ('ur_7', 'ur5')}
    ur_joints = [r['joint'] for r in rows if r['robot'] == 'ur_7' and r['bag'] == 'ur_7.run_0']
    assert ur_joints == list(RobotModel.from_urdf_file(str(UR5)).joint_names)
    assert {r['verdict'] for r in rows} == {'stable'}
    summary = json.loads((two_models['output'] / 'bags' / 'ur_7.run_0' / 'summary.json')
                         .read_text())
    assert summary['run']['urdf'] == str(two_models['root'] / 'ur5.urdf')
    settings = (two_models['output'] / 'fleet.md').read_text()
    assert f'manifest: {two_models["root"] / "fleet.yaml"}' in settings
    assert f'robots.ur_7: urdf {two_models["root"] / "ur5.urdf"}, actuation (none), 3 bags' \
        in settings


GOOD_ROBOT = '  a:\n    urdf: {urdf}\n    bags: [bags/*]\n'


@pytest.mark.parametrize('text, message', [
    ('robots: [a, b]\n', 'expected robots: {NAME: {urdf: FILE, actuation: FILE, bags: '
     '[PATTERN, ...]}}'),
    ('robots:\n  a: {urdf: x.urdf, bags: [b]\n',
     "malformed YAML: expected ',' or '}', but got '<stream end>' at line 3, column 1"),
    ('robots:\n  a:\n    urfd: x.urdf\n', "robots.a: unknown field 'urfd' (expected urdf, "
     'actuation, bags)'),
    ('robots:\n  7:\n    bags: [b]\n', 'robots: the robot name 7 must be a non-empty string'),
    ('robots:\n  a:\n    urdf: missing.urdf\n    bags: [bags/*]\n',
     "cannot read robots.a.urdf '{dir}/missing.urdf': No such file or directory"),
    ('robots:\n  a:\n    urdf: bad.urdf\n    bags: [bags/*]\n',
     "robots.a.urdf '{dir}/bad.urdf': malformed XML: unclosed token: line 1, column 0"),
    ('robots:\n  a:\n    urdf: [x]\n    bags: [bags/*]\n',
     "robots.a.urdf: expected a file path, got ['x']"),
    ('robots:\n  a:\n    actuation: none.yaml\n    bags: [bags/*]\n',
     "cannot read robots.a.actuation '{dir}/none.yaml': No such file or directory"),
    ('robots:\n  a:\n    bags: bags/*\n',
     "robots.a.bags: expected a list of bag paths or patterns, got 'bags/*'"),
    ('robots:\n  a:\n    bags: [bags/*, 3]\n', 'robots.a.bags[1]: expected a path or pattern, '
     'got 3'),
    ('robots:\n  a:\n    bags: [bags/*, nothing/*]\n', "robots.a.bags[1] 'nothing/*': matches "
     'no file (expected bags or directories of bags)'),
    ('robots:\n  a:\n    bags: [bad.urdf]\n', "robots.a.bags[0] 'bad.urdf': no rosbag2 bag "
     'there (a directory with metadata.yaml, or .mcap/.db3 files)'),
    ('robots:\n  a:\n    bags: [bags/*]\n  b:\n    bags: [bags/run]\n',
     "robots.b.bags: '{dir}/bags/run' is also a bag of robots.a (a bag belongs to one robot)"),
    ('robots:\n  a:\n    bags: [bags/*]\n  a:\n    bags: [bags/run]\n',
     'the robot robots.a is given twice (lines 2 and 4): expected each once (YAML would keep '
     'the last entry only)'),
    ('robots:\n  a:\n    bags: [bags/*]\n    bags: [bags/run]\n',
     'the field robots.a.bags is given twice (lines 3 and 4): expected each once (YAML would '
     'keep the last entry only)'),
])
def test_a_hostile_manifest_is_one_line_exit_2_nothing_written(tmp_path, text, message):
    (tmp_path / 'bad.urdf').write_text('<robot')
    bagdata.write_bag(tmp_path / 'bags' / 'run', {'/joint_states': (bagdata.JOINT_STATE, [])})
    (tmp_path / 'm.yaml').write_text(text)
    output = tmp_path / 'out'
    status, out, err = fleet('--manifest', tmp_path / 'm.yaml', '--output', output)
    expected = message.replace('{dir}', str(tmp_path))
    assert (status, out, err) == (
        2, '', f"rnea_fleet: error: --manifest '{tmp_path / 'm.yaml'}': {expected}\n")
    assert not output.exists()


@pytest.mark.parametrize('special', ['fifo', 'device'])
def test_a_pattern_matching_a_fifo_or_a_device_names_it(tmp_path, special):
    """
    A FIFO (or a link to /dev/zero) named like a bag beside the bags a pattern matches.

    Regression: it was passed over without a word (the bags beside it analysed).
    """
    bagdata.write_bag(tmp_path / 'bags' / 'run', {'/joint_states': (bagdata.JOINT_STATE, [])})
    odd = tmp_path / 'bags' / 'zz.mcap'
    if special == 'fifo':
        os.mkfifo(odd)
        why = 'not a regular file (a FIFO)'
    else:
        odd.symlink_to('/dev/zero')
        why = 'not a regular file (a character device)'
    (tmp_path / 'm.yaml').write_text('robots:\n  a:\n    bags: [bags/*]\n')
    output = tmp_path / 'out'
    status, out, err = fleet('--manifest', tmp_path / 'm.yaml', '--output', output)
    assert (status, out, err) == (
        2, '', f"rnea_fleet: error: --manifest '{tmp_path / 'm.yaml'}': robots.a.bags[0] "
        f"'bags/*': {str(odd)!r}: {why}; expected bags or directories of bags\n")
    assert not output.exists()


def test_a_manifest_that_is_not_utf8_is_named(tmp_path):
    (tmp_path / 'm.yaml').write_bytes(b'robots:\n  \xff: {}\n')
    status, _, err = fleet('--manifest', tmp_path / 'm.yaml', '--output', tmp_path / 'out')
    path = tmp_path / 'm.yaml'
    assert status == 2 and err.startswith(f"rnea_fleet: error: cannot read --manifest '{path}': ")
    assert err.count('\n') == 1 and not (tmp_path / 'out').exists()


@pytest.mark.parametrize('argv, message', [
    ([], 'give the bags (BAG_OR_DIR ...) or --manifest FILE'),
    (['bags', '--manifest', 'm.yaml'], 'give the bags (BAG_OR_DIR ...) or --manifest FILE, '
     'not both'),
    (['--manifest', 'm.yaml', '--urdf', 'x.urdf'], '--urdf is per robot with --manifest: give '
     'it in the manifest (urdf, actuation; the robots are its names)'),
    (['--manifest', 'm.yaml', '--robot-pattern', '(a)'], '--robot-pattern is per robot with '
     '--manifest: give it in the manifest (urdf, actuation; the robots are its names)'),
])
def test_the_manifest_replaces_the_bags_urdf_and_robot_pattern(tmp_path, capsys, argv,
                                                               message):
    with pytest.raises(SystemExit) as exit_:
        cli.main([*argv, '--output', str(tmp_path / 'out')])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.endswith(f'rnea_fleet: error: {message}\n')
    assert not (tmp_path / 'out').exists()
