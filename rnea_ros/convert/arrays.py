"""
Logs of named arrays: the column rule they share, and NumPy ``.npz`` archives.

An array of an ``.npz`` archive (a variable of a MAT-file: ``rnea_ros.convert.matfile``) that
holds numbers (integers or floats) is one column by its name when it is a vector: 1-D, or 2-D
with one row or one column (MATLAB keeps vectors as (1, N) or (N, 1)). A matrix of N rows (one
per sample) and k > 1 columns is k columns, ``NAME[1]`` .. ``NAME[k]``, counted from 1 as
``{n}`` is: the template ``q[{n}]`` gives the joints, in order, the columns of the matrix ``q``.
An array asked for that is not that is refused by its name (text, booleans, complex numbers,
records, objects, a matrix asked for whole, another shape), as are columns of different lengths
(both named, with a hint when a matrix holds one column per sample) and an array that appears
twice. Only the arrays asked for are read, and together they decompress to at most
``MAX_ARRAY_BYTES`` (the sizes their members declare, which bound what is decompressed: a
compressed member cannot expand past them), or the first to pass it is refused by its name
before any is read. A ``.npy`` member is read with ``allow_pickle=False``:
an object array is refused from its header and never loaded, so the file runs no code; a header
whose shape needs more bytes than its member holds is refused before memory is taken. Errors
are ``InputError`` with one line naming the file.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
import math
from pathlib import Path
import re
import zipfile
import zlib

import numpy as np

from rnea_ros.convert.log_faults import no_column
from rnea_ros.errors import InputError

INDEXED = re.compile(r'(.+)\[([1-9][0-9]*)\]')  # NAME[k]: the column k of the matrix NAME
NUMBERS = 'iuf'  # numpy kinds of a column: integers and floats
# What the arrays (MAT-file variables) a log's mapping reads may take together, decompressed:
# 134 million float64 values, 5 hours of 7 joints' three columns at 1 kHz. A compressed member
# (bzip2 in an .npz: a 744-byte one held 930 MB) past it is refused before it is read.
MAX_ARRAY_BYTES = 1 << 30
NUMPY_HOLDS = {'b': 'booleans', 'c': 'complex numbers', 'U': 'text', 'S': 'bytes',
               'V': 'records', 'M': 'dates', 'm': 'time spans'}


@dataclass(frozen=True)
class Entry:
    """An array of the file, as its header says: its shape and, unless numbers, what it holds."""

    shape: tuple[int, ...]
    holds: str = ''

    def width(self) -> int | None:
        """Return 0 for a vector, k for a matrix of k > 1 columns, None for another shape."""
        if len(self.shape) == 1 or (len(self.shape) == 2 and 1 in self.shape):
            return 0
        return self.shape[1] if len(self.shape) == 2 and self.shape[1] > 1 else None

    def columns(self, name: str) -> list[str]:
        """Return the columns this entry named ``name`` gives (none if not numbers)."""
        width = self.width()
        if self.holds or width is None:
            return []
        return [name] if width == 0 else [f'{name}[{k}]' for k in range(1, width + 1)]


def read_npz(path: Path, columns: list[str]) -> dict[str, np.ndarray]:
    """Return ``{column: float64 array}`` of the ``.npz`` archive ``path`` (see the module)."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = {info.filename[:-4]: info for info in archive.infolist()
                       if info.filename.endswith('.npy')}
            entries = [(info.filename[:-4], _npy_entry(info, archive))
                       for info in archive.infolist() if info.filename.endswith('.npy')]
            wanted = resolve(path, 'array', entries, columns)
            names = list(dict.fromkeys(name for name, _ in wanted.values()))
            check_sizes(path, 'array', [(name, members[name].file_size) for name in names])
            arrays = {name: _npy_array(archive, members[name]) for name in names}
    except InputError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError,
            NotImplementedError, RuntimeError, zlib.error) as exc:
        raise _unreadable(path, 'a NumPy .npz archive', exc) from None
    return columns_of(path, 'array', dict(entries), wanted, arrays)


def _unreadable(path: Path, kind: str, exc: BaseException) -> InputError:
    """Return the error of a file that cannot be read: its system error, or not a ``kind``."""
    if isinstance(exc, OSError) and exc.strerror:
        return InputError(f'LOG {str(path)!r}: {exc.strerror}')
    first = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
    return InputError(f'LOG {str(path)!r}: not {kind} ({first})')


