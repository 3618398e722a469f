"""
Write the identified model back into the input URDF: ``identified.urdf``.

Only what changed is rewritten, in place in the text: every other byte of the file is kept.

- Inertia: a moving body is the link its joint moves plus the links hanging below it through
  fixed joints (folded at load). A body whose parameters changed gets the change in the
  ``<inertial>`` of its joint's child link (the body frame): that link's parameters become the
  identified body's minus those of the other links, so loading the file folds back to the
  identified body (to round-off: every number is written with 17 significant digits). When
  that remainder is not a physical link inertia (e.g. a heavy fixed tool weighs more than the
  identified body), the whole body goes into the child link and the ``<inertial>`` of its other
  links are removed; the writer says which.
- Friction: each joint's identified Coulomb and viscous friction go into its
  ``<dynamics friction= damping=>``, other attributes kept (for tools that read them;
  rnea_ros takes friction from actuation.yaml).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import xml.etree.ElementTree as ET
import xml.parsers.expat as expat

import numpy as np

from rnea_ros.description.urdf_elements import parse_inertial
from rnea_ros.identify.inertial_layout import inertia_matrix

CHANGE_TOLERANCE = 1e-12  # relative to the body's prior scale: below it the URDF is kept


def _fmt(value: float) -> str:
    return repr(float(value))


def link_parameters(mass: float, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """10 parameters about the link origin of a link inertial (frame of the link)."""
    inertia = inertia_com + mass * (com @ com * np.eye(3) - np.outer(com, com))
    return np.array([mass, *(mass * com), inertia[0, 0], inertia[0, 1], inertia[1, 1],
                     inertia[0, 2], inertia[1, 2], inertia[2, 2]])


def transformed(phi: np.ndarray, rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """
    Express a link's parameters (given in its frame) in its body's frame.

    The link sits at (rotation, translation) in the body: the fold of
    ``rnea_ros.description.urdf``.
    """
    mass = phi[0]
    if mass > 0:
        com = phi[1:4] / mass
        inertia_com = inertia_matrix(phi[4:]) - mass * (com @ com * np.eye(3)
                                                        - np.outer(com, com))
    else:
        com, inertia_com = np.zeros(3), inertia_matrix(phi[4:])
    return link_parameters(mass, translation + rotation @ com,
                           rotation @ inertia_com @ rotation.T)


def _physical(phi: np.ndarray) -> bool:
    from rnea_ros.identify.inertial_layout import pseudo_inertia
    if phi[0] <= 0:
        return False
    eigen = np.linalg.eigvalsh(pseudo_inertia(phi))
    return bool(eigen.min() >= -1e-9 * max(eigen.max(), 1e-12))


def _inertial_text(phi: np.ndarray, indent: str) -> str:
    mass = float(phi[0])
    com = phi[1:4] / mass if mass > 0 else np.zeros(3)
    inertia = inertia_matrix(phi[4:]) - mass * (com @ com * np.eye(3) - np.outer(com, com))
    inner = indent + '  '
    return (f'<inertial>\n{inner}<origin xyz="{" ".join(_fmt(x) for x in com)}" rpy="0 0 0"/>\n'
            f'{inner}<mass value="{_fmt(mass)}"/>\n'
            f'{inner}<inertia ixx="{_fmt(inertia[0, 0])}" ixy="{_fmt(inertia[0, 1])}" '
            f'ixz="{_fmt(inertia[0, 2])}" iyy="{_fmt(inertia[1, 1])}" '
            f'iyz="{_fmt(inertia[1, 2])}" izz="{_fmt(inertia[2, 2])}"/>\n{indent}</inertial>')


@dataclass
class _Element:
    """Where an element sits in the file: byte span, and its children by tag."""

    attributes: dict
    start: int
    end: int = -1
    open_end: int = -1  # end of the start tag (== end for an empty element)
    children: dict = field(default_factory=dict)


def _locate(data: bytes) -> tuple[dict, dict]:
    """
    Find the byte spans of the URDF's links and joints.

    Returns (links, joints): name -> ``_Element`` of the top-level ``<link>``/``<joint>``
    elements, with their ``<inertial>``/``<dynamics>`` children.
    """
    parser = expat.ParserCreate()
    stack: list[tuple[str, _Element]] = []
    found: dict[str, dict] = {'link': {}, 'joint': {}}

    def start(tag, attributes):
        index = parser.CurrentByteIndex
        element = _Element(dict(attributes), index)
        element.open_end = data.index(b'>', index) + 1
        if len(stack) == 1 and tag in found:
            found[tag][attributes.get('name')] = element
        elif len(stack) == 2 and stack[1][0] in found and tag in ('inertial', 'dynamics'):
            stack[1][1].children.setdefault(tag, element)
        stack.append((tag, element))

    def end(tag):
        index = parser.CurrentByteIndex
        _, element = stack.pop()
        empty = data[element.open_end - 2:element.open_end] == b'/>'
        element.end = element.open_end if empty else data.index(b'>', index) + 1

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.Parse(data, True)
    return found['link'], found['joint']


def _indent(data: bytes, index: int) -> str:
    line = data.rfind(b'\n', 0, index) + 1
    prefix = data[line:index]
    return prefix.decode() if not prefix.strip() else ''


def changed_bodies(phi_new: np.ndarray, phi_old: np.ndarray, scale: np.ndarray) -> list[int]:
    """Bodies whose parameters differ by more than ``CHANGE_TOLERANCE`` of their scale."""
    return [i for i in range(phi_new.shape[0]) if np.any(
        np.abs(phi_new[i] - phi_old[i]) > CHANGE_TOLERANCE * scale[i])]


def write(urdf_xml: str, model, body_links, phi_new: np.ndarray, phi_old: np.ndarray,
          scale: np.ndarray, friction: dict[str, tuple[float, float]]) -> tuple[str, list[str]]:
    """
    Return the identified URDF text and notes on what was written.

    ``phi_*`` (nb, 10), ``scale`` (nb, 10) the prior scales; ``friction``: joint ->
    (coulomb, viscous).
    """
    data = urdf_xml.encode()
    links, joints = _locate(data)
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) byte spans
    notes: list[str] = []
    robot = ET.fromstring(urdf_xml)
    elements = {link.get('name'): link for link in robot.findall('link')}
    inertials = {name: link.find('inertial') for name, link in elements.items()}

    def set_inertial(name: str, phi: np.ndarray | None):
        link = links[name]
        old = link.children.get('inertial')
        if old is not None:
            if phi is None:  # remove the element and the blank before it
                line = data.rfind(b'\n', 0, old.start)
                begin = line if not data[line + 1:old.start].strip() else old.start
                edits.append((begin, old.end, ''))
            else:
                edits.append((old.start, old.end, _inertial_text(phi, _indent(data, old.start))))
            return
        if phi is None:
            return
        indent = _indent(data, link.start)
        text = _inertial_text(phi, indent + '  ')
        if link.open_end == link.end:  # <link name="x"/>
            tag = data[link.start:link.end - 2].decode().rstrip()
            edits.append((link.start, link.end, f'{tag}>\n{indent}  {text}\n{indent}</link>'))
        else:
            edits.append((link.open_end, link.open_end, f'\n{indent}  {text}'))

    for i in changed_bodies(phi_new, phi_old, scale):
        main = body_links[i]
        others = [f for f in model.tree.links if f.body == i and f.name != main]
        rest = np.zeros(10)
        for frame in others:
            if inertials[frame.name] is not None:
                rest += transformed(_link_phi(elements[frame.name]), frame.rotation,
                                    frame.translation)
        own = phi_new[i] - rest
        if not _physical(own) and any(inertials[f.name] is not None for f in others):
            own = phi_new[i]
            for frame in others:
                set_inertial(frame.name, None)
            notes.append(f'body of link {main!r}: the identified inertia is not the URDF '
                         f'{[f.name for f in others]} plus a physical link, so all of it went '
                         f'into {main!r} and their <inertial> were removed')
        set_inertial(main, own)
    for name, (coulomb, viscous) in friction.items():
        joint = joints[name]
        old = joint.children.get('dynamics')
        attributes = dict(old.attributes) if old is not None else {}
        attributes.update(damping=_fmt(viscous), friction=_fmt(coulomb))
        text = '<dynamics ' + ' '.join(f'{k}="{v}"' for k, v in attributes.items()) + '/>'
        if old is not None:
            edits.append((old.start, old.end, text))
        else:
            close = data.rindex(b'</joint>', joint.start, joint.end)
            indent = _indent(data, close)
            edits.append((close, close, f'  {text}\n{indent}'))
    out = data
    for begin, stop, text in sorted(edits, reverse=True):
        out = out[:begin] + text.encode() + out[stop:]
    return out.decode(), notes


def _link_phi(link: ET.Element) -> np.ndarray:
    """Return the 10 parameters about the link origin of a link's ``<inertial>``."""
    inertial = parse_inertial(link, link.get('name'))
    return link_parameters(inertial.mass, inertial.com, inertial.inertia)
