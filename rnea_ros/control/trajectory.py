"""
Joint trajectories without ROS: validation, sampling in time, derivatives at the points.

A ``Trajectory`` holds what a ``trajectory_msgs/JointTrajectory`` carries, as arrays: the point
times (seconds from the trajectory start, strictly increasing) and, per point, positions and
optionally velocities and accelerations (all points carry the same fields, as
joint_trajectory_controller requires).

Sampling (``TrajectorySampler``) interpolates the way joint_trajectory_controller does, from the
derivatives the points carry:

- positions only: linear between points (velocity = the segment's slope, acceleration 0);
- positions + velocities: cubic Hermite;
- positions + velocities + accelerations: quintic.

Before the first point and after the last, the sample holds that point's position at rest (zero
velocity and acceleration). A single-point trajectory is constant: its fields at any time.

The simulated robot samples with a sampler of its own (``rnea_ros.sim.trajectory``, scipy's
interpolants), kept apart on purpose as an independent check (``test/sim/test_two_samplers.py``).

``point_derivatives`` gives (q, v, a) at each point to fill the points' efforts: the fields the
points carry as they are, and the missing derivatives by differentiating a spline: with velocities,
the accelerations of the cubic Hermite interpolation (at an interior point, the mean of the values
just before and just after it, since the Hermite's acceleration jumps there); with positions only,
the C2 cubic spline through the positions with not-a-knot ends (exact for cubic motions; linear
interpolation has no usable acceleration).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from numba import njit
import numpy as np

from rnea_ros.control.joint_input import DUPLICATE_NAME, LENGTH_MISMATCH, NON_FINITE, Rejected

# Rejection reasons specific to trajectories (the others come from joint_input).
TIME_NOT_INCREASING = 'time_not_increasing'
MISSING_FIELD = 'missing_field'
EMPTY = 'empty'


@dataclass(frozen=True)
class Trajectory:
    """Points of a joint trajectory as arrays; (N, n) per field, None where not carried."""

    joint_names: tuple[str, ...]
    times: np.ndarray
    positions: np.ndarray | None
    velocities: np.ndarray | None
    accelerations: np.ndarray | None

    @property
    def n_points(self) -> int:
        return len(self.times)

    @property
    def duration(self) -> float:
        return float(self.times[-1])

    @property
    def interpolation(self) -> str:
        """'constant' (one point), 'linear', 'cubic' or 'quintic'."""
        if self.n_points == 1:
            return 'constant'
        if self.accelerations is not None:
            return 'quintic'
        return 'cubic' if self.velocities is not None else 'linear'

    @classmethod
    def from_points(cls, joint_names: Sequence[str], points: Sequence) -> Trajectory:
        """
        Build and validate; ``points``: (time_from_start [s], positions, velocities, accels).

        Every point must carry the same fields, each empty or of ``len(joint_names)`` values, all
        finite; several points need positions, increasing times, and velocities if they carry
        accelerations. Raises ``joint_input.Rejected`` naming the point and field.
        """
        names = tuple(joint_names)
        n = len(names)
        if len(set(names)) != n:
            repeated = sorted({name for name in names if names.count(name) > 1})
            raise Rejected(DUPLICATE_NAME, f'joint_names repeats {repeated}')
        if not points:
            raise Rejected(EMPTY, 'the trajectory has no points')
        fields = ('positions', 'velocities', 'accelerations')
        carried = [len(points[0][1 + f]) > 0 for f in range(3)]
        arrays = [np.zeros((len(points), n)) if carried[f] else None for f in range(3)]
        times = np.zeros(len(points))
        for k, point in enumerate(points):
            times[k] = point[0]
            for f, field in enumerate(fields):
                size = len(point[1 + f])
                if size != (n if carried[f] else 0):
                    expected = (f'{n} (one per joint name)' if carried[f] else
                                '0 (point 0 has none)')
                    raise Rejected(LENGTH_MISMATCH,
                                   f'points[{k}].{field} has {size} values, expected {expected}')
                if size:
                    arrays[f][k] = point[1 + f]
        for f, field in enumerate(fields):
            if arrays[f] is not None and not np.all(np.isfinite(arrays[f])):
                k, j = np.argwhere(~np.isfinite(arrays[f]))[0]
                raise Rejected(NON_FINITE, f'points[{k}].{field}[{j}] (joint {names[j]!r}) is '
                                           f'{arrays[f][k, j]}')
        if not np.all(np.isfinite(times)):
            raise Rejected(NON_FINITE, 'a time_from_start is not finite')
        if len(points) > 1:
            if not carried[0]:
                raise Rejected(MISSING_FIELD, 'a multi-point trajectory needs positions')
            if carried[2] and not carried[1]:
                raise Rejected(MISSING_FIELD, 'points carry accelerations but no velocities')
            steps = np.diff(times)
            if np.any(steps <= 0):
                k = int(np.argmax(steps <= 0)) + 1
                raise Rejected(TIME_NOT_INCREASING,
                               f'points[{k}].time_from_start ({times[k]:g} s) is not after '
                               f'points[{k - 1}] ({times[k - 1]:g} s)')
        return cls(names, times, *arrays)


class TrajectorySampler:
    """Evaluates a trajectory at any time without allocating (see the module docstring)."""

    def __init__(self, trajectory: Trajectory):
        self.trajectory = trajectory
        n = len(trajectory.joint_names)
        self.end_time = trajectory.duration
        if trajectory.n_points == 1:
            self._coeffs = np.zeros((1, 6, n))
            if trajectory.positions is not None:
                self._coeffs[0, 0] = trajectory.positions[0]
            if trajectory.velocities is not None:
                self._coeffs[0, 1] = trajectory.velocities[0]
            if trajectory.accelerations is not None:
                self._coeffs[0, 2] = trajectory.accelerations[0] / 2
            self._times = np.zeros(1)
            self._constant = True
        else:
            self._coeffs = segment_coefficients(trajectory)
            self._times = np.ascontiguousarray(trajectory.times)
            self._constant = False

    def sample(self, t: float, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> None:
        """Write position, velocity, acceleration at ``t`` s from the start into q, v, a (n,)."""
        _evaluate(self._coeffs, self._times, t, self._constant, q, v, a)


def segment_coefficients(trajectory: Trajectory) -> np.ndarray:
    """(N-1, 6, n) polynomial coefficients c0..c5 of each segment in s = t - t_k."""
    p = trajectory.positions
    h = np.diff(trajectory.times)[:, None]
    p0, p1 = p[:-1], p[1:]
    coeffs = np.zeros((len(h), 6, p.shape[1]))
    coeffs[:, 0] = p0
    if trajectory.velocities is None:
        coeffs[:, 1] = (p1 - p0) / h
        return coeffs
    v0, v1 = trajectory.velocities[:-1], trajectory.velocities[1:]
    coeffs[:, 1] = v0
    if trajectory.accelerations is None:
        coeffs[:, 2] = (3 * (p1 - p0) - (2 * v0 + v1) * h) / h**2
        coeffs[:, 3] = (2 * (p0 - p1) + (v0 + v1) * h) / h**3
        return coeffs
    a0, a1 = trajectory.accelerations[:-1], trajectory.accelerations[1:]
    coeffs[:, 2] = a0 / 2
    coeffs[:, 3] = (20 * (p1 - p0) - (8 * v1 + 12 * v0) * h - (3 * a0 - a1) * h**2) / (2 * h**3)
    coeffs[:, 4] = (30 * (p0 - p1) + (14 * v1 + 16 * v0) * h + (3 * a0 - 2 * a1) * h**2) \
        / (2 * h**4)
    coeffs[:, 5] = (12 * (p1 - p0) - 6 * (v1 + v0) * h + (a1 - a0) * h**2) / (2 * h**5)
    return coeffs


@njit(cache=True, nogil=True)
def _evaluate(coeffs, times, t, constant, q, v, a):
    n = q.shape[0]
    last = times.shape[0] - 1
    if constant:
        for j in range(n):
            q[j] = coeffs[0, 0, j]
            v[j] = coeffs[0, 1, j]
            a[j] = 2.0 * coeffs[0, 2, j]
        return
    if t < times[0] or t >= times[last]:  # hold the end point at rest
        seg = 0 if t < times[0] else last - 1
        s = 0.0 if t < times[0] else times[last] - times[last - 1]
        for j in range(n):
            c = coeffs[seg, :, j]
            q[j] = c[0] + s * (c[1] + s * (c[2] + s * (c[3] + s * (c[4] + s * c[5]))))
            v[j] = 0.0
            a[j] = 0.0
        return
    lo, hi = 0, last
    while hi - lo > 1:  # times[lo] <= t < times[hi]
        mid = (lo + hi) // 2
        if times[mid] <= t:
            lo = mid
        else:
            hi = mid
    s = t - times[lo]
    for j in range(n):
        c = coeffs[lo, :, j]
        q[j] = c[0] + s * (c[1] + s * (c[2] + s * (c[3] + s * (c[4] + s * c[5]))))
        v[j] = c[1] + s * (2 * c[2] + s * (3 * c[3] + s * (4 * c[4] + s * 5 * c[5])))
        a[j] = 2 * c[2] + s * (6 * c[3] + s * (12 * c[4] + s * 20 * c[5]))


def warm_up() -> None:
    """Compile (or load from cache) the sampling kernel before the first control cycle."""
    trajectory = Trajectory.from_points(['j'], [(0.0, [0.0], [], []), (1.0, [1.0], [], [])])
    out = np.zeros(1), np.zeros(1), np.zeros(1)
    TrajectorySampler(trajectory).sample(0.5, *out)


def point_derivatives(trajectory: Trajectory) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """
    (q, v, a) at every point, (N, n) each; missing fields from the splines (module doc).

    Positions must be carried (a single point without positions gives zeros).
    """
    n_points, n = trajectory.n_points, len(trajectory.joint_names)
    q = (np.zeros((n_points, n)) if trajectory.positions is None
         else trajectory.positions.copy())
    if trajectory.velocities is not None and trajectory.accelerations is not None:
        return q, trajectory.velocities.copy(), trajectory.accelerations.copy()
    if n_points == 1:
        v = np.zeros((1, n)) if trajectory.velocities is None else trajectory.velocities.copy()
        a = (np.zeros((1, n)) if trajectory.accelerations is None
             else trajectory.accelerations.copy())
        return q, v, a
    if trajectory.velocities is not None:
        coeffs = segment_coefficients(trajectory)
        h = np.diff(trajectory.times)[:, None]
        start = 2 * coeffs[:, 2]                          # acceleration at each segment start
        end = 2 * coeffs[:, 2] + 6 * coeffs[:, 3] * h     # and at its end
        a = np.empty((n_points, n))
        a[0], a[-1] = start[0], end[-1]
        a[1:-1] = (end[:-1] + start[1:]) / 2
        return q, trajectory.velocities.copy(), a
    v, a = _not_a_knot_spline(trajectory.times, q)
    return q, v, a


def _not_a_knot_spline(t: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Velocities and accelerations at the knots of the C2 cubic spline through p (N, n)."""
    n_points = len(t)
    h = np.diff(t)
    slope = np.diff(p, axis=0) / h[:, None]
    if n_points == 2:
        return np.repeat(slope, 2, axis=0), np.zeros_like(p)
    if n_points == 3:  # not-a-knot on 3 points: the parabola through them
        curvature = 2 * (slope[1] - slope[0]) / (h[0] + h[1])
        v = slope[0] + curvature / 2 * (2 * t[:, None] - t[0] - t[1])
        return v, np.repeat(curvature[None], 3, axis=0)
    system = np.zeros((n_points, n_points))
    rhs = np.zeros_like(p)
    # Not-a-knot: the third derivative is continuous at the second and the second-last knots.
    system[0, :3] = -h[1], h[0] + h[1], -h[0]
    system[-1, -3:] = -h[-1], h[-2] + h[-1], -h[-2]
    for k in range(1, n_points - 1):  # continuity of the second derivative at interior knots
        system[k, k - 1:k + 2] = h[k - 1], 2 * (h[k - 1] + h[k]), h[k]
        rhs[k] = 6 * (slope[k] - slope[k - 1])
    accel = np.linalg.solve(system, rhs)
    v = np.empty_like(p)
    v[:-1] = slope - h[:, None] * (2 * accel[:-1] + accel[1:]) / 6
    v[-1] = slope[-1] + h[-1] * (accel[-2] + 2 * accel[-1]) / 6
    return v, accel
