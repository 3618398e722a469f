"""
The loop watch as the core runs it: the finding, the stop it latches, the hold after the reset.

A ``ControlCore`` of the panda under ``pd_feedforward`` holding q = 0.1 (a one-point desired
motion), fed samples 1 ms apart whose joint 1 velocity reverses every 3 cycles at 1 rad/s: an
oscillation as the loop watch sees it (``loop_watch``), found at the 6th sign change.
"""
from __future__ import annotations

from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.control.core import ControlCore
from rnea_ros.control.safety import ERROR, LOOP_HOLD, LOOP_UNSTABLE, OK, WARN
from rnea_ros.control.settings import Settings
from rnea_ros.control.trajectory import Trajectory

MS = 1e-3
SHAKEN = 20  # cycles of the shaking: the 6th sign change at the 18th


@pytest.fixture(scope='module')
def panda() -> RobotModel:
    return RobotModel.from_urdf_string(robot_path('panda').read_text())


class Run:
    """A core at q = 0.1 holding it, fed a cycle at a time (module docstring)."""

    def __init__(self, model: RobotModel, **settings):
        gains = {f'{kind}.{joint}': value for joint in model.joint_names
                 for kind, value in (('kp', 100.0), ('kd', 10.0))}
        self.core = ControlCore(model, Settings(
            rate=1000.0, control_law=settings.pop('control_law', 'pd_feedforward'), gains=gains,
            acceleration_timeout=10.0, **settings).validate())
        self.q, self.k = np.full(model.nv, 0.1), 0
        self.send()

    def send(self) -> None:
        """Send the one-point desired motion at q, at rest (a new message)."""
        names = self.core.joint_names
        self.core.on_desired(Trajectory.from_points(names, [(0.0, self.q, 0.0 * self.q, [])]),
                             self.now, now=self.now)

    @property
    def now(self) -> float:
        return self.k * MS

    def cycles(self, count: int, shaking: bool = False) -> list:
        """Run ``count`` cycles; the fault code of each."""
        codes = []
        for _ in range(count):
            self.k += 1
            v = np.zeros(self.core.model.nv)
            if shaking:
                v[0] = 1.0 if (self.k // 3) % 2 else -1.0
            self.core.on_joint_states(self.core.joint_names, self.q, v, [], self.now)
            assert self.core.cycle(self.now, self.now)
            codes.append(self.core.fault.code)
        return codes


def test_report_says_the_joint_and_publishes_the_laws_torque(panda):
    run = Run(panda, unstable_reaction='report')
    assert run.cycles(SHAKEN, shaking=True) == [None] * SHAKEN
    level, message, values = run.core.status(run.now, run.now)
    assert level == ERROR and message.startswith(
        'loop not holding: panda_joint1 oscillates, its velocity error reversing every 3 cycles,'
        ' 167 Hz, up to 1 rad/s'), message
    assert values['unstable_reaction'] == 'report'
    # The law's torque, not a stop: ID(q, v, 0) - Kd v at the desired pose.
    v = np.zeros(panda.nv)
    v[0] = 1.0 if (run.k // 3) % 2 else -1.0
    np.testing.assert_allclose(run.core.effort, panda.rnea(run.q, v, np.zeros(panda.nv))
                               - 10.0 * v, rtol=0, atol=1e-9)


def test_stop_latches_until_the_reset_then_holds_until_a_newer_desired_motion(panda):
    run = Run(panda)  # unstable_reaction: stop, the default
    codes = run.cycles(SHAKEN, shaking=True)
    assert codes[:18] == [None] * 18 and set(codes[18:]) == {LOOP_UNSTABLE}, codes
    level, message, values = run.core.status(run.now, run.now)
    assert level == ERROR and message.startswith('loop not holding: panda_joint1 oscillates')
    assert message.endswith('the loop is not holding: publishing the stop (unstable_reaction) '
                            'until ~/reset_collision')
    assert values['unstable_reaction'] == 'stop: stop latched until reset_collision'
    assert run.cycles(50) == [LOOP_UNSTABLE] * 50  # quiet now, still latched
    run.send()  # a desired motion does not end the stop: the reset does
    assert run.cycles(5) == [LOOP_UNSTABLE] * 5
    assert run.core.watch.reset()
    assert run.cycles(5) == [LOOP_HOLD] * 5  # the motion sent before the reset is held back
    level, message, values = run.core.status(run.now, run.now)
    assert level == WARN and message.startswith('holding the pose where the stop ended'), message
    assert values['unstable_reaction'] == ('stop: holding the pose until a desired motion newer '
                                           'than the reset')
    assert values['loop watch'] == 'holding'
    run.send()
    assert run.cycles(3) == [None] * 3
    assert not run.core.torques.law.resting and not run.core.watch.holding
    run.core.status(run.now, run.now)  # the fault cycles' report
    assert run.core.status(run.now, run.now)[0] == OK


def test_under_feedforward_an_oscillation_is_not_watched(panda):
    run = Run(panda, control_law='feedforward')
    assert run.cycles(200, shaking=True) == [None] * 200
    assert run.core.watch.oscillations == 0 and run.core.status(run.now, run.now)[0] == OK
