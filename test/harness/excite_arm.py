"""A small 3-DoF arm (a base yaw and two pitch joints) for the rnea_excite tests, as URDF text."""
from __future__ import annotations

from pathlib import Path

LINK = """  <link name="{name}">
    <inertial><origin xyz="{com}"/><mass value="{mass}"/>
      <inertia ixx="{i}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="{j}"/></inertial>
  </link>"""
JOINT = """  <joint name="{name}" type="{kind}">
    <parent link="{parent}"/><child link="{child}"/>
    <origin xyz="{xyz}"/><axis xyz="{axis}"/>
    {limit}
  </joint>"""
LIMITS = {
    'yaw': '<limit lower="-2.5" upper="2.5" velocity="2.0" effort="40"/>',
    'shoulder': '<limit lower="-1.8" upper="1.8" velocity="2.0" effort="60"/>',
    'elbow': '<limit lower="-2.2" upper="2.2" velocity="2.5" effort="30"/>',
}


def arm_urdf(limits: dict | None = None, kinds: dict | None = None) -> str:
    """Return the arm's URDF; ``limits``/``kinds``: joint -> <limit> element / type."""
    limits = {**LIMITS, **(limits or {})}
    kinds = {'yaw': 'revolute', 'shoulder': 'revolute', 'elbow': 'revolute', **(kinds or {})}
    links = [LINK.format(name='base', com='0 0 0.05', mass=5.0, i=0.02, j=0.02),
             LINK.format(name='turret', com='0 0 0.05', mass=2.0, i=0.01, j=0.008),
             LINK.format(name='upper', com='0.02 0.01 0.2', mass=3.0, i=0.04, j=0.006),
             LINK.format(name='fore', com='0.01 -0.01 0.15', mass=1.5, i=0.012, j=0.003),
             '  <link name="tip"/>']
    joints = [JOINT.format(name='yaw', kind=kinds['yaw'], parent='base', child='turret',
                           xyz='0 0 0.1', axis='0 0 1', limit=limits['yaw']),
              JOINT.format(name='shoulder', kind=kinds['shoulder'], parent='turret',
                           child='upper', xyz='0 0 0.1', axis='0 1 0',
                           limit=limits['shoulder']),
              JOINT.format(name='elbow', kind=kinds['elbow'], parent='upper', child='fore',
                           xyz='0 0 0.4', axis='0 1 0', limit=limits['elbow']),
              '  <joint name="tip_joint" type="fixed"><parent link="fore"/><child link="tip"/>'
              '<origin xyz="0 0 0.3"/></joint>']
    return '<robot name="arm">\n' + '\n'.join(links + joints) + '\n</robot>\n'


def write_arm(folder: Path, **changes) -> Path:
    """Write ``arm_urdf(**changes)`` to ``folder/arm.urdf``; return its path."""
    path = folder / 'arm.urdf'
    path.write_text(arm_urdf(**changes))
    return path
