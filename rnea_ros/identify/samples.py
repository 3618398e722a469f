"""
Bags -> identification samples: q, v, a and measured effort per joint, in model order.

A bag is read as ``rnea_bag`` reads it, by the same functions: the joint_states topic
(``rnea_ros.recording.load_joint_states``: header stamps unless ``clock='receive'``, a header
clock that steps refused, messages merged by stamp, joints held by ``lock``/``lock_missing``),
velocities from the messages where finite, accelerations per joint from the positions or the
velocities (``rnea_ros.recording.accelerations.estimate``, the Savitzky-Golay differentiator,
gap-aware). The same samples are left out as by ``rnea_bag``: those without a finite estimate
(runs too short to differentiate) and those within half a window of a gap or of the ends (a
one-sided fit); then samples with a NaN effort on any joint are dropped and counted. A joint's
row where it is at a position limit or its measured torque at the effort limit
(``rnea_ros.recording.plausibility``: the end stop or the drive's clamp acts there) has its
effort set to NaN: no equation of the fit, the sample kept for the filter's time line; such
samples are counted, and the joints beyond the URDF limits are warned about.

``effort_delay`` d [s]: the effort stamped t is the torque that balanced the state of
instant t - d (a sensor or a logger that reports the torque d late; the simulated robot's effort
at stamp k is the torque held over the step from stamp k - 1, which balances the motion of that
step's middle: d = half a timestep). Each effort sample is then paired with the state (position,
velocity, acceleration) interpolated at t - d, linearly between the two samples around it: the
state is smooth there, and the effort keeps its own noise (interpolating the effort would
average two readings: a residual below the sensor's noise). A sample whose t - d falls before
the first sample, inside a hole (samples further apart than ``HOLE`` median intervals) or next
to a sample without a state estimate is left out. A delay of a whole number of sample intervals
on a regular clock pairs samples exactly (no interpolation).

A bag that ``rnea_sim --record`` wrote says in its metadata whether the run was late or hit a
joint limit (``rnea_ros.recording.fitness``): such a bag is used, with a warning that names it
and what happened (``unfit_for_identification``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rnea_ros.errors import InputError
from rnea_ros.recording import accelerations, derivatives, differentiate, fitness, \
    load_joint_states, locks, plausibility
from rnea_ros.recording.bagio.storage import BagError, open_bag
from rnea_ros.recording.joint_states import one_dof_joints
from rnea_ros.recording.plausibility import UnitError
from rnea_ros.tools.reading import reconvert

HOLE = 1.5  # median sample intervals: a longer one is a hole the effort is not interpolated over
MAX_DELAY = 1.0  # s: --effort-delay beyond it is refused


@dataclass
class Samples:
    """
    The samples of one bag, (N, nv) arrays in ``RobotModel`` v order (SI units).

    ``seconds``: sample times from the first kept sample; ``dropped_nan_effort``: samples left
    out because a joint's effort was NaN; ``at_limit``: samples where a joint's row is left out
    of the fit at a position or an effort limit; ``warnings``: what the reader merged or filled;
    ``differentiation``: the window rule, each joint's window [s] and the time base
    (``accelerations.settings``).
    """

    bag: str
    seconds: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    effort: np.ndarray
    dropped_nan_effort: int = 0
    warnings: list[str] = field(default_factory=list)
    differentiation: dict = field(default_factory=dict)
    at_limit: int = 0

    def __len__(self) -> int:
        return int(self.seconds.size)

    def select(self, mask: np.ndarray) -> Samples:
        """Return the samples where ``mask`` is true (same bag, same warnings)."""
        return Samples(self.bag, self.seconds[mask], self.q[mask], self.v[mask], self.a[mask],
                       self.effort[mask], self.dropped_nan_effort, self.warnings,
                       self.differentiation, int(self.at_limit))


def check_fixed_base(model) -> None:
    """Refuse a model with a floating or planar joint: identification is for fixed bases."""
    odd = [j.name for j in model.multi_dof_joints]
    if model.floating_base or odd:
        raise InputError(f'the robot has a floating base or a floating/planar joint {odd}: '
                         'rnea_identify identifies fixed-base robots only')


def load(path: str | Path, model, urdf_xml: str, topic: str = 'joint_states', *,
         window: float | str | None = None, order: int = differentiate.DEFAULT_ORDER,
         clock: str = 'header', lock: str | None = None, lock_missing: bool = False,
         ignore_extra: bool = False, effort_delay: float = 0.0,
         torque_effort: bool = True) -> Samples:
    """
    Read one bag into ``Samples`` (``BagError``/``InputError`` name the bag and what is wrong).

    ``window`` seconds, or None / 'auto': per joint from the data; ``lock``: the ``--lock`` text;
    ``lock_missing``: hold the joints the bag never publishes (``rnea_ros.recording.locks``);
    ``ignore_extra``: skip joint names the URDF does not have; ``effort_delay``: seconds (module
    docstring); ``torque_effort``: the effort is a torque (False: a motor current, never
    judged against the effort limits).
    """
    locks.parse(lock, model.joints)  # an option's error, not the bag's: not prefixed
    if not (np.isfinite(effort_delay) and abs(effort_delay) <= MAX_DELAY):
        raise InputError(f'--effort-delay must be a number of seconds from -{MAX_DELAY:g} to '
                         f'{MAX_DELAY:g}, got {effort_delay}')
    reader = open_bag(Path(path))
    try:
        report = fitness.read(reader)  # what a simulated run said of itself
        series = load_joint_states(reader, model, urdf_xml, topic, clock=clock, lock=lock,
                                   lock_missing=lock_missing, ignore_extra=ignore_extra)
    except UnitError as exc:
        raise reconvert(exc, str(path)) from None
    except (BagError, InputError) as exc:
        raise type(exc)(f'{path}: {exc}') from None
    finally:
        reader.close()
    measured = np.isfinite(series.effort).any(axis=0)
    no_effort = [name for k, name in enumerate(series.names)
                 if not measured[k] and name not in series.locked]
    if no_effort:
        raise InputError(f'{path}: joint_states carries no effort for {no_effort}: '
                         'identification needs the measured joint torques')
    if not measured.any():
        raise InputError(f'{path}: joint_states carries no effort: identification needs the '
                         'measured joint torques')
    silent = [name for k, name in enumerate(series.names)
              if measured[k] and name not in series.locked]
    if silent and not np.any(series.effort[:, [series.names.index(n) for n in silent]]):
        # Every torque 0: a logger that fills the field without a sensor. The fit would find
        # a robot of no mass and fail in its physical-consistency step, naming neither.
        raise InputError(f'{path}: joint_states carries an effort of 0 in every sample for '
                         f'every joint {silent}: identification needs the measured joint '
                         'torques')
    estimate = derivatives(series, model, window=window, order=order)
    keep = np.isfinite(estimate.velocity).all(axis=1) \
        & np.isfinite(estimate.acceleration).all(axis=1) & ~estimate.edge
    (position, velocity, acceleration), keep = delayed_state(
        series.times_ns, (series.position, estimate.velocity, estimate.acceleration), keep,
        effort_delay)
    effort = series.effort
    # A held joint the bag gives no effort for has no equations (``fit``); any other NaN
    # effort drops the sample.
    nan_effort = ~np.isfinite(effort[:, measured]).all(axis=1) & keep
    keep &= ~nan_effort
    judged = plausibility.check(one_dof_joints(model), series.position, series.velocity,
                                effort if torque_effort else None, locked=series.locked)
    flagged = judged.flagged & keep[:, None]
    effort = np.where(flagged, np.nan, effort)  # the row out of the fit, the sample kept
    times = series.times_ns[keep]
    seconds = (times - times[0]) * 1e-9 if times.size else np.zeros(0)
    # A fixed-base model's joints are one-DoF and in v order: the series columns are v order.
    return Samples(str(path), seconds, position[keep], velocity[keep],
                   acceleration[keep], effort[keep], int(nan_effort.sum()),
                   list(series.warnings) + judged.warnings() + _unfit(report),
                   _differentiation(estimate, order), int(flagged.any(axis=1).sum()))


def _unfit(report: dict | None) -> list[str]:
    """Return the warning of a simulated recording unfit to identify from (none: fit)."""
    reasons = fitness.unfit_for_identification(report) if report is not None else []
    if not reasons:
        return []
    return [f'UNFIT RECORDING: the simulated run says {"; ".join(reasons)} (its metadata.yaml, '
            f'custom_data {fitness.KEY}): late, the controller answered stale states and the '
            'excitation was not run as designed; at a limit, the limit pushes with a torque the '
            'effort does not hold; record in lockstep (clock:=lockstep) or on a quiet machine, '
            'away from the limits']


def delayed_state(times_ns: np.ndarray, state: tuple[np.ndarray, ...], known: np.ndarray,
                  delay: float) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """
    Return (each of ``state`` at each stamp - ``delay`` s, where that was found).

    Linear interpolation between the two samples around t - delay (module docstring), found
    where both are ``known`` (one only when t - delay is its stamp exactly), not before the
    first or after the last sample, nor inside a hole (``HOLE``). ``delay`` 0: ``state``
    itself, found where ``known``.
    """
    n = times_ns.size
    if delay == 0 or n < 2:
        return state, known & (delay == 0)
    times = np.asarray(times_ns, dtype=np.int64)
    intervals = np.diff(times)
    target = times - int(round(delay * 1e9))  # in ns: a stamp hit exactly is hit exactly
    right = np.clip(np.searchsorted(times, target, side='left'), 1, n - 1)
    left = right - 1
    span = intervals[left]
    weight = np.clip(np.where(span > 0, (target - times[left]) / np.where(span > 0, span, 1),
                              0.0), 0.0, 1.0)
    exact = (weight == 0.0) | (weight == 1.0)  # a stamp hit: no interpolation over its span
    found = (target >= times[0]) & (target <= times[-1]) \
        & ((span <= HOLE * np.median(intervals)) | exact) \
        & ((weight == 1.0) | known[left]) & ((weight == 0.0) | known[right])
    w = weight[:, None]
    # A weight of exactly 0 or 1 takes one sample only: a NaN in the other does not spread.
    out = tuple(np.where(w == 0.0, x[left], np.where(w == 1.0, x[right],
                                                     (1.0 - w) * x[left] + w * x[right]))
                for x in state)
    return out, found


def _differentiation(estimate, order: int) -> dict:
    """Return the window rule, each joint's window and the time base of one estimate."""
    described = accelerations.settings(estimate, order)
    return {key: described[key] for key in ('window_rule', 'windows', 'time_base')}
