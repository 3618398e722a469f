"""
Start the rnea node with a URDF file and a parameters file.

    ros2 launch rnea_ros rnea.launch.py urdf:=/path/to/robot.urdf [params_file:=my.yaml]

``urdf`` is read into the ``robot_description`` parameter; leave it empty to take the model from
the ``robot_description`` topic (robot_state_publisher) instead. Remap the topics with the usual
``remappings`` when including this file, e.g. feedforward_effort -> /effort_controller/commands.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def _node(context):
    urdf = LaunchConfiguration('urdf').perform(context)
    parameters = [LaunchConfiguration('params_file').perform(context)]
    if urdf:
        with open(urdf) as urdf_file:
            parameters.append({'robot_description': urdf_file.read()})
    return [Node(
        package='rnea_ros',
        executable='rnea_node',
        name='rnea',
        output='screen',
        parameters=parameters,
    )]


def generate_launch_description():
    default_params = os.path.join(get_package_share_directory('rnea_ros'), 'config', 'rnea.yaml')
    return LaunchDescription([
        DeclareLaunchArgument('params_file', default_value=default_params,
                              description='YAML file with the parameters of the rnea node'),
        DeclareLaunchArgument('urdf', default_value='',
                              description='URDF file read into robot_description (empty: '
                                          'use the robot_description topic)'),
        OpaqueFunction(function=_node),
    ])
