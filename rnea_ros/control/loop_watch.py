"""
Whether the loop the node closes is holding: an oscillation, the effort limits reached for good.

Fed once a cycle (``LoopWatch.observe``: one compiled call on arrays allocated here, at
construction) with the torque before its clip and, per one-DoF joint, the signal watched: under
a feedback law the velocity error v_d - v while the law tracks, the velocity while it rests (the
same sign changes as -v). Two things are detected, per joint:

- **an oscillation** (feedback laws only): ``FLIPS`` sign changes of the signal within
  ``WINDOW`` cycles, each a swing from beyond +``SWING`` to beyond -``SWING`` (or back: a
  hysteresis, so that noise about zero counts none), the peak of the last half swing at least
  ``SUSTAIN`` times that of the first (growing or sustained, not a ringing that dies out). At 1
  kHz that is 6 reversals of at least 0.1 rad/s within 0.1 s: 30 Hz or faster. A tracked motion
  reverses its velocity error a few times a second at most, and a push or a collision once or
  twice, its ringing decaying; a loop that its delay makes unstable reverses it every few cycles
  (Franka's example gains one tick late on the panda: every 2.8 cycles, up to 7 rad/s). The
  joint is named with the likely cause: the gains too high for the loop's delay (see the loop
  margin), held only by the effort limits when the joint is also clipped. It ends after
  ``WINDOW`` cycles without a sign change.
- **sustained clipping** (every law): the torque at or beyond the joint's effort limit in at
  least ``CLIP_SHARE`` of the last ``CLIP_WINDOW`` cycles: the effort limits reached; the
  published torque is not the law's.

``unstable_reaction`` says what an oscillation does besides the diagnostics' ERROR: ``stop``
latches (``latched``) the stop reaction (``collision_reaction``'s: the brake of time constant
T from the model, which the loop holds whatever the gains, then a hold at the pose of rest) until
``<node>/reset_collision`` (``reset``); the pose is then held (``holding``) until a desired
motion newer than the reset arrives (``released``): the reference moved on meanwhile, and the
law's own damped rest has the gains that did not hold. ``report``: the ERROR alone. Sustained
clipping alone is reported only: stopping gives the joint no more torque.

``unstable`` tells the momentum observer (``observer_outputs``) that a threshold crossing is the
oscillation's, not a collision: from the oscillation on its way (``shaking``) until the watch
clears it (``reset`` after a stop; under ``report``, no joint oscillating or shaking any more).

The hook for a prediction of the state (``prediction``): ``model_error``, None or the one-step
prediction error of the velocity per v entry, written by who computes it; the cause then names
the model when that error is as large as the swing (``likely_cause``). ROS-free.
"""
from __future__ import annotations

from numba import njit
import numpy as np

FLIPS = 6  # sign changes of the signal within WINDOW cycles: an oscillation
WINDOW = 100  # cycles (0.1 s at 1 kHz)
SWING = 0.1  # rad/s or m/s beyond zero, both ways, for a sign change to count
SUSTAIN = 0.5  # the last half swing's peak over the first's: at least this (not dying out)
CLIP_WINDOW = 500  # cycles (0.5 s at 1 kHz)
CLIP_SHARE = 0.5  # of CLIP_WINDOW's cycles clipped on one joint: sustained clipping
REACTIONS = ('stop', 'report')
CLIPPING = 65536  # ``watch_cycle`` returns oscillations + CLIPPING x clippings newly found


# Rows of the watch's integer and float state (per joint), and of its counters.
SIDE, FLIP_COUNT, CLIP_SUM, OSCILLATING, CLIPPING_NOW = range(5)
PEAK, AMPLITUDE, PERIOD = range(3)
OFFSET, CYCLE, OBSERVED = range(3)


