"""
``rnea_convert`` on NumPy ``.npz`` archives: the bag of the same data as CSV, and bad archives.

The data (time in ms, position, velocity and effort of 7 joints, random float64 values to the
last bit) is written as a Kinova-style CSV (``test_convert.write_csv``) and as archives of
1-D arrays named as the CSV's columns or of (N, 7) matrices mapped with ``q[{n}]``: the bags
written from them are the same files, byte for byte. Each bad archive is one line naming it,
exit status 2 and nothing written.
"""
from __future__ import annotations

import contextlib
import io
from pathlib import Path
import pickle
import struct
import tracemalloc
import zipfile

from harness.convert_logs import (assert_refused, bag_of, csv_bag, csv_columns, deflated_zeros,
                                  GOOD, MAPPING, MATRICES, MIB, motion, TWO)
import numpy as np
import pytest

from rnea_ros.convert.arrays import MAX_ARRAY_BYTES
from rnea_ros.convert.cli import main as rnea_convert


@pytest.mark.parametrize('save, layout', [
    (np.savez, 'columns'), (np.savez_compressed, 'matrices'), (np.savez, 'time (N, 1)')])
def test_an_npz_gives_the_bag_of_the_csv_byte_for_byte(tmp_path, capsys, save, layout):
    (tmp_path / 'npz').mkdir()
    log = tmp_path / 'npz' / 'log.npz'
    data = motion()
    if layout == 'columns':  # 1-D arrays named as the CSV's columns, the same mapping
        save(log, **csv_columns(data))
    else:
        save(log, **(data | {'Time': data['Time'][:, None]} if layout == 'time (N, 1)'
                     else data))
    assert bag_of(capsys, log, MAPPING if layout == 'columns' else MATRICES) == \
        csv_bag(tmp_path, capsys)


