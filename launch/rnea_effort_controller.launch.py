"""
Start the rnea node wired to a ros2_control effort controller.

    ros2 launch rnea_ros rnea_effort_controller.launch.py controller:=effort_controller \
        params_file:=my_params.yaml [namespace:=left] [use_sim_time:=true]

Next to a running ros2_control system (controller_manager, robot_state_publisher,
joint_state_broadcaster and an effort controller named ``controller``: ros2_controllers'
``forward_command_controller/ForwardCommandController`` with ``interface_name: effort``, whose
controller manager YAML docs/robots.md shows), all in
``namespace`` (default: none) as the node:

- ``feedforward_effort`` -> ``<controller>/commands`` (std_msgs/Float64MultiArray, in
  ``command_joints`` order: set ``command_joints`` in ``params_file`` to the controller's
  ``joints``, in the same order);
- ``joint_states`` <- ``joint_states_topic`` (default ``joint_states``), published by
  joint_state_broadcaster;
- ``robot_description`` <- ``robot_description_topic`` (default ``robot_description``),
  published by robot_state_publisher (transient local): the node's ``robot_description``
  parameter stays empty, so it subscribes to the topic and follows a new description.

Relative names resolve in ``namespace`` (none: ``/effort_controller/commands``,
``/joint_states``, ``/robot_description``). ``use_sim_time`` sets the parameter of that name.
The node keeps its other topics relative (``desired_accelerations``, ``joint_torques``, ...).
That controller's command is the whole joint torque: give the node, in
``params_file``, ``control_law: pd_feedforward`` (or ``computed_torque``) with ``kp.<joint>``
and ``kd.<joint>``, and ``gravity_compensated_by_robot: true`` for a robot that adds gravity
itself (docs/robots.md); the default ``feedforward`` is for a controller with its own feedback.

Why this file does not default ``control_law`` to ``pd_feedforward`` (what docs/robots.md
recommends for this controller): the feedback is in the gains, and no gain is safe for every
robot; unset gains are 0, and ``pd_feedforward`` at 0 publishes the feed-forward's torque
(its rest, g(q) - 0 v, is the feed-forward's ``hold_gravity``), so such a default would only
read as feedback without being one. And a launch argument set after ``params_file`` would
override the file's own ``control_law``: a file written for ``computed_torque`` (gains in 1/s²,
1/s) would run as ``pd_feedforward`` (N m/rad, N m s/rad), a wrong torque. ``control_law`` is
read-only: it belongs in ``params_file``, beside the gains it gives a meaning to.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration

from rnea_ros.node.launching import common_arguments, remap_arguments, remappings, rnea_node

# The topics of the ros2_control system the node takes, each a launch argument <topic>_topic.
REMAPPED = {'joint_states': "joint_state_broadcaster's topic",
            'robot_description': "robot_state_publisher's topic"}


def generate_launch_description():
    controller = LaunchConfiguration('controller')
    return LaunchDescription([
        DeclareLaunchArgument('controller', default_value='effort_controller',
                              description='name of the ros2_control effort controller whose '
                                          'commands topic receives feedforward_effort'),
        *common_arguments('YAML file with the parameters of the rnea node (set command_joints '
                          "to the controller's joints)",
                          'namespace of the node and the ros2_control system'),
        *remap_arguments(REMAPPED),
        rnea_node([('feedforward_effort', [controller, '/commands']), *remappings(REMAPPED)]),
    ])
