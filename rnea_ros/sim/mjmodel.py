"""
URDF text -> MuJoCo model, through MuJoCo's own URDF compiler.

What is kept and what is dropped:

- ``<visual>`` and ``<collision>`` are removed before MuJoCo reads the text: meshes behind
  ``package://`` cannot be loaded, and the arm's geometry takes no part in the dynamics. The
  only geoms are the gap's contact spheres and, on a floating base, a floor plane (z = 0);
  the spheres touch the floor only, never each other or the robot.
- Inertias come from ``<inertial>`` (``inertiafromgeom="false"``, no balancing, fixed-joint
  links kept as bodies: ``fusestatic="false"``).
- Mimic joints are MuJoCo joint equality constraints (MuJoCo's URDF compiler makes them).
- The URDF's ``<dynamics damping friction>`` is dropped: the joints' armature, viscous and dry
  friction are the gap's (none with ``--gap none``). Joint limits stay (MuJoCo limit
  constraints).
- ``floating_base``: a free joint on the URDF root link.

Body names are the URDF link names, joint names the URDF joint names.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import mujoco

from rnea_ros.errors import URDFError
from rnea_ros.sim.gap import Gap
from rnea_ros.sim.true_urdf import parse

SUPPORTED = ('revolute', 'continuous', 'prismatic', 'fixed')
COMPILER = {'discardvisual': 'true', 'fusestatic': 'false', 'balanceinertia': 'false',
            'inertiafromgeom': 'false', 'strippath': 'false', 'angle': 'radian'}
FLOOR_NAME = 'floor'
ROBOT_GEOM = {'contype': 0, 'conaffinity': 1}  # the spheres meet the floor, not each other
FLOOR_GEOM = {'contype': 1, 'conaffinity': 0}


def mujoco_urdf(urdf: str) -> str:
    """Return the URDF text MuJoCo is given: geometry removed, our compiler options."""
    root = parse(urdf)
    for element in list(root):
        if element.tag == 'mujoco':
            root.remove(element)
    for link in root.findall('link'):
        for tag in ('visual', 'collision'):
            for element in link.findall(tag):
                link.remove(element)
    for joint in root.findall('joint'):
        kind = joint.get('type')
        if kind not in SUPPORTED:
            raise URDFError(f'joint {joint.get("name")!r} is {kind}: the simulated robot takes '
                            f'{", ".join(SUPPORTED)} joints (and floating_base for a free base)')
        for dynamics in joint.findall('dynamics'):
            joint.remove(dynamics)
    extension = ET.SubElement(root, 'mujoco')
    ET.SubElement(extension, 'compiler', **COMPILER)
    return ET.tostring(root, encoding='unicode')


def build_model(urdf: str, gap: Gap, *, floating_base: bool, timestep: float,
                gravity=(0.0, 0.0, -9.81)) -> mujoco.MjModel:
    """
    Compile the plant: ``urdf`` is the true URDF (``true_urdf.apply_gap`` already applied).

    Joint terms and contact spheres come from ``gap``. Raises ``URDFError`` with MuJoCo's
    message when MuJoCo cannot compile the robot.
    """
    try:
        spec = mujoco.MjSpec.from_string(mujoco_urdf(urdf))
    except ValueError as error:
        raise URDFError(f'MuJoCo cannot read the URDF: {_one_line(error)}') from None
    spec.option.timestep = timestep
    spec.option.gravity = list(gravity)
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    for joint in spec.joints:
        terms = gap.joint_terms(joint.name)
        joint.armature = terms['armature']
        joint.damping = [terms['viscous'], 0.0, 0.0]  # linear term only
        joint.frictionloss = terms['coulomb']
    if floating_base:
        root = spec.worldbody.first_body()
        root.add_freejoint(name='root_joint')
        spec.worldbody.add_geom(name=FLOOR_NAME, type=mujoco.mjtGeom.mjGEOM_PLANE,
                                size=[0, 0, 1], friction=[1.0, 0.005, 0.0001], **FLOOR_GEOM)
    for link, sphere in gap.contact_spheres.items():
        spec.body(link).add_geom(name=f'contact_{link}', type=mujoco.mjtGeom.mjGEOM_SPHERE,
                                 size=[sphere.radius, 0, 0], pos=list(sphere.position),
                                 friction=[sphere.friction, 0.005, 0.0001], **ROBOT_GEOM)
    try:
        return spec.compile()
    except ValueError as error:
        raise URDFError(f'MuJoCo cannot compile the URDF: {_one_line(error)}') from None


def _one_line(error: Exception) -> str:
    return ' '.join(str(error).split())
