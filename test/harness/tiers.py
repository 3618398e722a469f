"""The tier constants that the conftest and the tiers' own tests share (see test/conftest.py)."""
from pathlib import Path

# Setup + call times of the tests [s], stored by scripts/test.sh --store-durations.
DURATIONS = Path(__file__).resolve().parents[1] / 'durations.json'
SLOW_SECONDS = 1.0  # a test that took longer (measured on a 2-core machine) is slow
# Tests with one of these markers run alone, after the others (scripts/test.sh's serial phase):
# other tests running beside them would load the machine they judge.
SERIAL_MARKERS = ('realtime',)
