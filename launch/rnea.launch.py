"""
Start the rnea node with a robot description file and a parameters file.

    ros2 launch rnea_ros rnea.launch.py urdf:=/path/to/robot.urdf [params_file:=my.yaml]
    ros2 launch rnea_ros rnea.launch.py urdf:=/path/to/robot.urdf.xacro xacro_args:='arm:=left'
    ros2 launch rnea_ros rnea.launch.py namespace:=left use_sim_time:=true \
        feedforward_effort_topic:=/left/effort_controller/commands

``namespace`` puts the node (and its relative topics) in a namespace, ``use_sim_time`` sets the
parameter of that name, and each ``<topic>_topic`` argument remaps one of the node's topics
(``LAUNCH_REMAPPED`` of ``rnea_ros.node.interfaces``, where the topics are declared; default:
the topic itself, relative to the namespace).

``urdf``, a xacro file (``.xacro`` name, or given ``xacro_args``: its ``name:=value``
mappings), is expanded by the ``xacro`` command, as ROS 2 launch files usually do, into the
``robot_description`` parameter; any other file is passed as it is (never run through xacro,
whose expressions can run code: the node refuses a description that is unexpanded xacro).
Leave ``urdf`` empty to take the model from the ``robot_description`` topic
(robot_state_publisher) instead. To remap the node's topics when
including this file, scope a ``SetRemap`` with the include in a ``GroupAction`` (an
``IncludeLaunchDescription`` takes no ``remappings``)::

    from launch.actions import GroupAction, IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from launch_ros.actions import SetRemap

    GroupAction([
        SetRemap(src='feedforward_effort', dst='/effort_controller/commands'),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(os.path.join(
                get_package_share_directory('rnea_ros'), 'launch', 'rnea.launch.py')),
            launch_arguments={'urdf': '/path/to/robot.urdf'}.items()),
    ])

``rnea_effort_controller.launch.py`` does that wiring for a ros2_control effort controller.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import Command, LaunchConfiguration
from launch_ros.parameter_descriptions import ParameterValue

from rnea_ros.node.interfaces import LAUNCH_REMAPPED
from rnea_ros.node.launching import common_arguments, remap_arguments, remappings, rnea_node


def _description(context):
    """Return the xacro command's output for a xacro file, else the file's text as it is."""
    urdf = LaunchConfiguration('urdf').perform(context)
    if urdf.endswith('.xacro') or LaunchConfiguration('xacro_args').perform(context).strip():
        return Command(['xacro ', LaunchConfiguration('urdf'), ' ',
                        LaunchConfiguration('xacro_args')])
    with open(urdf, encoding='utf-8') as file:
        return file.read()


def _node(context):
    parameters = []
    if LaunchConfiguration('urdf').perform(context):
        description = _description(context)
        parameters.append({'robot_description': ParameterValue(description, value_type=str)})
    return [rnea_node(remappings(LAUNCH_REMAPPED), parameters)]


def generate_launch_description():
    return LaunchDescription([
        *common_arguments(),
        DeclareLaunchArgument('urdf', default_value='',
                              description='URDF or xacro file expanded into robot_description '
                                          '(empty: use the robot_description topic)'),
        DeclareLaunchArgument('xacro_args', default_value='',
                              description='xacro mappings for urdf, e.g. "arm:=left prefix:=l_"'),
        *remap_arguments({topic: f"the topic the node's {topic} is remapped to"
                          for topic in LAUNCH_REMAPPED}),
        OpaqueFunction(function=_node),
    ])
