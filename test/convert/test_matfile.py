"""
``rnea_convert`` on MATLAB ``.mat`` files: the bag of the same data as CSV, and bad files.

The MAT-files are written by ``scipy.io.savemat`` (v5 with vectors as rows or columns,
compressed or not, and v4) with the data of ``test_arrays.motion()``: the bags written from them
are the CSV's, byte for byte. Each bad file (a struct, text, a v7.3 file, a file cut short, a
crafted file that crashes scipy's reader) is one line naming it, exit status 2, nothing written.
"""
from __future__ import annotations

from pathlib import Path
import signal
import struct
import subprocess
import sys

from harness.convert_logs import (assert_refused, bag_of, csv_bag, deflated_zeros, GOOD, MATRICES,
                                  MIB, motion, TWO)
import numpy as np
import pytest
import scipy.io
from scipy.sparse import eye_array

from rnea_ros.convert import matfile
from rnea_ros.convert.arrays import MAX_ARRAY_BYTES
from rnea_ros.convert.cli import main as rnea_convert


@pytest.mark.parametrize('options', [
    {}, {'do_compression': True, 'oned_as': 'column'}, {'format': '4'}])
def test_a_mat_file_gives_the_bag_of_the_csv_byte_for_byte(tmp_path, capsys, options):
    (tmp_path / 'mat').mkdir()
    log = tmp_path / 'mat' / 'log.mat'
    scipy.io.savemat(log, motion(), **options)
    assert bag_of(capsys, log, MATRICES) == csv_bag(tmp_path, capsys)


def crash(path: Path) -> None:
    """Write a v5 file whose ``Time`` data has the type code 8, a NULL in scipy's table."""
    scipy.io.savemat(path, GOOD)
    data = path.read_bytes()
    tag = struct.pack('<II', 9, 4 * 8)  # miDOUBLE, 4 values: the data of Time
    assert data.count(tag) == 1
    path.write_bytes(data.replace(tag, struct.pack('<II', 8, 4 * 8)))


def v73(path: Path) -> None:
    """Write the 128-byte header of a MATLAB v7.3 file (HDF5 follows it)."""
    text = b'MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Jan  1 00:00:00 2024 HDF5'
    path.write_bytes(text.ljust(116) + b'\x00' * 8 + b'\x00\x02IM' + b'\x89HDF\r\n\x1a\n')


def twice(path: Path) -> None:
    """Write a v5 file that holds the variable Time twice."""
    scipy.io.savemat(path, GOOD)
    path.write_bytes(path.read_bytes() + path.read_bytes()[128:])


def v4_claim(path: Path) -> None:
    """Write a v4 file whose q claims 2**24 + 2 columns (6.7 GB of doubles) over 2."""
    scipy.io.savemat(path, GOOD, format='4')
    data = path.read_bytes()
    header = struct.pack('<5i', 0, 4, 2, 0, 2) + b'q\x00'  # type, rows, columns, imag, name
    assert data.count(header) == 1
    path.write_bytes(data.replace(header, struct.pack('<5i', 0, 4, 2**24 + 2, 0, 2) + b'q\x00'))


def saved(**variables):
    return lambda path: scipy.io.savemat(path, GOOD | variables)


