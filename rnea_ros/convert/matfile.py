"""
The columns of a MATLAB ``.mat`` log, read by ``scipy.io.loadmat`` in a child process.

Variables are columns as the arrays of an ``.npz`` archive are (``rnea_ros.convert.arrays``):
a vector (MATLAB's (1, N) or (N, 1)) by its name, a matrix of one row per sample by
``NAME[k]``; a struct, a cell array, text (char), logical values, a sparse matrix or an object
is refused by its name. MAT-files of versions 4 to 7.2 are read; a v7.3 file is HDF5, refused
with what to do (save it with ``-v7``).

scipy's MAT reader is not hardened against a corrupt or crafted file: a wrong data type code in
a variable's data makes it dereference a wild pointer (a segmentation fault, seen here on
single-byte changes of a v5 file). So the file is listed and read by a child Python process
that imports numpy and scipy only: whatever the file does to the reader stays in the child,
whose crash or error is one ``InputError`` line here. The child prints the variables' names,
shapes and classes (JSON, one line), then the variables asked for as ``.npy`` arrays, read here
with ``allow_pickle=False``. What it loads is bounded before it loads it: the variables asked
for take at most ``arrays.MAX_ARRAY_BYTES`` together (their headers' shapes), each at most
``MAX_EXPANSION`` times the file's size; and it runs within ``CHILD_ADDRESS_SPACE`` of address
space (``RLIMIT_AS``, set before it imports numpy), so a reader that takes more fails with a
``MemoryError``, one line here, instead of taking the machine's memory.
"""
from __future__ import annotations

import io
import json
from pathlib import Path
import signal
import subprocess
import sys

import numpy as np

from rnea_ros.convert.arrays import (check_numbers, check_sizes, columns_of, Entry, INDEXED,
                                     MAX_ARRAY_BYTES, resolve)
from rnea_ros.errors import InputError

# whosmat's classes of a column, and the bytes of one of their values.
NUMBERS = {'double': 8, 'single': 4, 'int8': 1, 'uint8': 1, 'int16': 2, 'uint16': 2,
           'int32': 4, 'uint32': 4, 'int64': 8, 'uint64': 8}
# A variable's values take at most this many times the file's size: deflate (a compressed v7
# variable) expands at most about 1032 times. A header claiming more is refused before loadmat
# allocates it (a byte changed in a v4 file's dimensions made it ask for 6.7 GB).
MAX_EXPANSION = 1100
HOLDS = {'char': 'text (char)', 'logical': 'logical values', 'cell': 'a cell array',
         'struct': 'a struct', 'sparse': 'a sparse matrix', 'object': 'a MATLAB object',
         'opaque': 'a MATLAB object', 'function': 'a function handle'}
# The reader's address space: the values (loadmat holds them, and copies some) and Python,
# numpy and scipy (about 0.2 GB).
CHILD_ADDRESS_SPACE = 3 * MAX_ARRAY_BYTES + (1 << 30)
# The child's exit statuses (its stderr: the reason; for TOO_LARGE the sizes, JSON).
NOT_A_MAT_FILE, V73, SYSTEM, TOO_LARGE, NO_MEMORY = 3, 4, 5, 6, 7
# The child: argv = [path, address space, variable, ...]. The folder it runs in is taken off
# sys.path first, so that a module of the log's folder (numpy.py, json.py) is never imported
# in its place; one BLAS thread, whose buffers the address space need not hold.
CHILD = f"""
import sys
if sys.path and sys.path[0] == '':
    del sys.path[0]
import os
import resource
_, hard = resource.getrlimit(resource.RLIMIT_AS)  # a lower limit of the caller's stays
space = int(sys.argv[2]) if hard == resource.RLIM_INFINITY else min(int(sys.argv[2]), hard)
resource.setrlimit(resource.RLIMIT_AS, (space, hard))
for variable in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ[variable] = '1'
import json
import math
import warnings
warnings.simplefilter('ignore')  # stderr holds the one reason of a failure
try:
    from scipy.io.matlab import loadmat, matfile_version, whosmat
    import numpy as np
except MemoryError:
    sys.exit({NO_MEMORY})
path, asked = sys.argv[1], sys.argv[3:]
try:
    if matfile_version(path)[0] == 2:
        sys.exit({V73})
    listed = whosmat(path)
    numeric = {{name: (shape, kind) for name, shape, kind in listed if kind in {NUMBERS!r}}}
    names = [name for name in dict.fromkeys(asked) if name in numeric]
    sizes = [(name, math.prod(numeric[name][0]) * {NUMBERS!r}[numeric[name][1]])
             for name in names]
    for name, size in sizes:
        if size > {MAX_EXPANSION} * os.path.getsize(path):
            raise ValueError(f'variable {{name!r}} claims the shape {{numeric[name][0]}}, more '
                             'than the file can hold')
    if sum(size for _, size in sizes) > {MAX_ARRAY_BYTES}:
        sys.stderr.write(json.dumps(sizes))
        sys.exit({TOO_LARGE})
    loaded = loadmat(path, variable_names=names) if names else {{}}
except MemoryError:
    sys.exit({NO_MEMORY})
except Exception as exc:
    system = isinstance(exc, OSError) and exc.strerror  # the machine's, not the file's
    sys.stderr.write((exc.strerror if system else str(exc).strip() or type(exc).__name__)
                     .splitlines()[0])
    sys.exit({SYSTEM} if system else {NOT_A_MAT_FILE})
names = [name for name in names if isinstance(loaded.get(name), np.ndarray)]
out = sys.stdout.buffer
out.write(json.dumps({{'variables': [[name, list(shape), kind] for name, shape, kind in listed],
                      'loaded': names}}).encode() + b'\\n')
for name in names:
    np.save(out, loaded[name], allow_pickle=False)
"""


