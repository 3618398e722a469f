"""
``report.html`` of ``rnea_bag`` (``rnea_ros.bag.htmlreport``): downsampling, a browser test.

The browser test loads the page in headless chromium (``test/harness/browser.py``): no JavaScript
error, no request outside the file, the figure drawn with data, and a joint chosen in the dropdown
drawn as well. It is skipped where chromium is not installed.
"""
from __future__ import annotations

import json

from harness import browser
from harness.bagdata import PANDA, panda_bag, PANDA_JOINTS, sample_times
import numpy as np
import pytest

from rnea_ros.bag import htmlreport
from rnea_ros.bag.cli import main
from rnea_ros.tools import downsample


def test_envelope_keeps_every_peak_and_bounds_the_size():
    n = 1_000_003
    time = np.arange(n) * 1e-3
    values = np.sin(time)
    values[123_457] = 50.0  # one-sample spikes
    values[987_001] = -40.0
    gappy = values.copy()
    gappy[:5000] = np.nan  # not measured at first
    x, reduced = downsample.envelope(time, {'a': values, 'b': gappy}, buckets=500)
    assert x.size == 1000 and reduced['a'].size == 1000
    assert reduced['a'].max() == 50.0 and reduced['a'].min() == -40.0
    assert np.all(np.diff(x) >= 0)
    assert np.isnan(reduced['b'][:2]).all() and np.isfinite(reduced['b'][20:]).all()
    # Each bucket's pair brackets every sample of the bucket.
    starts = downsample.bucket_starts(n, 500)
    for b in (0, 246, 499):
        end = starts[b + 1] if b + 1 < starts.size else n
        assert reduced['a'][2 * b] == values[starts[b]:end].min()
        assert reduced['a'][2 * b + 1] == values[starts[b]:end].max()
    short_x, short = downsample.envelope(time[:100], {'a': values[:100]})
    assert short_x.size == 100 and np.array_equal(short['a'], values[:100])


def test_page_size_does_not_grow_with_the_bag(tmp_path):
    summary = {'bag': 'b', 'run': {'robot': 'r', 'nv': 2, 'floating_base': False,
                                   'joint_states': '/joint_states', 'samples': 0,
                                   'duration': 1.0, 'rate': 1000.0, 'clock': 'header',
                                   'acceleration_source': 'x'},
               'joints': [], 'worst_windows': [], 'warnings': []}
    sizes = []
    for n in (20_000, 400_000):
        time = np.arange(n) * 1e-3
        total = np.column_stack([np.sin(time), np.cos(time)])
        terms = {term: total / 4
                 for term in ('inertial', 'velocity_product', 'gravity', 'external')}
        reduced = downsample.reduce_bag(time, total, terms, total + 0.1)
        path = htmlreport.write_bag_report(tmp_path / f'{n}.html', reduced, ['j1', 'j2'],
                                           ['N·m', 'N·m'], summary)
        sizes.append(path.stat().st_size)
    assert abs(sizes[1] - sizes[0]) < 0.02 * sizes[0]
    assert sizes[1] < 6.0e6  # about 4.7 MB of it is the plotly.js bundle


@pytest.mark.skipif(browser.chromium() is None, reason=browser.SKIP_REASON)
def test_report_opens_in_a_browser_without_errors(tmp_path, capsys):
    n = 3000
    bag = panda_bag(tmp_path / 'bag', sample_times(n, jitter=0.2), effort=np.ones((n, 8)))
    code = main([str(bag), '--urdf', str(PANDA), '--output', str(tmp_path / 'out'),
                 '--no-plots'])
    assert code == 0, capsys.readouterr().err
    page = tmp_path / 'out' / 'report.html'
    text = page.read_text()
    assert '<script src=' not in text  # plotly.js is inlined
    summary = json.loads((tmp_path / 'out' / 'summary.json').read_text())
    assert 'report.html' in summary['outputs']
    report = browser.load_page(page)
    assert report.errors == []
    assert report.external_requests == []
    [figure] = report.figures
    assert figure['buttons'] == len(PANDA_JOINTS)  # the joint selector
    # Joint 1: predicted + measured, the non-zero terms above/below zero + total, residual.
    assert figure['visible'] >= 6 and figure['points'] > 6 * 1000
    assert figure['svg'] >= 1 and figure['paths'] >= 6
    [chosen] = report.after_selection
    assert chosen['visible'] >= 6 and chosen['paths'] >= 6
    assert not set(chosen['shown']) & set(figure['shown'])  # another joint's traces
    for joint in PANDA_JOINTS:
        assert f'<td>{joint}</td>' in text  # the summary table