@njit(cache=True, nogil=True)
def watch_cycle(signal, tau, upper, oscillation, counters, ints, floats, flips,
                clip_ring) -> int:
    """
    Take one cycle into the per-joint arrays; return the joints newly found, in one number.

    The joints found oscillating this cycle, plus ``CLIPPING`` times those found clipped for
    good (one small integer: nothing is allocated). ``signal``, ``tau``, ``upper`` (the effort
    limit, the lower one its negative): per v entry, the joints from ``counters[OFFSET]`` on;
    ``oscillation``: watch the signal (a feedback law); ``counters``: the offset, this cycle's
    number and the cycles observed since the last reset (both counted here); ``ints``,
    ``floats``: the rows above, per joint; ``flips``: the cycle (0) and the peak of the half
    swing before (1) of each joint's last FLIPS sign changes, a ring; ``clip_ring``: clipped or
    not, per cycle of the last CLIP_WINDOW and joint. Few arguments: each costs the call.
    """
    found, offset, cycle = 0, counters[OFFSET], counters[CYCLE]
    counters[CYCLE] += 1
    counters[OBSERVED] += 1
    window = clip_ring.shape[0]
    clip_slot = cycle % window
    full = counters[OBSERVED] >= window
    for j in range(ints.shape[1]):
        k = offset + j
        hit = 1 if abs(tau[k]) >= upper[k] else 0
        ints[CLIP_SUM, j] += hit - clip_ring[clip_slot, j]
        clip_ring[clip_slot, j] = hit
        sustained = 1 if full and ints[CLIP_SUM, j] >= CLIP_SHARE * window else 0
        if sustained and not ints[CLIPPING_NOW, j]:
            found += CLIPPING
        ints[CLIPPING_NOW, j] = sustained
        if oscillation:
            found += _sign_changes(signal[k], j, cycle, ints, floats, flips)
    return found


@njit(cache=True, nogil=True)
def _sign_changes(s, j, cycle, ints, floats, flips) -> int:
    """Take joint ``j``'s signal ``s`` of this cycle; 1 if it is newly found oscillating."""
    found, count = 0, FLIPS
    size = abs(s)
    now = 1 if s > SWING else -1 if s < -SWING else 0
    if now != 0 and now != ints[SIDE, j]:
        if ints[SIDE, j] != 0:  # a sign change: the half swing before it peaked at PEAK
            newest = ints[FLIP_COUNT, j] % count
            flips[0, j, newest] = cycle
            flips[1, j, newest] = floats[PEAK, j]
            ints[FLIP_COUNT, j] += 1
            if ints[FLIP_COUNT, j] >= count:
                oldest = ints[FLIP_COUNT, j] % count
                span = cycle - flips[0, j, oldest]
                held = (span <= WINDOW
                        and flips[1, j, newest] >= SUSTAIN * flips[1, j, oldest])
                if held and not ints[OSCILLATING, j]:
                    found = 1
                ints[OSCILLATING, j] = 1 if held else 0
                if held:
                    floats[AMPLITUDE, j] = np.max(flips[1, j])
                    floats[PERIOD, j] = 2.0 * span / (count - 1)
        ints[SIDE, j] = now
        floats[PEAK, j] = size
    elif size > floats[PEAK, j]:
        floats[PEAK, j] = size
    if ints[OSCILLATING, j] and cycle - flips[0, j, (ints[FLIP_COUNT, j] - 1) % count] > WINDOW:
        ints[OSCILLATING, j] = 0  # no sign change for a window: over
    return found


