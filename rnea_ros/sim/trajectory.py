"""
Joint trajectories the simulated robot tracks, sampled as joint_trajectory_controller does.

The points' positions, velocities and accelerations give piecewise polynomials through them
(scipy ``PPoly``; the interpolants of scipy's ``BPoly.from_derivatives``): linear with positions
only, cubic Hermite with velocities, quintic with accelerations; the points' efforts are
interpolated linearly. A trajectory whose first point comes after the moment it arrived begins at
the desired state held then (a point at its arrival is prepended), as joint_trajectory_controller
interpolates from its state before the message to the first point (``Trajectory::sample``): a
trajectory stamped to start later moves off smoothly, not with its first point's acceleration
at once. After the last point the last position is held at rest, with the last effort.

Written apart from the node's sampler (``rnea_ros.control.trajectory``) on purpose: the
simulated robot stands for the real controller, and one shared sampler would hide a bug common
to both; ``test/sim/test_two_samplers.py`` checks that the two agree.

Joints the trajectory does not name keep their desired position. ``TrajectoryError`` says in
one line why a trajectory is refused: unknown or repeated names, fields of the wrong length,
non-finite values, times that do not increase, positions outside the URDF joint limits.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rnea_ros.errors import InputError

if TYPE_CHECKING:
    from scipy.interpolate import PPoly


def load_scipy() -> None:
    """
    Import scipy's interpolate (~1 s) now: a trajectory is built under the sim's step lock.

    Not at this module's import: ``rnea_sim`` refuses bad parameters before it loads the
    physics (MuJoCo, numba, scipy).
    """
    import scipy.interpolate  # noqa: F401


class TrajectoryError(InputError):
    """A trajectory the robot refuses; ``reason`` is a short key for the counters."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass
class Reference:
    """Desired joint state of every actuated joint at one instant, and the feed-forward."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    effort: np.ndarray


class TrackedTrajectory:
    """One accepted trajectory: polynomials in the sim time over the named joints' columns."""

    def __init__(self, columns: np.ndarray, start: float, times: np.ndarray,
                 positions: np.ndarray, velocities: np.ndarray | None,
                 accelerations: np.ndarray | None, efforts: np.ndarray | None,
                 held: Reference, arrival: float):
        self.columns = columns
        self.start = start
        origin = arrival - start  # the arrival in the trajectory's time
        if times[0] > origin:  # begin at the reference held when the trajectory arrived
            times = np.concatenate([[origin], times])
            positions = np.vstack([held.position[columns], positions])
            if velocities is not None:
                velocities = np.vstack([held.velocity[columns], velocities])
            if accelerations is not None:
                accelerations = np.vstack([held.acceleration[columns], accelerations])
            if efforts is not None:
                efforts = np.vstack([held.effort[columns], efforts])
        self.begin, self.end = float(times[0]), float(times[-1])
        self.last = (positions[-1], None if efforts is None else efforts[-1])
        self.single = times.size == 1
        if not self.single:
            fields = [f for f in (positions, velocities, accelerations) if f is not None]
            self.position = _stack(times, fields)
            self.velocity = self.position.derivative()
            self.acceleration = self.velocity.derivative()
            self.effort = None if efforts is None else _stack(times, [efforts])

    def sample(self, t: float, reference: Reference) -> None:
        """Write the desired state at sim time ``t`` into ``reference`` (its named columns)."""
        local = t - self.start
        columns = self.columns
        if self.single or local >= self.end:
            reference.position[columns] = self.last[0]
            reference.velocity[columns] = 0.0
            reference.acceleration[columns] = 0.0
            if self.last[1] is not None:
                reference.effort[columns] = self.last[1]
            return
        local = max(local, self.begin)
        reference.position[columns] = self.position(local)
        reference.velocity[columns] = self.velocity(local)
        reference.acceleration[columns] = self.acceleration(local)
        if self.effort is not None:
            reference.effort[columns] = self.effort(local)

    def finished(self, t: float) -> bool:
        return t - self.start >= self.end


