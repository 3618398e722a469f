"""
The node and the simulated robot announce themselves every 0.1 s unless given a profile.

``announce_often`` points Fast DDS at the package's profile only where the process has none
(a profile file, a discovery server, another middleware); Fast DDS takes the profile, and the
shipped real-time profile announces as often. (How long a client then waits is measured by
``bench/bench_ctl.py``, not here.)
"""
from __future__ import annotations

import os
from pathlib import Path
import re
import subprocess
import sys

from harness.ros_harness import next_domain_id, release_domain
import pytest

from rnea_ros.polling.discovery import announce_often, PROFILE

ROOT = Path(__file__).resolve().parents[2]


def _announcement(path: Path) -> float:
    """Return the announcement period [s] a Fast DDS profile file sets (its one)."""
    # Not an XML parser: the shipped comments hold '--' (Fast DDS's parser takes it, expat not).
    found = re.findall(r'<leaseAnnouncement>\s*<sec>(\d+)</sec>\s*<nanosec>(\d+)</nanosec>',
                       path.read_text())
    assert len(found) == 1, found
    return int(found[0][0]) + int(found[0][1]) * 1e-9


def test_a_process_without_a_profile_gets_the_packages(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    environ = {'ROS_DOMAIN_ID': '3'}
    assert announce_often(environ) and environ['FASTDDS_DEFAULT_PROFILES_FILE'] == str(PROFILE)
    assert PROFILE.is_file() and _announcement(PROFILE) == 0.1


@pytest.mark.parametrize('given', [
    {'FASTDDS_DEFAULT_PROFILES_FILE': '/etc/mine.xml'},
    {'FASTRTPS_DEFAULT_PROFILES_FILE': '/etc/mine.xml'},
    {'ROS_DISCOVERY_SERVER': '127.0.0.1:11811'},
    {'RMW_IMPLEMENTATION': 'rmw_cyclonedds_cpp'},
    {'CWD': 'DEFAULT_FASTDDS_PROFILES.xml'},
])
def test_a_profile_of_the_users_own_is_left_alone(tmp_path, monkeypatch, given):
    monkeypatch.chdir(tmp_path)
    environ = dict(given)
    if 'CWD' in environ:
        (tmp_path / environ.pop('CWD')).write_text('<dds/>')
    before = dict(environ)
    assert not announce_often(environ)
    assert environ == before


def test_the_realtime_profile_announces_as_often():
    assert _announcement(ROOT / 'config' / 'fastdds_realtime.xml') == _announcement(PROFILE)


@pytest.mark.parametrize('profile', [PROFILE, ROOT / 'config' / 'fastdds_realtime.xml'])
def test_fast_dds_takes_the_profile(tmp_path, profile):
    """A participant made with the profile logs no XML error (a broken file does: the check)."""
    broken = tmp_path / 'broken.xml'
    broken.write_text(PROFILE.read_text().replace('</nanosec>', '</nanosecond>'))
    start = ('import rclpy; rclpy.init(); from rclpy.node import Node; '
             "Node('probe').destroy_node(); rclpy.shutdown()")
    outputs, domain = {}, next_domain_id()
    for path in (profile, broken):
        done = subprocess.run([sys.executable, '-c', start], capture_output=True, text=True,
                              timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path,
                              env=dict(os.environ, ROS_DOMAIN_ID=str(domain),
                                       ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
                                       FASTDDS_DEFAULT_PROFILES_FILE=str(path)))
        assert done.returncode == 0, done.stderr
        outputs[path] = done.stdout + done.stderr
    release_domain(domain)
    assert 'XML' not in outputs[profile], outputs[profile]  # (SCHED_FIFO may be refused)
    assert 'XML' in outputs[broken], outputs[broken]
