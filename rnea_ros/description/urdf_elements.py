"""
URDF elements -> checked numbers: joints (origin, axis, limits, mimic) and link inertials.

Every number is parsed and checked here (count, finiteness, sign), and errors name the element:
``joint 'elbow' <origin xyz>: expected 3 numbers, got '0 0.5'``. ``urdf.py`` assembles the tree.
"""
from __future__ import annotations

from dataclasses import dataclass
import math
import xml.etree.ElementTree as ET

import numpy as np

from rnea_ros.errors import URDFError

MOVING_TYPES = ('revolute', 'continuous', 'prismatic', 'floating', 'planar')
KNOWN_TYPES = MOVING_TYPES + ('fixed',)


@dataclass
class UrdfJoint:
    """A URDF joint as written: types, links, origin, unit axis, limits, mimic coupling."""

    name: str
    kind: str
    parent: str
    child: str
    rotation: np.ndarray
    translation: np.ndarray
    axis: np.ndarray
    effort: float = math.inf
    velocity: float = math.inf
    lower: float = -math.inf
    upper: float = math.inf
    mimic: tuple[str, float, float] | None = None


@dataclass
class Inertial:
    """A link's ``<inertial>``: mass, centre of mass and inertia in the link frame."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray  # about the COM, in the link frame


def rpy_to_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) @ Ry(pitch) @ Rx(roll)."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def parse_numbers(text: str | None, count: int, where: str, default: str | None = None
                  ) -> np.ndarray:
    """Read ``count`` finite numbers from an attribute text (``default`` when it is None)."""
    if text is None:
        if default is None:
            raise URDFError(f'{where}: missing')
        text = default
    parts = text.split()
    expected = 'a number' if count == 1 else f'{count} numbers'
    if len(parts) != count:
        raise URDFError(f'{where}: expected {expected}, got {text!r}')
    try:
        values = np.array([float(p) for p in parts])
    except ValueError:
        raise URDFError(f'{where}: expected {expected}, got {text!r}') from None
    if not np.all(np.isfinite(values)):
        raise URDFError(f'{where}: non-finite value in {text!r}')
    return values


def parse_number(element: ET.Element, attribute: str, where: str,
                 default: float | None = None) -> float:
    """Read one number attribute of ``element`` (``default`` when it is absent)."""
    text = element.get(attribute)
    if text is None and default is not None:
        return default
    return float(parse_numbers(text, 1, f'{where} attribute {attribute!r}')[0])


def parse_origin(element: ET.Element | None, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Read an ``<origin>`` as (rotation matrix, translation); identity when it is absent."""
    if element is None:
        return np.eye(3), np.zeros(3)
    xyz = parse_numbers(element.get('xyz'), 3, f'{where} <origin xyz>', '0 0 0')
    rpy = parse_numbers(element.get('rpy'), 3, f'{where} <origin rpy>', '0 0 0')
    return rpy_to_matrix(*rpy), xyz


def parse_inertial(link: ET.Element, name: str) -> Inertial | None:
    """Read a link's ``<inertial>`` (inertia turned into the link frame); None when absent."""
    inertial = link.find('inertial')
    if inertial is None:
        return None
    where = f'link {name!r} <inertial>'
    rotation, com = parse_origin(inertial.find('origin'), where)
    mass_el = inertial.find('mass')
    mass = 0.0 if mass_el is None else parse_number(mass_el, 'value', f'{where} <mass>')
    if mass < 0:
        raise URDFError(f'{where}: negative mass {mass}')
    inertia_el = inertial.find('inertia')
    if inertia_el is None:
        local = np.zeros((3, 3))
    else:
        ixx, ixy, ixz, iyy, iyz, izz = (
            parse_number(inertia_el, key, f'{where} <inertia>', 0.0)
            for key in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'))
        local = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    return Inertial(mass, com, rotation @ local @ rotation.T)


def parse_joint(element: ET.Element, index: int) -> UrdfJoint:
    """Read a ``<joint>`` (the ``index``-th of the document, for errors before its name)."""
    name = element.get('name')
    if not name:
        raise URDFError(f'joint #{index}: missing name attribute')
    where = f'joint {name!r}'
    kind = element.get('type')
    if kind not in KNOWN_TYPES:
        raise URDFError(f'{where}: unknown type {kind!r} (expected one of {KNOWN_TYPES})')
    links = []
    for tag in ('parent', 'child'):
        sub = element.find(tag)
        link = None if sub is None else sub.get('link')
        if not link:
            raise URDFError(f'{where}: missing <{tag} link=...>')
        links.append(link)
    rotation, translation = parse_origin(element.find('origin'), where)
    axis_el = element.find('axis')
    axis = parse_numbers(None if axis_el is None else axis_el.get('xyz'), 3,
                         f'{where} <axis xyz>', '1 0 0')
    norm = float(np.linalg.norm(axis))
    if kind in ('revolute', 'continuous', 'prismatic', 'planar'):
        if norm < 1e-12:
            raise URDFError(f'{where}: zero-length <axis xyz="{axis_el.get("xyz")}"> on a '
                            f'{kind} joint')
        axis = axis / norm
    joint = UrdfJoint(name, kind, links[0], links[1], rotation, translation, axis)
    limit = element.find('limit')
    if limit is not None:
        joint.effort = parse_number(limit, 'effort', f'{where} <limit>', math.inf)
        joint.velocity = parse_number(limit, 'velocity', f'{where} <limit>', math.inf)
        if kind in ('revolute', 'prismatic'):
            joint.lower = parse_number(limit, 'lower', f'{where} <limit>', 0.0)
            joint.upper = parse_number(limit, 'upper', f'{where} <limit>', 0.0)
        if joint.effort < 0 or joint.velocity < 0:
            raise URDFError(f'{where} <limit>: effort and velocity limits must be >= 0')
    mimic = element.find('mimic')
    if mimic is not None and kind in ('floating', 'planar'):
        # Refused rather than ignored: the joint would silently become independent.
        raise URDFError(f'{where} <mimic>: a {kind} joint cannot mimic another joint '
                        '(expected revolute, continuous or prismatic)')
    if mimic is not None and kind != 'fixed':  # real URDFs put <mimic> on fixed joints
        master = mimic.get('joint')
        if not master:
            raise URDFError(f'{where} <mimic>: missing joint attribute')
        joint.mimic = (master, parse_number(mimic, 'multiplier', f'{where} <mimic>', 1.0),
                       parse_number(mimic, 'offset', f'{where} <mimic>', 0.0))
    return joint
