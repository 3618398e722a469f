"""
The garbage collector kept out of a real-time loop's steps: ``GcMonitor``.

A full collection of a process that imported rclpy, numba and MuJoCo walks a few hundred
thousand objects: tens of ms with the GIL held, during which no thread of the process runs. A
loop at 1 kHz freezes the heap it starts with and collects the young generations itself,
between two steps.
"""
from __future__ import annotations

import gc
import time


class GcMonitor:
    """
    Counts garbage collections and their pauses (``gc.callbacks``); collects on request.

    A real-time loop (the node's cycles, the simulated robot's steps) freezes the start-up heap
    (``freeze``: ``gc.freeze``, automatic collection off), then calls ``collect`` (young
    generations only) about once per second between two of its steps, on its own thread, so no
    collection lands inside a step. This class measures that the pause is short and that no
    automatic collection happens.
    """

    def __init__(self):
        self.collections = 0
        self.max_pause = 0.0
        self.last_pause = 0.0
        self._start = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        if phase == 'start':
            self._start = time.perf_counter()
        else:
            self.last_pause = time.perf_counter() - self._start
            self.max_pause = max(self.max_pause, self.last_pause)
            self.collections += 1

    def freeze(self, collect: bool = True) -> None:
        """
        Move everything alive now out of the collector's sight; stop automatic collection.

        ``collect``: first a full collection (tens of ms: at start-up, before the first cycle).
        Counters restart, so they describe the control phase only.
        """
        if collect:
            gc.collect()
        gc.freeze()  # cheap: no traversal
        gc.disable()
        self.collections, self.max_pause = 0, 0.0

    @staticmethod
    def collect() -> None:
        gc.collect(1)

    def close(self) -> None:
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)
