"""
What ``rnea_fleet`` writes, and only that.

Hostile bag names, planted symlinks, a full disk, a folder that is not a result, a Ctrl-C.

Regression tests of a bag named ``...mcap`` whose failure removed every file of DIR, of
``..mcap`` replacing ``DIR/bags``, of writes through a planted ``DIR/.fleet.md.partial``, of a
full disk leaving ``.report.html.partial`` and an error that did not name the file, and of a
Ctrl-C that printed tracebacks.
"""
from __future__ import annotations

from pathlib import Path
import sys

from harness import bagdata
from harness.fleet_bags import long_bag
from harness.fleet_runs import fleet, mcap_file
from harness.writes import disk_full, interrupt, snapshot
import pyarrow.parquet as pq
import pytest

from rnea_ros.fleet import drift, run
from rnea_ros.fleet.task import analyse, is_result, Job, Outcome

OLD = {'fleet.md': b'old table\n', 'fleet.parquet': b'old parquet', 'report.html': b'old\n'}


def plant(directory: Path, files: dict) -> None:
    for name, data in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_bytes(data)


def test_hostile_bag_names_stay_in_their_own_folders(tmp_path):
    source = tmp_path / 'fleet'
    (source / 'arm').mkdir(parents=True)
    (source / 'arm' / '...mcap').write_bytes(b'not a bag' * 100)  # fails: its clean-up runs
    mcap_file(source / 'arm' / '..mcap')
    for robot in ('a', 'b'):  # the same stem in two folders
        (source / robot).mkdir()
        mcap_file(source / robot / 'run.mcap')
    output = tmp_path / 'out'
    user = {'notes.txt': b'mine\n', 'sub/keep.txt': b'also mine\n', 'bags/readme.txt': b'x\n'}
    plant(output, user)
    status, out, err = fleet(source, '--output', output, '--urdf', bagdata.PANDA, '--no-plots',
                             '--workers', '2')
    assert status == 1, err  # the '...mcap' bag is not a bag
    assert out.endswith(f'4 bags: 3 analysed, 0 reused (unchanged), 1 failed -> {output}\n')
    after = snapshot(output)
    assert {name: after.get(name) for name in user} == user
    assert sorted(p.name for p in (output / 'bags').iterdir()) == [
        '_', 'a.run', 'b.run', 'readme.txt']
    rows = pq.read_table(output / 'fleet.parquet').to_pylist()
    assert {(r['bag'], r['path'], r['status']) for r in rows} == {
        ('_', str(source / 'arm' / '..mcap'), 'ok'),
        ('__', str(source / 'arm' / '...mcap'), 'error'),
        ('a.run', str(source / 'a' / 'run.mcap'), 'ok'),
        ('b.run', str(source / 'b' / 'run.mcap'), 'ok')}
    for name in ('_', 'a.run', 'b.run'):
        assert (output / 'bags' / name / 'summary.json').is_file()


def job(bag: Path, output: Path) -> Job:
    return Job(str(bag), output.name, 'arm', str(output), {}, 'settings')


def test_only_results_of_rnea_fleet_are_replaced_or_removed(tmp_path):
    """A bag's folder that holds the user's files, or is a symlink, stays as it was."""
    bag = mcap_file(tmp_path / 'run.mcap')
    broken = tmp_path / 'broken.mcap'
    broken.write_bytes(b'not a bag')
    bags = tmp_path / 'out' / 'bags'
    plant(bags / 'mine', {'notes.txt': b'mine\n'})
    elsewhere = tmp_path / 'elsewhere'
    plant(elsewhere, {'summary.json': b'{"fleet": {}}', 'data.txt': b'keep\n'})
    (bags / 'linked').symlink_to(elsewhere, target_is_directory=True)
    before = snapshot(tmp_path)
    for name, source in (('mine', bag), ('mine', broken), ('linked', bag), ('linked', broken)):
        outcome = analyse(job(source, bags / name))
        assert (outcome.status, outcome.error) == ('error', (
            f"'{bags / name}' exists and is not a result of rnea_fleet: it is left as it is; "
            'move it away or choose another --output'))
    assert snapshot(tmp_path) == before
    assert sorted(p.name for p in bags.iterdir()) == ['linked', 'mine']  # no partial folder


