r"""
CSV text of float64 columns: the shortest decimal that reads back exactly, compiled (numba).

Each value is written with the fewest significant digits that parse back to the same double
(ties: the digits nearest the exact value), found by Ryu (Ulf Adams, "Ryū: fast float-to-string
conversion", PLDI 2018; 64 x 128-bit products on 32-bit halves), and laid out as pyarrow's CSV
writer (double-conversion's shortest mode) lays it out, so the text is the same byte for byte:

- decimal notation for exponents -6 <= e < 10: ``0.000001``, ``0.026006016000000003``,
  ``-24.728830100947544``, ``123456789``, ``0``, ``-0``;
- otherwise ``d.ddde+X`` / ``d.ddde-X``: ``1e-7``, ``1.5e+20``, ``5e-324``;
- ``nan``, ``inf``, ``-inf``.

``format_rows`` writes rows of columns separated by ',' and ended by '\\n' into a byte buffer; it
holds no GIL, so blocks of rows format in parallel threads.
"""
from __future__ import annotations

from numba import njit
import numpy as np

POW5_BITS = 125
MAX_VALUE_BYTES = 26  # '-0.00000' + 17 digits + separator; '-1.7976931348623157e+308,' is 25
_U = np.uint64
_M32 = _U(0xFFFFFFFF)
_S32 = _U(32)
_S52 = _U(52)
_ONE = _U(1)
_FIVE = _U(5)
_TEN = _U(10)
_HUNDRED = _U(100)


def _tables() -> tuple[np.ndarray, np.ndarray]:
    """Ryu's 5^-q (inverse, rounded up) and 5^i, as 125-bit numbers: (lo, hi) uint64 rows."""
    inverse = np.empty((342, 2), np.uint64)
    power = np.empty((326, 2), np.uint64)
    mask = (1 << 64) - 1
    for q in range(342):
        five = 5 ** q
        value = (1 << (five.bit_length() - 1 + POW5_BITS)) // five + 1
        inverse[q] = (value & mask, value >> 64)
    for i in range(326):
        five = 5 ** i
        shift = five.bit_length() - POW5_BITS
        value = five >> shift if shift >= 0 else five << -shift
        power[i] = (value & mask, value >> 64)
    return inverse, power


INVERSE, POWER = _tables()
POWERS_OF_TEN = np.array([10 ** k for k in range(20)], np.uint64)
PAIRS = np.frombuffer(''.join(f'{k:02d}' for k in range(100)).encode(), np.uint8).copy()
_E8 = _U(10 ** 8)
_TWO = _U(2)
_ZERO_CHAR = _U(48)


@njit(cache=True, nogil=True)
def _mul128(a, b):
    """High and low 64 bits of the 128-bit product of two uint64."""
    a_lo, a_hi = a & _M32, a >> _S32
    b_lo, b_hi = b & _M32, b >> _S32
    lo_lo = a_lo * b_lo
    mid = a_hi * b_lo + (lo_lo >> _S32)
    mid2 = a_lo * b_hi + (mid & _M32)
    high = a_hi * b_hi + (mid >> _S32) + (mid2 >> _S32)
    return high, (mid2 << _S32) | (lo_lo & _M32)


@njit(cache=True, nogil=True)
def _mul_shift(m, lo, hi, shift):
    """(m * (hi * 2^64 + lo)) >> shift, for 64 < shift < 128."""
    high0, _ = _mul128(m, lo)
    high1, low1 = _mul128(m, hi)
    total = high0 + low1
    if total < high0:
        high1 += _ONE
    distance = _U(shift - 64)
    return (high1 << (_U(64) - distance)) | (total >> distance)


@njit(cache=True, nogil=True)
def _pow5_factor(value):
    count = 0
    while value % _FIVE == 0:
        value //= _FIVE
        count += 1
    return count


@njit(cache=True, nogil=True)
def _pow5_bits(e):
    return ((e * 1217359) >> 19) + 1


