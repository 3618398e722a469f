"""
The node's data path: the installed core, its output messages, and each cycle run and published.

``Cycles`` owns what the node's threads share: the lock that guards the control state (the
``ControlCore`` and the preallocated messages), the publish lock that deactivation takes, the
active flag, and the cycle statistics. The inputs thread, the control thread and the executor
reach the control state only through it: ``lock`` and ``core`` to merge an input, ``run`` and
``run_locked`` + ``publish`` for a cycle, ``install`` to switch to a new core between two
cycles, ``activate`` / ``deactivate`` for the lifecycle.

A cycle computes into the preallocated messages under the lock, then publishes joint_torques
first (the latency path), then feedforward_effort, then the wrenches, under the publish lock
and only while active: once ``deactivate`` returned, nothing is published. Young-generation
garbage is collected once per ``GC_PERIOD``, right after a cycle's publishing, on the cycle's
own (real-time) thread: there a collection cannot be preempted halfway by other processes while
holding the GIL, as it could on the executor thread.
"""
from __future__ import annotations

from collections.abc import Callable
import threading
import time

from rnea_ros.control.core import ControlCore
from rnea_ros.control.diagnostics import CycleStats
from rnea_ros.node.messages import payload
from rnea_ros.timing import GcMonitor

__all__ = ['Cycles', 'GC_PERIOD']

GC_PERIOD = 1.0  # s between two young-generation garbage collections (see GcMonitor)


class Cycles:
    """
    The control state the node's threads share, and its cycles (module docstring).

    ``ros_time()``: the node's ROS time in seconds; ``now_msg()``: it as a builtin Time (the
    stamp of an answer to unstamped joint_states).
    """

    def __init__(self, rate: float, ros_time: Callable[[], float], now_msg: Callable):
        self.lock = threading.Lock()  # guards the core and the output messages
        # Held while a cycle publishes, and to deactivate: nothing is published once
        # deactivate returned.
        self.publish_lock = threading.Lock()
        self.active = False
        self.core: ControlCore | None = None
        self.messages = None  # the core's OutputMessages
        self.observer_messages = None  # its ObserverMessages (observer on)
        self.publications: list[tuple] = []  # (publisher, message) of a cycle, in order
        self._observed: list[tuple] | None = None  # the same and the observer's (``install``)
        self.stats = CycleStats(rate)
        self.gc_monitor = GcMonitor()
        self.last_cycle = time.monotonic()
        self._next_collection = time.monotonic() + GC_PERIOD
        self._ros_time, self._now_msg = ros_time, now_msg

    def activate(self) -> None:
        with self.publish_lock, self.lock:
            self.active = True

    def deactivate(self) -> None:
        """Stop publishing: once this returns, no cycle publishes (it waits for one under way)."""
        with self.publish_lock, self.lock:
            self.active = False

    def install(self, core: ControlCore, messages, publications: list[tuple],
                observer_messages) -> None:
        """Switch to ``core`` and its messages between two cycles; the latest inputs carry over."""
        with self.lock:
            if self.core is not None:
                core.take_state_from(self.core)
            self.messages, self.observer_messages = messages, observer_messages
            self.publications = publications
            # A cycle's pairs with a valid residual and no collision change, made once.
            self._observed = (None if observer_messages is None
                              else publications + observer_messages.valid_pairs)
            self.core = core
        # The model and messages live as long as the node: out of the collector's sight (no
        # full collection here: a model can arrive between two cycles).
        self.gc_monitor.freeze(collect=False)

    def clear(self) -> None:
        """Release the core and its messages (cleanup)."""
        with self.lock:
            self.core, self.messages, self.observer_messages = None, None, None
            self.publications, self._observed = [], None

    def run(self) -> None:
        """Run one cycle from the latest inputs and publish it (nothing while inactive)."""
        start = time.monotonic()
        with self.lock:
            core = self.core
            if core is None or not self.active:
                return
            messages = self.run_locked(core, start)
        self.publish(messages, start)

    def run_locked(self, core: ControlCore, now: float):
        """
        Do a cycle's work under the lock; return what ``publish`` is to publish, or None.

        The (publisher, message) pairs in order (joint_torques, feedforward_effort, wrenches:
        the ones of this model, even if another is installed right after).
        """
        self.last_cycle = now
        desired = core.state.desired
        # ROS time only matters to sample a multi-point trajectory (and costs ~4 us).
        ros_time = self._ros_time() if desired is not None and not desired.constant else 0.0
        observer = self.observer_messages
        if not core.cycle(now, ros_time):  # fault_output none: a collision change still goes
            return None if observer is None else observer.collision_change(core.observer)
        stamp = core.state.joints.stamp
        if stamp is None:
            stamp = self._now_msg()
        self.messages.stamp(core, stamp)
        if observer is None:
            return self.publications
        output = core.observer
        if output.valid and not output.changed:  # the usual cycle: no list built
            observer.stamp_valid(output, stamp)
            return self._observed
        return self.publications + observer.publications(output, stamp)

    def publish(self, messages, start: float) -> None:
        """Publish a cycle's messages in order, record its time since ``start``, collect."""
        if messages is not None:
            with self.publish_lock:  # uncontended but at a deactivation
                if self.active:
                    for publisher, msg in messages:
                        publisher.publish(payload(msg))
        end = time.monotonic()
        self.stats.record(end - start)
        self._measure_prediction()
        self.collect_garbage(end)

    def _measure_prediction(self) -> None:
        """After a cycle: the one-step prediction error of the latest samples, if pending."""
        core = self.core
        if core is not None and core.prediction.pending:  # a read without the lock: a hint
            with self.lock:
                if self.core is core:
                    core.prediction.measure_pending()

    def collect_garbage(self, now: float) -> None:
        """Collect the young generation once per ``GC_PERIOD`` (module docstring)."""
        if now >= self._next_collection:
            self._next_collection = now + GC_PERIOD
            self.gc_monitor.collect()

    def collect_if_idle(self, now: float) -> None:
        """Collect from the executor when no cycle ran for a period (no model yet)."""
        if now > self._next_collection + GC_PERIOD:
            self.collect_garbage(now)
