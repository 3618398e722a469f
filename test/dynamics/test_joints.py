"""The joint types (``dynamics/joints.py``): the one place a kernel branches on a joint's type."""
from __future__ import annotations

from pathlib import Path
import re

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.dynamics import joints

PACKAGE = Path(joints.__file__).resolve().parents[1]
# A planar joint is two prismatic bodies and a revolute one; a floating joint a free-flyer.
PLANAR = ('<robot name="p"><link name="w"/><link name="b"><inertial><mass value="1"/>'
          '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
          '<joint name="pl" type="planar"><parent link="w"/><child link="b"/>'
          '<axis xyz="0 1 1"/></joint></robot>')


def test_only_joints_reads_a_bodys_joint_type():
    readers = sorted(path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob('*.py')
                     if re.search(r'\+ B_TYPE\]', path.read_text()))
    assert readers == ['dynamics/joints.py']


def test_subspace_columns_are_the_kernels_motion_subspace():
    seen = set()
    for xml in (PLANAR, PLANAR.replace('type="planar"', 'type="floating"')):
        model = RobotModel.from_urdf_string(xml)
        tree = model.tree
        for i in range(tree.n_bodies):
            out = np.zeros((6, 6))
            count = joints.motion_subspace(model.packed.model, i, out)
            expected = joints.subspace_columns(tree.joint_type[i], tree.multiplier[i])
            assert count == expected.shape[1] == (1 if joints.has_axis(tree.joint_type[i]) else 6)
            np.testing.assert_allclose(out[:, :count], expected, rtol=0.0, atol=1e-15)
            seen.add(int(tree.joint_type[i]))
    assert seen == {joints.REVOLUTE, joints.PRISMATIC, joints.FREE_FLYER}
