"""
The dynamics library: URDF -> kinematic tree -> packed model -> numba kernels.

``urdf`` reads the URDF (where each joint type is handled), ``tree`` folds fixed joints and
couples mimic joints, ``rnea``/``terms``/``crba``/``kinematics`` are the jitted kernels on the
packed model, ``spatial`` the spatial algebra they share and ``model`` the ``RobotModel`` API.
Imports numpy, numba and ``rnea_ros.errors`` only: no ROS, no bag or plotting library.
"""
from rnea_ros.dynamics.model import RobotModel

__all__ = ['RobotModel']
