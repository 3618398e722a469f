"""
The node's topics and service are declared once, in ``rnea_ros.node.interfaces``.

The docs table is generated from the declaration, each declared type is a ROS type, the names
other packages say on their own (``rnea_ctl``'s) are the declared ones, and a running node's
topics and services, as the ROS graph shows them, are declared ones with their declared types
(none made on the side). The launch files' ``<topic>_topic`` arguments are checked against it in
test_launch.py, where the launch files run.
"""
from __future__ import annotations

from pathlib import Path
import subprocess
import sys

from harness.oracle import robot_path
import pytest
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

from rnea_ros.ctl import names
from rnea_ros.node import interfaces
from rnea_ros.node.interfaces import INTERFACES, MARKDOWN_BEGIN, MARKDOWN_END, markdown_table
from rnea_ros.node.messages import message_type, qos_profile

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / 'docs' / 'node' / 'interfaces.md'


def test_the_docs_table_is_what_the_declaration_generates():
    text = PAGE.read_text()
    begin, end = text.index(MARKDOWN_BEGIN), text.index(MARKDOWN_END) + len(MARKDOWN_END)
    assert text[begin:end] == markdown_table(), \
        'regenerate: python -m rnea_ros.node.interfaces --markdown --write docs/node/interfaces.md'


def test_the_check_command_the_docs_show_passes_and_fails(tmp_path):
    command = [sys.executable, '-m', 'rnea_ros.node.interfaces', '--markdown', '--check']
    assert subprocess.run([*command, str(PAGE)], cwd=ROOT).returncode == 0
    stale = tmp_path / 'interfaces.md'
    stale.write_text(PAGE.read_text().replace('`joint_torques`', '`torques`', 1))
    done = subprocess.run([*command, str(stale)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr == (f'{stale}: the interfaces table is not the generated one; run python '
                           f'-m rnea_ros.node.interfaces --markdown --write {stale}\n')


@pytest.mark.parametrize('interface', INTERFACES, ids=lambda i: i.name)
def test_every_declared_type_and_qos_is_a_ros_one(interface):
    cls = message_type(interface)
    assert f'{cls.__module__.split(".")[0]}/{cls.__name__}' == interface.msg_type
    if interface.direction == interfaces.SERVICE:
        assert interface.qos is None and hasattr(cls, 'Request')
        return
    profile = qos_profile(interface.qos)
    assert profile.depth == interface.qos.depth
    assert profile.reliability == {interfaces.RELIABLE: ReliabilityPolicy.RELIABLE,
                                   interfaces.BEST_EFFORT: ReliabilityPolicy.BEST_EFFORT}[
        interface.qos.reliability]
    assert profile.durability == (DurabilityPolicy.TRANSIENT_LOCAL if interface.qos.durability
                                  == interfaces.TRANSIENT_LOCAL else DurabilityPolicy.VOLATILE)


def test_names_are_unique_and_relative_but_diagnostics():
    declared = [i.name for i in INTERFACES]
    assert len(declared) == len(set(declared))
    assert [n for n in declared if n.startswith('/')] == ['/diagnostics']


def test_rnea_ctl_names_the_declared_interfaces():
    """The ctl package never imports node: its own names must be the node's declared ones."""
    assert names.TRAJECTORY_TOPIC == interfaces.PLANNED_TRAJECTORY.name
    assert '~/' + names.RESET_COLLISION_SERVICE == interfaces.RESET_COLLISION.name
    assert names.DIAGNOSTICS_TOPIC == interfaces.DIAGNOSTICS.name


# What every rclpy lifecycle node has besides its own interfaces (rclpy's, not the node's).
STANDARD = {'/rosout', '/parameter_events', '/rnea/transition_event'}
STANDARD_SERVICE_PREFIXES = ('/rnea/describe_parameters', '/rnea/get_parameter',
                             '/rnea/list_parameters', '/rnea/set_parameters',
                             '/rnea/change_state', '/rnea/get_state', '/rnea/get_available_',
                             '/rnea/get_transition_graph', '/rnea/get_type_description')


def _declared(name: str, kind: str) -> interfaces.Interface | None:
    """Return the declaration a graph name (``/collision``, ``/estimated_wrenches/x``) is of."""
    for interface in INTERFACES:
        if (interface.direction == interfaces.SERVICE) != (kind == 'service'):
            continue
        full = interface.name.replace('~/', '/rnea/')
        full = full if full.startswith('/') else '/' + full
        if full == name or ('<' in full and name.startswith(full.split('<')[0])):
            return interface
    return None


def test_the_running_node_has_only_declared_topics_and_services(ros):
    ros.start_node({'robot_description': robot_path('panda').read_text(), 'observer': True,
                    'wrench_estimation_links': ['panda_hand']})
    graph = ros.node
    expected = {i.name for i in INTERFACES if not i.when} | {
        'collision', 'collision_events', 'external_torques', 'estimated_wrenches/<link>'}

    def complete():
        """Return (topics, services) once every expected one is in the graph, else None."""
        if ('rnea', '/') not in graph.get_node_names_and_namespaces():
            return None  # not discovered yet
        topics = {**dict(graph.get_publisher_names_and_types_by_node('rnea', '/')),
                  **dict(graph.get_subscriber_names_and_types_by_node('rnea', '/'))}
        services = dict(graph.get_service_names_and_types_by_node('rnea', '/'))
        found = {getattr(_declared(name, kind), 'name', None)
                 for kind, names_ in (('topic', topics), ('service', services))
                 for name in names_}
        return (topics, services) if expected <= found else None
    # Publishers, subscriptions and services reach the graph one by one: wait for all of them.
    topics, services = ros.spin_until(complete, 120, what="the node's interfaces in the graph")
    seen = set()
    for kind, found in (('topic', topics), ('service', services)):
        for name, types in found.items():
            if name in STANDARD or name.startswith(STANDARD_SERVICE_PREFIXES):
                continue
            interface = _declared(name, kind)
            assert interface is not None, f'{kind} {name} is not declared in interfaces.py'
            package, type_name = interface.msg_type.split('/')
            middle = 'srv' if kind == 'service' else 'msg'
            assert types == [f'{package}/{middle}/{type_name}'], (name, types)
            seen.add(interface.name)
    assert expected <= seen, expected - seen
