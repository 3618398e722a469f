"""
What a set of collision thresholds can detect: the smallest detectable force, and a bag too still.

A pure force F = f u (magnitude f [N], unit direction u, world axes) on a link's origin shows in
the external joint torques as tau = J^T F, J the (3, nv) linear rows of the link's Jacobian
(``RobotModel.link_jacobian``, 'local_world_aligned'). The observer's residual follows tau, so
the force is detected once |tau_j| >= threshold_j on some joint j, i.e. from

    f(q, u) = 1 / max_j (|J_j . u| / threshold_j)          (J_j: column j of J)

At one pose q of the bag:

- best direction: min over u of f(q, u) = 1 / max_j (|J_j| / threshold_j) (u along the column
  that reaches its threshold first);
- worst direction: max over u of f(q, u), over ``DIRECTIONS`` unit directions spread evenly over
  the sphere (a Fibonacci lattice); infinite (reported as null) when some direction moves no
  watched joint at all (a singular pose).

Over the bag's poses (at most ``POSES`` of the analysed samples, evenly spaced in time) each is
summarised by its minimum, median and maximum; the **guaranteed** force is the maximum over the
poses of the worst-direction value: a force at least this large, in any direction, on the link's
origin at any pose of the bag, crosses a threshold (in the steady state of the observer's first
order response: a push held for a few 1/K). The link is the flange (``flange``): the link
named as ROS-Industrial's URDF conventions name it (``flange``, ``tool0``, or ending in
``_flange``, ``_tool0``, ``end_effector``: ``FLANGE_NAMES``); without one, of the links
whose Jacobian at the bag's first pose has the most columns with a rotation (the revolute
joints that carry it), the one carried by the fewest other joints (a gripper's fingers hang on
prismatic joints after the flange), the furthest from the origin of the body they are fixed
to; the URDF's document order breaks a tie. The model's last link is no flange in
general: the ur5's is ``world``, the panda's a finger.

``DETECTABLE_FORCE`` [N] is the force a collision detector of an arm beside people should find:
when the guaranteed force is above it, the summary warns (the thresholds, set by the model's
residual floor on this bag, are too high for it: identify the model first). A calibration bag
must move the arm: joints that never leave the stiction band (|v| below
``STICTION_VELOCITY`` in every sample) calibrate nothing about the dynamics; the bag is refused
when no joint moves (``check_motion``) and warned about, naming them, when some do not.
"""
from __future__ import annotations

import math

import numpy as np

from rnea_ros.dynamics.actuation import DEFAULT_VELOCITY_THRESHOLD
from rnea_ros.errors import InputError

DETECTABLE_FORCE = 20.0  # N: the force on the flange a set of thresholds should detect
DIRECTIONS = 2000  # unit directions of the worst-direction search
POSES = 500  # most poses of the bag the detectable force is computed at
STICTION_VELOCITY = DEFAULT_VELOCITY_THRESHOLD  # rad/s or m/s: the actuation model's stiction band
FLANGE_NAMES = (('flange', 'tool0'), ('_flange', '_tool0', 'end_effector'))  # exact, endings


def directions(count: int = DIRECTIONS) -> np.ndarray:
    """Return ``count`` unit vectors (count, 3) spread evenly over the sphere (Fibonacci)."""
    k = np.arange(count) + 0.5
    z = 1.0 - 2.0 * k / count
    radius = np.sqrt(1.0 - z * z)
    angle = math.pi * (3.0 - math.sqrt(5.0)) * k
    return np.column_stack([radius * np.cos(angle), radius * np.sin(angle), z])


def forces_at_pose(jacobian: np.ndarray, thresholds: np.ndarray,
                   units: np.ndarray) -> tuple[float, float]:
    """Return (best, worst) direction detectable force [N] at one pose (module docstring)."""
    scaled = jacobian / thresholds  # (3, nv): |tau_j| / threshold_j per newton along each axis
    best = np.linalg.norm(scaled, axis=0).max()
    worst = np.abs(units @ scaled).max(axis=1).min()
    return (math.inf if best <= 0 else 1.0 / best), (math.inf if worst <= 0 else 1.0 / worst)