def outcomes() -> list[Outcome]:
    return [Outcome('run', '/fleet/run', 'arm', 'error', error='broken')]


def test_planted_symlinks_are_replaced_not_written_through(tmp_path):
    outside = tmp_path / 'outside'
    plant(outside, dict.fromkeys(('a', 'b', 'c', 'd'), b'precious\n'))
    output = tmp_path / 'out'
    output.mkdir()
    for name, target in (('.fleet.md.partial', 'a'), ('.report.html.partial', 'b'),
                         ('.fleet.parquet.partial', 'c'), ('report.html', 'd')):
        (output / name).symlink_to(outside / target)
    result = run.write_outputs(output, outcomes(), drift.Thresholds(), {})
    assert snapshot(outside) == dict.fromkeys(('a', 'b', 'c', 'd'), b'precious\n')
    for path in result.files:
        assert path.is_file() and not path.is_symlink()
    assert '<html' in (output / 'report.html').read_text()
    assert sorted(p.name for p in output.iterdir()) == [
        '.fleet.md.partial', '.fleet.parquet.partial', '.report.html.partial', 'fleet.json',
        'fleet.md', 'fleet.parquet', 'report.html']


def test_a_full_disk_names_the_file_and_leaves_the_earlier_outputs(tmp_path, monkeypatch):
    bag = mcap_file(tmp_path / 'bags' / 'run.mcap')
    output = tmp_path / 'out'
    plant(output, OLD)
    monkeypatch.setattr(Path, 'write_text', disk_full('report.html'))
    status, out, err = fleet(bag, '--output', output, '--urdf', bagdata.PANDA, '--no-plots',
                             '--workers', '1')
    assert status == 1
    assert err == (f"rnea_fleet: error: cannot write '{output / 'report.html'}': No space left "
                   'on device\n')
    after = snapshot(output)
    assert {name: after[name] for name in OLD} == OLD
    assert (output / 'bags' / 'run' / 'summary.json').is_file()  # the bag's result is kept
    assert sorted(p.name for p in output.iterdir()) == ['bags', *sorted(OLD)]


ANNOUNCING_FLEET = """
import sys
from rnea_ros.fleet import cli, run
from rnea_ros.fleet.task import EVENT_TOPIC

analyse_all = run.analyse_all

def announcing(client, work, done=None):
    def started(event):  # a worker logs it when it starts a bag
        print(f'started {event[1]["bag"]}', file=sys.stderr, flush=True)
    client.subscribe_topic(EVENT_TOPIC, started)
    return analyse_all(client, work, done)

run.analyse_all = announcing
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.timeout(300)
def test_ctrl_c_prints_one_line_exits_130_and_leaves_the_outputs(tmp_path, panda_model):
    """SIGINT to the process group, as a terminal's Ctrl-C, while a worker analyses a bag."""
    source = tmp_path / 'fleet' / 'arm'
    long_bag(source / 'long', panda_model, seconds=120.0)  # seconds of work after its start
    output = tmp_path / 'out'
    plant(output, OLD)
    first, code, out, err = interrupt(
        [sys.executable, '-c', ANNOUNCING_FLEET, str(source.parent), '--output', str(output),
         '--urdf', str(bagdata.PANDA), '--no-plots', '--workers', '1', '--no-progress'])
    assert first == 'started long\n'
    assert code == 130
    assert (out, err) == ('', 'rnea_fleet: interrupted (the bags analysed so far are kept; a '
                          're-run reuses them)\n')
    after = snapshot(output)
    assert {name: after[name] for name in OLD} == OLD
    assert sorted(p.name for p in output.iterdir()) == ['bags', *sorted(OLD)]  # no scratch
    # The worker may finish the bag while it is closed: then its result is complete.
    bags = [p.name for p in (output / 'bags').iterdir()]  # no partial folder
    assert bags == [] or (bags == ['long'] and is_result(output / 'bags' / 'long')), bags
