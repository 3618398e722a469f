"""
What ``rnea_identify`` writes (``rnea_ros.identify.outputs``): every file or none, its own only.

Regression tests of writes in place (a Ctrl-C left a new identified.urdf beside an old
identification.json, a full disk a partial file), of writes through a symlinked
identified.urdf, and of an output directory with files overwritten, stale plots kept.
"""
from __future__ import annotations

import json
from pathlib import Path
import sys

from harness.identify_bags import identify, synthetic_bag, UR5
from harness.writes import disk_full, interrupt, snapshot
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.identify.cli import main
from rnea_ros.params.actuation_file import read_actuation

USER_FILES = {'notes.txt': b'mine\n', 'validation_mine.png': b'my own plot\n'}


@pytest.fixture(scope='module')
def bag(tmp_path_factory) -> Path:
    ur5 = RobotModel.from_urdf_file(UR5)
    return synthetic_bag(tmp_path_factory.mktemp('bag') / 'bag', ur5, seed=4, duration=4.0)


@pytest.fixture
def previous(tmp_path, bag) -> Path:
    """Make an output directory with a previous run's outputs (plots too) and user files."""
    out = tmp_path / 'out'
    assert main([str(bag), '--urdf', str(UR5), '--output', str(out)]) == 0
    for name, data in USER_FILES.items():
        (out / name).write_bytes(data)
    return out


def test_a_directory_with_files_is_refused_and_untouched(tmp_path, capsys, bag):
    out = tmp_path / 'out'
    out.mkdir()
    (out / 'notes.txt').write_bytes(b'mine\n')
    code, stdout, err = identify(capsys, bag, '--urdf', UR5, '--output', out)
    assert code == 2
    assert err == (f"rnea_identify: error: output directory '{out}' already holds files: pass "
                   '--overwrite to replace the outputs of rnea_identify in it (other files are '
                   'kept), or choose another --output\n')
    assert snapshot(out) == {'notes.txt': b'mine\n'}


def test_overwrite_replaces_its_outputs_and_removes_its_stale_plots(previous, capsys, bag):
    names = json.loads((previous / 'identification.json').read_text())['outputs']
    assert {'validation_joints1.png', 'validation_joints2.png'} <= set(names)
    code, _, err = identify(capsys, bag, '--urdf', UR5, '--output', previous, '--overwrite',
                            '--no-plots', '--inertial', 'none')
    assert code == 0, err
    assert sorted(p.name for p in previous.iterdir()) == [
        'actuation.yaml', 'identification.json', 'identification.md', 'identified.urdf',
        'notes.txt', 'validation_mine.png']
    assert {name: (previous / name).read_bytes() for name in USER_FILES} == USER_FILES
    report = json.loads((previous / 'identification.json').read_text())
    assert report['settings']['inertial'] == 'none'
    assert report['outputs'] == ['identified.urdf', 'actuation.yaml', 'identification.json',
                                 'identification.md']


def test_a_sensor_bias_is_written_as_the_effort_bias_not_a_torque(tmp_path, capsys, bag):
    """
    --offset sensor-bias: the fitted offsets are the effort sensor's, not torques to apply.

    Regression: actuation.yaml carried them as friction.<joint>.offset, which the node adds
    to every command (on the simulated robot, whose torque sensor has a bias, the closed loop
    tracked 12x worse than with the true model); then as 0, which left the bias in the
    observer's residual. They are effort_bias.<joint>, which only corrects the measured effort.
    """
    runs = {}
    for offset in ('torque', 'sensor-bias'):
        out = tmp_path / offset
        code, _, err = identify(capsys, bag, '--urdf', UR5, '--output', out, '--no-plots',
                                '--inertial', 'none', '--offset', offset)
        assert code == 0, err
        report = json.loads((out / 'identification.json').read_text())
        assert report['settings']['offset'] == offset
        model = RobotModel.from_urdf_file(UR5)
        runs[offset] = (report['actuation'],
                        read_actuation(out / 'actuation.yaml', model), model)
    (fitted, torque, model), (reported, bias, _) = runs['torque'], runs['sensor-bias']
    assert reported == fitted  # the same fit, only what is written differs
    offsets = np.array([fitted[name]['offset'] for name in model.joint_names])
    assert np.all(np.abs(offsets) > 1e-3)  # the generator's offsets were fitted
    np.testing.assert_allclose(torque.offset, offsets, rtol=1e-12)
    np.testing.assert_array_equal(torque.effort_bias, np.zeros(model.nv))
    np.testing.assert_array_equal(bias.offset, np.zeros(model.nv))
    np.testing.assert_allclose(bias.effort_bias, offsets, rtol=1e-12)
    for term in ('coulomb', 'viscous', 'armature'):
        np.testing.assert_array_equal(getattr(bias, term), getattr(torque, term))
    assert 'bias of the effort sensor' in (tmp_path / 'sensor-bias' / 'actuation.yaml'
                                           ).read_text()


def test_symlinks_in_the_output_are_replaced_not_written_through(tmp_path, capsys, bag):
    outside = tmp_path / 'outside'
    outside.mkdir()
    out = tmp_path / 'out'
    out.mkdir()
    for name in ('identified.urdf', 'actuation.yaml', 'identification.json'):
        (outside / name).write_bytes(b'precious\n')
        (out / name).symlink_to(outside / name)
    code, _, err = identify(capsys, bag, '--urdf', UR5, '--output', out, '--overwrite',
                            '--no-plots')
    assert code == 0, err
    assert snapshot(outside) == dict.fromkeys(
        ('identification.json', 'identified.urdf', 'actuation.yaml'), b'precious\n')
    for path in out.iterdir():
        assert path.is_file() and not path.is_symlink(), path
    RobotModel.from_urdf_file(out / 'identified.urdf')


def test_a_full_disk_names_the_file_and_leaves_the_outputs(previous, capsys, bag, monkeypatch):
    before = snapshot(previous)
    monkeypatch.setattr(Path, 'write_text', disk_full('identification.json'))
    code, _, err = identify(capsys, bag, '--urdf', UR5, '--output', previous, '--overwrite',
                            '--no-plots')
    assert code == 1  # the machine, not the input (as rnea_bag)
    assert err == (f"rnea_identify: error: cannot write '{previous / 'identification.json'}': "
                   'No space left on device\n')
    assert snapshot(previous) == before


BLOCKED_WRITER = """
import signal, sys
from rnea_ros.identify import report
from rnea_ros.identify.cli import main

def blocked(data):
    print('writing', file=sys.stderr, flush=True)
    signal.pause()

report.markdown = blocked  # after identified.urdf, actuation.yaml and the plots
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.timeout(300)
def test_ctrl_c_while_writing_prints_one_line_and_leaves_the_previous_outputs(previous, bag):
    """SIGINT to the process group, as a terminal's Ctrl-C, once the writing has begun."""
    before = snapshot(previous)
    first, code, out, err = interrupt(
        [sys.executable, '-c', BLOCKED_WRITER, str(bag), '--urdf', str(UR5), '--output',
         str(previous), '--overwrite', '--inertial', 'none'])
    assert first == 'writing\n'
    assert code == 130
    assert (out, err) == ('', 'rnea_identify: interrupted (no output is left half-written)\n')
    assert snapshot(previous) == before
