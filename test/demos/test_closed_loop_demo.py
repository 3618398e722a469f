"""The closed-loop demo's checker: each torque heard against RobotModel.rnea, matched by stamp."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.demos import closed_loop_demo

TWO_JOINTS = """<robot name="two_joints">
  <link name="base"/>
  <link name="upper">
    <inertial><origin xyz="0 0 0.25"/><mass value="2"/>
      <inertia ixx="0.05" iyy="0.05" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="lower">
    <inertial><origin xyz="0 0 0.2"/><mass value="1"/>
      <inertia ixx="0.02" iyy="0.02" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="500" velocity="2"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="upper"/><child link="lower"/><origin xyz="0 0 0.5"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="500" velocity="2"/>
  </joint>
</robot>
"""
STEP = 1_000_000  # ns: the sim's 1 kHz


class FakeClock:
    """``time`` for the demo module: perf_counter(_ns) read from ``now`` [ns]."""

    def __init__(self):
        self.now = 0

    def perf_counter_ns(self) -> int:
        return self.now

    def perf_counter(self) -> float:
        return self.now * 1e-9


def _header(stamp: int):
    return SimpleNamespace(stamp=SimpleNamespace(sec=stamp // 10**9, nanosec=stamp % 10**9))


def _acceleration(k: int) -> np.ndarray:
    return np.array([0.5 + 0.1 * k, -1.0 + 0.05 * k])


@pytest.fixture
def heard(monkeypatch):
    """Return a monitor that heard the sim's samples 0..39, each a step after the last."""
    clock = FakeClock()
    monkeypatch.setattr(closed_loop_demo, 'time', clock)
    model = RobotModel.from_urdf_string(TWO_JOINTS)
    monitor = closed_loop_demo.Monitor(model, list(model.joint_names), 1000.0)
    for k in range(40):
        clock.now = k * STEP + 200_000  # heard 0.2 ms after the sim stepped
        point = SimpleNamespace(positions=[0.3, 0.2], accelerations=_acceleration(k).tolist())
        monitor.on_desired(SimpleNamespace(header=_header(k * STEP), points=[point]))
    return monitor, model, clock


def _answer(monitor, model, clock, stamp: int, used: int, arrival: int) -> None:
    """Hear the node's answer to sample ``stamp``, with sample ``used``'s acceleration."""
    q, v = np.array([0.3, 0.2]), np.array([0.1, -0.2])
    effort = model.rnea(q, v, _acceleration(used))
    clock.now = arrival * STEP + 300_000
    monitor.on_torques(SimpleNamespace(header=_header(stamp * STEP), position=q.tolist(),
                                       velocity=v.tolist(), effort=effort.tolist()))


def test_an_answer_nine_steps_late_is_matched_to_the_acceleration_it_used(heard):
    # At load the node's answer to a sample arrives several samples later, and the cycle had
    # taken a newer acceleration than the answered sample's: any one published until then.
    monitor, model, clock = heard
    _answer(monitor, model, clock, stamp=15, used=24, arrival=24)
    monitor.check_torques()
    assert (monitor.checked, monitor.mismatches, monitor.unverified) == (1, 0, 0)
    assert monitor.max_difference <= 1e-9


def test_a_torque_of_an_acceleration_published_after_its_arrival_is_a_mismatch(heard):
    # The sim published sample 35 after the answer to sample 15 arrived (at step 22): the node
    # cannot have used its acceleration, so a torque equal to it is not the node's answer.
    monitor, model, clock = heard
    _answer(monitor, model, clock, stamp=15, used=35, arrival=22)
    monitor.check_torques()
    assert (monitor.checked, monitor.mismatches) == (1, 1)


def test_an_answer_with_an_older_acceleration_is_matched(heard):
    monitor, model, clock = heard
    # The desired accelerations come on another topic: the cycle may have had an older one,
    # down to 7 samples before.
    _answer(monitor, model, clock, stamp=30, used=23, arrival=30)
    monitor.check_torques()
    assert (monitor.checked, monitor.mismatches) == (1, 0)
