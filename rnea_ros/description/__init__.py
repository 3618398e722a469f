"""
The robot descriptions: URDF, MJCF and xacro files in, a ``KinematicTree`` (and a model) out.

``robot_file`` reads a robot file (a URDF, or xacro expanded), ``xacro_process`` runs each
expansion in a child process within limits, with ``xacro_guard`` (what an expansion may
evaluate) inside it; ``urdf`` reads URDF text with ``urdf_elements`` reading each element (where
each joint type is handled); ``mjcf`` reads MJCF through MuJoCo's compiler (imported inside its
functions), ``mjcf_fields`` placing every field of MuJoCo's model; both end in
``tree_builder`` (fixed joints folded, mimic joints coupled);
``loading`` is what every tool does with a file option and a URDF.
Stands above ``rnea_ros.dynamics`` and imports it and ``rnea_ros.errors`` only; dynamics imports
this package only inside the ``RobotModel`` factories that delegate to it.
"""
from rnea_ros.description.loading import read_file_option, urdf_model
from rnea_ros.description.mjcf import load_mjcf, MjcfRobot
from rnea_ros.description.robot_file import parse_xacro_arg, read_robot_description
from rnea_ros.description.tree_builder import TreeBuilder
from rnea_ros.description.urdf import parse_urdf, urdf_joint_names

__all__ = ['load_mjcf', 'MjcfRobot', 'parse_urdf', 'parse_xacro_arg', 'read_file_option',
           'read_robot_description', 'TreeBuilder', 'urdf_joint_names', 'urdf_model']