@njit(cache=True, nogil=True, inline='always')
def _shortest(ieee_mantissa, ieee_exponent):
    """Ryu's d2d: the shortest digits (uint64) and decimal exponent of a finite nonzero value."""
    if ieee_exponent == 0:
        e2 = 1 - 1023 - 52 - 2
        m2 = ieee_mantissa
    else:
        e2 = ieee_exponent - 1023 - 52 - 2
        m2 = (_ONE << _S52) | ieee_mantissa
    even = (m2 & _ONE) == 0
    mv = _U(4) * m2
    mm_shift = _ONE if (ieee_mantissa != 0 or ieee_exponent <= 1) else _U(0)
    vm_trailing_zeros = False
    vr_trailing_zeros = False
    if e2 >= 0:
        q = ((e2 * 78913) >> 18) - (1 if e2 > 3 else 0)
        e10 = q
        k = POW5_BITS + _pow5_bits(q) - 1
        i = -e2 + q + k
        lo, hi = INVERSE[q, 0], INVERSE[q, 1]
        vr = _mul_shift(mv, lo, hi, i)
        vp = _mul_shift(mv + _U(2), lo, hi, i)
        vm = _mul_shift(mv - _ONE - mm_shift, lo, hi, i)
        if q <= 21:
            if mv % _FIVE == 0:
                vr_trailing_zeros = _pow5_factor(mv) >= q
            elif even:
                vm_trailing_zeros = _pow5_factor(mv - _ONE - mm_shift) >= q
            elif _pow5_factor(mv + _U(2)) >= q:
                vp -= _ONE
    else:
        q = ((-e2 * 732923) >> 20) - (1 if -e2 > 1 else 0)
        e10 = q + e2
        i = -e2 - q
        k = _pow5_bits(i) - POW5_BITS
        j = q - k
        lo, hi = POWER[i, 0], POWER[i, 1]
        vr = _mul_shift(mv, lo, hi, j)
        vp = _mul_shift(mv + _U(2), lo, hi, j)
        vm = _mul_shift(mv - _ONE - mm_shift, lo, hi, j)
        if q <= 1:
            vr_trailing_zeros = True
            if even:
                vm_trailing_zeros = mm_shift == _ONE
            else:
                vp -= _ONE
        elif q < 63:
            vr_trailing_zeros = (mv & ((_ONE << _U(q)) - _ONE)) == 0
    removed = 0
    last_removed = _U(0)
    if vm_trailing_zeros or vr_trailing_zeros:  # rare: exact ties and bounds
        # Drop digits while the interval allows, then (vm exact) its trailing zeros too.
        while True:
            if vp // _TEN > vm // _TEN:
                vm_trailing_zeros &= vm % _TEN == 0
            elif not (vm_trailing_zeros and vm % _TEN == 0):
                break
            vr_trailing_zeros &= last_removed == 0
            last_removed = vr % _TEN
            vr //= _TEN
            vp //= _TEN
            vm //= _TEN
            removed += 1
        if vr_trailing_zeros and last_removed == _FIVE and vr % _U(2) == 0:
            last_removed = _U(4)  # round half to even
        output = vr
        if (vr == vm and (not even or not vm_trailing_zeros)) or last_removed >= _FIVE:
            output += _ONE
    else:
        round_up = False
        if vp // _HUNDRED > vm // _HUNDRED:
            round_up = vr % _HUNDRED >= _U(50)
            vr //= _HUNDRED
            vp //= _HUNDRED
            vm //= _HUNDRED
            removed += 2
        while vp // _TEN > vm // _TEN:
            round_up = vr % _TEN >= _FIVE
            vr //= _TEN
            vp //= _TEN
            vm //= _TEN
            removed += 1
        output = vr
        if vr == vm or round_up:
            output += _ONE
    return output, e10 + removed


