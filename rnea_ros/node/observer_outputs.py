"""
The node's observer outputs without ROS: external torques, estimated wrenches, collisions.

``ObserverOutput`` wraps the library's momentum observer
(``rnea_ros.observer.momentum.MomentumObserver``), wrench estimate
(``rnea_ros.observer.wrench.estimate_wrench``) and collision detector
(``rnea_ros.observer.collision.CollisionDetector``) for one model of the node. ``sample`` is
called once per accepted joint_states message (not once per cycle: a cycle may reuse the
previous sample, and integrating a repeat would raise the residual's noise), with the message's
stamp in seconds; the observer integrates with dt from the stamps and does nothing for a
repeated or older stamp. The measured effort is the one merged by name from the messages
(``JointStateInput.track_effort``); a message without efforts is not integrated.

Collisions: a joint with a ``collision_threshold.<joint>`` is watched (|r| beyond it); the
others are not. ``collision`` is what the node publishes: with ``collision_reaction`` ``none``
it follows the thresholds; with ``zero`` or ``hold_gravity`` it latches at the first detection,
``reacting`` is True (the node's cycle then publishes that output) until ``reset``.

A sample the observer cannot integrate (a NaN effort, say) or a non-finite residual is a fault:
the sample is counted, the observer restarts from the next sample (which returns r = 0), and
``valid`` is False until then, so that neither external_torques nor the wrenches are published
(never NaN); collision keeps its value. Diagnostics: the thresholds, the collision state, the
number of detections and the latest one (joint, start stamp, end, peak |r|).
"""
from __future__ import annotations

import numpy as np

from rnea_ros.errors import InputError
from rnea_ros.node.safety import all_finite
from rnea_ros.observer.collision import CollisionDetector
from rnea_ros.observer.momentum import MomentumObserver
from rnea_ros.observer.wrench import estimate_wrench

THRESHOLD_PREFIX = 'collision_threshold.'


def stamp_seconds(stamp, now: float) -> float:
    """Return a builtin_interfaces/Time (``sec``, ``nanosec``) in seconds; None: ``now``."""
    if stamp is None:
        return now
    return stamp.sec + 1e-9 * stamp.nanosec


