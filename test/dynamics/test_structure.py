"""What RobotModel shows of its structure: its packed arrays, the joints JointState cannot give."""
from __future__ import annotations

from harness.oracle import robot_path
import numpy as np

from rnea_ros import RobotModel
from rnea_ros.dynamics import rnea as kernels

PLANAR = ('<robot name="p"><link name="w"/><link name="b"><inertial><mass value="1"/>'
          '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
          '<joint name="pl" type="planar"><parent link="w"/><child link="b"/>'
          '<axis xyz="0 0 1"/></joint></robot>')


def test_packed_arrays_are_the_models_own_and_equal_a_fresh_packing():
    model = RobotModel.from_urdf_file(robot_path('solo12'), floating_base=True)
    packed = model.packed
    assert packed is model.packed  # built once
    np.testing.assert_array_equal(packed.model, kernels.pack_model(model.tree, model.gravity))
    link_body, link_pose = kernels.pack_links(model.tree)
    np.testing.assert_array_equal(packed.link_body, link_body)
    np.testing.assert_array_equal(packed.link_pose, link_pose)
    assert packed.n_bodies == model.tree.n_bodies == len(model.body_names)
    work = packed.new_workspace()
    assert work.shape == kernels.new_workspace(packed.model).shape and not work.any()
    assert not np.shares_memory(work, packed.model)


def test_multi_dof_joints_are_the_ones_joint_states_cannot_give():
    assert RobotModel.from_urdf_file(robot_path('ur5')).multi_dof_joints == ()
    # the free-flyer of floating_base=True comes from odometry: not one of them
    solo = RobotModel.from_urdf_file(robot_path('solo12'), floating_base=True)
    assert solo.joints[0].name == 'root_joint' and solo.multi_dof_joints == ()
    planar = RobotModel.from_urdf_string(PLANAR)
    assert [(j.name, j.kind, j.nv) for j in planar.multi_dof_joints] == [('pl', 'planar', 3)]
    floating = RobotModel.from_urdf_string(PLANAR.replace('type="planar"', 'type="floating"'))
    assert [(j.name, j.kind) for j in floating.multi_dof_joints] == [('pl', 'floating')]
