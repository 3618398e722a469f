"""
rnea_ros: fast inverse dynamics from a URDF, and a ROS 2 node that publishes it.

The face of the library: ``RobotModel`` and the errors. ``import rnea_ros`` needs numpy and
numba only (no rclpy, rosbags or plotting library), and loads them when ``RobotModel`` is first
asked for: a tool that never computes dynamics (``rnea_ctl``) starts without them. The
packages, lowest first (each imports only those before it): ``dynamics`` (the library),
``contacts`` (contact inverse dynamics), then ``node`` (the ROS 2 node) and ``bag`` (offline
replay of a bag), which never import each other.
"""
from rnea_ros.errors import InputError, ModelWarning, RneaError, URDFError

__all__ = ['InputError', 'ModelWarning', 'RneaError', 'RobotModel', 'URDFError']
__version__ = '0.1.0'


def __getattr__(name: str):
    """Return ``RobotModel``, imported on first use (numba takes a while to import)."""
    if name == 'RobotModel':
        from rnea_ros.dynamics.model import RobotModel
        return RobotModel
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
