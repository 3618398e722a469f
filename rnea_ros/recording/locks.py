"""
Joints held at a fixed position: ``--lock JOINT=VALUE[,...]`` and ``--lock-missing``.

A URDF often has joints the bag never publishes (a gripper on another topic or none). The
dynamics needs every joint, so such a joint is an error unless the user says where it is:
``--lock`` gives positions [rad, or m for prismatic joints], inside the URDF limits;
``--lock-missing`` holds each joint no message carries at 0, or at the limit nearest to 0 when
0 is outside its limits. A held joint has zero velocity and acceleration.
"""
from __future__ import annotations

from collections.abc import Sequence
import math

from rnea_ros.errors import InputError


def parse(text: str | None, joints: Sequence, flag: str = '--lock') -> dict[str, float]:
    """
    Parse the --lock text: joint -> position, checked against ``joints`` (``tree.Joint``).

    ``flag``: the option named in the errors (``rnea_excite --rest`` takes the same text).
    """
    if text is None:
        return {}
    by_name = {joint.name: joint for joint in joints}
    locked: dict[str, float] = {}
    for item in (part.strip() for part in text.split(',')):
        name, sign, value = (s.strip() for s in item.partition('='))
        if not (name and sign and value):
            raise InputError(f'{flag}: expected JOINT=VALUE[,JOINT=VALUE...], got {item!r}')
        if name not in by_name:
            raise InputError(f'{flag}: {name!r} is not a one-DoF joint of the URDF; joints: '
                             f'{list(by_name)}')
        try:
            position = float(value)
        except ValueError:
            position = math.nan
        if not math.isfinite(position):
            raise InputError(f'{flag} {name}={value}: the position must be a finite number '
                             '(rad, or m for a prismatic joint)')
        joint = by_name[name]
        if not joint.lower <= position <= joint.upper:
            raise InputError(f'{flag} {name}={value}: outside the joint limits '
                             f'[{joint.lower:g}, {joint.upper:g}]')
        if name in locked:
            raise InputError(f'{flag}: {name!r} is given twice')
        locked[name] = position
    return locked


def missing_positions(joints: Sequence) -> dict[str, float]:
    """Return the --lock-missing position of every joint: 0, or the limit nearest to 0."""
    return {joint.name: min(max(0.0, joint.lower), joint.upper) for joint in joints}