@pytest.mark.parametrize('write, extra, message', [
    (saved(), ['--position', 'Position{n}'],
     "LOG '{log}' has no column 'Position1'; its columns: Time, q[1]..q[2]"),
    (saved(s={'a': 1.0}), ['--position', 's,q[1]'],
     "LOG '{log}': variable 's' holds a struct; expected numbers"),
    (saved(c=np.array([1.0, 'x'], dtype=object)), ['--position', 'c,q[1]'],
     "LOG '{log}': variable 'c' holds a cell array; expected numbers"),
    (saved(name='joint_1'), ['--position', 'name,q[1]'],
     "LOG '{log}': variable 'name' holds text (char); expected numbers"),
    (saved(q=GOOD['q'] > 1), [],
     "LOG '{log}': variable 'q' holds logical values; expected numbers"),
    (saved(q=eye_array(4, 2)), [],
     "LOG '{log}': variable 'q' holds a sparse matrix; expected numbers"),
    (saved(q=GOOD['q'] * 1j), [],
     "LOG '{log}': variable 'q' holds complex numbers (complex128); expected numbers"),
    (saved(q=np.zeros((4, 2, 3))), [],
     "LOG '{log}': variable 'q' has the shape (4, 2, 3); expected a vector, or a matrix of one "
     'row per sample'),
    (saved(q=GOOD['q'].T), ['--joints', 'a,b,c,d'],
     "LOG '{log}': column 'q[1]' has 2 rows, column 'Time' 4; expected one row per sample in "
     "every column (variable 'q' is 2 x 4: one row per sample is expected; save its "
     'transpose)'),
    (saved(Time=np.array([0.0, 1.0, np.inf, 3.0])), [],
     "LOG '{log}': row 3, column 'Time': inf is not a finite number"),
    (twice, [], "LOG '{log}': variable 'Time' appears 2 times; expected once"),
    (v73, [], "LOG '{log}' is a MATLAB v7.3 MAT-file (HDF5), which is not read; expected "
     "version 7 or older: in MATLAB, save(FILE, '-v7')"),
    (lambda path: (saved()(path), path.write_bytes(path.read_bytes()[:300])), [],
     "LOG '{log}': not a MATLAB MAT-file (could not read bytes)"),
    (lambda path: path.write_text('Time,q\n' + '0,1\n' * 40), [],
     "LOG '{log}': not a MATLAB MAT-file (Unknown mat file type, version 44, 49)"),
    (v4_claim, [], "LOG '{log}': not a MATLAB MAT-file (variable 'q' claims the shape (4, "
     '16777218), more than the file can hold)'),
])
def test_bad_mat_file_is_one_line_exit_2_nothing_written(tmp_path, capsys, write, extra, message):
    log = tmp_path / 'log.mat'
    write(log)
    assert_refused(capsys, log, [*TWO, *extra], message.format(log=log))


def test_a_file_that_crashes_scipys_reader_is_one_line(tmp_path, capsys):
    """The reason the reader runs in a child: in this process, the file would end the tool."""
    log = tmp_path / 'log.mat'
    crash(log)
    alone = subprocess.run([sys.executable, '-c', 'import sys, scipy.io; '
                            'scipy.io.loadmat(sys.argv[1])', str(log)], capture_output=True)
    if alone.returncode >= 0:  # a stray pointer need not fault on every machine: then an error
        assert alone.returncode == 1, alone.stderr
        code = rnea_convert([str(log), '--output', str(tmp_path / 'bag'), *TWO])
        err = capsys.readouterr().err
        assert code == 2 and err.count('\n') == 1 and err.startswith(
            f"rnea_convert: error: LOG '{log}': not a MATLAB MAT-file ("), err
        assert not (tmp_path / 'bag').exists()
        return
    assert_refused(capsys, log, TWO, f"LOG '{log}': not a MATLAB MAT-file (its reader, "
                   f'scipy.io.loadmat, crashed: {signal.Signals(-alone.returncode).name})')


def test_a_module_of_the_working_folder_is_not_imported_by_the_reader(tmp_path, capsys,
                                                                      monkeypatch):
    """The reader's child process imports numpy and scipy, never a numpy.py beside the log."""
    scipy.io.savemat(tmp_path / 'log.mat', GOOD)
    (tmp_path / 'numpy.py').write_text(f'open({str(tmp_path / "code_ran")!r}, "w").close()\n')
    monkeypatch.chdir(tmp_path)
    code = rnea_convert(['log.mat', '--output', 'bag', *TWO])
    assert (code, capsys.readouterr().err) == (0, '')
    assert not (tmp_path / 'code_ran').exists() and (tmp_path / 'bag').is_dir()


