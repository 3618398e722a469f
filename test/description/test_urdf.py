"""
urdf.py: bad URDFs are refused with a message naming the element; good ones load right.

The bad corpus is ``test/urdf/bad/``: one minimal robot per defect (its first comment says which).
The good robots are built inline; each is compared with a second URDF of the same mechanism
written another way (fixed link pre-merged, planar joint split by hand, mimic joint freed...).
"""
from __future__ import annotations

import math
from pathlib import Path
import re
import warnings

import numpy as np
import pytest

from rnea_ros import ModelWarning, RobotModel, URDFError
from rnea_ros.description.urdf import parse_urdf

BAD_DIR = Path(__file__).parent / 'urdf' / 'bad'

_SHOULDER_INERTIA = re.escape("link 'arm' (the body moved by joint 'shoulder') <inertial>: ")

# file stem -> regular expression the URDFError message must contain
BAD = {
    'malformed_xml': r'^malformed XML: mismatched tag: line 5, column 4$',
    'entity_bomb': r'^malformed XML: limit on input amplification factor',
    'root_not_robot': r'^root element is <model>, expected <robot>$',
    'no_link': r'^no <link> in the robot$',
    'link_without_name': r'^link #1: missing name attribute$',
    'no_root_cycle': (r'^no root link: every link has a parent joint; the links '
                      r"'upper_arm' <- 'forearm' <- 'upper_arm' \(child <- parent\) form a cycle"),
    'cycle_below_root': (r"^links \['loop_a', 'loop_b'\] are not reachable from root 'base' "
                         r'\(their joints form a cycle\)'),
    'several_roots': r"^several root links \['base', 'stray'\]: a URDF must be one tree$",
    'two_parents': r"^link 'forearm' has two parents: joints 'elbow' and 'shortcut'$",
    'missing_parent_link': r"^joint 'shoulder': parent link 'torso' does not exist$",
    'missing_child_link': r"^joint 'elbow': child link 'forearm' does not exist$",
    'joint_without_child': r"^joint 'shoulder': missing <child link=\.\.\.>$",
    'duplicate_link': r"^duplicate link name 'arm'$",
    'duplicate_joint': r"^duplicate joint name 'shoulder'$",
    'mimic_missing_master': r"^joint 'finger' <mimic>: master joint 'gripper' does not exist$",
    'mimic_without_joint': r"^joint 'finger' <mimic>: missing joint attribute$",
    'mimic_cycle': (r"^joint 'left_finger': mimic chain "
                    r"\['left_finger', 'right_finger', 'left_finger'\] is a cycle$"),
    'mimic_fixed_master': (r"^joint 'finger' <mimic>: master joint 'mount' is a fixed joint, "
                           r'expected revolute, continuous or prismatic$'),
    'mimic_on_planar': r"^joint 'slide' <mimic>: a planar joint cannot mimic another joint",
    'nonfinite_origin_nan': r"^joint 'shoulder' <origin xyz>: non-finite value in '0 nan 0\.5'$",
    'nonfinite_origin_inf': r"^joint 'shoulder' <origin rpy>: non-finite value in '0 0 inf'$",
    'nonfinite_origin_1e999': (r"^link 'arm' <inertial> <origin xyz>: "
                               r"non-finite value in '0 0 1e999'$"),
    'nonfinite_axis_nan': r"^joint 'shoulder' <axis xyz>: non-finite value in '0 0 nan'$",
    'nonfinite_axis_inf': r"^joint 'shoulder' <axis xyz>: non-finite value in '-inf 0 1'$",
    'nonfinite_axis_1e999': r"^joint 'shoulder' <axis xyz>: non-finite value in '0 1e999 0'$",
    'nonfinite_mass_nan': (r"^link 'arm' <inertial> <mass> attribute 'value': "
                           r"non-finite value in 'nan'$"),
    'nonfinite_mass_inf': (r"^link 'arm' <inertial> <mass> attribute 'value': "
                           r"non-finite value in 'inf'$"),
    'nonfinite_mass_1e999': (r"^link 'arm' <inertial> <mass> attribute 'value': "
                             r"non-finite value in '1e999'$"),
    'nonfinite_inertia_nan': (r"^link 'arm' <inertial> <inertia> attribute 'ixy': "
                              r"non-finite value in 'nan'$"),
    'nonfinite_inertia_inf': (r"^link 'arm' <inertial> <inertia> attribute 'iyy': "
                              r"non-finite value in 'inf'$"),
    'nonfinite_inertia_1e999': (r"^link 'arm' <inertial> <inertia> attribute 'izz': "
                                r"non-finite value in '1e999'$"),
    'nonfinite_limit_nan': (r"^joint 'shoulder' <limit> attribute 'lower': "
                            r"non-finite value in 'nan'$"),
    'nonfinite_limit_inf': (r"^joint 'shoulder' <limit> attribute 'upper': "
                            r"non-finite value in 'inf'$"),
    'nonfinite_limit_1e999': (r"^joint 'shoulder' <limit> attribute 'effort': "
                              r"non-finite value in '1e999'$"),
    'not_a_number_mass': (r"^link 'arm' <inertial> <mass> attribute 'value': "
                          r"expected a number, got 'abc'$"),
    'not_a_number_origin': (r"^joint 'shoulder' <origin xyz>: "
                            r"expected 3 numbers, got '0 abc 0\.5'$"),
    'wrong_count_origin': r"^joint 'shoulder' <origin xyz>: expected 3 numbers, got '0 0\.5'$",
    'negative_mass': r"^link 'arm' <inertial>: negative mass -1\.0$",
    'negative_effort': r"^joint 'shoulder' <limit>: effort and velocity limits must be >= 0$",
    'inertia_not_psd': (r'^' + _SHOULDER_INERTIA + r'inertia is not positive semi-definite '
                        r"\(principal moments \[-0\.0099.*\) \(load with inertia_check='warn'"),
    'inertia_triangle': (r'^' + _SHOULDER_INERTIA + r'principal moments \[0\.01.*, 0\.05\] '
                         r'break the triangle inequality \(I1 \+ I2 >= I3\)'),
    'inertia_overflow': (r'^' + _SHOULDER_INERTIA + r'mass, centre of mass or inertia too large'),
    'origin_overflow': r"^joint 'plate_joint' <origin>: position overflows",
    'zero_axis_revolute': (r"^joint 'shoulder': zero-length <axis xyz=\"0 0 0\"> "
                           r'on a revolute joint$'),
    'zero_axis_prismatic': (r"^joint 'shoulder': zero-length <axis xyz=\"0 0 0\"> "
                            r'on a prismatic joint$'),
    'unknown_joint_type': r"^joint 'shoulder': unknown type 'ball' \(expected one of \(",
    'missing_joint_name': r'^joint #0: missing name attribute$',
}


