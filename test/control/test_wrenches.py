"""The node's wrench outputs without ROS (rnea_ros.control.wrenches)."""
import numpy as np

from rnea_ros import RobotModel
from rnea_ros.control.wrenches import ReactionOutput

INERTIAL = ('<inertial><mass value="{m}"/><inertia ixx="{i}" iyy="{i}" izz="{i}" ixy="0" '
            'ixz="0" iyz="0"/></inertial>')
# The fixed tool link is listed before the arm link, the child of the moving joint.
TOOL_FIRST = f"""<robot name="tool_first">
  <link name="tool">{INERTIAL.format(m=0.1, i=1e-3)}</link>
  <link name="base"/>
  <link name="arm">{INERTIAL.format(m=1.0, i=1e-2)}</link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit effort="10" lower="-1" upper="1" velocity="1"/></joint>
  <joint name="tool_fixed" type="fixed"><parent link="arm"/><child link="tool"/>
    <origin xyz="0.1 0 0"/></joint>
</robot>"""


def test_reaction_wrench_frame_is_the_joint_child_link_whatever_the_link_order():
    """Regression: the frame was the body's first link in file order ('tool', not 'arm')."""
    model = RobotModel.from_urdf_string(TOOL_FIRST)
    output = ReactionOutput(model)
    assert output.joints == ('j1',)
    assert output.frames == ('arm',)
    q = np.array([0.3])
    output.compute(q, np.array([0.5]), np.array([1.0]), None)
    expected = model.joint_reaction_wrenches(q, np.array([0.5]), np.array([1.0]))['j1']
    np.testing.assert_allclose(output.wrenches[0], expected, rtol=0, atol=1e-12)
