"""
The observer's queue of joint_states samples: every received sample is integrated, in stamp order.

The torque answer uses the latest merged state; the momentum observer needs every sample, or its
integral over a gap (the trapezoid of beta over several periods) shows as a spike of the
residual. ``SampleQueue`` keeps a copy of each accepted sample (stamp [s], the merged q, v and
measured effort, whether the message carried efforts, its steady-clock arrival [s]) in
preallocated rows until ``drain`` hands them to the observer sorted by stamp (a stable sort: two
publishers' samples that arrived out of order within one batch are integrated in order; a clock
step within the batch is kept where it came).

``capacity`` rows (the node's ``observer_queue`` parameter); a sample pushed into a full queue
pushes out the oldest one, which is lost to the observer and counted in ``overflowed``. The
node drains the queue after each batch of joint_states messages taken from the middleware
(before it answers the newest one), so the queue overflows only when one batch holds more than
``capacity`` messages. Samples whose stamp is not newer than the last integrated one are counted
by the observer itself (``ObserverOutput``: duplicates and out-of-order samples).
"""
from __future__ import annotations

import numpy as np

from rnea_ros.control.declaration import MAX_QUEUE
from rnea_ros.control.observer_outputs import CLOCK_STEP


class SampleQueue:
    """Preallocated rows of joint_states samples for the observer (module docstring)."""

    def __init__(self, capacity: int, nq: int, nv: int, n_effort: int):
        if not 1 <= capacity <= MAX_QUEUE:
            raise ValueError(f'observer_queue: expected 1 to {MAX_QUEUE} samples, got '
                             f'{capacity}')
        self.capacity = capacity
        self.stamps = np.zeros(capacity)
        self.q = np.zeros((capacity, nq))
        self.v = np.zeros((capacity, nv))
        self.effort = np.zeros((capacity, n_effort))
        self.with_effort = np.zeros(capacity, dtype=bool)
        self.arrival = np.zeros(capacity)
        self._head = 0  # row of the oldest queued sample
        self.size = 0
        self.pushed = 0  # samples pushed, ever
        self.overflowed = 0  # samples pushed out of a full queue (never integrated)

    def push(self, stamp: float, q: np.ndarray, v: np.ndarray, effort: np.ndarray | None,
             with_effort: bool, arrival: float) -> None:
        """Copy one sample in; a full queue loses its oldest sample (counted)."""
        if self.size == self.capacity:
            self._head = (self._head + 1) % self.capacity
            self.size -= 1
            self.overflowed += 1
        row = (self._head + self.size) % self.capacity
        self.stamps[row] = stamp
        self.q[row] = q
        self.v[row] = v
        if effort is not None and with_effort:
            self.effort[row] = effort
        self.with_effort[row] = with_effort and effort is not None
        self.arrival[row] = arrival
        self.size += 1
        self.pushed += 1

    def drain(self, step: float) -> tuple[int, ...] | list[int]:
        """
        Return the queued rows' indices in stamp order and empty the queue.

        Sorted (stably) within each run of samples whose consecutive stamps, in arrival order,
        differ by at most ``step`` [s]: a clock step inside the batch (a sim time reset) keeps
        the samples of either clock in the order they came, for the observer to see one step.
        """
        size, head = self.size, self._head
        self.size, self._head = 0, 0
        if size <= 1:  # the usual case: no sort
            return (head,) if size else ()
        rows = (head + np.arange(size)) % self.capacity
        stamps = self.stamps[rows]
        runs = np.flatnonzero(np.abs(np.diff(stamps)) > step) + 1
        order = []
        for part in np.split(np.arange(size), runs):
            order += rows[part[np.argsort(stamps[part], kind='stable')]].tolist()
        return order

    def integrate(self, observer) -> None:
        """Feed every queued sample to ``observer`` (an ``ObserverOutput``) in stamp order."""
        for row in self.drain(CLOCK_STEP):
            observer.sample(self.stamps[row], self.q[row], self.v[row], self.with_effort[row],
                            self.arrival[row], self.effort[row])

    def status(self) -> dict[str, str]:
        """Return the queue's diagnostics (key -> value)."""
        values = {'observer queue': f'{self.capacity} samples, {self.pushed} queued'}
        if self.overflowed:
            values['observer queue overflowed (samples not integrated)'] = str(self.overflowed)
        return values
