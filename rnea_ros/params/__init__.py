"""
ROS parameters without ROS: what a parameter is, and the node parameter files.

``parameter`` says what a parameter and a per-joint or per-link family are (type, default,
range, meaning) and checks a value; ``params_file`` reads and writes node parameter files
(``/**:`` -> ``ros__parameters:``) for every tool, PyYAML imported inside its functions;
``actuation_file`` is the actuation model's file. Imports ``rnea_ros.errors`` and (for the
actuation model) ``rnea_ros.dynamics``: the node's declaration (``rnea_ros.control``), the sim's
and the tools' files are built on it.
"""
# Submodules, imported by who needs them.
__all__ = ['actuation_file', 'parameter', 'params_file']
