"""
Write the identified model as MJCF, MuJoCo's robot format: ``identified.xml``.

Written directly from the model (every number with 17 significant digits, so that
``RobotModel.from_mjcf`` reads back the same model to round-off; MuJoCo's own writer keeps 6),
then compiled by MuJoCo to check that it takes it. What the file holds:

- one body per link, named as the link: a moving body (the child link of a joint, with the links
  fixed to it folded in) carries the identified inertia (``<inertial pos mass fullinertia>``:
  centre of mass and inertia about it, in the body frame) and its joint; every other link is a
  massless body without joint where the model places it (links fixed to the world: under
  ``<worldbody>``); no geometry (add meshes for a viewer or contacts);
- per joint: ``hinge`` (revolute, continuous) or ``slide`` (prismatic) along the model's axis,
  the URDF's position range and effort limit (``actuatorfrcrange``), and the actuation model's
  terms: ``armature`` = armature, ``damping`` = viscous friction, ``frictionloss`` = Coulomb
  friction (MuJoCo's frictionloss is a constraint that opposes the motion up to that level, the
  actuation model's Coulomb term the smooth sign tanh(v / velocity_threshold): equal once the
  joint moves). The offset (and an effort sensor's bias) has no MuJoCo counterpart: dropped;
- a ``<motor>`` per joint (gear 1, ``ctrlrange`` the effort limit): the command is the torque;
- ``<option gravity>``: the model's gravity.

A mimic joint is a joint without terms (its master's carry them) and a joint equality
``joint1 = offset + multiplier joint2`` (``polycoef``), which ``from_mjcf`` reads back as a mimic.

Refused, naming the joint (``MJCFError``): a floating or planar joint, a negative friction
or armature term (MuJoCo would push the joint along its motion); and any inertia MuJoCo refuses
(not positive definite: identify with ``--inertial physical``).
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np

from rnea_ros.description.mjcf import route_mujoco_warnings, WORLD
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.tree import PRISMATIC
from rnea_ros.errors import MJCFError
from rnea_ros.identify.inertial_layout import inertia_matrix

FILE_NAME = 'identified.xml'
# actuation model term -> MuJoCo joint attribute (the mapping of the module docstring)
JOINT_TERMS = (('armature', 'armature'), ('viscous', 'damping'), ('coulomb', 'frictionloss'))


def _numbers(values) -> str:
    return ' '.join(repr(float(x)) for x in np.ravel(values))


def _quaternion(rotation: np.ndarray) -> np.ndarray:
    """Return the unit quaternion [w x y z] of a rotation matrix (largest component first)."""
    r = rotation
    trace = np.trace(r)
    candidates = [trace, r[0, 0], r[1, 1], r[2, 2]]
    k = int(np.argmax(candidates))
    if k == 0:
        s = 2.0 * math.sqrt(1.0 + trace)
        quat = [0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s,
                (r[1, 0] - r[0, 1]) / s]
    else:
        i, j, n = k - 1, k % 3, (k + 1) % 3
        s = 2.0 * math.sqrt(1.0 + r[i, i] - r[j, j] - r[n, n])
        quat = [0.0] * 4
        quat[0] = (r[n, j] - r[j, n]) / s
        quat[1 + i] = 0.25 * s
        quat[1 + j] = (r[j, i] + r[i, j]) / s
        quat[1 + n] = (r[n, i] + r[i, n]) / s
    quat = np.array(quat)
    return quat / np.linalg.norm(quat)


def _placed(parent: ET.Element, name: str, rotation, translation) -> ET.Element:
    body = ET.SubElement(parent, 'body', name=name, pos=_numbers(translation))
    if not np.array_equal(rotation, np.eye(3)):
        body.set('quat', _numbers(_quaternion(np.asarray(rotation))))
    return body


def _inertial(body: ET.Element, phi: np.ndarray) -> None:
    """``<inertial>`` of a body's parameters (about its origin) as MuJoCo takes them."""
    mass = float(phi[0])
    com = phi[1:4] / mass if mass > 0 else np.zeros(3)
    inertia = inertia_matrix(phi[4:]) - mass * (com @ com * np.eye(3) - np.outer(com, com))
    ET.SubElement(body, 'inertial', pos=_numbers(com), mass=repr(mass), fullinertia=_numbers(
        [inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2],
         inertia[1, 2]]))


