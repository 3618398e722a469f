"""
Collision detection on the observer's residual r: per-joint thresholds on abs(r), calibrated.

A collision is on once any joint's abs(r_j) has stayed over its threshold for ``min_duration``
(default 10 ms: half the observer's time constant 1/K at its default gain K = 50/s). An
excursion shorter than that is not reported: a force on the arm reaches the residual through
the observer's first-order filter and stays for tens of ms, while momentum-balance noise
(a velocity sample's jump times M / dt, a torque-sensor spike) crosses a threshold for a few
samples. An event runs from the first sample over a threshold (its ``start``: when the
contact began, ``min_duration`` before the collision is reported) to the first sample back
under all of them; it names the joint that went furthest over its threshold (largest
abs(r_j) / threshold_j) and that joint's peak abs(r_j).

Calibration (``calibrate_thresholds``) from a collision-free recording, per joint j:

    threshold_j = margin * max_k abs(r_kj) + spread * sigma_j + floor
    sigma_j = 1.4826 * median_k abs(r_kj - median(r_j))   (the MAD: a robust standard deviation)

The maximum, not a quantile: the recording is collision-free by assumption, so nothing in it may
be detected, its rare peaks included. ``margin`` (default 1.5) scales the model error seen to
motions that load it more; ``spread`` (default 2) adds two robust standard deviations of the
joint's residual: a joint whose model error is large all along (a wrong URDF, an unmodelled
load) drifts further on motion it was not calibrated on than its peak alone says, while a
joint with a quiet residual and one sharp peak gets little; ``floor`` (default 0.2 N m) keeps a
joint that barely moved, or whose model fits very well, from a threshold at the noise level.
The file format stays one number per joint. Measured on two real logs (docs/bag.md): neither
the spread term nor the minimum duration alone gave 0 false detections on the log the
thresholds were not calibrated on; both together did, for the URDF and the identified models.
"""
from __future__ import annotations

import math

import numpy as np

from rnea_ros.errors import InputError

DEFAULT_MARGIN = 1.5
DEFAULT_FLOOR = 0.2  # N m (N for prismatic joints)
DEFAULT_SPREAD = 2.0  # robust standard deviations (1.4826 MAD)
DEFAULT_MIN_DURATION = 0.01  # s over a threshold before a collision is on
# The node parameters of the thresholds: THRESHOLD_PARAMETER + '<joint>' (the default set) and
# THRESHOLD_PARAMETER + '<profile>.<joint>' (a named set); the one place that spells the prefix.
THRESHOLD_PARAMETER = 'collision_threshold.'
MIN_THRESHOLD, MAX_THRESHOLD = 1e-6, 1e6  # N m or N: the bounds of a collision threshold
MAD_TO_SIGMA = 1.4826
RULE = (f'{DEFAULT_MARGIN:g} * max |r| + {DEFAULT_SPREAD:g} * 1.4826 MAD(r) + {DEFAULT_FLOOR:g}, '
        f'over for {1e3 * DEFAULT_MIN_DURATION:g} ms')


def _thresholds(values, name: str, size: int | None = None) -> np.ndarray:
    array = np.array(values, dtype=np.float64) if not isinstance(values, str) else None
    if array is None or array.ndim != 1 or (size is not None and array.shape != (size,)):
        raise InputError(f'{name}: expected {size or "one per joint"} positive numbers')
    if not np.all(np.isfinite(array) & (array > 0)):
        bad = int(np.argmax(~(np.isfinite(array) & (array > 0))))
        raise InputError(f'{name}[{bad}] is {array[bad]}: expected a finite number > 0')
    return array