def flange(model, q: np.ndarray) -> str:
    """Return the arm's flange link, judged at the pose ``q`` (module docstring)."""
    exact, endings = FLANGE_NAMES
    named = [link for link in model.link_names if link in exact or link.endswith(endings)]
    if named:
        return named[0]
    scores = {}
    for link in model.link_names:
        jacobian = model.link_jacobian(q, link, frame='local_world_aligned')
        turning = np.any(np.abs(jacobian[3:]) > 1e-12, axis=0)
        carried = np.any(np.abs(jacobian) > 1e-12, axis=0)
        scores[link] = (int(turning.sum()), -int((carried & ~turning).sum()))
    top = max(scores.values())
    candidates = [link for link in model.link_names if scores[link] == top]
    bodies = [link for link in candidates if link in model.body_names] or candidates[:1]
    _, positions = model.link_placements(q, candidates + bodies[:1])
    distance = np.linalg.norm(positions[:-1] - positions[-1], axis=1)
    return candidates[int(np.argmax(distance.round(9)))]


def smallest_detectable_force(model, q: np.ndarray, thresholds: np.ndarray,
                              link: str | None = None) -> dict:
    """
    Compute the detectable force on ``link`` (default: ``flange``) over the poses ``q``.

    Returns a JSON-ready dict (module docstring): link, poses, best_direction and
    worst_direction (min, median, max over the poses [N]; null: infinite), guaranteed [N].
    """
    link = link or flange(model, q[0])
    rows = np.unique(np.linspace(0, len(q) - 1, min(POSES, len(q))).round().astype(int))
    units = directions()
    best, worst = np.empty(len(rows)), np.empty(len(rows))
    for i, row in enumerate(rows):
        jacobian = model.link_jacobian(q[row], link, frame='local_world_aligned')[:3]
        best[i], worst[i] = forces_at_pose(jacobian, np.asarray(thresholds, float), units)

    def stats(values):
        return {name: _finite(float(function(values))) for name, function in
                (('min', np.min), ('median', np.median), ('max', np.max))}

    return {'link': link, 'poses': int(len(rows)), 'directions': DIRECTIONS,
            'best_direction': stats(best), 'worst_direction': stats(worst),
            'guaranteed': _finite(float(worst.max()))}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def force_warning(detectable: dict) -> str | None:
    """Return the warning when ``DETECTABLE_FORCE`` is not guaranteed (module docstring)."""
    guaranteed = detectable['guaranteed']
    if guaranteed is not None and guaranteed <= DETECTABLE_FORCE:
        return None
    told = 'in some direction no force' if guaranteed is None else f'only {guaranteed:.3g} N'
    easiest = detectable['best_direction']['min']
    best = 'no force at all' if easiest is None else f'from {easiest:.3g} N'
    return (f'collision thresholds: a {DETECTABLE_FORCE:g} N force on {detectable["link"]} is '
            f'not detected at every pose of this bag ({told} is detected in every direction '
            f'at every pose; best direction {best}): '
            "the model's residual sets the thresholds; identify the model first (rnea_identify,"
            ' --actuation, --measured-effort motor for motor torques)')


def still_joints(names, v: np.ndarray) -> list[str]:
    """Return the joints whose |v| stays below ``STICTION_VELOCITY`` in every sample."""
    peak = np.abs(v).max(axis=0) if len(v) else np.zeros(len(names))
    return [name for k, name in enumerate(names) if peak[k] < STICTION_VELOCITY]


def check_motion(names, v: np.ndarray) -> str | None:
    """
    Refuse a calibration bag where no joint moves; a warning naming the joints that do not.

    Raises ``InputError`` when every joint stays within the stiction band (|v| below
    ``STICTION_VELOCITY`` rad/s or m/s); returns the warning (None: all move).
    """
    still = still_joints(names, v)
    if len(still) == len(names):
        raise InputError(f'--observer: the arm never moves in this bag (|velocity| below '
                         f'{STICTION_VELOCITY:g} for every joint: {", ".join(still)}): '
                         'thresholds calibrated on it would miss the model error of motion; '
                         'record a bag of the motion to watch')
    if still:
        return (f'--observer: joints that never leave the stiction band (|velocity| below '
                f'{STICTION_VELOCITY:g}) in this bag: {", ".join(still)}; their thresholds '
                'miss the model error of their motion')
    return None


def describe(detectable: dict) -> str:
    """Return the report's sentence on the smallest detectable force (module docstring)."""
    def newtons(value):
        return 'none' if value is None else f'{value:.3g} N'

    best, worst = detectable['best_direction'], detectable['worst_direction']
    return (f'Smallest detectable force on {detectable["link"]} (a pure force on its origin, '
            f'over {detectable["poses"]} poses of the bag): {newtons(detectable["guaranteed"])} '
            f'in every direction at every pose (guaranteed); worst direction '
            f'{newtons(worst["min"])} to {newtons(worst["max"])} (median '
            f'{newtons(worst["median"])}), best direction {newtons(best["min"])} to '
            f'{newtons(best["max"])}.')
