"""CSV number text: shortest round trip, the same bytes as pyarrow's CSV writer."""
from __future__ import annotations

import io

import numpy as np
import pytest

from rnea_ros.bag.floattext import format_rows

SPECIAL = [0.0, -0.0, 1.0, -1.5, 0.1, 100.0, 1e-7, 1e-6, 1.234e-5, 2.5e-6, 9.999999e-7, 1e9,
           123456789.0, 1e10, 1.23456789012e11, 1e15, 1e16, 1.5e20, 1e21, 1e23,
           123456789012345680000.0, 5e-324, 5e-310, 2.2250738585072014e-308,
           1.7976931348623157e308, 2.0 ** 1023, 9007199254740993.0, 2 / 3, 0.026006016000000003,
           -24.728830100947544, np.nan, np.inf, -np.inf]


def test_layout_of_special_values():
    text = bytes(format_rows(np.array([SPECIAL[:8]]))).decode().split('\n')
    assert text[:8] == ['0', '-0', '1', '-1.5', '0.1', '100', '1e-7', '0.000001']
    line = bytes(format_rows(np.array([[1e10, 5e-324, np.nan, -np.inf]]))).decode()
    assert line == '1e+10\n5e-324\nnan\n-inf\n'
    assert bytes(format_rows(np.array([[1.5, -2.0], [0.25, 3e-9]]))) == b'1.5,0.25\n-2,3e-9\n'


def test_same_text_as_pyarrow_and_reads_back_exactly():
    pa = pytest.importorskip('pyarrow')
    pacsv = pytest.importorskip('pyarrow.csv')
    rng = np.random.default_rng(3)
    # Random bit patterns cover subnormals, huge values and every exponent; the rest are
    # values like a bag's: seconds and torques of a few magnitudes.
    bits = rng.integers(0, 2 ** 63, size=20000, dtype=np.int64).view(np.float64)
    typical = rng.normal(size=20000) * 10.0 ** rng.integers(-8, 12, size=20000)
    values = np.concatenate([SPECIAL, bits, -bits[:500], typical, np.arange(5000) * 1e-3])
    sink = io.BytesIO()
    pacsv.write_csv(pa.table({'x': values}), sink, pacsv.WriteOptions(include_header=False))
    ours = bytes(format_rows(values[None, :]))
    assert ours == sink.getvalue()
    back = np.array([float(text) for text in ours.decode().split()])
    np.testing.assert_array_equal(back, values)