class ObserverOutput:
    """The observer, wrench estimates and collision state of one model (module docstring)."""

    def __init__(self, model, settings, joint_model, joint_names, effort: np.ndarray):
        self.model = model
        self.settings = settings
        self.joint_names = tuple(joint_names)
        self.observer = MomentumObserver(model, settings.observer_gain,
                                         measured_effort=settings.measured_effort,
                                         joint_model=joint_model)
        self.effort = effort  # the merged measured efforts (joint order = v order: fixed base)
        self.links = tuple(settings.wrench_estimation_links)
        # Contact points of pure forces (None: a wrench), as float64 arrays (the fast path).
        self.points = [None if settings.wrench_points.get(link) is None else
                       np.array(settings.wrench_points[link], dtype=np.float64)
                       for link in self.links]
        # Outputs (``bind_residual`` may replace the residual by a message's array).
        self.residual = np.zeros(model.nv)
        self.wrenches = np.zeros((len(self.links), 6))
        self._index = {name: model.joint(name).idx_v for name in self.joint_names}
        self.thresholds = dict(settings.collision_thresholds)  # joint -> threshold
        self._watch()
        self.valid = False  # the residual holds a finite value to publish
        self.samples = 0  # integrated samples
        self.not_newer = 0  # samples whose stamp was not newer than the last one (not integrated)
        self._last_stamp: float | None = None
        self.without_effort = 0  # joint_states messages without efforts
        self.non_finite = 0  # samples the observer could not integrate (non-finite)
        self.collision = False  # the published value
        self.changed = True  # collision to be published (its first value too)
        self.latched = False
        self.detections = 0
        self._last_event: dict | None = None  # of a detector replaced or reset

    def _watch(self) -> None:
        """Build the detector over the joints that have a threshold (None: no joint has)."""
        watched = [name for name in self.joint_names if name in self.thresholds]
        self._watched = np.array([self._index[name] for name in watched], dtype=np.int64)
        self._watched_r = np.zeros(len(watched))
        self.detector = (CollisionDetector([self.thresholds[name] for name in watched],
                                           watched) if watched else None)

    def bind_residual(self, residual: np.ndarray) -> None:
        """Write the residual into ``residual`` (a message's effort array) from now on."""
        if residual.dtype != np.float64 or residual.shape != self.residual.shape:
            raise ValueError(f'residual: expected a float64 array of shape '
                             f'{self.residual.shape}')
        residual[:] = self.residual
        self.residual = residual

    # ------------------------------------------------------------------ parameters
    def apply(self, parameters) -> None:
        """Take the live ``observer_gain`` and ``collision_threshold.<joint>`` among these."""
        for parameter in parameters:
            if parameter.name == 'observer_gain':
                self.observer.gain = parameter.value
            elif parameter.name.startswith(THRESHOLD_PREFIX):
                joint = parameter.name[len(THRESHOLD_PREFIX):]
                if joint in self._index:
                    self.set_threshold(joint, parameter.value)

    def set_threshold(self, joint: str, value: float | None) -> None:
        """Take a new ``collision_threshold.<joint>`` (live; None: the joint is not watched)."""
        if value is None:
            self.thresholds.pop(joint, None)
        else:
            self.thresholds[joint] = value
        self._remember_event()
        self._watch()

    # ------------------------------------------------------------------ samples
    def sample(self, stamp: float, q: np.ndarray, v: np.ndarray, with_effort: bool) -> None:
        """Integrate one joint_states sample stamped ``stamp`` [s] (see the module docstring)."""
        if not with_effort:
            self.without_effort += 1
            return
        if self._last_stamp is not None and stamp <= self._last_stamp:
            self.not_newer += 1  # as the observer would: r stays (unstamped publishers show)
            return
        try:
            r = self.observer.update(stamp, q, v, self.effort)
        except InputError:  # a non-finite effort (or momentum): start again from the next
            r = None
        if r is None or not all_finite(r):
            self.non_finite += 1
            self.observer.reset()
            self.valid = False
            self._last_stamp = None
            return
        self._last_stamp = stamp
        self.samples += 1
        self.residual[:] = r
        for k, link in enumerate(self.links):
            wrench = estimate_wrench(self.model, q, r, link, point=self.points[k])
            self.wrenches[k] = wrench if all_finite(wrench) else 0.0
        self.valid = True
        self._detect(stamp, r)

    def _detect(self, stamp: float, r: np.ndarray) -> None:
        detected = False
        if self.detector is not None:
            np.take(r, self._watched, out=self._watched_r)
            was = self.detector.active
            detected = self.detector.update(stamp, self._watched_r)
            if detected and not was:
                self.detections += 1
        reaction = self.settings.collision_reaction != 'none'
        self.latched = reaction and (self.latched or detected)
        collision = detected or self.latched
        if collision != self.collision:
            self.collision = collision
            self.changed = True

    @property
    def reacting(self) -> bool:
        """Tell whether the published effort is the ``collision_reaction`` output now."""
        return self.latched and self.settings.collision_reaction != 'none'

    def reset(self) -> bool:
        """Clear a collision (``~/reset_collision``); True if one was active."""
        active = self.collision
        self.latched = False
        self._remember_event()
        if self.detector is not None:
            self.detector.reset()
        if self.collision:
            self.collision = False
            self.changed = True
        return active

    def _remember_event(self) -> None:
        """Keep the detector's latest event for the diagnostics (its reset forgets them)."""
        self._last_event = self.last_event

    @property
    def last_event(self) -> dict | None:
        """Return the latest detection (start, end: stamps [s]; joint; peak |r|), or None."""
        if self.detector is not None and self.detector.events:
            return self.detector.events[-1]
        return self._last_event

    def take_state_from(self, other: ObserverOutput) -> None:
        """
        Go on from ``other`` over a new model with the same joints (a payload set, a reload).

        The observer keeps integrating (``MomentumObserver.set_model``: the change of model is
        not taken for an external torque, r goes on); a latched collision and the counts stay.
        """
        try:
            other.observer.set_model(self.model)
        except InputError:
            pass  # other joints: this model's observer starts afresh
        else:
            other.observer.gain = self.observer.gain
            self.observer = other.observer
            self.residual[:] = other.residual
            self.wrenches[:] = other.wrenches
            self.valid, self.samples = other.valid, other.samples
            self.not_newer, self._last_stamp = other.not_newer, other._last_stamp
        self.latched, self.collision, self.changed = other.latched, other.collision, True
        self.detections, self._last_event = other.detections, other.last_event
        self.non_finite, self.without_effort = other.non_finite, other.without_effort

    # ------------------------------------------------------------------ diagnostics
    def status(self) -> dict[str, str]:
        """Return the observer's part of the diagnostics (key -> value)."""
        watched = [f'{name} {self.thresholds[name]:g}' for name in self.joint_names
                   if name in self.thresholds]
        values = {
            'observer': (f'on, gain {self.settings.observer_gain:g} 1/s, measured effort '
                         f'{self.settings.measured_effort}, {self.samples} samples'),
            'collision thresholds [N m or N]': ', '.join(watched) or 'none (not watched)',
            'collision': 'true' if self.collision else 'false',
            'collision reaction': self.settings.collision_reaction,
            'collisions detected': str(self.detections),
        }
        event = self.last_event
        if event is not None:
            end = 'on' if event['end'] is None else f'until {event["end"]:.6f} s'
            values['last collision'] = (f'joint {event["joint"]}, from stamp '
                                        f'{event["start"]:.6f} s, {end}, peak '
                                        f'{event["peak"]:.4g}')
        if self.without_effort:
            values['joint_states without effort (not integrated)'] = str(self.without_effort)
        if self.not_newer:
            values['joint_states stamped no later than the last (not integrated)'] = str(
                self.not_newer)
        if self.non_finite:
            values['observer samples not finite (observer restarted)'] = str(self.non_finite)
        return values