def _stack(times: np.ndarray, fields: list[np.ndarray]) -> PPoly:
    """
    One vector-valued PPoly through the points' derivatives: the Hermite interpolant.

    ``fields``: positions, then velocities and accelerations when given ((N, joints) each):
    per interval the line, the cubic or the quintic matching them at both ends (the polynomial
    ``BPoly.from_derivatives`` builds), its coefficients from closed forms over every interval
    and joint at once: a 1000-point trajectory takes a millisecond, not the 0.4 s of a Python
    loop over intervals that stalled the stepping thread.
    """
    h = np.diff(times)[:, None]
    p0, p1 = fields[0][:-1], fields[0][1:]
    dp = p1 - p0
    if len(fields) == 1:
        coefficients = [dp / h, p0]
    elif len(fields) == 2:
        v0, v1 = fields[1][:-1], fields[1][1:]
        coefficients = [(v0 + v1 - 2.0 * dp / h) / h**2, (3.0 * dp / h - 2.0 * v0 - v1) / h,
                        v0, p0]
    else:
        v0, v1 = fields[1][:-1], fields[1][1:]
        a0, a1 = fields[2][:-1], fields[2][1:]
        coefficients = [(12.0 * dp - 6.0 * (v0 + v1) * h - (a0 - a1) * h**2) / (2.0 * h**5),
                        (-30.0 * dp + (14.0 * v1 + 16.0 * v0) * h + (3.0 * a0 - 2.0 * a1) * h**2)
                        / (2.0 * h**4),
                        (20.0 * dp - (8.0 * v1 + 12.0 * v0) * h - (3.0 * a0 - a1) * h**2)
                        / (2.0 * h**3),
                        0.5 * a0, v0, p0]
    from scipy.interpolate import PPoly  # loaded by JointController already (load_scipy)
    return PPoly(np.stack(coefficients), times)


def build_trajectory(names, times, positions, velocities, accelerations, efforts, *,
                     joint_index: dict, lower: np.ndarray, upper: np.ndarray, start: float,
                     held: Reference, arrival: float | None = None) -> TrackedTrajectory:
    """
    Check a received trajectory and build it (``TrajectoryError`` says why not).

    ``names`` the message's joint names, ``times`` (N,) seconds from the start, the fields
    (N, len(names)) arrays or None where the points carry none; ``joint_index`` maps actuated
    joint names to columns, ``lower``/``upper`` the URDF limits per column; ``start`` the sim
    time of the trajectory's time 0; ``held`` the reference when it arrived, at sim time
    ``arrival`` (default ``start``).
    """
    unknown = [n for n in names if n not in joint_index]
    if unknown:
        raise TrajectoryError('unknown_joint', f'unknown joint {unknown[0]!r}; expected names '
                              f'of {", ".join(joint_index)}')
    if len(set(names)) != len(names) or not names:
        raise TrajectoryError('bad_names', 'joint_names is empty or repeats a name')
    if times.size == 0:
        raise TrajectoryError('empty', 'the trajectory has no points')
    if not np.all(np.diff(times) > 0) or times[0] < 0:
        raise TrajectoryError('time_not_increasing', 'time_from_start must increase strictly '
                              'from 0 or later')
    shape = (times.size, len(names))
    for field, values in (('positions', positions), ('velocities', velocities),
                          ('accelerations', accelerations), ('effort', efforts)):
        if values is None:
            if field == 'positions':
                raise TrajectoryError('missing_field', 'every point needs positions')
            continue
        if values.shape != shape:
            raise TrajectoryError('length_mismatch', f'a point has {field} of another length '
                                  f'than joint_names ({len(names)})')
        if not np.all(np.isfinite(values)):
            raise TrajectoryError('non_finite', f'a point has non-finite {field}')
    if accelerations is not None and velocities is None:
        raise TrajectoryError('missing_field', 'points with accelerations need velocities')
    columns = np.array([joint_index[n] for n in names], dtype=int)
    below = positions < lower[columns]
    above = positions > upper[columns]
    if np.any(below | above):
        point, k = np.argwhere(below | above)[0]
        bound = lower[columns[k]] if below[point, k] else upper[columns[k]]
        raise TrajectoryError('outside_limits', f'point {point} puts {names[k]} at '
                              f'{positions[point, k]:.6g}, beyond its limit {bound:.6g}')
    return TrackedTrajectory(columns, start, times, positions, velocities, accelerations,
                             efforts, held, start if arrival is None else arrival)
