"""
The simulated robot's parameters on ROS: declared from ``settings.PARAMETERS``, then checked.

Every ``ParameterDescriptor`` is made from the declaration as the node's are
(``rnea_ros.params.parameter.descriptor_fields``): the description, ``additional_constraints``
(what the parameter takes, the end of every message about it), read-only. Dynamically typed, so
that an integer given for a number reaches the check, which takes it for that number; an array
whose default is empty is declared with its type instead (an empty list has none of its own).
"""
from __future__ import annotations

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.parameter import Parameter as RosParameter

from rnea_ros.params.parameter import descriptor_fields, DOUBLE_ARRAY, STRING_ARRAY
from rnea_ros.sim.settings import PARAMETERS, read_settings, SimSettings

ARRAY_TYPES = {STRING_ARRAY: RosParameter.Type.STRING_ARRAY,
               DOUBLE_ARRAY: RosParameter.Type.DOUBLE_ARRAY}


def declare_settings(node: Node, overrides: dict) -> SimSettings:
    """Declare every parameter (``overrides``: values from the command line) and check them."""
    values = {}
    for parameter in PARAMETERS:
        name, default = parameter.name, parameter.default
        fields = descriptor_fields(parameter)
        if parameter.kind in ARRAY_TYPES and not default:
            node.declare_parameter(name, ARRAY_TYPES[parameter.kind], ParameterDescriptor(
                **fields | {'dynamic_typing': False}))
        else:
            node.declare_parameter(name, default, ParameterDescriptor(**fields))
        value = node.get_parameter_or(name, RosParameter(name, value=None)).value
        values[name] = default if value is None else value
        if isinstance(values[name], (list, tuple)) or hasattr(values[name], 'tolist'):
            values[name] = list(values[name])
    values.update(overrides)
    return read_settings(values)