def zeros_mat(path: Path, variables: dict[str, tuple[int, int]]) -> Path:
    """
    Write a v5 MAT-file of compressed double zeros: name -> (rows, columns), whole MiBs each.

    As MATLAB's ``save`` writes it (a miCOMPRESSED element holding a miMATRIX), built from one
    compressed MiB repeated (``deflated_zeros``): a file of about 1 kB per MiB of values.
    """
    out = [b'MATLAB 5.0 MAT-file, written by rnea_ros tests'.ljust(116) + bytes(8)
           + struct.pack('<H', 0x0100) + b'IM']
    for name, (rows, columns) in variables.items():
        size = rows * columns * 8
        assert size % MIB == 0
        label = name.encode()
        parts = (struct.pack('<IIII', 6, 8, 6, 0)  # array flags: mxDOUBLE_CLASS
                 + struct.pack('<IIii', 5, 8, rows, columns)  # dimensions
                 + struct.pack('<II', 1, len(label)) + label.ljust(-(-len(label) // 8) * 8, b'\0')
                 + struct.pack('<II', 9, size))  # miDOUBLE: the values follow
        head = struct.pack('<II', 14, len(parts) + size) + parts
        deflated, _, adler = deflated_zeros(head, size // MIB)
        stream = b'\x78\xda' + deflated + struct.pack('>I', adler)  # zlib's wrapper
        out.append(struct.pack('<II', 15, len(stream)) + stream)
    path.write_bytes(b''.join(out))
    return path


def test_a_mat_bomb_is_refused_by_its_variable_before_it_is_loaded(tmp_path, capsys, monkeypatch):
    """
    A 1 MB MAT-file whose variable ``q`` is 1 GiB of zeros: refused before loadmat reads it.

    Each variable is within ``MAX_EXPANSION`` times the file; together they pass
    ``MAX_ARRAY_BYTES``. The reader runs in 768 MiB of address space here (scipy decompresses
    up to about 130 MB to read a header): loading ``q`` would fail there, so the refusal is
    the sizes', before any is loaded. Regression: only each
    variable was bounded (by the file's size), so a 0.47 MB file expanded to 2 GB.
    """
    rows = (MAX_ARRAY_BYTES // MIB + 1) * MIB // 16
    log = zeros_mat(tmp_path / 'log.mat', {'Time': (MIB // 8, 1), 'q': (rows, 2)})
    assert log.stat().st_size < 2 * MIB
    monkeypatch.setattr(matfile, 'CHILD_ADDRESS_SPACE', 768 * MIB)
    assert_refused(capsys, log, TWO, f"LOG '{log}': variable 'q' decompresses to "
                   f'{MAX_ARRAY_BYTES + MIB} bytes ({MAX_ARRAY_BYTES + 2 * MIB} with the '
                   'variables before it); the variables read may take at most 1073741824 bytes '
                   '(1 GiB) in all')


def test_the_mat_reader_runs_within_its_address_space(tmp_path, capsys, monkeypatch):
    """
    A variable the reader cannot hold in its address space (``RLIMIT_AS``): one line.

    768 MiB of zeros (a 0.8 MB file), read within 768 MiB. Regression: the reader had no
    limit, and took whatever the file expanded to.
    """
    log = zeros_mat(tmp_path / 'log.mat', {'Time': (MIB // 8, 1), 'q': (768 * MIB // 16, 2)})
    monkeypatch.setattr(matfile, 'CHILD_ADDRESS_SPACE', 768 * MIB)
    assert_refused(capsys, log, TWO, f"LOG '{log}': its reader, scipy.io.loadmat, needs more "
                   f'than its {768 * MIB} bytes of address space')


def test_a_small_mat_file_of_these_zeros_is_read(tmp_path, capsys):
    """The bombs' writer makes a MAT-file scipy reads as it says (the refusals are theirs)."""
    log = zeros_mat(tmp_path / 'log.mat', {'Time': (MIB // 8, 1), 'q': (2 ** 16, 2)})
    values = scipy.io.loadmat(log)
    assert values['q'].shape == (2 ** 16, 2) and not values['q'].any()
