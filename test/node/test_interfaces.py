"""
The node's topics and service are declared once, in ``rnea_ros.node.interfaces``.

The docs table is generated from the declaration, each declared type is a ROS type, and the
names other packages say on their own (``rnea_ctl``'s) are the declared ones. The launch files'
``<topic>_topic`` arguments are checked against it in test_launch.py, where the launch files run.
"""
from __future__ import annotations

from pathlib import Path
import subprocess
import sys

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
