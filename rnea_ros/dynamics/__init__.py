"""
The dynamics library: kinematic tree -> packed model -> numba kernels.

``tree`` holds a robot as arrays (the parsers of ``rnea_ros.description`` build it),
``rnea``/``terms``/``crba``/``kinematics``/``coriolis`` are the jitted kernels on the packed
model (offsets in ``layout``), ``regressor`` the joint-torque regressor (tau linear in the
inertial parameters), ``joints`` what depends on a joint's type (the only place the kernels
branch on it), ``spatial`` the spatial algebra they share, ``model`` the ``RobotModel`` API
(its kinematics in ``model_kinematics``, its inertial parameters in ``inertial_parameters``),
``checks`` its argument and result checks, ``actuation`` the friction and armature the URDF
has no room for and ``payload`` a payload fixed to a link (``RobotModel.with_payload``).
Imports numpy, numba and ``rnea_ros.errors`` only (on use: PyYAML for actuation model files;
``RobotModel.from_urdf_string``, ``from_urdf_file`` and ``from_mjcf`` import the parser they
delegate to, from ``rnea_ros.description`` above): no ROS, no bag or plotting library.
"""
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.dynamics.model import RobotModel

__all__ = ['Actuation', 'RobotModel']
