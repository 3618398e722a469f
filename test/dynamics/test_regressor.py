"""
regressor.py and its RobotModel API: tau = Y(q, v, a) phi, checked against rnea and Pinocchio.

Errors are relative to max(1, largest magnitude of the reference). Y phi_urdf must equal
``rnea`` to 1e-12 (the same arithmetic in another order); Y must equal Pinocchio's
``computeJointTorqueRegressor`` to 1e-10 (a different library: different rounding).
Pinocchio is loaded with ``mimic=False`` and the coupling imposed by the oracle (rows
G^T Y_pin); its columns are matched to ours by joint name, 10 per joint.
"""
from __future__ import annotations

import re

from harness.oracle import Oracle, robot_path
import numpy as np
import pinocchio as pin
import pytest

from rnea_ros import InputError, RobotModel
from rnea_ros.dynamics.regressor import PARAMETERS

GRAVITY = (0.7, -1.9, -3.1)
# panda: a mimic finger; pr2: prismatic, continuous and mimic joints and many fixed-joint links
# folded into bodies; talos_reduced: fixed-joint links and a free-flyer; solo12: a free-flyer;
# ur5: joint axes along y, so the canonical frames differ from the URDF's.
ROBOTS = [('ur5', False), ('panda', False), ('pr2', False), ('talos_reduced', True),
          ('solo12', True), ('double_pendulum_continuous', False)]
IDS = [name for name, _ in ROBOTS]


def relative_error(value, expected) -> float:
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    return float(np.abs(np.asarray(value) - expected).max(initial=0.0)) / scale


@pytest.fixture(scope='module', params=ROBOTS, ids=IDS)
def robot(request):
    name, floating = request.param
    model = RobotModel.from_urdf_file(robot_path(name), floating_base=floating)
    return model, Oracle(model, robot_path(name), floating, mimic=False)


def states(oracle, count, seed=0):
    return oracle.random_states(np.random.default_rng(seed), count)


def test_regressor_times_urdf_parameters_is_rnea(robot):
    model, oracle = robot
    phi = model.inertial_parameters()
    assert phi.shape == (len(model.body_names), 10)
    Q, V, A = states(oracle, 4)
    for q, v, a in zip(Q, V, A):
        for gravity in (None, GRAVITY):
            Y = model.regressor(q, v, a, gravity=gravity)
            assert Y.shape == (model.nv, 10 * len(model.body_names))
            tau = model.rnea(q, v, a, gravity=gravity)
            assert relative_error(Y @ phi.reshape(-1), tau) < 1e-12


def test_regressor_matches_pinocchio(robot):
    model, oracle = robot
    pm = oracle.pm
    columns = []
    for body in model.tree.body_names:  # body i is moved by the joint of the same name
        if '[' not in body:
            joint_id = pm.getJointId(body)
            columns += range(10 * (joint_id - 1), 10 * joint_id)
    assert len(columns) == 10 * len(model.body_names)
    data = pm.createData()
    Q, V, A = states(oracle, 3, seed=1)
    for q, v, a in zip(Q, V, A):
        expected = pin.computeJointTorqueRegressor(pm, data, oracle.q_to_pin(q),
                                                   oracle.v_to_pin(v), oracle.v_to_pin(a))
        expected = oracle.coupling.T @ np.asarray(expected)[:, columns]
        assert relative_error(model.regressor(q, v, a), expected) < 1e-10


def test_inertial_parameters_are_pinocchio_s(robot):
    """Same body frames and folding as Pinocchio: its inertias, in its toDynamicParameters."""
    model, oracle = robot
    pm = oracle.pm
    for body, link, row in zip([b for b in model.tree.body_names if '[' not in b],
                               model.body_names, model.inertial_parameters()):
        joint_id = pm.getJointId(body)
        assert pm.frames[pm.getFrameId(link)].parentJoint == joint_id
        assert relative_error(row, pm.inertias[joint_id].toDynamicParameters()) < 1e-12


