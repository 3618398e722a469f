"""
The columns of a time-series log: CSV (a header line, comma separated), Parquet, .npz or .mat.

``read_columns`` returns the named columns as float64 arrays of one length, or raises
``InputError`` with one line naming the file and what is wrong: a column it does not have, a
row (counted from 1, the header not counted; for CSV also its line) whose value is empty or
not a finite number, a row with the wrong number of fields, a file that is not a table. CSV is
parsed by pyarrow (fast), and only when pyarrow refuses a value is the file read again line by
line to say where. A NumPy ``.npz`` archive (``rnea_ros.convert.arrays``) or a MATLAB ``.mat``
file (``rnea_ros.convert.matfile``) gives its arrays by name, a matrix's columns as ``NAME[k]``.
"""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np

from rnea_ros.convert import arrays, matfile
from rnea_ros.convert.log_faults import no_column, row_name, SUFFIXES
from rnea_ros.errors import InputError, not_utf8
from rnea_ros.files import check_regular, open_regular

# A log is read as a regular file of at most this size (a FIFO, a device, a bigger file are
# refused before anything is read): hours of a robot at 1 kHz as CSV.
MAX_LOG_BYTES = 1 << 31


def read_columns(path: str | Path, columns: list[str]) -> dict[str, np.ndarray]:
    """Return ``{column: float64 array}`` of the log ``path`` (``InputError`` naming a fault)."""
    path = Path(path)
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise InputError(f'LOG {str(path)!r}: expected a .csv, .parquet, .npz or .mat file')
    if not path.exists() and not path.is_symlink():
        raise InputError(f'LOG {str(path)!r}: no such file')
    check_regular(path, 'LOG', MAX_LOG_BYTES)
    read = {'csv': _read_csv, 'parquet': _read_parquet, 'npz': arrays.read_npz,
            'mat': matfile.read_mat}[kind]
    values = read(path, list(dict.fromkeys(columns)))
    for name in columns:
        bad = np.flatnonzero(~np.isfinite(values[name]))
        if bad.size:
            raise InputError(f'LOG {str(path)!r}: {row_name(kind, int(bad[0]))}, column {name!r}: '
                             f'{float(values[name][bad[0]])!r} is not a finite number')
    return values


def _missing(path: Path, header: list[str], columns: list[str]) -> None:
    """Raise ``InputError`` for the first of ``columns`` the header lacks or holds twice."""
    for name in columns:
        count = header.count(name)
        if count == 1:
            continue
        if count > 1:
            raise InputError(f'LOG {str(path)!r}: column {name!r} appears {count} times in its '
                             'header; expected once')
        raise no_column(path, name, header)


def _text(path: Path) -> io.TextIOWrapper:
    """Open the log as text, bounded (utf-8-sig: a byte-order mark is no part of a name)."""
    return io.TextIOWrapper(open_regular(path, 'LOG', MAX_LOG_BYTES), newline='',
                            encoding='utf-8-sig')


def _header(path: Path) -> list[str]:
    try:  # pyarrow drops a byte-order mark too
        with _text(path) as file:
            return next(csv.reader(file), [])
    except UnicodeDecodeError as exc:
        raise InputError(f'LOG {str(path)!r}: {not_utf8(exc)}') from None
    except csv.Error as exc:
        raise InputError(f'LOG {str(path)!r}: line 1: {exc}') from None


def _read_csv(path: Path, columns: list[str]) -> dict[str, np.ndarray]:
    import pyarrow as pa
    import pyarrow.csv as pcsv
    header = _header(path)
    if not header:
        raise InputError(f'LOG {str(path)!r} is empty; expected a header line and rows')
    _missing(path, header, columns)
    try:
        with open_regular(path, 'LOG', MAX_LOG_BYTES) as file:
            table = pcsv.read_csv(file, convert_options=pcsv.ConvertOptions(
                include_columns=columns, column_types={name: pa.float64() for name in columns},
                null_values=['']))
    except (pa.ArrowInvalid, UnicodeDecodeError):
        _locate(path, header, columns)
        raise InputError(f'LOG {str(path)!r}: not a CSV table of numbers') from None
    return {name: _numbers(path, table, name) for name in columns}


def _numbers(path: Path, table, name: str) -> np.ndarray:
    """Return the column ``name`` of a pyarrow ``table`` as float64; a null names its row."""
    column = table.column(name)
    if column.null_count:
        row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(f'LOG {str(path)!r}: {row_name(path, row)}, column {name!r}: empty; '
                         'expected a finite number')
    return column.to_numpy().astype(np.float64)


def _locate(path: Path, header: list[str], columns: list[str]) -> None:
    """Raise ``InputError`` at the first row pyarrow could not read (line by line)."""
    where = [header.index(name) for name in columns]
    try:
        with _text(path) as file:
            reader = csv.reader(file)
            next(reader)
            for index, fields in enumerate(reader):
                if len(fields) != len(header):
                    raise InputError(f'LOG {str(path)!r}: {row_name("csv", index)}: {len(fields)} '
                                     f'fields; the header has {len(header)}')
                for name, k in zip(columns, where):
                    try:
                        value = float(fields[k])
                    except ValueError:
                        raise InputError(f'LOG {str(path)!r}: {row_name("csv", index)}, column '
                                         f'{name!r}: {fields[k]!r} is not a number') from None
                    if not math.isfinite(value):
                        raise InputError(f'LOG {str(path)!r}: {row_name("csv", index)}, column '
                                         f'{name!r}: {fields[k]!r} is not a finite number')
    except UnicodeDecodeError as exc:
        raise InputError(f'LOG {str(path)!r}: {not_utf8(exc)}') from None
    except csv.Error as exc:
        raise InputError(f'LOG {str(path)!r}: line {reader.line_num}: {exc}') from None


def _read_parquet(path: Path, columns: list[str]) -> dict[str, np.ndarray]:
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        with open_regular(path, 'LOG', MAX_LOG_BYTES) as file:
            schema = pq.read_schema(file)
            _missing(path, list(schema.names), columns)
            table = pq.read_table(file, columns=columns)
    except (pa.ArrowException, OSError) as exc:
        if isinstance(exc, OSError) and not isinstance(exc, pa.ArrowException) \
                and exc.strerror:
            raise InputError(f'LOG {str(path)!r}: {exc.strerror}') from None
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f'LOG {str(path)!r}: not a Parquet file ({first})') from None
    for name in columns:
        kind = table.column(name).type
        if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
            raise InputError(f'LOG {str(path)!r}: column {name!r} holds {kind}; expected '
                             'numbers')
    return {name: _numbers(path, table, name) for name in columns}
