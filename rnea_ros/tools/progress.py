"""Progress bars on stderr for long bags and fleets: tqdm's, behind the tools' small interface."""
from __future__ import annotations

import sys
from typing import TextIO

from tqdm import tqdm

INTERVAL = 0.25  # s between redraws


class Progress:
    """
    ``progress(done)`` moves a tqdm bar to ``done`` of ``total`` (redrawn every 0.25 s at most).

    Disabled (every call a no-op, nothing written) when ``enabled`` is False; ``close()`` draws
    the bar full and ends the line.
    """

    def __init__(self, label: str, total: int, enabled: bool, stream: TextIO | None = None,
                 unit: str = 'msg'):
        self.total = max(int(total), 1)
        self._bar = tqdm(total=self.total, desc=label, disable=not enabled, unit=unit,
                         unit_scale=self.total >= 10_000, mininterval=INTERVAL,
                         dynamic_ncols=True, file=stream if stream is not None else sys.stderr)

    def __call__(self, done: int) -> None:
        self._bar.update(min(done, self.total) - self._bar.n)

    def close(self) -> None:
        self._bar.update(self.total - self._bar.n)
        self._bar.close()