class Unpickled:
    """An object whose unpickling writes the file ``marker``: loading it would run code."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return Path.touch, (self.marker,)


def stored(path: Path, members: dict[str, bytes]) -> Path:
    """Write a zip of ``members`` (names may repeat: a list of pairs) without compression."""
    with zipfile.ZipFile(path, 'w') as archive:
        for name, data in (members.items() if isinstance(members, dict) else members):
            archive.writestr(name, data)
    return path


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


@pytest.mark.parametrize('arrays, mapping, message', [
    (GOOD, ['--position', 'Position{n}'],
     "LOG '{log}' has no column 'Position1'; its columns: Time, q[1]..q[2]"),
    (GOOD, ['--position', 'q[1],q[3]'],
     "LOG '{log}' has no column 'q[3]'; its columns: Time, q[1]..q[2]"),
    ({}, [], "LOG '{log}' has no column 'Time'; its columns: none"),
    (GOOD, ['--position', 'q,Time'],
     "LOG '{log}': array 'q' is a matrix of 2 columns; expected one of them: q[1] .. q[2] "
     '(all: the template q[{{n}}])'),
    (GOOD | {'names': np.array(['a', 'b'])}, ['--position', 'names,q[1]'],
     "LOG '{log}': array 'names' holds text (<U1); expected numbers"),
    (GOOD | {'q': GOOD['q'] > 1}, [],
     "LOG '{log}': array 'q' holds booleans (bool); expected numbers"),
    (GOOD | {'q': GOOD['q'] * 1j}, [],
     "LOG '{log}': array 'q' holds complex numbers (complex128); expected numbers"),
    (GOOD | {'q': np.zeros((4, 2, 2))}, [],
     "LOG '{log}': array 'q' has the shape (4, 2, 2); expected a vector, or a matrix of one "
     'row per sample'),
    (GOOD | {'Time': np.float64(0.0)}, [],
     "LOG '{log}': array 'Time' has the shape (); expected a vector, or a matrix of one row "
     'per sample'),
    (GOOD | {'q': GOOD['q'][:3]}, [],
     "LOG '{log}': column 'q[1]' has 3 rows, column 'Time' 4; expected one row per sample in "
     'every column'),
    (GOOD | {'q': GOOD['q'].T.copy()}, ['--joints', 'a,b,c,d'],
     "LOG '{log}': column 'q[1]' has 2 rows, column 'Time' 4; expected one row per sample in "
     "every column (array 'q' is 2 x 4: one row per sample is expected; save its transpose)"),
    (GOOD | {'q': np.where(GOOD['q'] == 5.0, np.nan, GOOD['q'])}, [],
     "LOG '{log}': row 3, column 'q[2]': nan is not a finite number"),
    (GOOD | {'q[1]': GOOD['Time']}, [],
     "LOG '{log}': column 'q[1]' is both the array 'q[1]' and a column of the matrix 'q'; "
     'expected one of them'),
    (GOOD, ['--position', 'q'],
     "--position 'q': names 1 columns for 2 joints; expected one column per joint (separated "
     "by commas) or a template with {{n}} or {{joint}}; a matrix 'q' of an .npz or .mat file "
     "gives its columns as --position 'q[{{n}}]'"),
])
def test_bad_npz_is_one_line_exit_2_nothing_written(tmp_path, capsys, arrays, mapping, message):
    log = tmp_path / 'log.npz'
    np.savez(log, **arrays)
    assert_refused(capsys, log, [*TWO, *mapping], message.format(log=log))


def test_an_object_array_is_refused_by_name_and_never_loaded(tmp_path, capsys):
    marker = tmp_path / 'code_ran'
    objects = np.array([Unpickled(marker), None], dtype=object)
    assert pickle.loads(pickle.dumps(Unpickled(marker))) is None and marker.exists()
    marker.unlink()  # unpickling it runs code: this test's archive must never be unpickled
    log = stored(tmp_path / 'log.npz', {'Time.npy': npy(GOOD['Time']), 'q.npy': npy(objects)})
    code = rnea_convert([str(log), '--output', str(tmp_path / 'bag'), *TWO])
    assert code == 2
    assert capsys.readouterr().err == (
        f"rnea_convert: error: LOG '{log}': array 'q' holds Python objects, which are never "
        'loaded (a pickle can run code); expected numbers\n')
    assert not marker.exists() and not (tmp_path / 'bag').exists()


def archive_bytes() -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **GOOD)
    return buffer.getvalue()


def shape_claimed(path: Path) -> Path:
    """Write an archive whose ``Time`` header claims 10**9 values over 4 (none allocated)."""
    header = npy(GOOD['Time']).replace(b"'shape': (4,), }" + b' ' * 9,  # its padding
                                       b"'shape': (1000000000,), }")
    return stored(path, {'Time.npy': header, 'q.npy': npy(GOOD['q'])})


@pytest.mark.parametrize('write, message', [
    (lambda path: path.write_bytes(archive_bytes()[:len(archive_bytes()) // 2]),
     "LOG '{log}': not a NumPy .npz archive (File is not a zip file)"),
    (lambda path: path.write_text('Time,q\n0,1\n1,2\n'),
     "LOG '{log}': not a NumPy .npz archive (File is not a zip file)"),
    (lambda path: path.write_bytes(npy(GOOD['Time'])),  # one .npy array named .npz
     "LOG '{log}': not a NumPy .npz archive (File is not a zip file)"),
    (lambda path: path.write_bytes(archive_bytes().replace(npy(GOOD['q'])[-8:],
                                                           b'\x00' * 8)),
     "LOG '{log}': not a NumPy .npz archive (Bad CRC-32 for file 'q.npy')"),
    (shape_claimed,
     "LOG '{log}': not a NumPy .npz archive (array 'Time': its shape (1000000000,) needs more "
     'than its 160 bytes)'),
    (lambda path: stored(path, [('Time.npy', npy(GOOD['Time'])), ('q.npy', npy(GOOD['q'])),
                                ('q.npy', npy(GOOD['q']))]),
     "LOG '{log}': array 'q' appears 2 times; expected once"),
])
def test_a_corrupt_npz_is_one_line(tmp_path, capsys, write, message):
    log = tmp_path / 'log.npz'
    with pytest.warns(UserWarning, match='Duplicate name') if 'appears' in message else \
            contextlib.nullcontext():
        write(log)
    assert_refused(capsys, log, TWO, message.format(log=log))


def zeros_npz(path: Path, members: dict[str, tuple[tuple[int, ...], int]]) -> Path:
    """
    Write a deflated ``.npz`` of float64 zeros: name -> (shape, MiB of data) per member.

    A valid archive, as ``zipfile`` would write it: each member's header says its shape, its
    size and CRC are those of the data it decompresses to.
    """
    entries, offset, out = [], 0, io.BytesIO()
    for name, (shape, mebibytes) in members.items():
        assert np.prod(shape) * 8 == mebibytes * MIB
        header = np.lib.format.header_data_from_array_1_0(np.zeros(0)) | {'shape': shape}
        text = io.BytesIO()
        np.lib.format.write_array_header_1_0(text, header)
        head = text.getvalue()
        data, crc, _ = deflated_zeros(head, mebibytes)
        size = len(head) + mebibytes * MIB
        filename = f'{name}.npy'.encode()
        fields = struct.pack('<HHHHHIII', 20, 0, 8, 0, 0x21, crc, len(data), size)
        out.write(b'PK\x03\x04' + fields + struct.pack('<HH', len(filename), 0) + filename)
        out.write(data)
        entries.append((filename, fields, offset))
        offset = out.tell()
    directory = out.tell()
    for filename, fields, start in entries:
        out.write(b'PK\x01\x02' + struct.pack('<H', 20) + fields
                  + struct.pack('<HHHHHII', len(filename), 0, 0, 0, 0, 0, start) + filename)
    out.write(b'PK\x05\x06' + struct.pack('<HHHHIIH', 0, 0, len(entries), len(entries),
                                          out.tell() - directory, directory, 0))
    path.write_bytes(out.getvalue())
    return path


def test_an_npz_bomb_is_refused_by_its_member_before_it_is_read(tmp_path, capsys):
    """
    A 1 MB deflated ``.npz`` whose member ``q`` is 1 GiB of zeros: refused, no memory taken.

    Regression: the members were read whatever they decompress to (a 744-byte bzip2 archive
    to 930 MB, a 6 KB one past 4 GB).
    """
    rows = (MAX_ARRAY_BYTES // MIB + 1) * MIB // 16
    log = zeros_npz(tmp_path / 'log.npz', {'Time': ((MIB // 8,), 1),
                                           'q': ((rows, 2), rows // 2 ** 16)})
    assert log.stat().st_size < 2 * MIB
    with zipfile.ZipFile(log) as archive:  # valid: a member reads back (its CRC checked)
        with archive.open('Time.npy') as member:
            np.testing.assert_array_equal(np.lib.format.read_array(member), np.zeros(MIB // 8))
    tracemalloc.start()
    try:
        assert_refused(capsys, log, TWO, f"LOG '{log}': array 'q' decompresses to "
                       f'{MAX_ARRAY_BYTES + MIB + 128} bytes ({MAX_ARRAY_BYTES + 2 * MIB + 256} '
                       'with the arrays before it); the arrays read may take at most 1073741824 '
                       'bytes (1 GiB) in all')
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * MIB
