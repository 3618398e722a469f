"""
ROS parameters without ROS: what a parameter is, and the node parameter files.

``parameter`` says what a parameter and a per-joint or per-link family are (type, default,
range, meaning) and checks a value; ``params_file`` reads and writes node parameter files
(``/**:`` -> ``ros__parameters:``) for every tool, PyYAML imported inside its functions.
Imports ``rnea_ros.errors`` only: the node's declaration (``rnea_ros.control``), the sim's and
the tools' files are built on it.
"""
# Submodules, imported by who needs them.
__all__ = ['parameter', 'params_file']