@njit(cache=True, nogil=True, inline='always')
def _digits(mantissa, digits):
    """Write the decimal digits of ``mantissa`` (> 0) into ``digits``, first digit first."""
    count = 1
    while count < 20 and mantissa >= POWERS_OF_TEN[count]:
        count += 1
    end = count
    if mantissa >= _E8:  # the last 8 digits apart: two short dependency chains
        low = mantissa % _E8
        mantissa //= _E8
        for k in range(4):
            pair = low % _HUNDRED
            low //= _HUNDRED
            digits[end - 2 * k - 2] = PAIRS[_TWO * pair]
            digits[end - 2 * k - 1] = PAIRS[_TWO * pair + _ONE]
        end -= 8
    while mantissa >= _HUNDRED:
        pair = mantissa % _HUNDRED
        mantissa //= _HUNDRED
        digits[end - 2] = PAIRS[_TWO * pair]
        digits[end - 1] = PAIRS[_TWO * pair + _ONE]
        end -= 2
    if mantissa >= _TEN:
        digits[end - 2] = PAIRS[_TWO * mantissa]
        digits[end - 1] = PAIRS[_TWO * mantissa + _ONE]
    else:
        digits[end - 1] = _ZERO_CHAR + mantissa
    return count


@njit(cache=True, nogil=True, inline='always')
def _format(bits, out, at, digits):
    """Write the text of the double of IEEE 754 ``bits`` at ``out[at]``; returns the end."""
    exponent_bits = np.int64((bits >> _S52) & _U(0x7FF))
    mantissa_bits = bits & ((_ONE << _S52) - _ONE)
    if exponent_bits == 0x7FF and mantissa_bits != 0:
        out[at], out[at + 1], out[at + 2] = 110, 97, 110  # nan
        return at + 3
    if bits >> _U(63):
        out[at] = 45  # '-'
        at += 1
    if exponent_bits == 0x7FF:
        out[at], out[at + 1], out[at + 2] = 105, 110, 102  # inf
        return at + 3
    if exponent_bits == 0 and mantissa_bits == 0:
        out[at] = 48
        return at + 1
    mantissa, exponent = _shortest(mantissa_bits, exponent_bits)
    count = _digits(mantissa, digits)
    # the value is 0.d1d2... x 10^point, digits[0] = d1
    point = count + exponent
    if -6 < point <= 10:
        if point <= 0:
            out[at], out[at + 1] = 48, 46  # '0.'
            at += 2
            for _ in range(-point):
                out[at] = 48
                at += 1
            for k in range(count):
                out[at] = digits[k]
                at += 1
        elif point >= count:
            for k in range(count):
                out[at] = digits[k]
                at += 1
            for _ in range(point - count):
                out[at] = 48
                at += 1
        else:
            for k in range(count):
                if k == point:
                    out[at] = 46
                    at += 1
                out[at] = digits[k]
                at += 1
        return at
    out[at] = digits[0]
    at += 1
    if count > 1:
        out[at] = 46
        at += 1
        for k in range(1, count):
            out[at] = digits[k]
            at += 1
    power10 = point - 1
    out[at] = 101  # 'e'
    out[at + 1] = 43 if power10 >= 0 else 45
    at += 2
    power10 = abs(power10)
    if power10 >= 100:
        out[at] = 48 + power10 // 100
        at += 1
    if power10 >= 10:
        out[at] = 48 + (power10 // 10) % 10
        at += 1
    out[at] = 48 + power10 % 10
    return at + 1


@njit(cache=True, nogil=True)
def _format_rows(bits, out):
    rows, width = bits.shape[1], bits.shape[0]
    digits = np.empty(20, np.uint8)
    at = 0
    for i in range(rows):
        for j in range(width):
            at = _format(bits[j, i], out, at, digits)
            out[at] = 44 if j + 1 < width else 10  # ',' or '\n'
            at += 1
    return at


def format_rows(columns: np.ndarray) -> memoryview:
    """
    CSV text of the rows of (J, N) float64 ``columns`` (column j = row j of the array).

    Returns the bytes (a view of a buffer) of N lines of J values separated by ','.
    """
    columns = np.ascontiguousarray(columns, dtype=np.float64)
    out = np.empty(columns.size * MAX_VALUE_BYTES, np.uint8)
    used = _format_rows(columns.view(np.uint64), out)
    return memoryview(out[:used])