class LoopWatch:
    """One model's watch of its loop, its arrays preallocated (module docstring)."""

    def __init__(self, joint_names, v_offset: int, upper: np.ndarray):
        """``upper``: the effort limit per v entry (``EffortLimiter``'s, live; the lower: -it)."""
        self.joint_names = tuple(joint_names)
        self.offset, self.upper = v_offset, upper
        n = len(self.joint_names)
        self._counters = np.array([v_offset, 0, 0], dtype=np.int64)
        self._ints = np.zeros((5, n), dtype=np.int64)
        self._floats = np.zeros((3, n))
        self._flips = np.zeros((2, n, FLIPS))
        self._clip_ring = np.zeros((CLIP_WINDOW, n), dtype=np.int64)
        # Views by name (read by the status and the tests).
        self.side, self.flip_count, self.clip_sum, self.oscillating, self.clipping = self._ints
        self.peak, self.amplitude, self.period = self._floats  # |peak| [rad/s], period [cycles]
        self.flip_cycle, self.flip_peak = self._flips
        self.model_error: np.ndarray | None = None  # the prediction's hook (module docstring)
        self.oscillations = 0  # found, counted (a joint that starts oscillating)
        self.clippings = 0  # found, counted (a joint whose clipping becomes sustained)
        self.last: tuple[str, float, float, bool] | None = None  # joint, |peak|, period, clip
        self.latched = False  # the stop reaction, until ``reset``
        self.latches = 0
        self.holding = False  # after the reset, until a newer desired motion (``released``)
        self.since: float | None = None  # steady time of the latest oscillation found
        self._reported = (0, 0)
        # Compile (or load from the cache) now, not in the first cycle.
        zeros = np.zeros(v_offset + n)
        watch_cycle(zeros, zeros, zeros + 1.0, True, self._counters, self._ints, self._floats,
                    self._flips, self._clip_ring)
        self.reset()

    def observe(self, tau: np.ndarray, signal: np.ndarray, feedback: bool, reaction: str,
                now: float) -> None:
        """Take one published cycle: ``tau`` before its clip, ``signal`` (module docstring)."""
        found = watch_cycle(signal, tau, self.upper, feedback, self._counters, self._ints,
                            self._floats, self._flips, self._clip_ring)
        if found:
            self._found(found, feedback and reaction == 'stop', now)

    def _found(self, found: int, stop: bool, now: float) -> None:
        """Count what ``observe`` found, remember the worst joint; latch the stop if asked."""
        self.clippings += found // CLIPPING
        if found % CLIPPING:
            self.oscillations += found % CLIPPING
            self.since = now
            j = int(np.argmax(np.where(self.oscillating, self.amplitude, -1.0)))
            self.last = (self.joint_names[j], float(self.amplitude[j]), float(self.period[j]),
                         self._clipped(j))
            if stop and not self.latched:
                self.latched, self.holding = True, False
                self.latches += 1

    def shaking(self) -> str | None:
        """
        Return the joint of the most sign changes within the last WINDOW cycles, if FLIPS // 2.

        Read when a collision stopped the arm: the watch then takes no cycles, so these are the
        cycles before it. An oscillation on its way reverses the velocity error every few
        cycles; a push once or twice.
        """
        recent = np.count_nonzero((self.flip_cycle >= self._counters[CYCLE] - WINDOW)
                                  & (np.arange(FLIPS) < self.flip_count[:, None]), axis=1)
        j = int(np.argmax(recent))
        return self.joint_names[j] if recent[j] >= FLIPS // 2 else None

    def unstable(self) -> bool:
        """
        Tell whether the loop is held unstable: the observer's crossings are then not collisions.

        The stop latched (until ``reset``), a joint oscillating or shaking (``shaking``: the
        oscillation on its way, before it is found; its tail). Read at an observer's threshold
        crossing (``observer_outputs``), not every cycle: ``shaking`` allocates.
        """
        return self.latched or bool(self.oscillating.any()) or self.shaking() is not None

    def _clipped(self, j: int) -> bool:
        """Whether joint ``j`` was clipped in CLIP_SHARE of the cycles, the window not full."""
        return bool(self.clip_sum[j] >= CLIP_SHARE * min(self._counters[OBSERVED], CLIP_WINDOW))

    def reset(self) -> bool:
        """Clear a latched stop (``<node>/reset_collision``): hold the pose; True if latched."""
        latched = self.latched
        if latched:
            self.latched, self.holding = False, True
        for array in (self._ints, self._floats, self._flips, self._clip_ring):
            array.fill(0)
        self._counters[OBSERVED] = 0
        return latched

    def released(self, desired, rest_number: int, now: float, ros_time: float,
                 timeout: float) -> bool:
        """
        Tell whether a hold after a reset ends: a desired motion newer than the last rest.

        ``rest_number``: ``Reference.rest_number``, which every cycle of the hold raises to the
        number of the desired motion it held back; ``timeout``: ``acceleration_timeout``.
        """
        if (desired is not None and desired.number > rest_number
                and desired.active(now, ros_time, timeout)):
            self.holding = False
            self.reset()
            return True
        return False

    def take_state_from(self, other: LoopWatch) -> None:
        """Go on from another model's watch (a new model, the same joints): its latch, counts."""
        self.latched, self.latches, self.holding = other.latched, other.latches, other.holding
        self.oscillations, self.clippings, self.last = (other.oscillations, other.clippings,
                                                        other.last)
        self.since, self._reported = other.since, other._reported

    @property
    def stop_latch(self) -> int:
        """Return the latch number the stop reaction is given: negative, apart from collisions'."""
        return -self.latches

    def status(self, reaction: str, rate: float) -> tuple[str | None, dict]:
        """
        Return the ERROR message (None: the loop holds) and the diagnostics' keys.

        ERROR while a joint oscillates or is clipped for good, and once for what was found
        since the previous call (a report every second misses nothing). ``rate``: the node's
        (0: no period of its own, the period is given in cycles only).
        """
        found = (self.oscillations, self.clippings)
        new = found[0] > self._reported[0], found[1] > self._reported[1]
        self._reported = found
        values = {'loop oscillations found': str(self.oscillations),
                  'sustained clipping found': str(self.clippings),
                  'unstable_reaction': reaction + (
                      ': stop latched until reset_collision' if self.latched else
                      ': holding the pose until a desired motion newer than the reset'
                      if self.holding else '')}
        shares = [f'{name} {100.0 * self.clip_sum[j] / CLIP_WINDOW:.0f}'
                  for j, name in enumerate(self.joint_names) if self.clip_sum[j]]
        values[f'clipped share of the last {CLIP_WINDOW} cycles [%]'] = ', '.join(shares) or '0'
        message = None
        if self.oscillating.any() or (new[0] or self.latched) and self.last is not None:
            message = self._oscillation(rate)
        elif self.clipping.any() or new[1]:
            j = int(np.argmax(self.clip_sum))
            message = (f'effort limits reached: {self.joint_names[j]} clipped in '
                       f'{100.0 * self.clip_sum[j] / CLIP_WINDOW:.0f} % of the last '
                       f'{CLIP_WINDOW} cycles (a payload, a reference faster than the joint '
                       "can follow, or gains too high): the published torque is not the law's")
        values['loop watch'] = message or 'holding'
        return message, values

    def _oscillation(self, rate: float) -> str:
        """One line: the joint that oscillates most, how, and the likely cause."""
        if self.oscillating.any():
            j = int(np.argmax(np.where(self.oscillating, self.amplitude, -1.0)))
            joint, peak, period = self.joint_names[j], self.amplitude[j], self.period[j]
            clipped, others = self._clipped(j), [
                name for k, name in enumerate(self.joint_names)
                if self.oscillating[k] and k != j]
        else:
            (joint, peak, period, clipped), others = self.last, []
            j = self.joint_names.index(joint)
        hertz = f', {rate / period:.0f} Hz' if rate > 0.0 and period > 0.0 else ''
        also = f' (also {", ".join(others)})' if others else ''
        return (f'loop not holding: {joint} oscillates{also}, its velocity error reversing '
                f'every {period / 2:.2g} cycles{hertz}, up to {peak:.2g} rad/s: likely cause: '
                + likely_cause(clipped, peak, None if self.model_error is None
                               else float(self.model_error[self.offset + j])))


def likely_cause(clipped: bool, peak: float, model_error: float | None = None) -> str:
    """
    Return the likely cause of an oscillation of swing ``peak`` on a joint.

    ``clipped``: the joint is also clipped for good; ``model_error``: its one-step prediction
    error of the velocity (the prediction's), None without one.
    """
    if model_error is not None and model_error >= 0.5 * peak:
        cause = ("the model (or the payload) is not the robot's: the one-step prediction error "
                 'is as large as the swing')
    else:
        cause = "gains too high for the loop's delay: see loop margin"
    return cause + ('; held only by its effort limits' if clipped else '')
