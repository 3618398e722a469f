"""
The names of the interfaces ``rnea_ctl`` uses, each said once; node names checked.

Topics are relative to the target node's namespace (``/left/rnea`` -> ``/left/planned_trajectory``)
as the node and the simulated robot subscribe to them; a remapped topic is given with ``--topic``.
"""
from __future__ import annotations

from rnea_ros.errors import InputError

DEFAULT_NODE = '/rnea'
SIM_NODE = '/rnea_sim'
# The node's and the simulated robot's trajectory input (trajectory_msgs/JointTrajectory).
TRAJECTORY_TOPIC = 'planned_trajectory'
APPLY_WRENCH_TOPIC = 'apply_wrench'  # the simulated robot's push input (WrenchStamped)
RESET_COLLISION_SERVICE = 'reset_collision'  # private (~/) service of the node, std_srvs/Trigger
DIAGNOSTICS_TOPIC = '/diagnostics'
STATUS_TOPIC = 'status'  # private (~/): the node's last /diagnostics report, latched
LIFECYCLE_KEY = 'lifecycle'  # the diagnostics key that holds the node's lifecycle state


def node_name(text: str, field: str = 'NODE') -> str:
    """
    Return the fully qualified name of a node given as ``rnea``, ``/rnea`` or ``/left/rnea``.

    A name rcl would refuse raises ``InputError`` naming ``field`` and what was expected.
    """
    from rclpy.exceptions import InvalidNamespaceException, InvalidNodeNameException
    from rclpy.validate_namespace import validate_namespace
    from rclpy.validate_node_name import validate_node_name
    full = text if text.startswith('/') else '/' + text
    namespace, _, name = full.rpartition('/')
    try:
        validate_node_name(name)
        validate_namespace(namespace or '/')
    except (InvalidNodeNameException, InvalidNamespaceException) as exc:
        reason = str(exc).splitlines()[0].split(': ', 1)[-1].rstrip(':')
        raise InputError(f'{field} {text!r}: expected a node name such as /rnea or '
                         f'/left/rnea ({reason})') from None
    return full


def namespace_of(node: str) -> str:
    """Return the namespace of a fully qualified node name (``/left/rnea`` -> ``/left``)."""
    return node.rpartition('/')[0]


def topic_of(node: str, topic: str) -> str:
    """Return ``topic`` resolved in ``node``'s namespace (absolute topics stay as they are)."""
    return topic if topic.startswith('/') else f'{namespace_of(node)}/{topic}'


def topic_name(text: str, field: str = '--topic') -> str:
    """Return ``text`` if rcl accepts it as a topic name, else ``InputError`` naming ``field``."""
    from rclpy.exceptions import InvalidTopicNameException
    from rclpy.validate_full_topic_name import validate_full_topic_name
    full = text if text.startswith('/') else '/' + text
    try:
        validate_full_topic_name(full)
    except InvalidTopicNameException as exc:
        reason = str(exc).splitlines()[0].split(': ', 1)[-1].rstrip(':')
        raise InputError(f'{field} {text!r}: expected a topic name ({reason})') from None
    return text
