"""The progress bar of long bags: drawn in place when enabled, silent otherwise."""
from __future__ import annotations

import io

from rnea_ros.bag.progress import Progress


def test_progress_draws_and_ends_the_line():
    stream = io.StringIO()
    progress = Progress('reading', 2_000_000, True, stream=stream)
    progress(500_000)
    progress.close()
    text = stream.getvalue()
    assert text.startswith('\rreading') and ' 25%  500k/2.0M' in text
    assert text.endswith('\n') and '100%  2.0M/2.0M' in text


def test_disabled_progress_prints_nothing():
    stream = io.StringIO()
    progress = Progress('reading', 10, False, stream=stream)
    progress(5)
    progress.close()
    assert stream.getvalue() == ''
