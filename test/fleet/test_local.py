"""
``rnea_fleet`` as users start it, and nothing written outside the output directory.

The console script on an embedded local cluster, a bag given directly, the module's
``--help``, bad usage and bad inputs.
"""
from __future__ import annotations

import os
from pathlib import Path
import shutil
import subprocess
import sys

from harness import bagdata
from harness.fleet_runs import fleet
import pyarrow.parquet as pq
import pytest

BIN = Path(sys.executable).parent


def snapshot(root: Path) -> dict:
    """Map every file and folder under ``root`` to its size and modification time."""
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob('*')}


def test_console_script_on_a_local_cluster_writes_only_into_its_output(tmp_path, fleet_dir):
    home, temp, cwd = tmp_path / 'home', tmp_path / 'tmp', tmp_path / 'cwd'
    for folder in (home, temp, cwd):
        folder.mkdir()
    before = {folder: snapshot(folder) for folder in (home, temp, cwd, fleet_dir)}
    output = tmp_path / 'out'
    env = {**os.environ, 'HOME': str(home), 'TMPDIR': str(temp), 'XDG_CONFIG_HOME': '',
           'XDG_CACHE_HOME': ''}
    run = subprocess.run([str(BIN / 'rnea_fleet'), str(fleet_dir / 'arm_c'), '--output',
                          str(output), '--urdf', str(bagdata.PANDA), '--no-plots'],
                         capture_output=True, text=True, cwd=cwd, env=env, timeout=600)
    assert run.returncode == 1, run.stderr  # arm_c holds 3 bags that fail
    assert run.stdout.endswith(f'5 bags: 2 analysed, 0 reused (unchanged), 3 failed -> '
                               f'{output}\n')
    assert {folder: snapshot(folder) for folder in before} == before
    assert sorted(p.name for p in output.iterdir()) == ['bags', 'fleet.json', 'fleet.md',
                                                        'fleet.parquet', 'report.html']
    assert sorted(p.name for p in (output / 'bags').iterdir()) == ['run_00', 'run_01']
    rows = pq.read_table(output / 'fleet.parquet').to_pylist()
    assert {r['robot'] for r in rows} == {'arm_c'}
    assert [r['status'] for r in rows].count('error') == 3


