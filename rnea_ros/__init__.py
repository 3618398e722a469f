"""rnea_ros: fast inverse dynamics from a URDF, and a ROS 2 node that publishes it.

``import rnea_ros`` needs numpy and numba only; the ROS node lives in ``rnea_ros.node``.
"""
from rnea_ros.errors import InputError, ModelWarning, RneaError, URDFError
from rnea_ros.model import RobotModel

__all__ = ['InputError', 'ModelWarning', 'RneaError', 'RobotModel', 'URDFError']
__version__ = '0.1.0'
