"""
What the launch files share: the node's common launch arguments and its ``Node`` action.

``launch/rnea.launch.py`` and ``launch/rnea_effort_controller.launch.py`` take their common
arguments from here: ``params_file`` (default: the installed ``config/rnea.yaml``),
``namespace`` (the node and its relative topics; default none) and ``use_sim_time`` (default
``false``), and one ``<topic>_topic`` argument per topic they remap (default: the topic itself,
relative). ``rnea_node`` is the node action that uses them.

``launch``, ``launch_ros`` and ``ament_index_python`` are imported inside the functions: they
exist where ROS 2 is installed, where the launch files run.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

PACKAGE = 'rnea_ros'
PARAMS_DESCRIPTION = 'YAML file with the parameters of the rnea node'
NAMESPACE_DESCRIPTION = 'namespace of the node and its relative topics'


def common_arguments(params_description: str = PARAMS_DESCRIPTION,
                     namespace_description: str = NAMESPACE_DESCRIPTION) -> list:
    """Return the ``DeclareLaunchArgument`` of ``params_file``, ``namespace``, ``use_sim_time``."""
    import os

    from ament_index_python.packages import get_package_share_directory
    from launch.actions import DeclareLaunchArgument
    default_params = os.path.join(get_package_share_directory(PACKAGE), 'config', 'rnea.yaml')
    return [
        DeclareLaunchArgument('params_file', default_value=default_params,
                              description=params_description),
        DeclareLaunchArgument('namespace', default_value='', description=namespace_description),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='true: the node takes its time from /clock'),
    ]


def remap_arguments(topics: Mapping[str, str]) -> list:
    """Return a ``<topic>_topic`` argument per topic (topic -> description), default: itself."""
    from launch.actions import DeclareLaunchArgument
    return [DeclareLaunchArgument(topic + '_topic', default_value=topic, description=description)
            for topic, description in topics.items()]


def remappings(topics: Iterable[str]) -> list[tuple]:
    """Return the remapping of each topic to its ``<topic>_topic`` argument."""
    from launch.substitutions import LaunchConfiguration
    return [(topic, LaunchConfiguration(topic + '_topic')) for topic in topics]


def rnea_node(remapped: list[tuple], parameters: Iterable = ()):
    """
    Return the ``Node`` action of ``rnea_node`` named ``rnea``, in the ``namespace`` argument.

    Its parameters: the ``params_file`` argument's file, ``use_sim_time`` from the argument of
    that name, then ``parameters``; its remappings: ``remapped``.
    """
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node
    from launch_ros.parameter_descriptions import ParameterValue
    return Node(
        package=PACKAGE,
        executable='rnea_node',
        name='rnea',
        namespace=LaunchConfiguration('namespace'),
        output='screen',
        parameters=[LaunchConfiguration('params_file'), {'use_sim_time': ParameterValue(
            LaunchConfiguration('use_sim_time'), value_type=bool)}, *parameters],
        remappings=remapped,
    )
