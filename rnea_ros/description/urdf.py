"""
URDF text -> ``KinematicTree``: fixed joints folded, mimic joints coupled, every number checked.

Only kinematics and inertia matter for dynamics, so this reads ``<link>/<inertial>`` and
``<joint>`` (origin, axis, limit, mimic) and ignores every other element (visuals, materials,
transmissions, gazebo tags, sensors). ``urdf-parser-py`` is not used: it refuses valid URDFs for
reasons unrelated to dynamics (textured materials, transmissions, an unnamed robot).
XML is parsed with the standard library (expat refuses entity-expansion bombs); the numbers of
each element are read and checked in ``urdf_elements``. A root in an XML namespace
(``<robot xmlns="...">``) is read like a plain one; unexpanded xacro is refused with a message
that says how to expand it (``description``).

Independent joints are numbered in depth-first order from the root link, children in document
order; their q/v layout:

- revolute, continuous, prismatic: one entry (continuous joints are one angle, not cos/sin);
- floating (and the root joint added by ``floating_base=True``): q = [x y z qx qy qz qw], the
  child pose in the joint frame; v = [linear; angular] velocity of the child in its own frame
  (Pinocchio's free-flyer convention); 7 q, 6 v;
- planar: q = v-integral = [x, y, theta]: translation along two in-plane axes b1, b2 of the joint
  frame, then rotation theta about the URDF axis n (b1 = x axis projected on the plane, or y if x
  is parallel to n; b2 = n x b1); tau = [force along b1, force along b2, torque about n].
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

from rnea_ros.description.robot_file import refuse_xacro
from rnea_ros.description.tree_builder import TreeBuilder
from rnea_ros.description.urdf_elements import Inertial, parse_inertial, parse_joint, UrdfJoint
from rnea_ros.dynamics.tree import KinematicTree
from rnea_ros.errors import URDFError

INERTIA_CHECKS = ('error', 'warn')


def parse_urdf(xml: str, *, floating_base: bool = False, inertia_check: str = 'error'
               ) -> KinematicTree:
    """
    Parse URDF text into a ``KinematicTree``; raise ``URDFError`` naming what is wrong.

    ``inertia_check``: what a rigid body (links joined by fixed joints) whose inertia is not
    physical (not positive semi-definite, or breaking the triangle inequality) gets: 'error'
    (default: ``URDFError``) or 'warn' (``ModelWarning``; the model computes the URDF's numbers
    as they are, as Pinocchio does).
    """
    if inertia_check not in INERTIA_CHECKS:
        raise ValueError(f'inertia_check must be one of {INERTIA_CHECKS}, got {inertia_check!r}')
    try:
        robot = ET.fromstring(xml)
    except ET.ParseError as exc:
        refuse_xacro(xml)
        raise URDFError(f'malformed XML: {exc}') from None
    _strip_root_namespace(robot)
    refuse_xacro(xml, robot)
    if robot.tag != 'robot':
        raise URDFError(f'root element is <{robot.tag}>, expected <robot>')

    links: dict[str, Inertial | None] = {}
    for index, link in enumerate(robot.findall('link')):
        name = link.get('name')
        if not name:
            raise URDFError(f'link #{index}: missing name attribute')
        if name in links:
            raise URDFError(f'duplicate link name {name!r}')
        links[name] = parse_inertial(link, name)
    if not links:
        raise URDFError('no <link> in the robot')

    joints: dict[str, UrdfJoint] = {}
    parent_joint: dict[str, UrdfJoint] = {}
    children: dict[str, list[UrdfJoint]] = {name: [] for name in links}
    for index, element in enumerate(robot.findall('joint')):
        joint = parse_joint(element, index)
        if joint.name in joints:
            raise URDFError(f'duplicate joint name {joint.name!r}')
        for role, link in (('parent', joint.parent), ('child', joint.child)):
            if link not in links:
                raise URDFError(f'joint {joint.name!r}: {role} link {link!r} does not exist')
        if joint.child in parent_joint:
            raise URDFError(f'link {joint.child!r} has two parents: joints '
                            f'{parent_joint[joint.child].name!r} and {joint.name!r}')
        joints[joint.name] = joint
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)

    roots = [name for name in links if name not in parent_joint]
    if not roots:
        link, chain = next(iter(links)), []
        while link not in chain:  # every link has a parent: walking up must come back
            chain.append(link)
            link = parent_joint[link].parent
        cycle = ' <- '.join(repr(name) for name in chain[chain.index(link):] + [link])
        raise URDFError(f'no root link: every link has a parent joint; the links {cycle} '
                        '(child <- parent) form a cycle')
    if len(roots) > 1:
        raise URDFError(f'several root links {roots}: a URDF must be one tree')
    root = roots[0]
    return TreeBuilder(robot.get('name') or '', links, joints, children, root, floating_base,
                       inertia_check).build()


def urdf_joint_names(xml: str) -> set[str]:
    """Return the names of every ``<joint>`` of URDF text (fixed and mimic joints included)."""
    robot = ET.fromstring(xml)
    _strip_root_namespace(robot)
    return {joint.get('name') for joint in robot.findall('joint')}


def _strip_root_namespace(robot: ET.Element) -> None:
    """
    Drop the root's XML namespace from the tags in it: ``<robot xmlns="...">`` is a URDF.

    ROS tools (urdfdom) ignore namespaces; elements of other namespaces keep theirs and are
    ignored like any unknown element.
    """
    if not robot.tag.startswith('{'):
        return
    prefix = robot.tag[:robot.tag.index('}') + 1]
    for element in robot.iter():
        if element.tag.startswith(prefix):
            element.tag = element.tag[len(prefix):]
