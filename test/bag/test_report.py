"""Tables and summary of the bag tool: exact round trips, the fallback writer, worst windows."""
from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.bag import report


@pytest.mark.parametrize('pyarrow', [True, False])
def test_csv_reads_back_exactly(tmp_path, monkeypatch, pyarrow):
    monkeypatch.setattr(report, 'have_pyarrow', lambda: pyarrow)
    rng = np.random.default_rng(0)
    columns = {'time': np.arange(1000) * 1e-3, 'a.fx': rng.normal(size=1000) * 1e3,
               'b': rng.normal(size=1000) * 1e-7}
    path = report.write_table(tmp_path / 'x.csv', columns)
    assert path.read_text().split('\n', 1)[0] == 'time,a.fx,b'
    back = report.read_table(path)
    for name, values in columns.items():
        np.testing.assert_array_equal(back[name], values)


def test_worst_windows_without_measured_effort_rank_by_effort_limit():
    time = np.arange(3000) * 1e-3
    total = np.zeros((3000, 2))
    total[1500, 0] = 8.0   # 8 / 10 of the limit in window [1, 2)
    total[2500, 1] = 50.0  # 50 / 100 in window [2, 3)
    summary = report.summarize(time, ['j1', 'j2'], ['N·m', 'N·m'], total,
                               {'gravity': total}, None, np.array([10.0, 100.0]))
    first, second = summary['worst_windows'][:2]
    assert (first['kind'], first['start'], first['worst_joint']) == (
        'peak_over_limit', 1.0, 'j1')
    assert first['score'] == pytest.approx(0.8) and second['worst_joint'] == 'j2'
    assert summary['joints'][1]['peak_time'] == pytest.approx(2.5)


def test_residual_statistics_skip_unmeasured_samples():
    time = np.arange(4) * 1.0
    residual = np.array([[1.0, np.nan], [-1.0, np.nan], [np.nan, np.nan], [1.0, np.nan]])
    summary = report.summarize(time, ['j1', 'j2'], ['N·m', 'N'], np.ones((4, 2)),
                               {'gravity': np.ones((4, 2))}, residual, np.full(2, np.inf))
    j1, j2 = summary['joints']
    assert j1['rms_residual'] == pytest.approx(1.0) and j1['measured_fraction'] == 0.75
    assert j2['rms_residual'] is None and j2['peak_residual'] is None
    assert j1['peak_over_limit'] is None