# ---------------------------------------------------------------------------- URDF builders
def _rotation(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Rz(yaw) Ry(pitch) Rx(roll), written out here rather than taken from the code under test."""
    def about(axis, angle):
        c, s = math.cos(angle), math.sin(angle)
        i, j = (axis + 1) % 3, (axis + 2) % 3  # cyclic: Ry maps z to x
        r = np.eye(3)
        r[i, i], r[i, j], r[j, i], r[j, j] = c, -s, s, c
        return r
    return about(2, yaw) @ about(1, pitch) @ about(0, roll)


def _vec(values) -> str:
    return ' '.join(repr(float(x)) for x in values)


def _link(name: str, mass: float | None = None, com=(0, 0, 0), rpy=(0, 0, 0),
          inertia=(0.01, 0, 0, 0.01, 0, 0.01)) -> str:
    if mass is None:
        return f'<link name="{name}"/>'
    keys = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')
    moments = ' '.join(f'{key}="{float(value)!r}"' for key, value in zip(keys, inertia))
    return (f'<link name="{name}"><inertial><origin xyz="{_vec(com)}" rpy="{_vec(rpy)}"/>'
            f'<mass value="{float(mass)!r}"/><inertia {moments}/></inertial></link>')


def _joint(name: str, kind: str, parent: str, child: str, xyz=(0, 0, 0), rpy=(0, 0, 0),
           axis=(0, 0, 1), extra: str = '') -> str:
    if kind in ('revolute', 'prismatic'):  # limits are compulsory for these (urdfdom)
        extra = '<limit lower="-3" upper="3" effort="100" velocity="10"/>' + extra
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{_vec(xyz)}" rpy="{_vec(rpy)}"/>'
            f'<axis xyz="{_vec(axis)}"/>{extra}</joint>')


def _robot(*parts: str, name: str | None = 'robot') -> str:
    name_attribute = '' if name is None else f' name="{name}"'
    return f'<?xml version="1.0"?>\n<robot{name_attribute}>\n' + '\n'.join(parts) + '\n</robot>\n'


def _load(xml: str, **kwargs) -> RobotModel:
    """Load, turning any warning into an error: the good robots must load silently."""
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        return RobotModel.from_urdf_string(xml, **kwargs)


def _states(model: RobotModel, count: int = 5, seed: int = 0):
    """Random (q, v, a) with unit quaternions for free-flyer/floating joints."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        q = rng.uniform(-1.5, 1.5, model.nq)
        for joint in model.joints:
            if joint.nq == 7:
                quaternion = q[joint.idx_q + 3:joint.idx_q + 7]
                quaternion /= np.linalg.norm(quaternion)
        yield q, rng.uniform(-2, 2, model.nv), rng.uniform(-3, 3, model.nv)


# A three-joint arm with unaligned axes and offsets, used as the reference mechanism.
ARM_LINKS = (
    _link('base', 3.0, com=(0, 0, 0.05)),
    _link('upper', 2.0, com=(0.1, 0.02, 0.2), rpy=(0.1, 0.2, 0.3),
          inertia=(0.05, 0.001, 0.002, 0.04, 0.003, 0.03)),
    _link('fore', 1.2, com=(0.15, -0.01, 0), inertia=(0.01, 0, 0.001, 0.02, 0, 0.015)),
    _link('slider', 0.4, com=(0.02, 0, 0.01), inertia=(0.002, 0, 0, 0.001, 0, 0.002)),
)
ARM_JOINTS = (
    _joint('shoulder', 'revolute', 'base', 'upper', xyz=(0, 0, 0.4), axis=(0, 0, 1)),
    _joint('elbow', 'continuous', 'upper', 'fore', xyz=(0.3, 0, 0.1), rpy=(0.4, 0, -0.2),
           axis=(0, 0.6, 0.8)),
    _joint('extend', 'prismatic', 'fore', 'slider', xyz=(0.25, 0, 0), axis=(1, 0, 0)),
)
ARM = _robot(*ARM_LINKS, *ARM_JOINTS, name='arm')


def _assert_same_torques(model_a: RobotModel, model_b: RobotModel, **kwargs):
    assert model_a.nq == model_b.nq and model_a.nv == model_b.nv
    for q, v, a in _states(model_a):
        np.testing.assert_allclose(model_a.rnea(q, v, a, **kwargs),
                                   model_b.rnea(q, v, a, **kwargs), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------- bad corpus
@pytest.mark.parametrize('case', sorted(BAD))
def test_bad_urdf_is_refused(case):
    path = BAD_DIR / f'{case}.urdf'
    with pytest.raises(URDFError, match=BAD[case]):
        RobotModel.from_urdf_file(path)


def test_every_bad_file_has_a_case():
    assert sorted(path.stem for path in BAD_DIR.glob('*.urdf')) == sorted(BAD)


@pytest.mark.parametrize('case, ixy, izz', [
    ('inertia_triangle', 0.0, 0.05),
    ('inertia_not_psd', 0.02, 0.02),
])
def test_unphysical_inertia_loads_with_a_warning_when_asked(case, ixy, izz):
    xml = (BAD_DIR / f'{case}.urdf').read_text()
    with pytest.warns(ModelWarning, match='^' + _SHOULDER_INERTIA):
        model = RobotModel.from_urdf_string(xml, inertia_check='warn')
    # The URDF's numbers are kept as they are: inertia about the joint origin by Steiner.
    inertia_com = np.array([[0.01, ixy, 0], [ixy, 0.01, 0], [0, 0, izz]])
    expected = inertia_com + 1.0 * np.diag([0.01, 0.01, 0.0])  # com (0, 0, 0.1), m = 1
    np.testing.assert_allclose(model.tree.inertia_origin[0], expected, atol=1e-15)
    # and a torque comes out: tau = Izz_origin * a about the vertical axis
    assert model.rnea([0.0], [0.0], [2.0])[0] == pytest.approx(2.0 * izz)


def test_inertia_check_must_be_known():
    with pytest.raises(ValueError, match="inertia_check must be one of .*got 'ignore'"):
        parse_urdf(ARM, inertia_check='ignore')


# ---------------------------------------------------------------------------- tolerated input
def test_elements_other_parsers_refuse_are_ignored():
    """Textured materials, transmissions, gazebo tags, sensors, no robot name: same dynamics."""
    decorated_upper = ARM_LINKS[1].replace(
        '</link>',
        '<visual><geometry><mesh filename="package://arm/upper.dae" scale="1 1 1"/></geometry>'
        '<material name="skin"><texture filename="package://arm/skin.png"/></material></visual>'
        '<collision><geometry><cylinder radius="0.05" length="0.3"/></geometry></collision>'
        '</link>')
    extras = (
        '<material name="skin"><color rgba="1 0 0 1"/>'
        '<texture filename="package://arm/skin.png"/></material>',
        '<transmission name="shoulder_tr"><type>transmission_interface/SimpleTransmission</type>'
        '<joint name="shoulder"><hardwareInterface>EffortJointInterface</hardwareInterface>'
        '</joint><actuator name="m1"><mechanicalReduction>50</mechanicalReduction></actuator>'
        '</transmission>',
        '<gazebo reference="fore"><mu1>0.2</mu1><sensor name="cam" type="camera">'
        '<update_rate>30</update_rate></sensor></gazebo>',
        '<gazebo><plugin name="ctrl" filename="libgazebo_ros_control.so"/></gazebo>',
        '<sensor name="imu" update_rate="100"><parent link="upper"/>'
        '<origin xyz="0 0 0" rpy="0 0 0"/><imu/></sensor>',
        '<ros2_control name="hw" type="system"><joint name="shoulder">'
        '<command_interface name="effort"/></joint></ros2_control>',
    )
    decorated = _robot(ARM_LINKS[0], decorated_upper, *ARM_LINKS[2:], *extras, *ARM_JOINTS,
                       name=None)
    model = _load(decorated)
    plain = _load(ARM)
    assert model.name == '' and plain.name == 'arm'
    assert model.joint_names == plain.joint_names
    assert model.link_names == plain.link_names
    _assert_same_torques(model, plain)


def test_missing_inertial_on_fixed_leaf_and_root_is_silent():
    # ``_load`` turns warnings into errors; the root has no inertial either.
    bare_root = ARM.replace(ARM_LINKS[0], _link('base'))
    with_tool = bare_root.replace(
        '</robot>', _link('tool_frame') + _joint('tool', 'fixed', 'slider', 'tool_frame',
                                                 xyz=(0.1, 0, 0)) + '</robot>')
    model = _load(with_tool)
    assert 'tool_frame' in model.link_names
    assert model.joint_names == ('shoulder', 'elbow', 'extend')
    _assert_same_torques(model, _load(ARM))  # a fixed base's inertia never shows up in tau


def test_moving_subtree_without_mass_warns():
    xml = ARM.replace('</robot>', _link('camera') + _link('lens')
                      + _joint('camera_pan', 'revolute', 'upper', 'camera', xyz=(0, 0, 0.3))
                      + _joint('lens_mount', 'fixed', 'camera', 'lens') + '</robot>')
    with pytest.warns(ModelWarning, match=r"^joint 'camera_pan' moves a subtree with no mass"):
        model = RobotModel.from_urdf_string(xml)
    assert model.joint_names == ('shoulder', 'elbow', 'extend', 'camera_pan')
    plain = _load(ARM)
    for q, v, a in _states(model):
        tau = model.rnea(q, v, a)
        assert tau[3] == 0.0
        np.testing.assert_allclose(tau[:3], plain.rnea(q[:3], v[:3], a[:3]), rtol=1e-12,
                                   atol=1e-12)


def test_zero_axis_and_mimic_tag_on_a_fixed_joint_are_ignored():
    xml = ARM.replace('</robot>', _link('tool', 0.1) + _joint(
        'tool_mount', 'fixed', 'slider', 'tool', axis=(0, 0, 0),
        extra='<mimic joint="nowhere"/>') + '</robot>')
    model = _load(xml)
    assert model.joint_names == ('shoulder', 'elbow', 'extend')
    assert 'tool' in model.link_names


# ---------------------------------------------------------------------------- joint handling
def _merge(parts):
    """(mass, com, inertia about com) of rigid parts given as (mass, com, inertia about com)."""
    mass = sum(m for m, _, _ in parts)
    com = sum(m * c for m, c, _ in parts) / mass
    inertia = sum(i + m * (np.dot(c - com, c - com) * np.eye(3) - np.outer(c - com, c - com))
                  for m, c, i in parts)
    return mass, com, inertia


def test_fixed_joint_folds_child_inertia_into_parent():
    mount_xyz, mount_yaw = np.array([0.3, 0.05, -0.1]), 0.7
    upper = (2.0, np.array([0.1, 0.02, 0.2]), (0.1, 0.2, 0.3),
             np.array([[0.05, 0.001, 0.002], [0.001, 0.04, 0.003], [0.002, 0.003, 0.03]]))
    tool = (0.5, np.array([0.02, 0.01, 0.03]), (0.3, -0.2, 0.1), np.diag([0.004, 0.003, 0.002]))

    def inertia_tuple(matrix):
        return (matrix[0, 0], matrix[0, 1], matrix[0, 2], matrix[1, 1], matrix[1, 2],
                matrix[2, 2])

    common = (_link('base'), _link('hand', 0.3, com=(0.05, 0, 0)),
              _joint('shoulder', 'revolute', 'base', 'upper', xyz=(0, 0, 0.4), axis=(0, 1, 0)))
    wrist_xyz, wrist_yaw, wrist_axis = np.array([0.1, 0, 0.02]), 0.4, (0.3, 0.4, 0.866)
    with_fixed = _robot(
        *common,
        _link('upper', upper[0], upper[1], upper[2], inertia_tuple(upper[3])),
        _link('tool', tool[0], tool[1], tool[2], inertia_tuple(tool[3])),
        _joint('tool_mount', 'fixed', 'upper', 'tool', xyz=mount_xyz, rpy=(0, 0, mount_yaw)),
        _joint('wrist', 'revolute', 'tool', 'hand', xyz=wrist_xyz, rpy=(0, 0, wrist_yaw),
               axis=wrist_axis))

    # The same robot written by hand: tool merged into upper, wrist re-anchored on upper.
    mount = _rotation(0, 0, mount_yaw)
    parts = [(m, c_origin_frame, r @ i @ r.T) for m, c_origin_frame, r, i in (
        (upper[0], upper[1], _rotation(*upper[2]), upper[3]),
        (tool[0], mount_xyz + mount @ tool[1], mount @ _rotation(*tool[2]), tool[3]))]
    mass, com, inertia = _merge(parts)
    merged = _robot(
        *common, _link('upper', mass, com, (0, 0, 0), inertia_tuple(inertia)),
        _joint('wrist', 'revolute', 'upper', 'hand', xyz=mount_xyz + mount @ wrist_xyz,
               rpy=(0, 0, mount_yaw + wrist_yaw), axis=wrist_axis))

    model = _load(with_fixed)
    assert model.tree.n_bodies == 2  # upper+tool, hand
    assert set(model.link_names) == {'base', 'hand', 'upper', 'tool'}
    _assert_same_torques(model, _load(merged))
    _assert_same_torques(model, _load(merged), gravity=[1.0, -2.0, -9.0])


@pytest.mark.parametrize('normal, b1, b2', [
    ((0, 0, 1), (1, 0, 0), (0, 1, 0)),
    ((0, 1, 0), (1, 0, 0), (0, 0, -1)),
    ((1, 0, 0), (0, 1, 0), (0, 0, 1)),  # x is the normal: the first in-plane axis falls to y
])
def test_planar_joint_is_two_prismatic_and_one_revolute(normal, b1, b2):
    origin = {'xyz': (0.1, 0.2, 0.3), 'rpy': (0.2, 0.1, -0.3)}
    tail = (_link('base', 1.0), _link('body', 2.0, com=(0.1, 0.05, 0.02),
                                      inertia=(0.03, 0.001, 0, 0.02, 0.002, 0.04)),
            _link('arm', 0.5, com=(0.2, 0, 0)),
            _joint('elbow', 'revolute', 'body', 'arm', xyz=(0.3, 0, 0), axis=(0, 0.6, 0.8)))
    planar = _robot(*tail, _joint('slide', 'planar', 'base', 'body', axis=normal, **origin))
    by_hand = _robot(
        *tail, _link('slide_px'), _link('slide_py'),
        _joint('slide_x', 'prismatic', 'base', 'slide_px', axis=b1, **origin),
        _joint('slide_y', 'prismatic', 'slide_px', 'slide_py', axis=b2),
        _joint('slide', 'revolute', 'slide_py', 'body', axis=normal))
    model = _load(planar)
    assert model.joint_names == ('slide', 'elbow')
    assert (model.joints[0].kind, model.joints[0].nq, model.joints[0].nv) == ('planar', 3, 3)
    assert model.joint('elbow').idx_q == 3
    _assert_same_torques(model, _load(by_hand))


def test_floating_joint_at_the_top_is_a_free_flyer():
    rpy = (0.3, -0.2, 0.5)
    body = (_link('body', 2.0, com=(0.05, 0, 0.1), inertia=(0.03, 0, 0.001, 0.02, 0, 0.04)),
            _link('arm', 0.5, com=(0.2, 0, 0)),
            _joint('elbow', 'revolute', 'body', 'arm', xyz=(0.3, 0, 0), axis=(0, 1, 0)))
    floating_joint = _joint('float', 'floating', 'world', 'body', xyz=(1, 2, 3), rpy=rpy)
    floating = _load(_robot(_link('world'), *body, floating_joint))
    free_flyer = _load(_robot(*body), floating_base=True)
    assert floating.joint_names == ('float', 'elbow')
    assert free_flyer.joint_names == ('root_joint', 'elbow')
    assert floating.joints[0].kind == 'floating' and (floating.nq, floating.nv) == (8, 7)
    # The floating joint frame is rotated: the free flyer sees gravity in that frame.
    gravity = _rotation(*rpy).T @ np.array([0, 0, -9.81])
    for q, v, a in _states(floating):
        np.testing.assert_allclose(floating.rnea(q, v, a),
                                   free_flyer.rnea(q, v, a, gravity=gravity), rtol=1e-12,
                                   atol=1e-12)


def test_floating_joint_inside_the_tree_at_rest_is_a_fixed_joint():
    """With its own v and a zero, a floating joint carries its child as a fixed joint would."""
    offset, yaw = np.array([0.2, 0, 0.1]), 0.3  # floating joint origin
    pose_xyz, pose_angle = np.array([0.1, -0.2, 0.3]), 0.4  # q of the floating joint
    links = (_link('base'), _link('upper', 1.5, com=(0.1, 0, 0.1)),
             _link('free', 0.8, com=(0.05, 0.02, 0), inertia=(0.02, 0.001, 0, 0.02, 0, 0.01)),
             _link('hand', 0.3, com=(0.05, 0, 0)))
    outer = (_joint('shoulder', 'revolute', 'base', 'upper', xyz=(0, 0, 0.4), axis=(0, 1, 0)),
             _joint('wrist', 'revolute', 'free', 'hand', xyz=(0.1, 0, 0), axis=(1, 0, 0)))
    floating = _load(_robot(*links, *outer, _joint('float', 'floating', 'upper', 'free',
                                                   xyz=offset, rpy=(0, 0, yaw))))
    fixed = _load(_robot(*links, *outer, _joint(
        'float', 'fixed', 'upper', 'free', xyz=offset + _rotation(0, 0, yaw) @ pose_xyz,
        rpy=(0, 0, yaw + pose_angle))))
    assert floating.joint_names == ('shoulder', 'float', 'wrist')
    assert [(j.idx_q, j.nq, j.idx_v, j.nv) for j in floating.joints] == [
        (0, 1, 0, 1), (1, 7, 1, 6), (8, 1, 7, 1)]
    pose = np.r_[pose_xyz, 0, 0, math.sin(pose_angle / 2), math.cos(pose_angle / 2)]
    for q, v, a in _states(fixed):
        q_floating = np.r_[q[0], pose, q[1]]
        v_floating = np.r_[v[0], np.zeros(6), v[1]]
        a_floating = np.r_[a[0], np.zeros(6), a[1]]
        tau = floating.rnea(q_floating, v_floating, a_floating)
        np.testing.assert_allclose(tau[[0, 7]], fixed.rnea(q, v, a), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('kind', ['revolute', 'prismatic'])
def test_mimic_torque_is_folded_into_the_master(kind):
    multiplier, offset = -1.7, 0.3
    links = (_link('base'), _link('palm', 1.0, com=(0, 0, 0.05)),
             _link('finger', 0.2, com=(0.03, 0, 0.01)), _link('tip', 0.05, com=(0.02, 0, 0)))
    common = (_joint('wrist', 'revolute', 'base', 'palm', axis=(0, 1, 0)),
              _joint('tip_joint', 'revolute', 'finger', 'tip', xyz=(0.04, 0, 0)))
    finger = {'xyz': (0.05, 0.01, 0.1), 'rpy': (0.2, 0, 0), 'axis': (0.6, 0, 0.8)}
    mimic = _load(_robot(*links, *common, _joint(
        'finger_joint', kind, 'palm', 'finger', **finger,
        extra=f'<mimic joint="wrist" multiplier="{multiplier}" offset="{offset}"/>')))
    free = _load(_robot(*links, *common, _joint('finger_joint', kind, 'palm', 'finger',
                                                **finger)))
    assert mimic.joint_names == ('wrist', 'tip_joint')
    assert free.joint_names == ('wrist', 'finger_joint', 'tip_joint')
    for q, v, a in _states(mimic):
        tau = mimic.rnea(q, v, a)
        tau_free = free.rnea([q[0], multiplier * q[0] + offset, q[1]],
                             [v[0], multiplier * v[0], v[1]], [a[0], multiplier * a[0], a[1]])
        np.testing.assert_allclose(
            tau, [tau_free[0] + multiplier * tau_free[1], tau_free[2]], rtol=1e-12, atol=1e-12)


def test_mimic_of_a_mimic_composes_offsets():
    """Regression: q3 = 3 q2 + 0.5 and q2 = 2 q1 + 0.3 give q3 = 6 q1 + 1.4 (was 1.3)."""
    links = (_link('base'), _link('l1', 1.0, com=(0.1, 0, 0)), _link('l2', 0.5, com=(0.1, 0, 0)),
             _link('l3', 0.2, com=(0.1, 0, 0)))
    first = (_joint('j1', 'revolute', 'base', 'l1'),
             _joint('j2', 'revolute', 'l1', 'l2', xyz=(0.2, 0, 0),
                    extra='<mimic joint="j1" multiplier="2" offset="0.3"/>'))
    chained = _load(_robot(*links, *first, _joint(
        'j3', 'revolute', 'l2', 'l3', xyz=(0.2, 0, 0),
        extra='<mimic joint="j2" multiplier="3" offset="0.5"/>')))
    direct = _load(_robot(*links, *first, _joint(
        'j3', 'revolute', 'l2', 'l3', xyz=(0.2, 0, 0),
        extra='<mimic joint="j1" multiplier="6" offset="1.4"/>')))
    np.testing.assert_allclose(chained.tree.offset, [0, 0.3, 1.4], atol=1e-15)
    _assert_same_torques(chained, direct, gravity=[0, -9.81, 0])


def test_joint_order_is_depth_first_and_links_keep_document_order():
    # Document order scrambled on purpose; 'neck' is fixed and 'r_foot_j' a mimic joint.
    links = ('r_knee', 'base', 'head', 'l_hip', 'r_hip', 'l_knee', 'r_foot')
    joints = (
        _joint('r_knee_j', 'revolute', 'r_hip', 'r_knee'),
        _joint('l_hip_j', 'revolute', 'base', 'l_hip', xyz=(0, 0.1, 0)),
        _joint('neck', 'fixed', 'base', 'head', xyz=(0, 0, 0.5)),
        _joint('r_foot_j', 'revolute', 'r_knee', 'r_foot', extra='<mimic joint="r_knee_j"/>'),
        _joint('r_hip_j', 'revolute', 'base', 'r_hip', xyz=(0, -0.1, 0)),
        _joint('l_knee_j', 'prismatic', 'l_hip', 'l_knee'),
    )
    xml = _robot(*(_link(name, 1.0) for name in links), *joints)
    model = _load(xml)
    assert model.joint_names == ('l_hip_j', 'l_knee_j', 'r_hip_j', 'r_knee_j')
    assert [joint.idx_q for joint in model.joints] == [0, 1, 2, 3]
    assert model.link_names == links
    floating = _load(xml, floating_base=True)
    assert floating.joint_names == ('root_joint',) + model.joint_names
    assert [(joint.idx_q, joint.idx_v) for joint in floating.joints] == [
        (0, 0), (7, 6), (8, 7), (9, 8), (10, 9)]
    assert floating.link_names == links


# ---------------------------------------------------------------------------- namespaces
@pytest.mark.parametrize('root', [
    '<robot xmlns="http://www.ros.org" name="arm">',
    '<urdf:robot xmlns:urdf="http://www.ros.org/urdf" name="arm">',
], ids=['default_namespace', 'prefixed_namespace'])
def test_robot_in_an_xml_namespace_is_the_plain_robot(root):
    """Issue 9 #16: ``<robot xmlns="...">`` (ROS tools accept it) was refused."""
    xml = ARM.replace('<robot name="arm">', root)
    closing = '</robot>'
    if root.startswith('<urdf:'):  # every element of the robot in the root's namespace
        xml = re.sub(r'<(/?)(?!\?)(?!urdf:)', r'<\1urdf:', xml)
        closing = '</urdf:robot>'
    # Elements of another namespace are ignored, as urdfdom ignores unknown tags.
    xml = xml.replace(closing, '<gz:link xmlns:gz="http://gazebosim.org" name="ghost"/>'
                      + closing)
    assert 'name="ghost"' in xml and 'xmlns' in xml
    model = _load(xml)
    plain = _load(ARM)
    assert model.name == 'arm'
    assert model.joint_names == plain.joint_names
    assert model.link_names == plain.link_names
    _assert_same_torques(model, plain)


def test_root_of_another_name_in_a_namespace_is_refused_by_its_name():
    xml = ARM.replace('<robot name="arm">', '<model xmlns="http://www.ros.org" name="arm">')
    with pytest.raises(URDFError, match=r'^root element is <model>, expected <robot>$'):
        RobotModel.from_urdf_string(xml.replace('</robot>', '</model>'))
