"""The machine's floor: a bare loop's wake-up lateness, the line the benches print."""
import re

import pytest

from rnea_ros.timing.floor import wake_up_lateness


def test_a_bare_loop_reports_its_lateness_percentiles_in_order():
    floor = wake_up_lateness(rate=1000.0, seconds=0.2)
    # A sleep to an absolute deadline never returns before it: lateness is never negative.
    assert 0.0 <= floor.p50 <= floor.p99 <= floor.worst
    line = floor.describe()
    assert re.fullmatch(
        r'machine floor: a bare 1 kHz (SCHED_FIFO|normal \(SCHED_FIFO not permitted\)) sleep '
        r'loop over 0.2 s wakes up late by p50 \d+ µs, p99 \d+ µs, max \d+ µs '
        r'\(1-minute load \d+\.\d\d\)', line), line


@pytest.mark.parametrize('rate, seconds', [(0.0, 1.0), (1000.0, -1.0)])
def test_a_rate_or_duration_that_is_not_positive_is_refused(rate, seconds):
    with pytest.raises(ValueError, match='rate and seconds must be positive'):
        wake_up_lateness(rate=rate, seconds=seconds)
