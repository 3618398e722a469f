"""The example-robot-data corpus as the dynamics tests walk it, the Pinocchio cases, chains."""
from __future__ import annotations

import functools
from pathlib import Path
import warnings
import xml.etree.ElementTree as ET

from harness.oracle import Oracle, robot_params, robot_path, ROBOTS_DIR
import numpy as np
import pytest

from rnea_ros import ModelWarning, RobotModel


GRAVITY = (0.7, -1.9, -3.1)  # a non-default gravity, not along any axis


# Robots of the main oracle tests, each with a fixed and a free-flyer base. Together they cover
# prismatic (pr2, tiago, baxter, panda), continuous (double_pendulum_continuous, pr2, kinova,
# tiago) and mimic joints (panda, baxter, pr2, tiago_pro, romeo, talos_full); unaligned axes come
# from romeo and the '*_unaligned' variants (every moving axis turned to a random direction).
ORACLE_ROBOTS = ('ur5', 'panda', 'solo12', 'talos_reduced', 'talos_full', 'anymal', 'baxter',
                 'pr2', 'romeo', 'tiago', 'tiago_pro', 'g1', 'double_pendulum_continuous',
                 'xarm7', 'kinova', 'icub', 'allegro', 'ur5_unaligned', 'panda_unaligned',
                 'pr2_unaligned', 'double_pendulum_continuous_unaligned')


UNALIGNED_SUFFIX = '_unaligned'


# Pinocchio 4.1 refuses these with mimic=True ('The parent joint of the mimic joint is not in
# the kinematic tree': a mimic joint comes before its master in its traversal); the oracle
# loads them with mimic=False and couples the joints itself.
PINOCCHIO_MIMIC_UNSUPPORTED = {
    'romeo_description/urdf/romeo.urdf',
    'talos_data/robots/talos_full_v2.urdf',
    'talos_data/robots/talos_full_v2_box.urdf',
}


# Corpus files that are not valid robots: both Pinocchio (mimic=True) and we refuse them.
REFUSED = {
    'ur_description/urdf/ur3.urdf': 'no <link> in the robot',
    'alex_description/urdf/alex_psyonic_hands.urdf':
        "joint 'Left_index_q2' <mimic>: master joint 'index_q1' does not exist",
}


# Corpus files with a rigid body whose inertia no rigid body can have: refused by default,
# accepted with inertia_check='warn'.
INCONSISTENT_INERTIA = {
    'romeo_description/urdf/romeo_small.urdf',
    'romeo_description/urdf/romeo_laas_small.urdf',
}


CORPUS = sorted(str(path.relative_to(ROBOTS_DIR)) for path in ROBOTS_DIR.glob('*/*/*.urdf'))
BASES = pytest.mark.parametrize('floating_base', [False, True], ids=['fixed', 'free'])


def corpus_id(relpath: str) -> str:
    path = Path(relpath)
    return f'{path.parts[0].removesuffix("_description")}/{path.stem}'


def relative_error(tau: np.ndarray, expected: np.ndarray) -> float:
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    return float(np.abs(tau - expected).max(initial=0.0)) / scale


def unaligned_axes(xml: str, seed: int) -> str:
    """Return the URDF with every moving joint's axis turned to a random unit direction."""
    robot = ET.fromstring(xml)
    rng = np.random.default_rng(seed)
    for joint in robot.findall('joint'):
        if joint.get('type') in ('revolute', 'continuous', 'prismatic'):
            axis = rng.standard_normal(3)
            axis /= np.linalg.norm(axis)
            element = joint.find('axis')
            if element is None:
                element = ET.SubElement(joint, 'axis')
            element.set('xyz', ' '.join(repr(float(x)) for x in axis))
    return ET.tostring(robot, encoding='unicode')


def fixed_joint_links(xml: str) -> list[str]:
    """Child links of the URDF's fixed joints, in document order."""
    robot = ET.fromstring(xml)
    return [joint.find('child').get('link') for joint in robot.findall('joint')
            if joint.get('type') == 'fixed']


def root_link(xml: str) -> str:
    robot = ET.fromstring(xml)
    children = {joint.find('child').get('link') for joint in robot.findall('joint')}
    return next(link.get('name') for link in robot.findall('link')
                if link.get('name') not in children)


@functools.cache
def loaded(name: str, floating_base: bool):
    """(model, oracle, URDF text) of a robot of ORACLE_ROBOTS, built once per session."""
    base = name.removesuffix(UNALIGNED_SUFFIX)
    path = robot_path(base)
    xml = path.read_text()
    if name != base:
        xml = unaligned_axes(xml, seed=sum(map(ord, name)))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ModelWarning)  # romeo's massless finger subtrees
        model = RobotModel.from_urdf_string(xml, floating_base=floating_base)
    mimic = str(path.relative_to(ROBOTS_DIR)) not in PINOCCHIO_MIMIC_UNSUPPORTED
    oracle = Oracle(model, path, floating_base, mimic=mimic, xml=xml)
    return model, oracle, xml


def random_wrenches(model: RobotModel, xml: str, rng, count: int = 4) -> dict:
    """Wrenches on the root link, the last link, fixed-joint links and random links."""
    fixed = fixed_joint_links(xml)
    names = list(model.link_names)
    links = [root_link(xml), names[-1]]
    links += list(rng.choice(fixed, size=min(2, len(fixed)), replace=False))
    links += list(rng.choice(names, size=min(count, len(names)), replace=False))
    return {link: 10.0 * rng.standard_normal(6) for link in dict.fromkeys(links)}


def robot_cases(names):
    return robot_params((name, base) for name in names for base in (False, True))


# ---------------------------------------------------------------------------- tree shapes
def chain_urdf(links: int) -> str:
    """Write a serial chain of ``links`` light links: revolute joints about x, y, z in turn."""
    parts = ['<robot name="chain">', '<link name="link_0"/>']
    axes = ('1 0 0', '0 1 0', '0 0 1')
    for k in range(1, links):
        parts.append(
            f'<link name="link_{k}"><inertial><origin xyz="0.002 0 0.005"/>'
            f'<mass value="0.01"/><inertia ixx="1e-6" iyy="2e-6" izz="1.5e-6" ixy="0" ixz="0" '
            f'iyz="0"/></inertial></link>'
            f'<joint name="joint_{k}" type="revolute"><parent link="link_{k - 1}"/>'
            f'<child link="link_{k}"/><origin xyz="0 0.001 0.01" rpy="0 0 0.1"/>'
            f'<axis xyz="{axes[k % 3]}"/>'
            f'<limit lower="-3" upper="3" effort="100" velocity="10"/></joint>')
    parts.append('</robot>')
    return '\n'.join(parts)
