"""
The node's observer outputs without ROS: external torques, estimated wrenches, collisions.

``ObserverOutput`` wraps the library's momentum observer
(``rnea_ros.observer.momentum.MomentumObserver``), wrench estimate
(``rnea_ros.observer.wrench.WrenchEstimator``) and collision detector
(``rnea_ros.observer.collision.CollisionDetector``) for one model of the node. ``sample`` is
called once per accepted joint_states message (not once per cycle: a cycle may reuse the
previous sample, and integrating a repeat would raise the residual's noise), with the message's
stamp in seconds, in stamp order from the queue of every received sample
(``observer_queue.SampleQueue``); the observer integrates with dt from the stamps and does
nothing for a repeated or older stamp (counted: duplicates, out of order). The measured effort
is the sample's, merged by name from the messages (``JointStateInput.track_effort``); a message
without efforts is not integrated.

Collisions: a joint with a threshold in the set in use is watched (|r| beyond it for
``collision_debounce``); the others are not. The set in use is ``collision_profile``: '' the
default set (``collision_threshold.<joint>``), a profile's name its set
(``collision_threshold.<profile>.<joint>``, a joint it leaves unset keeping its default).
``collision`` is what the node publishes: with ``collision_reaction`` ``none`` it follows the
thresholds; with a reaction it latches at the first detection, ``reacting`` is True (the node's
cycle then publishes that reaction's output) until ``reset``, or until the arm has been at rest
(every |v| < ``REST_SPEED``) with every residual under its threshold for
``collision_auto_reset`` seconds of stamps, when that is > 0. Each detection is queued in
``events`` (joints beyond their thresholds, peak |r|, the estimated wrench links' forces) for
the node to log and publish once (``take_events``); auto resets are counted and queued too.
An instability is not a collision: a threshold crossing confirmed while ``loop_unstable`` (the
core's ``LoopWatch.unstable``) says the loop is not holding is counted (``unstable_crossings``),
neither published, queued nor latched, and stays so until every residual is back under its
threshold; crossings confirmed once the watch has cleared the loop are collisions again.

Clock steps: a stamp more than ``CLOCK_STEP`` older than the last integrated one (a sim time
reset, an NTP step back), or one that runs more than ``CLOCK_STEP`` ahead of the steady clock
since then (its stamp advanced that much more than the arrival time did: a step forward; a real
gap in the messages advances both), is a clock step. The observer restarts at that sample (r = 0,
published: no huge dt integrated, no spike), the collision under way ends at the last stamp
before the step (a latched one stays), and detection is on again from the next sample. Each step
is counted and described (how far, from which stamp to which) for the diagnostics, whose next
report is ERROR, and for the log (``notice``). A stamp older than the last by ``CLOCK_STEP`` or
less (two publishers' samples slightly out of order), or a stamp left at 0, is only skipped and
counted.

A sample the observer cannot integrate (a NaN effort, say) or a non-finite residual is a fault:
the sample is counted, the observer restarts from the next sample (which returns r = 0), and
``valid`` is False until then, so that neither external_torques nor the wrenches are published
(never NaN); collision keeps its value. A measured torque (``effort_gain`` times the effort
minus ``effort_bias``: what the observer integrates, not the raw effort, which an arm may give
in mN m or A) beyond its plausibility bound (``EFFORT_PLAUSIBILITY`` times the joint's URDF
effort limit; ``MAX_EFFORT`` for a joint without one) is a bad sample too: counted, not
integrated (the observer goes on from the last good sample, not restarted), ``valid`` False
until the next good sample, the detector not fed.
Diagnostics: the thresholds, the collision state, the number of detections and the latest one
(joint, start stamp, end, peak |r|), the samples skipped and why, the clock steps.
"""
from __future__ import annotations

import math

import numpy as np

from rnea_ros.control.cycle_kernels import first_beyond, largest_magnitude
from rnea_ros.control.declaration import REST_SPEED
from rnea_ros.control.safety import all_finite, ERROR, WARN
from rnea_ros.control.settings import ParameterRejected
from rnea_ros.errors import InputError
from rnea_ros.observer.collision import CollisionDetector, THRESHOLD_PARAMETER
from rnea_ros.observer.momentum import MomentumObserver
from rnea_ros.observer.wrench import WrenchEstimator

