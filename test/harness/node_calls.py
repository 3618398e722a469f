"""The node tests' calls: start a node that must exit, set a parameter, change the lifecycle."""
from __future__ import annotations

import subprocess
import sys

from harness.ros_harness import RosHarness
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters


def run_node(*ros_args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the node with ``ros_args`` expecting it to exit by itself."""
    return subprocess.run([sys.executable, '-m', 'rnea_ros.node', '--ros-args', *ros_args],
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def set_parameter(ros, name: str, value: ParameterValue):
    """Set one of the node's parameters live; return its ``SetParametersResult``."""
    response = ros.call(SetParameters, '/rnea/set_parameters', SetParameters.Request(
        parameters=[ParameterMsg(name=name, value=value)]))
    return response.results[0]


def set_live(ros, name: str, value: str | float):
    """Set a string or double parameter live (``set_parameter``); return its result."""
    return set_parameter(ros, name, ParameterValue(
        type=ParameterType.PARAMETER_STRING, string_value=value) if isinstance(value, str) else
        ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=float(value)))


def change_state(ros: RosHarness, transition: int) -> bool:
    request = ChangeState.Request(transition=Transition(id=transition))
    return ros.call(ChangeState, '/rnea/change_state', request).success
