"""
``rnea_convert`` on generated logs: the bag it writes and its bad inputs.

A Kinova-style CSV (``Time`` in ms, ``Position1..``, ``Velocity1..``, ``TorqueSm1..`` and
columns the mapping does not read) of an xArm7 Fourier motion, its torques from
``RobotModel.rnea_batch`` plus noise: converted by the tool, it gives ``rnea_bag`` and
``rnea_identify`` the same outputs, byte for byte, as the bag the test helper writes of the same
arrays (``bagdata.joint_states_bag``, rosbags' own serializer, sqlite3 storage).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from harness.bagdata import joint_states_bag
from harness.convert_logs import (assert_refused, FIELDS, JOINTS, kinova_style_log, MAPPING,
                                  messages, write_csv)
from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.bag.cli import main as rnea_bag
from rnea_ros.convert import table
from rnea_ros.convert.cli import main as rnea_convert
from rnea_ros.identify.cli import main as rnea_identify

XARM = robot_path('xarm7')


def helper_bag(path: Path, columns: dict) -> Path:
    """Write the bag the benchmarks made of the same arrays (rosbags' writer, the test helper)."""
    stamps = np.round(columns['Time'] * 1e-3 * 1e9).astype(np.int64)
    arrays = [np.column_stack([columns[f'{field}{k}'] for k in range(1, 8)])
              for field in FIELDS[:3]]
    return joint_states_bag(path, stamps, JOINTS, *arrays)


@pytest.fixture(scope='module')
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp('logs')
    model = RobotModel.from_urdf_file(XARM)
    return {name: kinova_style_log(model, seconds, seed) for name, seconds, seed in
            (('training', 4.0, 1), ('validation', 2.0, 2))} | {'folder': folder}


def convert(capsys, log: Path, output: Path, *extra):
    code = rnea_convert([str(log), '--output', str(output), *MAPPING, *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_converted_log_gives_the_outputs_of_the_helper_bag(tmp_path, capsys, logs):
    bags = {}
    for name in ('training', 'validation'):
        csv = write_csv(tmp_path / f'{name}.csv', logs[name])
        code, out, err = convert(capsys, csv, tmp_path / f'converted_{name}')
        assert (code, err) == (0, ''), err
        assert out == (f'rnea_convert: {logs[name]["Time"].size} joint_states of 7 joints '
                       f'({(logs[name]["Time"][-1]) * 1e-3:.6g} s) -> '
                       f'{tmp_path / f"converted_{name}"}\n')
        bags[name] = (tmp_path / f'converted_{name}',
                      helper_bag(tmp_path / f'helper_{name}', logs[name]))
    for k, kind in enumerate(('converted', 'helper')):
        out = tmp_path / f'{kind}_rnea'
        assert rnea_bag([str(bags['training'][k]), '--urdf', str(XARM), '--output', str(out),
                         '--no-plots', '--format', 'csv']) == 0
        assert rnea_identify([str(bags['training'][k]), '--urdf', str(XARM), '--validate',
                              str(bags['validation'][k]), '--output',
                              str(tmp_path / f'{kind}_identified'), '--no-plots']) == 0
    capsys.readouterr()
    for name in ('torques.csv', 'residual.csv', 'decomposition.csv'):
        assert (tmp_path / 'converted_rnea' / name).read_bytes() == \
            (tmp_path / 'helper_rnea' / name).read_bytes(), name
    summaries = [json.loads((tmp_path / f'{kind}_rnea' / 'summary.json').read_text())
                 for kind in ('converted', 'helper')]
    assert summaries[0]['joints'] == summaries[1]['joints']
    for name in ('actuation.yaml', 'identified.urdf'):
        assert (tmp_path / 'converted_identified' / name).read_bytes() == \
            (tmp_path / 'helper_identified' / name).read_bytes(), name


def test_parquet_and_units(tmp_path, capsys, logs):
    """The same log as Parquet, positions in degrees, effort in mN m: the same messages."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    columns = dict(logs['validation'])
    csv = write_csv(tmp_path / 'log.csv', columns)
    scaled = {name: (np.degrees(values) if name.startswith(('Position', 'Velocity'))
                     else values * 1000.0 if name.startswith('TorqueSm') else values)
              for name, values in columns.items()}
    pq.write_table(pa.table(scaled), tmp_path / 'log.parquet')
    assert convert(capsys, csv, tmp_path / 'from_csv')[0] == 0
    assert convert(capsys, tmp_path / 'log.parquet', tmp_path / 'from_parquet',
                   '--position-unit', 'deg', '--velocity-unit', 'deg/s',
                   '--effort-scale', '0.001')[0] == 0
    decoded = [messages(tmp_path / name) for name in ('from_csv', 'from_parquet')]
    np.testing.assert_array_equal(decoded[0][0], decoded[1][0])  # the stamps
    for field in range(1, 4):  # position, velocity, effort: rounding of the unit scale only
        np.testing.assert_allclose(decoded[1][field], decoded[0][field], rtol=1e-14, atol=0)


def test_time_offset_and_column_lists(tmp_path, capsys):
    """Seconds plus an exact offset; columns named one by one or by the joint's name."""
    csv = write_csv(tmp_path / 'log.csv', {'t': np.array([0.0, 0.001, 0.0025]),
                                           'a': np.zeros(3), 'b': np.ones(3),
                                           'x_v': np.full(3, 2.0), 'y_v': np.full(3, 3.0)})
    code = rnea_convert([str(csv), '--output', str(tmp_path / 'bag'), '--time', 't',
                         '--time-offset', '1700000000.000000001', '--joints', 'x,y',
                         '--position', 'a,b', '--velocity', '{joint}_v'])
    assert (code, capsys.readouterr().err) == (0, '')
    from rosbags.highlevel import AnyReader
    with AnyReader([tmp_path / 'bag']) as reader:
        decoded = [(time, reader.deserialize(raw, c.msgtype)) for c, time, raw in
                   reader.messages()]
    assert [time for time, _ in decoded] == [1_700_000_000_000_000_001,
                                             1_700_000_000_001_000_001,
                                             1_700_000_000_002_500_001]
    msg = decoded[-1][1]
    assert (list(msg.name), list(msg.position), list(msg.velocity), list(msg.effort)) == \
        (['x', 'y'], [0.0, 1.0], [2.0, 3.0], [])


# ---------------------------------------------------------------- bad inputs

GOOD = 'Time,Position1,Position2\n0,0.1,0.2\n1,0.1,0.2\n2,0.1,0.2\n'
TWO = ['--joints', 'a,b', '--time', 'Time', '--time-unit', 'ms', '--position', 'Position{n}']


@pytest.mark.parametrize('text, extra, message', [
    (GOOD, ['--position', 'Position{n}x'],
     "LOG '{log}' has no column 'Position1x'; its columns: Time, Position1, Position2"),
    (GOOD.replace('1,0.1,0.2', '1,0.1,abc'), [],
     "LOG '{log}': row 2 (line 3), column 'Position2': 'abc' is not a number"),
    (GOOD.replace('1,0.1,0.2', '1,,0.2'), [],
     "LOG '{log}': row 2 (line 3), column 'Position1': empty; expected a finite number"),
    (GOOD.replace('2,0.1,0.2', '2,0.1,nan'), [],
     "LOG '{log}': row 3 (line 4), column 'Position2': nan is not a finite number"),
    (GOOD.replace('1,0.1,0.2', '1,0.1'), [],
     "LOG '{log}': row 2 (line 3): 2 fields; the header has 3"),
    (GOOD.replace('2,0.1,0.2', '1,0.1,0.2'), [],
     "LOG '{log}': column 'Time' (ms), row 3 (line 4): 1 is not after the previous row's 1; "
     'expected increasing times (one row per sample, at least 1 ns apart)'),
    ('Time,Position1,Position1\n0,1,2\n1,1,2\n', [],
     "LOG '{log}': column 'Position1' appears 2 times in its header; expected once"),
    # A UTF-8 byte-order mark before the first name (pyarrow drops it): still a duplicate.
    ('\ufeffPosition1,Time,Position2,Position1\n0.1,0,0.2,0.3\n0.1,1,0.2,0.3\n', [],
     "LOG '{log}': column 'Position1' appears 2 times in its header; expected once"),
    (GOOD, ['--position', 'Position1'],
     "--position 'Position1': names 1 columns for 2 joints; expected one column per joint "
     "(separated by commas) or a template with {{n}} or {{joint}}; a matrix 'Position1' of an "
     ".npz or .mat file gives its columns as --position 'Position1[{{n}}]'"),
    (GOOD, ['--joints', 'a,a'], "--joints: 'a' is given twice"),
    (GOOD, ['--joints', 'a,,b'], "--joints 'a,,b': expected joint names separated by commas"),
    (GOOD, ['--time-offset', '-1'],
     "LOG '{log}': column 'Time' (ms), row 1 (line 2): the time 0 is before 1970 with "
     '--time-offset; expected a time from the epoch or an offset that makes it one'),
    (GOOD, ['--effort', 'Position{n}', '--effort-scale', '0'],
     '--effort-scale 0: expected a nonzero number of magnitude at most 1e+06'),
    ('Time,Position1,Position2\n0,0.1,0.2\n', [], "LOG '{log}' has 1 rows; expected at least 2"),
    ('', [], "LOG '{log}' is empty; expected a header line and rows"),
    (b'Time,Position1,Position2\n0,0.1,\xff\n', [],
     "LOG '{log}': not UTF-8 text (byte 0xff at offset 31)"),
])
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path, capsys, text, extra, message):
    log = tmp_path / 'log.csv'
    log.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert_refused(capsys, log, [*TWO, *extra], message.format(log=log))


@pytest.mark.parametrize('name, message', [
    ('log.txt', "LOG '{log}': expected a .csv, .parquet, .npz or .mat file"),
    ('missing.csv', "LOG '{log}': no such file"),
    ('log.parquet', "LOG '{log}': not a Parquet file ("),
])
def test_bad_file(tmp_path, capsys, name, message):
    log = tmp_path / name
    if name != 'missing.csv':
        log.write_text(GOOD)
    code = rnea_convert([str(log), '--output', str(tmp_path / 'bag'), *TWO])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f'rnea_convert: error: {message.format(log=log)}'), err
    assert err.count('\n') == 1 and not (tmp_path / 'bag').exists()


@pytest.mark.parametrize('kind', ['csv', 'parquet'])
@pytest.mark.parametrize('hostile', ['huge', 'fifo', 'directory'])
def test_a_log_is_read_as_a_regular_file_within_its_bound(tmp_path, capsys, kind, hostile):
    """
    A log larger than ``MAX_LOG_BYTES`` (sparse: no disk), a FIFO, a directory: one line.

    Regression: pyarrow read a huge log whole into memory, and a FIFO named like a log was
    called "no such file".
    """
    log = tmp_path / f'log.{kind}'
    if hostile == 'huge':
        with open(log, 'wb') as file:
            file.truncate(table.MAX_LOG_BYTES + 1)
        why = f'{table.MAX_LOG_BYTES + 1} bytes: expected at most {table.MAX_LOG_BYTES}'
    elif hostile == 'fifo':
        os.mkfifo(log)
        why = 'not a regular file (a FIFO)'
    else:
        log.mkdir()
        why = 'Is a directory'
    code = rnea_convert([str(log), '--output', str(tmp_path / 'bag'), *TWO])
    assert (code, capsys.readouterr().err) == (
        2, f'rnea_convert: error: cannot read LOG {str(log)!r}: {why}\n')
    assert not (tmp_path / 'bag').exists()


def test_the_docs_state_the_bound_of_a_log():
    text = ' '.join((Path(__file__).resolve().parents[2] / 'docs' / 'logs.md').read_text()
                    .split())
    assert f'larger than {table.MAX_LOG_BYTES >> 30} GiB, refused before it is read' in text


def test_parquet_column_of_text_is_named(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq
    log = tmp_path / 'log.parquet'
    pq.write_table(pa.table({'Time': [0.0, 1.0], 'Position1': [0.1, 0.2],
                             'Position2': ['a', 'b']}), log)
    code = rnea_convert([str(log), '--output', str(tmp_path / 'bag'), *TWO])
    assert code == 2
    assert capsys.readouterr().err == (f"rnea_convert: error: LOG '{log}': column 'Position2' "
                                       'holds string; expected numbers\n')


def test_a_usage_error_is_one_line(tmp_path, capsys):
    log = tmp_path / 'log.csv'
    log.write_text(GOOD)
    with pytest.raises(SystemExit) as caught:
        rnea_convert([str(log), '--output', str(tmp_path / 'bag'), *TWO, '--bogus'])
    assert caught.value.code == 2
    assert capsys.readouterr().err == 'rnea_convert: error: unrecognized arguments: --bogus\n'
    assert [p.name for p in tmp_path.iterdir()] == ['log.csv']


def test_an_existing_output_is_refused_and_kept(tmp_path, capsys):
    log = tmp_path / 'log.csv'
    log.write_text(GOOD)
    (tmp_path / 'bag').mkdir()
    (tmp_path / 'bag' / 'mine.txt').write_text('kept')
    code = rnea_convert([str(log), '--output', str(tmp_path / 'bag'), *TWO])
    assert code == 2
    assert capsys.readouterr().err == (f"rnea_convert: error: --output '{tmp_path / 'bag'}': "
                                       'it exists; expected a new directory\n')
    assert [p.name for p in (tmp_path / 'bag').iterdir()] == ['mine.txt']
    code = rnea_convert([str(log), '--output', str(tmp_path / 'no' / 'bag'), *TWO])
    assert code == 2
    assert capsys.readouterr().err == (f"rnea_convert: error: --output '{tmp_path / 'no' / 'bag'}'"
                                       f": its folder '{tmp_path / 'no'}' is not a directory\n")
    assert not (tmp_path / 'no').exists()
