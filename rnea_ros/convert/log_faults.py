"""
How a log's faults are named, for every reader of a log (CSV, Parquet, .npz, .mat).

``row_name`` says where a data row is (and its line, for CSV); ``no_column`` is the error of a
log without a column, listing the first ``SHOWN_COLUMNS`` it has. ``SUFFIXES`` maps a log's
suffix to its kind.
"""
from __future__ import annotations

from pathlib import Path

from rnea_ros.errors import InputError

SUFFIXES = {'.csv': 'csv', '.parquet': 'parquet', '.pq': 'parquet', '.npz': 'npz',
            '.mat': 'mat'}
SHOWN_COLUMNS = 12  # the columns an error lists before '...'


def row_name(kind: str, index: int) -> str:
    """Say where the data row ``index`` (from 0) is: 'row N' (and its line for CSV)."""
    kind = SUFFIXES.get(Path(kind).suffix.lower(), kind)  # a kind, or the log's path
    return f'row {index + 1} (line {index + 2})' if kind == 'csv' else f'row {index + 1}'


def no_column(path: Path, name: str, shown: list[str]) -> InputError:
    """Return the error of a log without the column ``name``: it lists the first ``shown``."""
    listed = ', '.join(shown[:SHOWN_COLUMNS]) + (', ...' if len(shown) > SHOWN_COLUMNS else '')
    return InputError(f'LOG {str(path)!r} has no column {name!r}; its columns: '
                      f'{listed or "none"}')
