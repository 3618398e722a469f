"""
Collision detection on the observer's residual r: per-joint thresholds on abs(r), calibrated.

A collision is on while any joint's abs(r_j) exceeds its threshold (no hysteresis: the
observer's first-order filter already smooths r, and the thresholds' margin keeps the quiet
residual far below them). An event runs from the first sample over a threshold to the first
sample back under all of them; it names the joint that went furthest over its threshold
(largest abs(r_j) / threshold_j) and that joint's peak abs(r_j).

Calibration (``calibrate_thresholds``) from a collision-free recording:

    threshold_j = margin * max_k abs(r_kj) + floor

The maximum, not a quantile: the recording is collision-free by assumption, so nothing in it may
be detected, its rare peaks included (the fastest accelerations, where model error is largest).
``margin`` (default 1.5) covers motions that are faster or load the model error differently from
the calibration run; ``floor`` (default 0.2 N m) keeps a joint that barely moved, or whose model
fits very well, from a threshold at the noise level.
"""
from __future__ import annotations

import math

import numpy as np

from rnea_ros.errors import InputError

DEFAULT_MARGIN = 1.5
DEFAULT_FLOOR = 0.2  # N m (N for prismatic joints)


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
    their indices). ``events``: dicts with 'start' and 'end' (stamps in s; 'end' None while
    on), 'joint' and 'peak' (abs(r) of that joint, N m).
    """

    def __init__(self, thresholds, joint_names=None):
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
    def active(self) -> bool:
        """Whether the last sample was over a threshold."""
        return self._event is not None

    @property
    def events(self) -> list[dict]:
        """Events so far, oldest first (the current one last, 'end' None while it lasts)."""
        return [dict(event) for event in self._events]

    def reset(self) -> None:
        """Forget the events; no collision is on."""
        self._events = []
        self._event = None
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
            if self._event is not None:
                self._event['end'] = float(stamp)
                self._event = None
            return False
        if self._event is None:
            self._event = {'start': float(stamp), 'end': None, 'joint': self._names[worst],
                           'peak': float(r[worst])}
            self._events.append(self._event)
            self._ratio = ratio
        elif ratio > self._ratio:
            self._event['joint'] = self._names[worst]
            self._event['peak'] = float(r[worst])
            self._ratio = ratio
        return True


def calibrate_thresholds(residuals, margin: float = DEFAULT_MARGIN,
                         floor: float = DEFAULT_FLOOR) -> np.ndarray:
    """Return thresholds (nv,) = margin * max abs(r) + floor over collision-free r (N, nv)."""
    for name, value in (('margin', margin), ('floor', floor)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
            raise InputError(f'{name}: expected a finite number >= 0, got {value!r}')
    array = np.asarray(residuals, dtype=np.float64)
    if array.ndim != 2 or array.shape[0] == 0 or not np.all(np.isfinite(array)):
        raise InputError(f'residuals: expected finite values of shape (N, nv), N > 0, got '
                         f'shape {array.shape}')
    thresholds = margin * np.abs(array).max(axis=0) + floor
    if not np.all(thresholds > 0):
        raise InputError('margin, floor: the thresholds must be > 0 (floor 0 and a zero '
                         'residual give none)')
    return thresholds


def detect_events(stamps, residuals, thresholds, joint_names=None) -> list[dict]:
    """Run a ``CollisionDetector`` over residuals (N, nv) at stamps (N,); return its events."""
    detector = CollisionDetector(thresholds, joint_names)
    for stamp, r in zip(np.asarray(stamps, dtype=np.float64), np.asarray(residuals)):
        detector.update(stamp, r)
    return detector.events
