"""
The dynamics library: URDF -> kinematic tree -> packed model -> numba kernels.

``urdf`` reads the URDF (where each joint type is handled), ``tree`` folds fixed joints and
couples mimic joints, ``rnea``/``terms``/``crba``/``kinematics`` are the jitted kernels on the
packed model, ``regressor`` the joint-torque regressor (tau linear in the inertial
parameters), ``spatial`` the spatial algebra they share, ``model`` the ``RobotModel`` API and
``joint_model`` the friction and armature the URDF has no room for.
Imports numpy, numba and ``rnea_ros.errors`` only (PyYAML too, on use, for joint model files):
no ROS, no bag or plotting library.
"""
from rnea_ros.dynamics.joint_model import JointModel
from rnea_ros.dynamics.model import RobotModel

__all__ = ['JointModel', 'RobotModel']
