"""
Argument and result checks of ``RobotModel``: each refusal is an ``InputError`` that names.

The rules (the README's "Input rules"):

- q, v, a, gravity, f_ext values and the batch matrices hold real numbers: Python or numpy
  integers and floats, in arrays, lists or tuples, converted to float64. Booleans, complex
  numbers, strings (even numeric ones) and other objects are refused, never converted.
- Exact shapes, finite values; a free-flyer quaternion within ``QUATERNION_TOLERANCE`` of unit
  norm (then normalised).
- ``f_ext`` is a mapping (link name -> 6 numbers); ``threads`` is None or a positive integer.
- Results are finite: an overflow raises ``InputError('<function>: the <result> is not finite
  (inputs too large?)')`` rather than returning NaN or inf.
"""
from __future__ import annotations

from collections.abc import Mapping
import math
import numbers
import reprlib

from numba import get_num_threads
import numpy as np

from rnea_ros.dynamics.joints import QUATERNION_TOLERANCE
from rnea_ros.errors import InputError


def _is_real(item) -> bool:
    return isinstance(item, numbers.Real) and not isinstance(item, (bool, np.bool_))


def real_array(value, name: str, expected: str, copy: bool = True) -> np.ndarray:
    """
    Return ``value`` as a float64 C-contiguous array if it holds real numbers only.

    ``expected`` completes the message 'NAME: expected EXPECTED, got ...' of a refusal, which
    names the offending dtype or element. ``copy=False`` returns a writeable float64
    C-contiguous array as it is.
    """
    if isinstance(value, np.ndarray) and value.dtype.kind in 'iuf':
        array = np.array(value, dtype=np.float64, order='C', copy=True if copy else None)
        return array if array.flags.writeable else array.copy()
    if isinstance(value, np.ndarray) and value.dtype.kind != 'O':
        kind = {'U': 'str', 'S': 'bytes'}.get(value.dtype.kind, value.dtype.name)
        raise InputError(f'{name}: expected {expected}, got a {kind} array')
    try:
        items = np.array(value, dtype=object)
    except ValueError:  # e.g. a ragged list
        raise InputError(f'{name}: expected {expected}, got {type(value).__name__}') from None
    # A Python loop, but only for lists and object arrays: arrays of numbers never come here.
    for item in items.flat:
        if _is_real(item):
            continue
        if items.ndim == 0:
            raise InputError(f'{name}: expected {expected}, got {type(value).__name__}')
        raise InputError(f'{name}: expected {expected}, got a {type(value).__name__} holding '
                         f'{type(item).__name__} {reprlib.repr(item)}')
    return np.array(items, dtype=np.float64, order='C')


def vector(value, size: int, name: str) -> np.ndarray:
    """Return a float64 C-contiguous copy of ``value``, checked for kind, size and finiteness."""
    array = real_array(value, name, f'{size} real numbers')
    if array.shape != (size,):
        raise InputError(f'{name}: expected shape ({size},), got {array.shape}')
    values = array.tolist()  # Python floats: a cheaper finiteness test than numpy's for small n
    if not all(map(math.isfinite, values)):
        bad = next(k for k, x in enumerate(values) if not math.isfinite(x))
        raise InputError(f'{name}[{bad}] is {array[bad]}: values must be finite')
    return array


def matrix(value, width: int, name: str, rows: int | None = None) -> np.ndarray:
    """Return a writeable float64 C-contiguous (rows, width) array of ``value`` (rows: any N)."""
    expected = f'({"N" if rows is None else rows}, {width})'
    array = real_array(value, name, f'real numbers of shape {expected}', copy=False)
    if array.ndim != 2 or array.shape[1] != width or (rows is not None
                                                      and array.shape[0] != rows):
        raise InputError(f'{name}: expected shape {expected}, got {array.shape}')
    return array


def state(joints, nq: int, nv: int, q, v, a):
    """Return checked float64 copies of (q, v, a); quaternions must be of unit norm."""
    q = vector(q, nq, 'q')
    v = vector(v, nv, 'v')
    a = vector(a, nv, 'a')
    for joint in joints:
        if joint.nq == 7:
            quaternion = q[joint.idx_q + 3:joint.idx_q + 7]
            norm = float(np.linalg.norm(quaternion))
            if abs(norm - 1.0) > QUATERNION_TOLERANCE:
                raise InputError(
                    f'q[{joint.idx_q + 3}:{joint.idx_q + 7}] (quaternion of joint '
                    f'{joint.name!r}) has norm {norm:.6g}: expected a unit quaternion')
    return q, v, a


def samples(joints, Q, V, A) -> None:
    """Raise InputError naming the first sample that ``state`` would refuse."""
    ok = np.isfinite(Q).all(axis=1) & np.isfinite(V).all(axis=1) & np.isfinite(A).all(axis=1)
    for joint in joints:
        if joint.nq == 7:
            quaternion = Q[:, joint.idx_q + 3:joint.idx_q + 7]
            norm = np.sqrt(np.einsum('ij,ij->i', quaternion, quaternion))
            ok &= np.abs(norm - 1.0) <= QUATERNION_TOLERANCE
    if ok.all():
        return
    k = int(np.argmin(ok))
    try:
        state(joints, Q.shape[1], V.shape[1], Q[k], V[k], A[k])
    except InputError as exc:
        raise InputError(f'sample {k}: {exc}') from None


def thread_count(threads) -> int:
    """Return the threads a batch may use: ``threads``, or numba's thread count for None."""
    if threads is None:
        return get_num_threads()
    if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)) \
            or threads < 1:
        raise InputError(f'threads: expected a positive integer or None, got {threads!r}')
    return int(threads)


def wrench_mapping(f_ext) -> Mapping | None:
    """Return ``f_ext`` if it is None or a mapping link name -> wrench; refuse anything else."""
    if f_ext is not None and not isinstance(f_ext, Mapping):
        raise InputError('f_ext: expected a mapping link name -> [fx fy fz tx ty tz], got '
                         f'{type(f_ext).__name__}')
    return f_ext


def finite(result: np.ndarray, function: str, what: str) -> np.ndarray:
    """Return ``result`` if every entry is finite; else raise InputError naming ``function``."""
    if not np.isfinite(result).all():
        raise InputError(f'{function}: the {what} is not finite (inputs too large?)')
    return result


def finite_samples(result: np.ndarray) -> None:
    """Raise InputError naming the first sample (row) of a batch result that is not finite."""
    ok = np.isfinite(result).all(axis=1)
    if not ok.all():
        raise InputError(f'sample {int(np.argmin(ok))}: the torque is not finite '
                         '(inputs too large?)')