def read_mat(path: Path, columns: list[str]) -> dict[str, np.ndarray]:
    """Return ``{column: float64 array}`` of the MAT-file ``path`` (``InputError``: a fault)."""
    asked = [name for column in columns for name in
             (column, *(match[1] for match in [INDEXED.fullmatch(column)] if match))]
    done = subprocess.run([sys.executable, '-c', CHILD, str(path), str(CHILD_ADDRESS_SPACE),
                           *asked], capture_output=True, check=False)
    reason = done.stderr.decode('utf-8', 'replace').strip().splitlines()
    if done.returncode == TOO_LARGE:
        check_sizes(path, 'variable', [tuple(pair) for pair in json.loads(reason[-1])])
    if done.returncode == NO_MEMORY:
        raise InputError(f'LOG {str(path)!r}: its reader, scipy.io.loadmat, needs more than '
                         f'its {CHILD_ADDRESS_SPACE} bytes of address space')
    if done.returncode == V73:
        raise InputError(f'LOG {str(path)!r} is a MATLAB v7.3 MAT-file (HDF5), which is not '
                         "read; expected version 7 or older: in MATLAB, save(FILE, '-v7')")
    if done.returncode == SYSTEM:
        raise InputError(f'LOG {str(path)!r}: {reason[-1] if reason else "cannot be read"}')
    if done.returncode:
        why = (reason[-1] if done.returncode == NOT_A_MAT_FILE and reason else
               f'its reader, scipy.io.loadmat, crashed: {_signal_name(-done.returncode)}'
               if done.returncode < 0 else
               f'its reader, scipy.io.loadmat, failed with exit status {done.returncode}')
        raise InputError(f'LOG {str(path)!r}: not a MATLAB MAT-file ({why})')
    head, _, body = done.stdout.partition(b'\n')
    listing = json.loads(head)
    entries = [(name, Entry(tuple(shape), '' if kind in NUMBERS else
                            HOLDS.get(kind, f'MATLAB class {kind}')))
               for name, shape, kind in listing['variables']]
    wanted = resolve(path, 'variable', entries, columns)
    stream = io.BytesIO(body)
    loaded = {name: np.lib.format.read_array(stream, allow_pickle=False)
              for name in listing['loaded']}
    catalog = dict(entries)
    for name in dict.fromkeys(name for name, _ in wanted.values()):
        if name not in loaded or loaded[name].shape != catalog[name].shape:
            raise InputError(f'LOG {str(path)!r}: not a MATLAB MAT-file (variable {name!r} '
                             'does not read as its header says)')
        check_numbers(path, 'variable', name, loaded[name].dtype)
    return columns_of(path, 'variable', catalog, wanted, loaded)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f'signal {number}'