def _npy_entry(info: zipfile.ZipInfo, archive: zipfile.ZipFile) -> Entry:
    """Return the entry of a ``.npy`` member from its header alone (its data is not read)."""
    npy = np.lib.format
    with archive.open(info) as member:
        version = npy.read_magic(member)
        if version not in ((1, 0), (2, 0)):  # 3.0: records with non-Latin-1 field names
            return Entry((), f'a .npy array of format {version[0]}.{version[1]}')
        read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, _, dtype = read(member)
    if dtype.hasobject:
        return Entry(shape, 'Python objects, which are never loaded (a pickle can run code)')
    if math.prod(shape) * dtype.itemsize > info.file_size:  # before any memory is taken
        raise ValueError(f'array {info.filename[:-4]!r}: its shape {shape} needs more than '
                         f'its {info.file_size} bytes')
    return Entry(shape, '' if dtype.kind in NUMBERS else
                 f'{NUMPY_HOLDS.get(dtype.kind, "values")} ({dtype})')


def _npy_array(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    with archive.open(info) as member:
        return np.lib.format.read_array(member, allow_pickle=False)


def check_sizes(path: Path, noun: str, sizes: list[tuple[str, int]]) -> None:
    """Refuse the first of the arrays (name, bytes) to read past ``MAX_ARRAY_BYTES`` in all."""
    total = 0
    for name, size in sizes:
        total += size
        if total > MAX_ARRAY_BYTES:
            before = f' ({total} with the {noun}s before it)' if total > size else ''
            raise InputError(f'LOG {str(path)!r}: {noun} {name!r} decompresses to {size} '
                             f'bytes{before}; the {noun}s read may take at most '
                             f'{MAX_ARRAY_BYTES} bytes (1 GiB) in all')


def check_numbers(path: Path, noun: str, name: str, dtype: np.dtype) -> None:
    """Refuse the array ``name`` read with ``dtype`` unless it holds integers or floats."""
    if dtype.kind not in NUMBERS:
        raise InputError(f'LOG {str(path)!r}: {noun} {name!r} holds '
                         f'{NUMPY_HOLDS.get(dtype.kind, "values")} ({dtype}); expected numbers')


def resolve(path: Path, noun: str, entries: list[tuple[str, Entry]],
            columns: list[str]) -> dict[str, tuple[str, int | None]]:
    """Return ``{column: (array, its column from 0 or None for a vector)}`` of ``columns``."""
    given = Counter(name for name, _ in entries)
    twice = [name for name, count in given.items() if count > 1]
    catalog = dict(entries)
    found = {column: (name, None if entry.width() == 0 else int(column[len(name) + 1:-1]) - 1)
             for name, entry in entries for column in entry.columns(name)}
    shown = [c[0] if len(c) == 1 else f'{c[0]}..{c[-1]}'
             for c in (entry.columns(name) for name, entry in entries) if c]
    counts = Counter(column for name, entry in entries for column in entry.columns(name))
    wanted = {}
    for column in columns:
        match = INDEXED.fullmatch(column)
        name = column if column in catalog else match[1] if match and match[1] in catalog \
            else None
        if name in twice:
            raise InputError(f'LOG {str(path)!r}: {noun} {name!r} appears {given[name]} times; '
                             'expected once')
        if counts[column] > 1:  # the vector 'q[1]' and the matrix 'q'
            raise InputError(f'LOG {str(path)!r}: column {column!r} is both the {noun} '
                             f'{column!r} and a column of the matrix {match[1]!r}; expected one '
                             'of them')
        if column in found:
            wanted[column] = found[column]
            continue
        if name is None:
            raise no_column(path, column, shown)
        entry = catalog[name]
        if entry.holds:
            raise InputError(f'LOG {str(path)!r}: {noun} {name!r} holds {entry.holds}; '
                             'expected numbers')
        if entry.width() is None:
            raise InputError(f'LOG {str(path)!r}: {noun} {name!r} has the shape {entry.shape}; '
                             'expected a vector, or a matrix of one row per sample')
        if entry.width() and name == column:
            raise InputError(f'LOG {str(path)!r}: {noun} {name!r} is a matrix of '
                             f'{entry.width()} columns; expected one of them: {name}[1] .. '
                             f'{name}[{entry.width()}] (all: the template {name}[{{n}}])')
        raise no_column(path, column, shown)
    return wanted


def columns_of(path: Path, noun: str, catalog: dict[str, Entry],
               wanted: dict[str, tuple[str, int | None]],
               arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Return the float64 columns ``wanted`` of the ``arrays`` read, all of one length."""
    values = {column: (arrays[name].reshape(-1) if k is None else arrays[name][:, k])
              .astype(np.float64) for column, (name, k) in wanted.items()}
    first = next(iter(values), None)
    for column, value in values.items():
        if value.size != values[first].size:
            name = wanted[column][0]
            shape = catalog[name].shape
            turned = (f' ({noun} {name!r} is {shape[0]} x {shape[1]}: one row per sample is '
                      'expected; save its transpose)'
                      if len(shape) == 2 and shape[1] == values[first].size else '')
            raise InputError(f'LOG {str(path)!r}: column {column!r} has {value.size} rows, '
                             f'column {first!r} {values[first].size}; expected one row per '
                             f'sample in every column{turned}')
    return values
