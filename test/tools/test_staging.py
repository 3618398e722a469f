"""
The output directory of ``rnea_bag`` (``rnea_ros.tools.staging``): refuse, replace, no half-file.

Regression tests of the bag tool deleting a user's ``residual.csv`` and ``contact_wrenches.csv``
in an existing directory, and overwriting the tables before failing on an existing ``bag/``.
"""
from __future__ import annotations

import json
from pathlib import Path

from harness.bagdata import PANDA, panda_bag, sample_times
import numpy as np
import pytest
from rosbags.rosbag2 import Reader

from rnea_ros.bag.cli import main
from rnea_ros.bag.summary import TOOL
from rnea_ros.errors import RneaError, URDFError
from rnea_ros.tools import run as tool_run, staging

USER_FILES = {'residual.csv': b'time,mine\n0,1\n', 'contact_wrenches.csv': b'my,own\n',
              'notes.txt': b'do not touch\n', 'sub/deeper.txt': b'nested\n'}


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory``, relative path -> bytes."""
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob('*')) if p.is_file()}


def put_user_files(directory: Path) -> None:
    for name, data in USER_FILES.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_bytes(data)


def run(capsys, bag: Path, out: Path, *extra: str):
    code = main([str(bag), '--urdf', str(PANDA), '--output', str(out), '--no-plots', *extra])
    captured = capsys.readouterr()
    return code, captured.err


@pytest.fixture(scope='module')
def bags(tmp_path_factory):
    """Write a bag with measured effort and one without (100 samples each)."""
    root = tmp_path_factory.mktemp('bags')
    times = sample_times(100)
    return (panda_bag(root / 'effort', times, effort=np.zeros((100, 8)), storage='mcap'),
            panda_bag(root / 'plain', times))


def test_a_directory_with_files_is_refused_and_untouched(tmp_path, capsys, bags):
    out = tmp_path / 'out'
    put_user_files(out)
    before = snapshot(out)
    code, err = run(capsys, bags[0], out, '--write-bag')
    assert code == 2
    assert err == (f"rnea_bag: error: output directory '{out}' already holds files: pass "
                   '--overwrite to replace the outputs of rnea_bag in it (other files are '
                   'kept), or choose another --output\n')
    assert snapshot(out) == before
    assert sorted(p.name for p in out.iterdir()) == ['contact_wrenches.csv', 'notes.txt',
                                                     'residual.csv', 'sub']


def test_an_output_path_that_is_a_file_is_refused(tmp_path, capsys, bags):
    (tmp_path / 'out').write_text('x')
    code, err = run(capsys, bags[0], tmp_path / 'out', '--overwrite')
    assert code == 2 and 'is a file, not a directory' in err
    assert (tmp_path / 'out').read_text() == 'x'


def test_overwrite_keeps_every_file_it_did_not_write(tmp_path, capsys, bags):
    out = tmp_path / 'out'
    put_user_files(out)
    # No measured effort and no contacts: the user's residual/contact tables are not ours.
    code, err = run(capsys, bags[1], out, '--overwrite', '--format', 'csv')
    assert code == 0, err
    after = snapshot(out)
    for name, data in USER_FILES.items():
        assert after[name] == data
    assert {'torques.csv', 'decomposition.csv', 'summary.json', 'summary.md',
            'report.html'} <= set(after)
    assert not any(name.startswith(TOOL.staging_prefix) for name in after)


def test_overwrite_replaces_its_own_outputs_and_removes_its_stale_ones(tmp_path, capsys,
                                                                       bags):
    out = tmp_path / 'out'
    code, err = run(capsys, bags[0], out, '--format', 'csv', '--write-bag')
    assert code == 0, err
    assert (out / 'residual.csv').exists() and (out / 'bag').is_dir()
    (out / 'notes.txt').write_text('mine')
    code, err = run(capsys, bags[1], out, '--overwrite', '--format', 'csv')
    assert code == 0, err
    # residual.csv and bag/ were the previous run's (listed in its summary.json): gone.
    assert sorted(p.name for p in out.iterdir()) == [
        'decomposition.csv', 'notes.txt', 'report.html', 'summary.json', 'summary.md',
        'torques.csv']
    summary = json.loads((out / 'summary.json').read_text())
    assert summary['bag'] == str(bags[1])


def test_overwrite_replaces_an_existing_bag_directory(tmp_path, capsys, bags):
    out = tmp_path / 'out'
    (out / 'bag').mkdir(parents=True)
    (out / 'bag' / 'old.txt').write_text('old')
    code, err = run(capsys, bags[0], out, '--write-bag')
    assert code == 2 and '--overwrite' in err
    code, err = run(capsys, bags[0], out, '--write-bag', '--overwrite')
    assert code == 0, err
    assert not (out / 'bag' / 'old.txt').exists()
    samples = json.loads((out / 'summary.json').read_text())['run']['samples']
    with Reader(out / 'bag') as reader:
        assert reader.topics['/joint_torques'].msgcount == samples > 0


@pytest.mark.parametrize('failing', ['write_summary', 'write_bag_report'])
def test_a_failure_half_way_leaves_the_previous_outputs(tmp_path, capsys, bags, monkeypatch,
                                                        failing):
    out = tmp_path / 'out'
    code, err = run(capsys, bags[1], out, '--format', 'csv')
    assert code == 0, err
    put_user_files(out)
    before = snapshot(out)

    def disk_full(*args, **kwargs):
        raise OSError(28, 'No space left on device')
    # After the tables, plots and bag are staged: the last writers of a run.
    if failing == 'write_summary':
        monkeypatch.setattr('rnea_ros.bag.outputs.write_summary', disk_full)
    else:
        monkeypatch.setattr('rnea_ros.bag.htmlreport.write_bag_report', disk_full)
    code, err = run(capsys, bags[0], out, '--overwrite', '--format', 'csv', '--write-bag')
    assert code == 1 and 'No space left on device' in err
    assert snapshot(out) == before
    assert not (out / 'bag').exists()


def test_a_failure_in_a_new_directory_leaves_nothing(tmp_path, capsys, bags, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError(5, 'Input/output error')
    monkeypatch.setattr('rnea_ros.bag.outputs.write_tables', broken)  # in a thread
    code, err = run(capsys, bags[0], tmp_path / 'new' / 'out')
    assert code == 1 and 'Input/output error' in err
    assert not (tmp_path / 'new' / 'out').exists()


def test_previous_outputs_are_only_names_of_the_tool(tmp_path):
    (tmp_path / 'summary.json').write_text(json.dumps({'outputs': [
        'torques.csv', 'bag/', 'effort_joints1.png', 'notes.txt', '../escape.csv', 'sub/x.png',
        'residual.parquet']}))
    assert staging.previous_outputs(tmp_path, TOOL) == {
        'torques.csv', 'bag', 'effort_joints1.png', 'residual.parquet'}
    (tmp_path / 'summary.json').write_text('not json')
    assert staging.previous_outputs(tmp_path, TOOL) == set()


@pytest.mark.parametrize('exc, status, line', [
    (staging.OutputError("cannot write 'out/a.csv': No space left on device"), 1,
     "rnea_excite: error: cannot write 'out/a.csv': No space left on device"),
    (staging.OutputExistsError('output directory holds files'), 2,
     'rnea_excite: error: output directory holds files'),
    (RneaError('bad --rest'), 2, 'rnea_excite: error: bad --rest'),
    (URDFError('no <robot>'), 2, 'rnea_excite: error: no <robot>'),
    (PermissionError(13, 'Permission denied'), 1,
     'rnea_excite: error: [Errno 13] Permission denied'),
    (MemoryError(), 1, 'rnea_excite: error: MemoryError'),
    (KeyboardInterrupt(), 130, 'rnea_excite: interrupted (no output is left half-written)'),
])
def test_exit_status_prints_one_line_and_tells_the_input_from_the_machine(exc, status, line,
                                                                          capsys):
    assert tool_run.exit_status('rnea_excite', exc) == status
    assert capsys.readouterr().err == line + '\n'
