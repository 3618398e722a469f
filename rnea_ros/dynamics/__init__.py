"""
The dynamics library: URDF -> kinematic tree -> packed model -> numba kernels.

``description`` reads a robot file (a URDF, or xacro expanded), ``urdf`` builds the tree from
URDF text (folding fixed joints, coupling mimic joints) with ``urdf_elements`` reading each
element (where each joint type is handled), ``tree`` holds it as arrays,
``rnea``/``terms``/``crba``/``kinematics``/``coriolis`` are the jitted kernels on the packed
model (offsets in ``layout``), ``regressor`` the joint-torque regressor (tau linear in the
inertial parameters), ``joints`` what depends on a joint's type (the only place the kernels
branch on it), ``spatial`` the spatial algebra they share, ``model`` the ``RobotModel`` API
(its kinematics in ``model_kinematics``, its inertial parameters in ``model_parameters``),
``checks`` its argument and result checks, ``actuation`` the friction and armature the URDF
has no room for and ``payload`` a payload fixed to a link (``RobotModel.with_payload``).
Imports numpy, numba and ``rnea_ros.errors`` only (on use: PyYAML for actuation model files, xacro
to expand a xacro file): no ROS, no bag or plotting library.
"""
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.dynamics.model import RobotModel

__all__ = ['Actuation', 'RobotModel']