class CollisionDetector:
    """
    Per-joint thresholds on abs(r): ``update`` says whether a collision is on (module docstring).

    ``thresholds`` (nv,) > 0 [N m]; ``joint_names`` names the joints in the events (default:
    their indices); ``min_duration`` (s, >= 0): how long abs(r) must stay over a threshold
    before a collision is on (0: at the first sample over). ``events``: dicts with 'start' and
    'end' (stamps in s; 'start' the first sample over, 'end' None while on), 'joint' and
    'peak' (abs(r) of that joint, N m).
    """

    def __init__(self, thresholds, joint_names=None, min_duration=DEFAULT_MIN_DURATION):
        self.min_duration = min_duration
        self._thresholds = _thresholds(thresholds, 'collision_thresholds')
        nv = self._thresholds.shape[0]
        if joint_names is not None and len(joint_names) != nv:
            raise InputError(f'joint_names: expected {nv} names, got {len(joint_names)}')
        self._names = list(joint_names) if joint_names is not None else list(range(nv))
        self.reset()

    @property
    def thresholds(self) -> np.ndarray:
        """Per-joint thresholds on abs(r) (nv,) [N m]; settable."""
        return self._thresholds.copy()

    @thresholds.setter
    def thresholds(self, values) -> None:
        self._thresholds = _thresholds(values, 'collision_thresholds',
                                       self._thresholds.shape[0])

    @property
    def min_duration(self) -> float:
        """Seconds over a threshold before a collision is on; settable (from the next sample)."""
        return self._min_duration

    @min_duration.setter
    def min_duration(self, min_duration: float) -> None:
        if isinstance(min_duration, bool) or not isinstance(min_duration, (int, float)) \
                or not math.isfinite(min_duration) or min_duration < 0:
            raise InputError(f'min_duration: expected a finite number >= 0 (s), got '
                             f'{min_duration!r}')
        self._min_duration = float(min_duration)

    @property
    def over(self) -> bool:
        """Whether the last sample was over a threshold (confirmed or not yet)."""
        return self._event is not None

    @property
    def active(self) -> bool:
        """Whether a collision is on: over a threshold at the last sample, for min_duration."""
        return self._event is not None and self._confirmed

    @property
    def events(self) -> list[dict]:
        """Events so far, oldest first (the current one last, 'end' None while it lasts)."""
        return [dict(event) for event in self._events]

    def reset(self) -> None:
        """Forget the events; no collision is on."""
        self._events = []
        self._event = None
        self._confirmed = False
        self._ratio = 0.0

    def update(self, stamp: float, r) -> bool:
        """Take one residual r (nv,) at ``stamp`` (s); return whether a collision is on."""
        r = np.abs(np.asarray(r, dtype=np.float64))
        if r.shape != self._thresholds.shape:
            raise InputError(f'r: expected shape {self._thresholds.shape}, got {r.shape}')
        ratios = r / self._thresholds
        worst = int(np.argmax(ratios))
        ratio = float(ratios[worst])
        if not math.isfinite(ratio):
            raise InputError(f'r[{worst}] is {r[worst]}: values must be finite')
        if ratio <= 1.0:
            if self._event is not None and self._confirmed:
                self._event['end'] = float(stamp)
            self._event = None
            return False
        if self._event is None:
            self._event = {'start': float(stamp), 'end': None, 'joint': self._names[worst],
                           'peak': float(r[worst])}
            self._confirmed = False
            self._ratio = ratio
        elif ratio > self._ratio:
            self._event['joint'] = self._names[worst]
            self._event['peak'] = float(r[worst])
            self._ratio = ratio
        if not self._confirmed and stamp - self._event['start'] >= self._min_duration - 1e-9:
            self._confirmed = True
            self._events.append(self._event)
        return self._confirmed


def calibrate_thresholds(residuals, margin: float = DEFAULT_MARGIN,
                         floor: float = DEFAULT_FLOOR,
                         spread: float = DEFAULT_SPREAD) -> np.ndarray:
    """
    Return thresholds (nv,) from collision-free r (N, nv) (module docstring).

    margin * max abs(r) + spread * 1.4826 MAD(r) + floor, per joint.
    """
    for name, value in (('margin', margin), ('floor', floor), ('spread', spread)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
            raise InputError(f'{name}: expected a finite number >= 0, got {value!r}')
    array = np.asarray(residuals, dtype=np.float64)
    if array.ndim != 2 or array.shape[0] == 0 or not np.all(np.isfinite(array)):
        raise InputError(f'residuals: expected finite values of shape (N, nv), N > 0, got '
                         f'shape {array.shape}')
    sigma = MAD_TO_SIGMA * np.median(np.abs(array - np.median(array, axis=0)), axis=0)
    thresholds = margin * np.abs(array).max(axis=0) + spread * sigma + floor
    if not np.all(thresholds > 0):
        raise InputError('margin, floor: the thresholds must be > 0 (floor 0 and a zero '
                         'residual give none)')
    return thresholds


def detect_events(stamps, residuals, thresholds, joint_names=None,
                  min_duration=DEFAULT_MIN_DURATION) -> list[dict]:
    """Run a ``CollisionDetector`` over residuals (N, nv) at stamps (N,); return its events."""
    detector = CollisionDetector(thresholds, joint_names, min_duration)
    for stamp, r in zip(np.asarray(stamps, dtype=np.float64), np.asarray(residuals)):
        detector.update(stamp, r)
    return detector.events