def test_a_fifo_or_a_device_among_the_bags_fails_alone_in_one_line(tmp_path, fleet_dir):
    """A FIFO or ``/dev/zero`` named like a bag, or in a bag: refused, never read forever."""
    folder = tmp_path / 'arm_x'
    folder.mkdir()
    shutil.copytree(fleet_dir / 'arm_c' / 'run_00', folder / 'run_00')
    os.mkfifo(folder / 'stuck.mcap')
    (folder / 'zeros.mcap').symlink_to('/dev/zero')
    inside = folder / 'run_fifo'
    shutil.copytree(fleet_dir / 'arm_c' / 'run_01', inside)
    storage = next(inside.glob('*.db3'))
    storage.unlink()
    os.mkfifo(storage)
    output = tmp_path / 'out'
    run = subprocess.run([str(BIN / 'rnea_fleet'), str(folder), '--output', str(output),
                          '--urdf', str(bagdata.PANDA), '--no-plots', '--workers', '1'],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stderr
    assert run.stdout.endswith('4 bags: 1 analysed, 0 reused (unchanged), 3 failed -> '
                               f'{output}\n')
    expected = {'stuck': f"bag '{folder / 'stuck.mcap'}' is a FIFO",
                'zeros': f"bag '{folder / 'zeros.mcap'}' is a character device",
                'run_fifo': f"bag '{inside}': its file '{storage.name}' is a FIFO"}
    rows = {r['bag']: r for r in pq.read_table(output / 'fleet.parquet').to_pylist()}
    for bag, start in expected.items():
        message = f'{start}: expected a regular file (a bag is read from regular files only)'
        assert rows[bag]['error'] == message
        assert f'rnea_fleet: error: {bag}: {message}\n' in run.stderr
    assert rows['run_00']['status'] == 'ok'


def test_a_bag_given_directly_takes_the_robot_name_of_its_urdf(tmp_path, fleet_dir):
    output = tmp_path / 'out'
    status, out, err = fleet(fleet_dir / 'arm_c' / 'run_00', fleet_dir / 'arm_c' / 'run_empty',
                             '--output', output, '--urdf', bagdata.PANDA, '--no-plots',
                             '--workers', '1')
    assert status == 1
    rows = pq.read_table(output / 'fleet.parquet').to_pylist()
    assert {(r['bag'], r['robot'], r['status']) for r in rows} == {
        ('run_00', 'panda', 'ok'), ('run_empty', 'panda', 'error')}


def test_help_lists_the_fleet_and_the_per_bag_options():
    run = subprocess.run([sys.executable, '-m', 'rnea_ros.fleet', '--help'],
                         capture_output=True, text=True, check=True)
    text = ' '.join(run.stdout.split())
    for option in ('--output DIR', '--scheduler tcp://HOST:PORT', '--workers N', '--overwrite',
                   '--robot-pattern REGEX', '--urdf FILE', '--joint-states TOPIC',
                   '--window S', '--order ORDER', '--clock {header,receive}', '--drift-factor',
                   '--drift-floor', '--no-plots', 'readable (DIR writable) by the workers'):
        assert option in text, option
    assert 'progress bar of bags done' in text  # the fleet's own, not rnea_bag's
    for option in ('--timings', '--threads', 'default: ./<bag name>_rnea'):
        assert option not in text, option


@pytest.mark.parametrize('argv, message', [
    (['x', '--output', 'o', '--workers', '2', '--scheduler', 'tcp://127.0.0.1:1'],
     '--workers sets the size of the local cluster; with --scheduler the cluster has its own '
     'workers'),
    (['x'], 'the following arguments are required: --output'),
    (['x', '--output', 'o', '--drift-alpha', '1.5'],  # each option's bounds: test_option_bounds
     "argument --drift-alpha: '1.5': expected a number from 1e-09 to 0.5"),
    (['x', '--output', 'o', '--connect-timeout', '3'], '--connect-timeout is the time '
     '--scheduler has to answer; without --scheduler the cluster is local'),
])
def test_bad_usage_exits_2(argv, message, capsys):
    from rnea_ros.fleet.cli import main
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert f'rnea_fleet: error: {message}' in ' '.join(capsys.readouterr().err.split())


def test_bad_inputs_exit_2_with_the_reason(tmp_path, capsys):
    from rnea_ros.fleet.cli import main
    (tmp_path / 'empty').mkdir()
    (tmp_path / 'binary.urdf').write_bytes(b'\x00\x80')
    (tmp_path / 'empty.urdf').write_bytes(b'')
    cases = [
        ([str(tmp_path / 'nothing')], f"'{tmp_path / 'nothing'}' does not exist (expected a "
         'bag or a directory of bags)'),
        ([str(tmp_path / 'empty')], f"no rosbag2 bag under '{tmp_path / 'empty'}' (a "
         'directory with metadata.yaml, or .mcap/.db3 files)'),
        ([str(tmp_path / 'empty'), '--urdf', str(tmp_path / 'no.urdf')],
         f"cannot read --urdf '{tmp_path / 'no.urdf'}': No such file or directory"),
        ([str(tmp_path / 'empty'), '--robot-pattern', 'a(b)(c)'],
         "--robot-pattern 'a(b)(c)' must have exactly one group (the robot name), it has 2"),
        ([str(tmp_path / 'empty'), '--robot-pattern', '('], "--robot-pattern '(' is not a "
         'regular expression: missing ), unterminated subpattern at position 0'),
        ([str(tmp_path), '--urdf', str(tmp_path / 'binary.urdf')],
         f"cannot read --urdf '{tmp_path / 'binary.urdf'}': not UTF-8 text (byte 0x80 at offset "
         '1)'),
        ([str(tmp_path), '--urdf', str(tmp_path / 'empty.urdf')],
         f"--urdf '{tmp_path / 'empty.urdf'}': malformed XML: no element found: line 1, column "
         '0'),
        ([str(tmp_path), '--scheduler', 'nonsense'], "--scheduler 'nonsense' is not a Dask "
         "address (missing port number in address 'nonsense'): expected tcp://HOST:PORT"),
    ]
    for argv, message in cases:
        assert main([*argv, '--output', str(tmp_path / 'out')]) == 2
        assert capsys.readouterr().err == f'rnea_fleet: error: {message}\n'
    assert not (tmp_path / 'out').exists()
