"""
What an excitation trajectory must respect: joint limits, the rest configuration, planes.

Per joint of the URDF (one-DoF joints; a fixed base): the position range shrunk about its
middle by the safety factor ``--limits-scale`` F, the velocity and effort limits times F, and
the acceleration limit ``--acceleration-limit`` (URDFs have none). A joint that moves needs a
velocity and an effort limit (refused without one: no safe value can be assumed); a joint
without position limits (a continuous joint) is given rest +- pi (before F), and a warning
says so. Joints left out of ``--joints`` are held at their rest position; their effort
limits still apply (gravity and the moving joints load them).

The rest configuration (``--rest JOINT=VALUE,...``; default per joint: 0 when it lies inside
the scaled range, else the middle of the range) is where the trajectory starts and ends at
rest: it must lie inside the scaled range, gravity there must stay within the scaled effort
limits, and every ``--keep-above LINK:Z`` plane must lie below the link's origin there, or no
trajectory can satisfy the limits (``ExciteError``, one line).
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from rnea_ros.errors import InputError
from rnea_ros.recording import locks


class ExciteError(InputError):
    """Limits no trajectory can satisfy, or an option that cannot hold (one line)."""


@dataclass(frozen=True)
class Limits:
    """
    The limits the trajectory keeps, per joint of the model (``RobotModel.joint_names``).

    ``lower``/``upper`` [rad or m] the scaled position range, ``velocity``, ``acceleration``
    and ``effort`` (inf: none) the scaled magnitudes, ``rest`` the rest configuration,
    ``moving`` the indices of the joints that move, ``assumed`` notes on values not in the URDF.
    """

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    effort: np.ndarray
    rest: np.ndarray
    moving: np.ndarray
    scale: float
    assumed: tuple[str, ...]


@dataclass(frozen=True)
class Plane:
    """``--keep-above LINK:Z``: the origin of ``link`` stays at world z >= ``height`` [m]."""

    link: str
    height: float

    @property
    def text(self) -> str:
        """Return the option's text, ``LINK:Z``."""
        return f'{self.link}:{self.height:g}'


def unit(joint) -> str:
    """Return the position unit of a joint: m for prismatic joints, else rad."""
    return 'm' if joint.kind == 'prismatic' else 'rad'


def effort_unit(joint) -> str:
    """Return the effort unit of a joint: N for prismatic joints, else N m."""
    return 'N' if joint.kind == 'prismatic' else 'N m'


def parse_plane(text: str) -> Plane:
    """Parse ``LINK:Z`` (the height in metres, world frame)."""
    link, sign, value = text.rpartition(':')
    try:
        height = float(value)
    except ValueError:
        height = math.nan
    if not (link and sign and math.isfinite(height)):
        raise ExciteError(f'--keep-above {text}: expected LINK:Z, Z a finite height in metres')
    return Plane(link, height)


def moving_joints(model, joints: str | None) -> np.ndarray:
    """Return the indices of the joints named in the ``--joints J1,J2`` text (default: all)."""
    if joints is None:
        return np.arange(model.nv)
    names = [name.strip() for name in joints.split(',') if name.strip()]
    index = {name: k for k, name in enumerate(model.joint_names)}
    unknown = [name for name in names if name not in index]
    if unknown or not names:
        raise ExciteError(f'--joints: {unknown or joints!r} not joints of the URDF; joints: '
                          f'{list(model.joint_names)}')
    if len(set(names)) < len(names):
        raise ExciteError(f'--joints {joints}: a joint is named twice')
    return np.array(sorted(index[name] for name in names))


def joint_limits(model, moving: np.ndarray, rest_text: str | None, scale: float,
                 acceleration: float) -> Limits:
    """Gather and scale the limits, and choose the rest configuration (module docstring)."""
    if not 0.0 < scale <= 1.0:
        raise ExciteError(f'--limits-scale {scale:g}: expected a factor in (0, 1]')
    if not (math.isfinite(acceleration) and acceleration > 0.0):
        raise ExciteError(f'--acceleration-limit {acceleration:g}: expected a positive number')
    joints = model.joints
    if model.floating_base or any(joint.nv != 1 for joint in joints):
        raise ExciteError('the URDF has a floating or multi-DoF joint: rnea_excite designs '
                          'motions of fixed-base robots with one-DoF joints')
    given = locks.parse(rest_text, joints, '--rest')
    n = model.nv
    lower, upper = np.empty(n), np.empty(n)
    velocity, effort = np.empty(n), np.empty(n)
    rest = np.empty(n)
    assumed = []
    for k, joint in enumerate(joints):
        for name, value in (('velocity', joint.velocity_limit), ('effort', joint.effort_limit)):
            if k in moving and not (math.isfinite(value) and value > 0.0):
                raise ExciteError(f'joint {joint.name!r} has no {name} limit in the URDF: add '
                                  f'<limit {name}="..."/>, or hold it still (leave it out of '
                                  '--joints)')
        low, high = joint.lower, joint.upper
        if not (math.isfinite(low) and math.isfinite(high)):
            centre = given.get(joint.name, 0.0)
            low, high = centre - math.pi, centre + math.pi
            if k in moving:
                assumed.append(f'joint {joint.name!r} has no position limits in the URDF: '
                               f'assumed [{low:g}, {high:g}] {unit(joint)} (rest +- pi)')
        middle, half = 0.5 * (low + high), 0.5 * (high - low) * scale
        lower[k], upper[k] = middle - half, middle + half
        velocity[k] = joint.velocity_limit * scale
        effort[k] = joint.effort_limit * scale if joint.effort_limit > 0.0 else math.inf
        rest[k] = given.get(joint.name, 0.0 if lower[k] <= 0.0 <= upper[k] else middle)
        if not lower[k] <= rest[k] <= upper[k]:
            raise ExciteError(f'rest configuration: joint {joint.name!r} at {rest[k]:g} '
                              f'{unit(joint)} is outside its limits times --limits-scale '
                              f'{scale:g} ([{lower[k]:g}, {upper[k]:g}] {unit(joint)})')
    gravity = model.gravity_torques(rest)
    for k, joint in enumerate(joints):
        if abs(gravity[k]) > effort[k]:
            raise ExciteError(f'rest configuration: gravity needs {abs(gravity[k]):.4g} '
                              f'{effort_unit(joint)} at joint {joint.name!r}, more than its '
                              f'effort limit times --limits-scale {scale:g} ({effort[k]:g} '
                              f'{effort_unit(joint)})')
    return Limits(lower, upper, velocity, np.full(n, acceleration), effort, rest,
                  np.asarray(moving), scale, tuple(assumed))


def check_planes(model, planes: list[Plane], rest: np.ndarray) -> None:
    """Refuse unknown links and planes above a link's origin in the rest configuration."""
    for plane in planes:
        if plane.link not in model.link_names:
            raise ExciteError(f'--keep-above {plane.text}: {plane.link!r} is not a link of the '
                              'URDF')
        _, position = model.link_placement(rest, plane.link)
        if position[2] < plane.height:
            raise ExciteError(f'--keep-above {plane.text}: the link origin is at z = '
                              f'{position[2]:.4g} m in the rest configuration, below the '
                              'plane: no trajectory starting there keeps it above')