def _mimic(body: ET.Element, equalities: ET.Element, model: RobotModel, tree, index: int
           ) -> None:
    """Write a mimic joint, and its coupling as a joint equality (no terms: the master's)."""
    name = tree.body_names[index]
    master = next(joint.name for joint in model.joints if joint.nv == 1
                  and joint.idx_q == tree.q_index[index])
    ET.SubElement(body, 'joint', name=name, axis=_numbers(tree.axis[index]),
                  type='slide' if tree.joint_type[index] == PRISMATIC else 'hinge')
    ET.SubElement(equalities, 'joint', name=f'mimic {name}', joint1=name, joint2=master,
                  polycoef=_numbers([tree.offset[index], tree.multiplier[index], 0, 0, 0]))


def _check(model: RobotModel, actuation: Actuation) -> None:
    for joint in model.joints:
        if joint.nv != 1:
            raise MJCFError(f'joint {joint.name!r} is a {joint.kind} joint: MJCF export takes '
                            'revolute, continuous and prismatic joints')
        for term, attribute in JOINT_TERMS:
            value = float(getattr(actuation, term)[joint.idx_v])
            if value < 0:
                raise MJCFError(f"joint {joint.name!r}: {term} {value!r} < 0, MuJoCo's "
                                f'{attribute} must be >= 0')


def mjcf_text(model: RobotModel, actuation: Actuation) -> str:
    """Return the MJCF text of ``model`` with the terms of ``actuation`` (module docstring)."""
    _check(model, actuation)
    tree = model.tree
    root = ET.Element('mujoco', model=model.name or 'robot')
    ET.SubElement(root, 'compiler', angle='radian', inertiafromgeom='false', autolimits='true')
    ET.SubElement(root, 'option', gravity=_numbers(model.gravity))
    world = ET.SubElement(root, 'worldbody')
    actuators = ET.SubElement(root, 'actuator')
    equalities = ET.Element('equality')
    independent = set(model.joint_names)
    elements = {-1: world}
    phi = model.inertial_parameters()
    block = {link: row for row, link in enumerate(model.body_names)}
    for index, link in enumerate(tree.body_links):  # parents come before their children
        body = _placed(elements[int(tree.parent[index])], link, tree.rot_tree[index],
                       tree.pos_tree[index])
        elements[index] = body
        _inertial(body, phi[block[link]])
        if tree.body_names[index] not in independent:  # a mimic joint: an equality
            _mimic(body, equalities, model, tree, index)
            continue
        joint = model.joint(tree.body_names[index])
        attributes = {'name': joint.name, 'axis': _numbers(tree.axis[index]),
                      'type': 'slide' if tree.joint_type[index] == PRISMATIC else 'hinge'}
        if math.isfinite(joint.lower) and math.isfinite(joint.upper):
            attributes['range'] = _numbers([joint.lower, joint.upper])
        for term, attribute in JOINT_TERMS:
            attributes[attribute] = repr(float(getattr(actuation, term)[joint.idx_v]))
        motor = {'name': joint.name, 'joint': joint.name, 'gear': '1'}
        if math.isfinite(joint.effort_limit):
            attributes['actuatorfrcrange'] = _numbers([-joint.effort_limit, joint.effort_limit])
            motor['ctrlrange'] = attributes['actuatorfrcrange']
        ET.SubElement(body, 'joint', **attributes)
        ET.SubElement(actuators, 'motor', **motor)
    for frame in tree.links:  # every other link, massless, where the model places it
        if frame.body >= 0 and tree.body_links[frame.body] == frame.name:
            continue
        if frame.name == WORLD:  # MuJoCo's world body: the model's world frame if fixed to it
            if frame.body >= 0 or not (np.array_equal(frame.rotation, np.eye(3))
                                       and not np.any(frame.translation)):
                raise MJCFError(f'link {WORLD!r} is not the world frame: MuJoCo reserves the '
                                'name for it')
            continue
        _placed(elements[frame.body], frame.name, frame.rotation, frame.translation)
    if len(equalities):
        root.append(equalities)
    ET.indent(root)
    text = ET.tostring(root, encoding='unicode') + '\n'
    _compile(text)
    return text


def _compile(text: str) -> None:
    """Raise ``MJCFError`` with MuJoCo's reason when MuJoCo cannot compile ``text``."""
    import mujoco  # the sim's dependency: only --mjcf needs it here
    route_mujoco_warnings()
    try:
        mujoco.MjModel.from_xml_string(text)
    except ValueError as exc:
        raise MJCFError('MuJoCo cannot compile the identified model: '
                        f'{" ".join(str(exc).split())}') from None
