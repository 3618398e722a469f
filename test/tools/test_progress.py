"""The progress bar of long bags: drawn in place when enabled, silent otherwise."""
from __future__ import annotations

import io

from rnea_ros.tools.progress import Progress


def test_progress_draws_and_ends_the_line():
    stream = io.StringIO()
    progress = Progress('reading', 2_000_000, True, stream=stream)
    progress(500_000)
    progress.close()
    text = stream.getvalue()
    assert text.startswith('\rreading:   0%|') and 'msg/s' in text
    assert text.endswith('\n') and 'reading: 100%|' in text and '2.00M/2.00M' in text


def test_a_few_items_are_counted_whole():
    stream = io.StringIO()
    progress = Progress('bags', 8, True, stream=stream, unit='bag')
    progress(3)
    progress.close()
    assert 'bags: 100%|' in stream.getvalue() and '8/8' in stream.getvalue()


def test_disabled_progress_prints_nothing():
    stream = io.StringIO()
    progress = Progress('reading', 10, False, stream=stream)
    progress(5)
    progress.close()
    assert stream.getvalue() == ''
