"""rnea_fleet as the fleet tests run it (in process, output captured), its table, a .mcap bag."""
from __future__ import annotations

from contextlib import redirect_stderr, redirect_stdout
import io
import math
from pathlib import Path

from harness import bagdata
import numpy as np
import pyarrow.parquet as pq

from rnea_ros.fleet import cli


def read_rows(path: Path) -> list[dict]:
    """fleet.parquet as dicts, NaN as None (so that equal tables compare equal)."""
    return [{k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}
            for row in pq.read_table(path).to_pylist()]


def fleet(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = cli.main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def mcap_file(path: Path, samples: int = 100) -> Path:
    """Write a one-file .mcap bag (measured effort) at ``path``, any name."""
    folder = bagdata.panda_bag(path.parent / f'tmp_{path.parent.name}', bagdata.sample_times(
        samples), storage='mcap', effort=np.zeros((samples, 8)))
    (storage,) = folder.glob('*.mcap')
    storage.rename(path)
    for rest in folder.iterdir():
        rest.unlink()
    folder.rmdir()
    return path