# Largest step of the joint_states stamps [s] taken for samples out of order (skipped); beyond
# it, backward or ahead of the steady clock, a clock step (module docstring). Above two
# publishers' reordering and message delivery jitter, below an NTP step (ntpd steps from 128 ms).
CLOCK_STEP = 0.1
# A measured effort beyond EFFORT_PLAUSIBILITY x the joint's URDF effort limit (or beyond
# MAX_EFFORT [N m or N] for a joint without one: no <limit>, effort 0 or inf) is not integrated.
EFFORT_PLAUSIBILITY = 10.0
MAX_EFFORT = 1e6
NOTICE_PERIOD = 1.0  # s: at most one log line about clock steps per period (``notice``)


def stamp_seconds(stamp, now: float) -> float:
    """Return a builtin_interfaces/Time (``sec``, ``nanosec``) in seconds; None: ``now``."""
    if stamp is None:
        return now
    return stamp.sec + 1e-9 * stamp.nanosec


class ObserverOutput:
    """The observer, wrench estimates and collision state of one model (module docstring)."""

    def __init__(self, model, settings, actuation, joint_names, effort: np.ndarray):
        self.model = model
        self.settings = settings
        self.joint_names = tuple(joint_names)
        self.observer = MomentumObserver(model, settings.observer_gain,
                                         measured_effort=settings.measured_effort,
                                         actuation=actuation)
        self.effort = effort  # the merged measured efforts (joint order = v order: fixed base)
        self.links = tuple(settings.wrench_estimation_links)
        # Per link, its estimate at a contact point of a pure force (None: a wrench).
        self.estimators = [WrenchEstimator(model, link, point=settings.wrench_points.get(link))
                           for link in self.links]
        # Outputs (``bind_residual`` may replace the residual by a message's array).
        self.residual = np.zeros(model.nv)
        self.wrenches = np.zeros((len(self.links), 6))
        self._index = {name: model.joint(name).idx_v for name in self.joint_names}
        self._take_thresholds(settings)  # default_thresholds, profile_thresholds, profile
        self.thresholds: dict[str, float] = {}  # of the set in use
        self._debounce = settings.collision_debounce
        self.latches = 0  # collisions latched (reactions started)
        self.auto_resets = 0
        self.events: list[dict] = []  # detections and auto resets not yet taken by the node
        self._quiet_since: float | None = None  # stamp since which at rest and under
        self._speed = 0.0  # max |v| of the last sample
        self.detector: CollisionDetector | None = None
        self._unstable = False  # the crossing under way is one under an instability
        self._real: int | None = None  # the detector's event of the latest collision
        self._last_event: dict | None = None  # of a detector replaced or reset
        self._select()
        self.valid = False  # the residual holds a finite value to publish
        self.samples = 0  # integrated samples
        self.not_newer = 0  # samples whose stamp was not newer than the last one (not integrated)
        self.duplicates = 0  # those of them stamped the same as the last one
        self._last_stamp: float | None = None
        self._last_arrival = 0.0  # steady-clock time [s] of the last integrated sample
        self.clock_steps = 0  # clock steps (observer restarted)
        self.last_clock_step = ''  # the latest one, described
        self._reported_steps = 0  # clock_steps at the last ``alarm``
        self._notice_time = -math.inf  # steady-clock time of the last ``notice``
        self._noticed_steps = 0  # clock_steps at the last ``notice``
        limits = model.effort_limits[[self._index[name] for name in self.joint_names]]
        self.effort_bound = np.where(np.isfinite(limits) & (limits > 0.0),
                                     EFFORT_PLAUSIBILITY * limits, MAX_EFFORT)
        rows = [self._index[name] for name in self.joint_names]
        self._effort_gain = (np.ones(len(rows)) if actuation is None else
                             np.array(actuation.effort_gain)[rows])
        self._effort_bias = (np.zeros(len(rows)) if actuation is None else
                             np.array(actuation.effort_bias)[rows])
        self._abs_effort = np.zeros(len(self.joint_names))
        first_beyond(self._abs_effort, self._effort_gain, self._effort_bias, self.effort_bound,
                     self._abs_effort)  # compiled (or loaded) now, not at the first sample
        largest_magnitude(self._abs_effort)
        self.implausible = 0  # samples with an effort beyond its bound (not integrated)
        self.last_implausible = ''  # the latest, described
        self._reported_implausible = 0  # implausible at the last ``alarm``
        self.without_effort = 0  # joint_states messages without efforts
        self.non_finite = 0  # samples the observer could not integrate (non-finite)
        self.collision = False  # the published value
        self.changed = True  # collision to be published (its first value too)
        self.latched = False
        self.detections = 0
        self._last_event: dict | None = None  # of a detector replaced or reset
        self.loop_unstable = None  # () -> bool: the loop watch holds the loop unstable (core)
        self.unstable_crossings = 0  # crossings under an instability: not collisions

    def _select(self) -> None:
        """Take the thresholds of ``profile`` (its joints' defaults where it sets none)."""
        self.thresholds = {**self.default_thresholds,
                           **self.profile_thresholds.get(self.profile, {})}
        self._remember_event()
        self._watch()

    def _watch(self) -> None:
        """Build the detector over the joints that have a threshold (None: no joint has)."""
        watched = [name for name in self.joint_names if name in self.thresholds]
        self._watched = np.array([self._index[name] for name in watched], dtype=np.int64)
        self._watched_r = np.zeros(len(watched))
        self._unstable, self._real = False, None
        self.detector = (CollisionDetector([self.thresholds[name] for name in watched],
                                           watched, self._debounce) if watched else None)

    def bind_residual(self, residual: np.ndarray) -> None:
        """Write the residual into ``residual`` (a message's effort array) from now on."""
        if residual.dtype != np.float64 or residual.shape != self.residual.shape:
            raise ValueError(f'residual: expected a float64 array of shape '
                             f'{self.residual.shape}')
        residual[:] = self.residual
        self.residual = residual

    # ------------------------------------------------------------------ parameters
    def use(self, settings) -> None:
        """
        Take a new settings snapshot (a live set, between two cycles).

        The gain, the debounce, the thresholds and the set in use come from it; the detector is
        rebuilt only when the thresholds or the set in use change (its state goes on otherwise).
        """
        old, self.settings = self.settings, settings
        self.observer.gain = settings.observer_gain
        self._debounce = settings.collision_debounce
        if (settings.collision_thresholds != old.collision_thresholds
                or settings.collision_profile_thresholds != old.collision_profile_thresholds
                or settings.collision_profile != old.collision_profile):
            self._take_thresholds(settings)
            self._select()
        elif self.detector is not None:
            self.detector.min_duration = self._debounce

    def _take_thresholds(self, settings) -> None:
        """Copy the snapshot's thresholds and the set in use."""
        self.default_thresholds = dict(settings.collision_thresholds)  # joint -> threshold
        self.profile_thresholds = {profile: dict(settings.collision_profile_thresholds.get(
            profile, {})) for profile in settings.collision_profiles}
        self.profile = settings.collision_profile

    # ------------------------------------------------------------------ samples
    def sample(self, stamp: float, q: np.ndarray, v: np.ndarray, with_effort: bool,
               arrival: float, effort: np.ndarray | None = None) -> None:
        """
        Integrate one joint_states sample stamped ``stamp`` [s] (see the module docstring).

        ``arrival``: when it arrived, on the steady clock [s] (tells a clock step forward from a
        gap in the messages). ``effort``: its measured efforts (None: the merged ones, ``effort``).
        """
        if not with_effort:
            self.without_effort += 1
            return
        effort = self.effort if effort is None else effort
        last = self._last_stamp
        # A stamp left at 0 (a publisher that stamps nothing) is not a clock: skipped.
        step = None if last is None or stamp == 0.0 else self._clock_step(last, stamp, arrival)
        if step is None and last is not None and stamp <= last:
            self.not_newer += 1  # as the observer would: r stays (unstamped publishers show)
            self.duplicates += stamp == last
            return
        if self._implausible_effort(effort):
            return
        if step is not None:
            self._restart(last, step)
        try:
            r = self.observer.update(stamp, q, v, effort)
        except InputError:  # a non-finite effort (or momentum): start again from the next
            r = None
        if r is None or not all_finite(r):
            self.non_finite += 1
            self.observer.reset()
            self.valid = False
            self._last_stamp = None
            return
        self._last_stamp, self._last_arrival = stamp, arrival
        self.samples += 1
        self.residual[:] = r
        for k, estimator in enumerate(self.estimators):
            wrench = estimator.estimate(q, r)
            self.wrenches[k] = wrench if all_finite(wrench) else 0.0
        self.valid = True
        self._speed = largest_magnitude(v)
        self._detect(stamp, r)

    def _clock_step(self, last: float, stamp: float, arrival: float) -> str | None:
        """Describe the clock step from ``last`` to ``stamp``, or None if there is none."""
        if last - stamp > CLOCK_STEP:
            return f'stepped back {last - stamp:.6f} s, from stamp {last:.6f} s to {stamp:.6f} s'
        elapsed = arrival - self._last_arrival
        if (stamp - last) - elapsed > CLOCK_STEP:
            return (f'stepped forward {stamp - last:.6f} s in {elapsed:.6f} s of arrivals, from '
                    f'stamp {last:.6f} s to {stamp:.6f} s')
        return None

    def _restart(self, last: float, step: str) -> None:
        """Restart the observer at a clock step; end the collision under way at ``last``."""
        self.clock_steps += 1
        self.last_clock_step = f'joint_states stamps {step}: observer restarted'
        self._detect(last, np.zeros_like(self.residual))
        self.observer.reset()
        self._last_stamp = None

    def _implausible_effort(self, effort: np.ndarray) -> bool:
        """Count and describe a sample whose measured torque is beyond its bound (module doc)."""
        torque = self._abs_effort  # |effort_gain * effort - effort_bias|
        k = first_beyond(effort, self._effort_gain, self._effort_bias, self.effort_bound, torque)
        if k < 0:
            return False
        self.implausible += 1
        self.last_implausible = (f'joint {self.joint_names[k]} effort {effort[k]:.6g} '
                                 f'(measured torque {torque[k]:.6g}), beyond '
                                 f'{self.effort_bound[k]:g}')
        self.valid = False
        return True

    def _detect(self, stamp: float, r: np.ndarray) -> None:
        detected = over = False
        if self.detector is not None:
            np.take(r, self._watched, out=self._watched_r)
            was = self.detector.active
            detected = self.detector.update(stamp, self._watched_r)
            over = self.detector.over
            if detected and not was:
                self._unstable = self.loop_unstable is not None and self.loop_unstable()
                self.unstable_crossings += self._unstable
                if not self._unstable:
                    self.detections += 1
                    self._queue_detection(stamp)
            self._unstable = self._unstable and detected
            detected = detected and not self._unstable
        reaction = self.settings.collision_reaction != 'none'
        if reaction and detected and not self.latched:
            self.latches += 1
        self.latched = reaction and (self.latched or detected)
        if self.latched:
            self._auto_reset(stamp, over)
        collision = detected or self.latched
        if collision != self.collision:
            self.collision = collision
            self.changed = True

    def _queue_detection(self, stamp: float) -> None:
        """Queue the detection that just happened for the node's log and event message."""
        ratios = np.abs(self._watched_r) / self.detector.thresholds
        names = [self.joint_names[k] for k in range(len(self.joint_names))
                 if self.joint_names[k] in self.thresholds]
        beyond = [names[k] for k in np.flatnonzero(ratios > 1.0)]
        self._real = len(self.detector.events) - 1
        event = self.detector.events[self._real]
        self.events.append({
            'kind': 'detected', 'stamp': stamp, 'start': event['start'],
            'joints': beyond or [event['joint']], 'joint': event['joint'],
            'peak': event['peak'], 'threshold': self.thresholds[event['joint']],
            'profile': self.profile, 'reaction': self.settings.collision_reaction,
            'forces': {link: float(np.linalg.norm(self.wrenches[k, :3]))
                       for k, link in enumerate(self.links)}})

    def _auto_reset(self, stamp: float, over: bool) -> None:
        """Clear the latch after ``collision_auto_reset`` s at rest and under the thresholds."""
        after = self.settings.collision_auto_reset
        if after <= 0.0 or over or self._speed >= REST_SPEED:
            self._quiet_since = None
            return
        if self._quiet_since is None:
            self._quiet_since = stamp
        if stamp - self._quiet_since >= after - 1e-9:
            self.reset()
            self.auto_resets += 1
            self.events.append({'kind': 'auto_reset', 'stamp': stamp, 'after': after})

    def take_events(self) -> list[dict]:
        """Return the queued detections and auto resets, oldest first, and forget them."""
        events, self.events = self.events, []
        return events

    @property
    def reacting(self) -> bool:
        """Tell whether the published effort is the ``collision_reaction`` output now."""
        return self.latched and self.settings.collision_reaction != 'none'

    def reset(self) -> bool:
        """Clear a collision (``~/reset_collision``); True if one was active."""
        active = self.collision
        self.latched = False
        self._quiet_since = None
        self._remember_event()
        if self.detector is not None:
            self.detector.reset()
        self._unstable, self._real = False, None
        if self.collision:
            self.collision = False
            self.changed = True
        return active

    def _remember_event(self) -> None:
        """Keep the detector's latest event for the diagnostics (its reset forgets them)."""
        self._last_event = self.last_event

    @property
    def last_event(self) -> dict | None:
        """Return the latest collision (start, end: stamps [s]; joint; peak |r|), or None."""
        if self.detector is not None and self._real is not None:
            return self.detector.events[self._real]
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
            self.duplicates = other.duplicates
            self._last_arrival = other._last_arrival
        self.latched, self.collision, self.changed = other.latched, other.collision, True
        self.detections, self._last_event = other.detections, other.last_event
        self.latches, self.auto_resets = other.latches, other.auto_resets
        self.unstable_crossings = other.unstable_crossings
        self.events, self._quiet_since = other.events, other._quiet_since
        self.non_finite, self.without_effort = other.non_finite, other.without_effort
        for name in ('clock_steps', 'last_clock_step', '_reported_steps', '_notice_time',
                     '_noticed_steps', 'implausible', 'last_implausible',
                     '_reported_implausible'):
            setattr(self, name, getattr(other, name))

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
            'collision profile': self.profile or 'default',
            'collision debounce [s]': f'{self._debounce:g}',
            'collision auto reset [s]': (f'{self.settings.collision_auto_reset:g}'
                                         if self.settings.collision_auto_reset > 0 else 'off'),
            'collisions detected': str(self.detections),
            'threshold crossings while the loop was unstable (not collisions)': str(
                self.unstable_crossings),
            'collision reactions': str(self.latches),
            'collision auto resets': str(self.auto_resets),
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
            values['joint_states duplicate stamps (not integrated)'] = str(self.duplicates)
            values['joint_states out of order (not integrated)'] = str(
                self.not_newer - self.duplicates)
        if self.non_finite:
            values['observer samples not finite (observer restarted)'] = str(self.non_finite)
        if self.implausible:
            values['observer samples with an implausible effort (not integrated)'] = str(
                self.implausible)
            values['last implausible effort'] = self.last_implausible
        if self.clock_steps:
            values['observer clock steps (observer restarted)'] = str(self.clock_steps)
            values['last clock step'] = self.last_clock_step
        return values

    def alarm(self) -> tuple[int, str] | None:
        """
        Return (level, message) for the diagnostics report, or None; once per report.

        ERROR if the stamps stepped since the last report (the latest step described), WARN if
        an effort was implausible since then, WARN while any sample was not finite.
        """
        steps, implausible = self.clock_steps, self.implausible  # the inputs thread counts on
        stepped = steps - self._reported_steps
        recent = implausible != self._reported_implausible
        self._reported_steps, self._reported_implausible = steps, implausible
        if stepped:
            more = f' ({stepped} clock steps since the last report)' if stepped > 1 else ''
            return ERROR, self.last_clock_step + more
        if recent:
            return WARN, (f'measured effort beyond its plausibility bound: samples not '
                          f'integrated ({self.last_implausible})')
        if self.non_finite:
            return WARN, 'observer residual not finite: external torques withheld'
        return None

    def notice(self, now: float) -> str | None:
        """Return the log line about clock steps since the last one (one per NOTICE_PERIOD)."""
        steps = self.clock_steps
        if steps == self._noticed_steps or now - self._notice_time < NOTICE_PERIOD:
            return None
        count = steps - self._noticed_steps
        self._noticed_steps, self._notice_time = steps, now
        more = f' ({count} clock steps since the last such line)' if count > 1 else ''
        return f'{self.last_clock_step}{more}'


def check_profile_names(joints, profiles) -> None:
    """Raise ``ParameterRejected`` when a threshold name would be a joint's and a profile's."""
    joints = set(joints)
    clash = sorted(f'{profile}.{joint}' for profile in profiles for joint in joints
                   if f'{profile}.{joint}' in joints)
    if clash:
        raise ParameterRejected(f"parameter 'collision_profiles': joint {clash[0]!r} makes "
                                f'{THRESHOLD_PARAMETER}{clash[0]} name both its threshold and '
                                f"a profile's; expected profile names no joint starts with")
