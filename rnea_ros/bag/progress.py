"""A one-line progress bar on stderr for long bags (no dependency)."""
from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 30
INTERVAL = 0.25  # s between redraws


class Progress:
    """
    ``progress(done)`` redraws '<label> [####......]  45%  1.6M/3.6M  3.2 s' in place.

    Disabled (every call a no-op) when ``enabled`` is False; ``close()`` ends the line.
    """

    def __init__(self, label: str, total: int, enabled: bool, stream: TextIO | None = None):
        self.label, self.total, self.enabled = label, max(int(total), 1), enabled
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.monotonic()
        self.last = -INTERVAL
        self.done = 0

    def __call__(self, done: int) -> None:
        self.done = done
        now = time.monotonic()
        if self.enabled and now - self.last >= INTERVAL:
            self.last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        fraction = min(1.0, self.done / self.total)
        bar = '#' * int(WIDTH * fraction)
        self.stream.write(f'\r{self.label:<12} [{bar:<{WIDTH}}] {100 * fraction:3.0f}%  '
                          f'{_count(self.done)}/{_count(self.total)}  {now - self.start:.1f} s')
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.done = self.total
            self._draw(time.monotonic())
            self.stream.write('\n')
            self.stream.flush()


def _count(n: int) -> str:
    return f'{n / 1e6:.1f}M' if n >= 1_000_000 else f'{n / 1e3:.0f}k' if n >= 10_000 else str(n)