def test_batch_equals_single_and_writes_into_out(robot):
    model, oracle = robot
    Q, V, A = states(oracle, 600, seed=2)  # > 2 x 256 samples: the parallel kernel
    batch = model.regressor_batch(Q, V, A, gravity=GRAVITY)
    for k in (0, 311, 599):
        single = model.regressor(Q[k], V[k], A[k], gravity=GRAVITY)
        assert relative_error(batch[k], single) < 1e-15
    # Streaming: chunks into one reused out array give the same result, serial or parallel.
    out = np.full((300,) + batch.shape[1:], np.nan)
    for start in (0, 300):
        chunk = slice(start, start + 300)
        returned = model.regressor_batch(Q[chunk], V[chunk], A[chunk], gravity=GRAVITY,
                                         threads=1 + start // 300, out=out)
        assert returned is out
        assert relative_error(out, batch[chunk]) < 1e-15
    phi = model.inertial_parameters().reshape(-1)
    assert relative_error(batch @ phi, model.rnea_batch(Q, V, A, gravity=GRAVITY)) < 1e-12


def test_with_inertial_parameters_round_trip(robot):
    model, oracle = robot
    rng = np.random.default_rng(3)
    urdf_phi = model.inertial_parameters()
    phi = urdf_phi * rng.uniform(0.5, 1.5, urdf_phi.shape)
    identified = model.with_inertial_parameters(phi)
    assert identified.body_names == model.body_names
    assert identified.joint_names == model.joint_names
    np.testing.assert_array_equal(identified.inertial_parameters(), phi)
    np.testing.assert_array_equal(model.inertial_parameters(), urdf_phi)  # model unchanged
    Q, V, A = states(oracle, 3, seed=4)
    for q, v, a in zip(Q, V, A):
        # The regressor does not depend on the parameters; the new model's rnea follows phi.
        Y = model.regressor(q, v, a)
        assert relative_error(identified.regressor(q, v, a), Y) < 1e-15
        assert relative_error(identified.rnea(q, v, a), Y @ phi.reshape(-1)) < 1e-12


def test_body_names_name_the_links_of_the_bodies():
    ur5 = RobotModel.from_urdf_file(robot_path('ur5'))
    assert ur5.body_names == ('shoulder_link', 'upper_arm_link', 'forearm_link', 'wrist_1_link',
                              'wrist_2_link', 'wrist_3_link')
    solo = RobotModel.from_urdf_file(robot_path('solo12'), floating_base=True)
    assert solo.body_names[0] == 'base_link'


PLANAR = """<robot name="planar_arm">
  <link name="world"/>
  <link name="camera">  <!-- a fixed link listed before its body's own link -->
    <inertial><origin xyz="0.1 0 0"/><mass value="0.5"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  </link>
  <link name="cart">
    <inertial><origin xyz="0.05 0.02 0"/><mass value="2"/>
      <inertia ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="0" izz="0.25"/></inertial>
  </link>
  <link name="arm">
    <inertial><origin xyz="0 0 0.3"/><mass value="1"/>
      <inertia ixx="0.05" ixy="0" ixz="0.001" iyy="0.05" iyz="0" izz="0.01"/></inertial>
  </link>
  <joint name="slide" type="planar">
    <parent link="world"/><child link="cart"/><origin xyz="0 0 1" rpy="0.3 0 0"/>
    <axis xyz="0 0 1"/>
  </joint>
  <joint name="mount" type="fixed">
    <parent link="cart"/><child link="camera"/><origin xyz="0 0.2 0" rpy="0 0.4 0"/>
  </joint>
  <joint name="shoulder" type="revolute">
    <parent link="cart"/><child link="arm"/><origin xyz="0.2 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="2"/>
  </joint>
</robot>"""


def test_planar_joint_and_folded_link():
    """
    Give a planar joint's inner bodies no columns; fold a fixed link into its body.

    The body is named by the joint's child link even when the fixed link comes first in the
    file (the link order of ``tree.links``).
    """
    model = RobotModel.from_urdf_string(PLANAR)
    assert model.body_names == ('cart', 'arm')
    phi = model.inertial_parameters()
    assert phi[0, 0] == pytest.approx(2.5, rel=1e-15)  # cart + camera
    rng = np.random.default_rng(5)
    # Pinocchio's planar joint has other in-plane axes: checked against rnea with the URDF
    # parameters and with random ones (rnea itself is checked against Pinocchio elsewhere).
    phi_random = rng.uniform(-1.0, 1.0, phi.shape)
    other = model.with_inertial_parameters(phi_random)
    for _ in range(3):
        q, v, a = (rng.standard_normal(model.nv) for _ in range(3))
        Y = model.regressor(q, v, a)
        assert relative_error(Y @ phi.reshape(-1), model.rnea(q, v, a)) < 1e-12
        assert relative_error(Y @ phi_random.reshape(-1), other.rnea(q, v, a)) < 1e-12


@pytest.mark.parametrize('floating_base', [False, True], ids=['fixed', 'free'])
def test_floating_joint_inside_the_tree(floating_base):
    """A URDF floating joint below the root: six generic rows, beside the root's block rows."""
    xml = PLANAR.replace('type="planar"', 'type="floating"')
    model = RobotModel.from_urdf_string(xml, floating_base=floating_base)
    assert model.body_names == (('world',) if floating_base else ()) + ('cart', 'arm')
    rng = np.random.default_rng(6)
    phi = model.inertial_parameters()
    phi_random = rng.uniform(-1.0, 1.0, phi.shape)
    other = model.with_inertial_parameters(phi_random)
    for _ in range(3):
        q = model.neutral_configuration() + 0.3 * rng.standard_normal(model.nq)
        for joint in model.joints:
            if joint.nq == 7:
                quaternion = q[joint.idx_q + 3:joint.idx_q + 7]
                quaternion /= np.linalg.norm(quaternion)
        v, a = (rng.standard_normal(model.nv) for _ in range(2))
        Y = model.regressor(q, v, a, gravity=GRAVITY)
        assert relative_error(Y @ phi.reshape(-1), model.rnea(q, v, a, gravity=GRAVITY)) < 1e-12
        assert relative_error(Y @ phi_random.reshape(-1),
                              other.rnea(q, v, a, gravity=GRAVITY)) < 1e-12


def test_parameter_names_are_pinocchio_s_order():
    assert PARAMETERS == ('m', 'mc_x', 'mc_y', 'mc_z', 'I_xx', 'I_xy', 'I_yy', 'I_xz', 'I_yz',
                          'I_zz')


@pytest.fixture(scope='module')
def panda():
    return RobotModel.from_urdf_file(robot_path('panda'))


def test_bad_inputs(panda):
    model = panda
    q, z = model.neutral_configuration(), np.zeros(model.nv)
    Q, V = np.tile(q, (3, 1)), np.zeros((3, model.nv))
    width = 10 * len(model.body_names)
    cases = [
        (lambda: model.regressor(q[:-1], z, z), r'^q: expected shape \(8,\), got \(7,\)$'),
        (lambda: model.regressor(q, z, [np.nan] + [0.0] * 7), r'^a\[0\] is nan: values must '),
        (lambda: model.regressor(q, z, z, gravity=(0, 0)),
         r'^gravity: expected shape \(3,\), got \(2,\)$'),
        (lambda: model.regressor_batch(Q, V[:2], V),
         r'^V: expected shape \(3, 8\), got \(2, 8\)$'),
        (lambda: model.regressor_batch(Q, V, np.full((3, 8), np.inf)),
         r'^sample 0: a\[0\] is inf: values must be finite$'),
        (lambda: model.regressor_batch(Q, V, V, out=np.zeros((3, 8, width - 1))),
         rf'^out: expected a C-contiguous writeable float64 array of shape \(3, 8, {width}\)$'),
        (lambda: model.regressor_batch(Q, V, V, out=np.zeros((3, 8, width), np.float32)),
         r'^out: expected a C-contiguous writeable float64 array'),
        (lambda: model.regressor_batch(Q, V, V, out=np.zeros((3, width, 8)).transpose(0, 2, 1)),
         r'^out: expected a C-contiguous writeable float64 array'),
        (lambda: model.regressor_batch(Q, np.full((3, 8), 1e200), V),
         r'^sample 0: the regressor is not finite \(inputs too large\?\)$'),
        (lambda: model.with_inertial_parameters(np.zeros((8, 10))),
         r'^phi: expected shape \(9, 10\), got \(8, 10\)$'),
        (lambda: model.with_inertial_parameters(
            np.where(np.arange(90).reshape(9, 10) == 46, np.nan, 1.0)),
         r"^phi\[4, 6\] \(I_yy of body 'panda_link5'\) is nan: values must be finite$"),
    ]
    for call, message in cases:
        with pytest.raises(InputError, match=message):
            call()


def test_bad_quaternion_names_the_sample():
    model = RobotModel.from_urdf_file(robot_path('solo12'), floating_base=True)
    Q = np.tile(model.neutral_configuration(), (2, 1))
    Q[1, 3:7] = [0.0, 0.0, 0.0, 2.0]
    with pytest.raises(InputError, match=re.escape(
            "sample 1: q[3:7] (quaternion of joint 'root_joint') has norm 2: expected a unit "
            'quaternion')):
        model.regressor_batch(Q, np.zeros((2, 18)), np.zeros((2, 18)))


def test_empty_batch(panda):
    Y = panda.regressor_batch(np.zeros((0, 8)), np.zeros((0, 8)), np.zeros((0, 8)))
    assert Y.shape == (0, 8, 90)
