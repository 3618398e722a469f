"""
The node's topics and services, each declared once: name, type, direction, QoS, when, meaning.

The node creates its publishers, subscriptions and its service from these declarations
(``messages.message_type`` and ``messages.qos_profile`` turn one into its rclpy class and
profile); the table of ``docs/node/interfaces.md`` is generated from them
(``python -m rnea_ros.node.interfaces --markdown``, checked by ``test/node/test_interfaces.py``),
and ``launch/rnea.launch.py`` declares a ``<topic>_topic`` argument for each topic marked
``launch_argument``. Names are relative (remap them), but ``/diagnostics``; a name with
``<link>`` or ``<joint>`` is one topic per link or joint; ``wrench_topics`` names topics the
``wrench_topics`` parameter lists. Plain data: no rclpy here, so the docs build without ROS.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
import sys

IN, OUT, SERVICE = 'in', 'out', 'service'
RELIABLE, BEST_EFFORT = 'reliable', 'best effort'
VOLATILE, TRANSIENT_LOCAL = 'volatile', 'transient local'


@dataclass(frozen=True)
class Qos:
    """A keep-last QoS: reliability, depth and durability (``messages.qos_profile``)."""

    reliability: str
    depth: int
    durability: str = VOLATILE

    def words(self) -> str:
        """Return the profile as the docs say it: ``reliable, depth 1``."""
        durability = f', {self.durability}' if self.durability != VOLATILE else ''
        return f'{self.reliability}{durability}, depth {self.depth}'


SENSOR = Qos(BEST_EFFORT, 1)
COMMAND = Qos(RELIABLE, 1)
TRAJECTORY = Qos(RELIABLE, 10)
LATCHED = Qos(RELIABLE, 1, TRANSIENT_LOCAL)


@dataclass(frozen=True)
class Interface:
    """One topic or service of the node."""

    name: str
    direction: str  # IN (subscribed), OUT (published) or SERVICE (served)
    msg_type: str  # package/Name, e.g. sensor_msgs/JointState (a service: std_srvs/Trigger)
    qos: Qos | None  # None: a service
    when: str  # '' always; else the parameter(s) it exists with
    description: str
    qos_note: str = ''  # what the QoS also depends on
    launch_argument: bool = False  # rnea.launch.py remaps it with <name>_topic


JOINT_STATES = Interface(
    'joint_states', IN, 'sensor_msgs/JointState', SENSOR, '',
    'the measured state, merged per joint by name; each message answered at once',
    qos_note='depth `observer_queue` with `observer`', launch_argument=True)
DESIRED_ACCELERATIONS = Interface(
    'desired_accelerations', IN, 'trajectory_msgs/JointTrajectory', SENSOR, '',
    'the desired motion: one point, or a trajectory sampled at the ROS time',
    launch_argument=True)
PLANNED_TRAJECTORY = Interface(
    'planned_trajectory', IN, 'trajectory_msgs/JointTrajectory', TRAJECTORY, '',
    "a planner's trajectory, relayed with efforts on `joint_trajectory_with_effort`",
    launch_argument=True)
ODOMETRY = Interface(
    'odometry', IN, 'nav_msgs/Odometry', SENSOR, '`floating_base`',
    'the base pose and twist (REP-105)')
BASE_ACCELERATION = Interface(
    'base_acceleration', IN, 'geometry_msgs/AccelStamped', SENSOR, '`floating_base`',
    'the base acceleration, low-passed')
WRENCHES = Interface(
    'each of `wrench_topics`', IN, 'geometry_msgs/WrenchStamped', SENSOR, '`wrench_topics`',
    'a measured wrench on the link `frame_id`, taken as f_ext')
ROBOT_DESCRIPTION = Interface(
    'robot_description', IN, 'std_msgs/String', LATCHED, '`robot_description` empty',
    'the URDF, received and parsed by a worker process', launch_argument=True)
JOINT_TORQUES = Interface(
    'joint_torques', OUT, 'sensor_msgs/JointState', COMMAND, '',
    'the state used and effort = torque, stamped with the joint_states sample it answers',
    launch_argument=True)
FEEDFORWARD_EFFORT = Interface(
    'feedforward_effort', OUT, 'std_msgs/Float64MultiArray', COMMAND, '',
    "the same torques in `command_joints` order (an effort controller's `commands`)",
    launch_argument=True)
TRAJECTORY_WITH_EFFORT = Interface(
    'joint_trajectory_with_effort', OUT, 'trajectory_msgs/JointTrajectory', TRAJECTORY, '',
    "`planned_trajectory` with each point's effort", launch_argument=True)
CONTACT_WRENCHES = Interface(
    'contact_wrenches/<link>', OUT, 'geometry_msgs/WrenchStamped', COMMAND, '`contacts`',
    "the ground's wrench on each contact link")
JOINT_REACTION_WRENCHES = Interface(
    'joint_reaction_wrenches/<joint>', OUT, 'geometry_msgs/WrenchStamped', COMMAND,
    '`publish_joint_reaction_wrenches`', "the parent's wrench on the child, per moving joint")
DIAGNOSTICS = Interface(
    '/diagnostics', OUT, 'diagnostic_msgs/DiagnosticArray', Qos(RELIABLE, 10), '',
    "the node's status, once a second, in every lifecycle state")
STATUS = Interface(
    '~/status', OUT, 'diagnostic_msgs/DiagnosticArray', LATCHED, '',
    'the same status, latched: a subscriber that joins gets the last report at once')
EXTERNAL_TORQUES = Interface(
    'external_torques', OUT, 'sensor_msgs/JointState', COMMAND, '`observer`',
    "the observer's residual: the external joint torques")
ESTIMATED_WRENCHES = Interface(
    'estimated_wrenches/<link>', OUT, 'geometry_msgs/WrenchStamped', COMMAND, '`observer`',
    'the wrench on each of `wrench_estimation_links` that explains the residual')
COLLISION = Interface(
    'collision', OUT, 'std_msgs/Bool', LATCHED, '`observer`',
    'whether a collision is on (latched under a reaction), on each change')
COLLISION_EVENTS = Interface(
    'collision_events', OUT, 'diagnostic_msgs/DiagnosticStatus',
    Qos(RELIABLE, 10, TRANSIENT_LOCAL), '`observer`', 'each detection and auto reset, once')
RESET_COLLISION = Interface(
    '~/reset_collision', SERVICE, 'std_srvs/Trigger', None, '',
    "clears a latched collision (without `observer`: none) and the loop watch's stop "
    '(`unstable_reaction`, see loop health)')

INTERFACES = (JOINT_STATES, DESIRED_ACCELERATIONS, PLANNED_TRAJECTORY, ODOMETRY,
              BASE_ACCELERATION, WRENCHES, ROBOT_DESCRIPTION, JOINT_TORQUES, FEEDFORWARD_EFFORT,
              TRAJECTORY_WITH_EFFORT, CONTACT_WRENCHES, JOINT_REACTION_WRENCHES, DIAGNOSTICS,
              STATUS, EXTERNAL_TORQUES, ESTIMATED_WRENCHES, COLLISION, COLLISION_EVENTS,
              RESET_COLLISION)
# The topics launch/rnea.launch.py remaps, each through its argument <topic>_topic.
LAUNCH_REMAPPED = tuple(interface.name for interface in INTERFACES if interface.launch_argument)

MARKDOWN_BEGIN = '<!-- interfaces: generated by python -m rnea_ros.node.interfaces --markdown -->'
MARKDOWN_END = '<!-- interfaces: end -->'
PAGE = Path('docs') / 'node' / 'interfaces.md'


def _row(interface: Interface) -> str:
    qos = interface.qos.words() if interface.qos else ''
    if interface.qos_note:
        qos += f' ({interface.qos_note})'
    name = interface.name if interface.name.startswith('each') else f'`{interface.name}`'
    argument = f'`{interface.name}_topic`' if interface.launch_argument else ''
    return (f'| {name} | {interface.direction} | `{interface.msg_type}` | {qos} | '
            f'{interface.when} | {argument} | {interface.description} |')


def markdown_table() -> str:
    """Return the table of docs/node/interfaces.md, between its two marker lines."""
    rows = [MARKDOWN_BEGIN, '',
            '| name | dir | type | QoS | exists with | launch argument | what it carries |',
            '|---|---|---|---|---|---|---|']
    rows += [_row(interface) for interface in INTERFACES]
    return '\n'.join(rows + ['', MARKDOWN_END])


def page_with_table(text: str) -> str:
    """Return the page ``text`` with the table between its markers replaced by the current one."""
    begin, end = text.index(MARKDOWN_BEGIN), text.index(MARKDOWN_END) + len(MARKDOWN_END)
    return text[:begin] + markdown_table() + text[end:]


def main(argv: list[str] | None = None) -> int:
    """Print the interfaces table, or write it into (or check it in) the docs page."""
    parser = argparse.ArgumentParser(prog='python -m rnea_ros.node.interfaces',
                                     description="Print the node's topics and services table.")
    parser.add_argument('--markdown', action='store_true',
                        help=f'the table of {PAGE}')
    action = parser.add_mutually_exclusive_group()
    action.add_argument('--write', metavar='PAGE', type=Path,
                        help=f'replace the table between the markers of PAGE (e.g. {PAGE})')
    action.add_argument('--check', metavar='PAGE', type=Path,
                        help='exit 1 when the table of PAGE is not the generated one')
    args = parser.parse_args(argv)
    if args.write or args.check:
        page = args.write or args.check
        text = page.read_text()
        if args.check:
            if page_with_table(text) != text:
                print(f'{page}: the interfaces table is not the generated one; run '
                      f'python -m rnea_ros.node.interfaces --markdown --write {page}',
                      file=sys.stderr)
                return 1
            return 0
        page.write_text(page_with_table(text))
        return 0
    sys.stdout.write(markdown_table() + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
