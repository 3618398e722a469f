"""
The plant's true URDF: the given URDF with the gap's inertia changes and payload written in.

The simulated robot is built from this text, so what the plant really is can be handed to
anything that reads a URDF (``RobotModel.from_urdf_string(plant.true_urdf)``: the feed-forward
of the plant's true rigid-body model, the reference of identification). Per link that has an
``<inertial>``, in document order: the random errors of ``inertia_errors`` (drawn from the
gap's seed), then the exact ``links`` changes; then the payload is merged into its link (one
rigid body: summed mass, mass-weighted centre, parallel-axis inertia about it, in link axes).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from rnea_ros.errors import URDFError
from rnea_ros.sim.gap import Gap, TIP

ROTATING = ('revolute', 'continuous')
INERTIA_KEYS = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')


def parse(urdf: str) -> ET.Element:
    """Return the root ``<robot>`` element; ``URDFError`` when the text is no URDF."""
    try:
        root = ET.fromstring(urdf)
    except ET.ParseError as error:
        raise URDFError(f'URDF is not XML: {error}') from None
    if root.tag != 'robot':
        raise URDFError(f'URDF root element is <{root.tag}>: expected <robot>')
    return root


def tip_link(root: ET.Element) -> str:
    """
    Return the arm's flange link.

    Among the links with the most revolute joints above them and no prismatic one (a gripper's
    fingers are not the flange), the deepest counting every joint.
    """
    parent_joint = {joint.find('child').get('link'): joint for joint in root.findall('joint')}
    best, best_key = None, None
    for link in root.findall('link'):
        name = link.get('name')
        rotating = prismatic = depth = 0
        current = name
        while current in parent_joint and depth <= len(parent_joint):
            joint = parent_joint[current]
            rotating += joint.get('type') in ROTATING
            prismatic += joint.get('type') == 'prismatic'
            depth += 1
            current = joint.find('parent').get('link')
        key = (prismatic == 0, rotating, depth)
        if best_key is None or key > best_key:
            best, best_key = name, key
    return best


def rpy_matrix(rpy) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _floats(text: str | None, default) -> np.ndarray:
    return np.array([float(x) for x in text.split()] if text else default, dtype=float)


def read_inertial(link: ET.Element) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, centre of mass, rotational inertia about it in link axes) of a link."""
    inertial = link.find('inertial')
    if inertial is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    origin = inertial.find('origin')
    com = _floats(None if origin is None else origin.get('xyz'), (0.0, 0.0, 0.0))
    rotation = rpy_matrix(_floats(None if origin is None else origin.get('rpy'), (0, 0, 0)))
    mass_el, inertia_el = inertial.find('mass'), inertial.find('inertia')
    mass = float(mass_el.get('value', '0')) if mass_el is not None else 0.0
    values = {key: float(inertia_el.get(key, '0')) if inertia_el is not None else 0.0
              for key in INERTIA_KEYS}
    tensor = np.array([[values['ixx'], values['ixy'], values['ixz']],
                       [values['ixy'], values['iyy'], values['iyz']],
                       [values['ixz'], values['iyz'], values['izz']]])
    return mass, com, rotation @ tensor @ rotation.T


def write_inertial(link: ET.Element, mass: float, com, tensor) -> None:
    """Replace the link's ``<inertial>`` (origin at the com, link axes)."""
    old = link.find('inertial')
    if old is not None:
        link.remove(old)
    inertial = ET.Element('inertial')
    ET.SubElement(inertial, 'origin', xyz=' '.join(repr(float(x)) for x in com), rpy='0 0 0')
    ET.SubElement(inertial, 'mass', value=repr(float(mass)))
    ET.SubElement(inertial, 'inertia', **{
        key: repr(float(tensor['xyz'.index(key[1]), 'xyz'.index(key[2])]))
        for key in INERTIA_KEYS})
    link.insert(0, inertial)


def apply_gap(urdf: str, gap: Gap) -> str:
    """Return the plant's true URDF (see the module docstring); the caller checks names."""
    root = parse(urdf)
    rng = np.random.default_rng(gap.seed)
    links = {link.get('name'): link for link in root.findall('link')}
    for name, link in links.items():
        if link.find('inertial') is None:
            continue
        mass, com, tensor = read_inertial(link)
        draws = np.clip(rng.standard_normal(5), -3.0, 3.0)  # drawn for every link: stable
        mass_scale = max(1.0 + gap.mass_error * draws[0], 0.1)
        inertia_scale = max(1.0 + gap.inertia_error * draws[1], 0.1)
        com = com + gap.com_error * draws[2:5]
        change = gap.links.get(name)
        if change is not None:
            mass_scale *= change.mass_scale
            inertia_scale *= change.inertia_scale
            com = com + np.asarray(change.com_shift)
        if mass_scale != 1.0 or inertia_scale != 1.0 or np.any(com != read_inertial(link)[1]):
            write_inertial(link, mass * mass_scale, com, tensor * mass_scale * inertia_scale)
    if gap.payload is not None:
        name = tip_link(root) if gap.payload.link == TIP else gap.payload.link
        mass, com, tensor = merge(*read_inertial(links[name]), gap.payload.mass,
                                  np.asarray(gap.payload.com), np.diag(gap.payload.inertia))
        write_inertial(links[name], mass, com, tensor)
    return ET.tostring(root, encoding='unicode')


def merge(m1, c1, i1, m2, c2, i2) -> tuple[float, np.ndarray, np.ndarray]:
    """Two rigid bodies fixed together: mass, centre of mass, inertia about it (same axes)."""
    mass = m1 + m2
    com = (m1 * c1 + m2 * c2) / mass
    tensor = i1 + i2
    for m, c in ((m1, c1), (m2, c2)):
        d = c - com
        tensor = tensor + m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, com, tensor
