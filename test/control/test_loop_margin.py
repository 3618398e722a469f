"""
The loop margin of the feedback laws (rnea_ros.control.loop_margin), against cases worked by hand.

The package's panda (test/harness/oracle.py's URDF): at the simulated robot's former PD (Kp 100 N
m/rad, Kd 10 N m s/rad on every joint) one tick late its loop is unstable on panda_joint7 (M^-1 up
to 202 1/(kg m^2)); Franka's joint-impedance example gains need a prediction; soft gains hold.
"""
from __future__ import annotations

from pathlib import Path

from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.control import gain_check
from rnea_ros.control.loop_margin import (BISECTION_PRECISION, configurations, delay_ticks,
                                          GAIN_MARGIN, loop_margin, loop_matrix)
from rnea_ros.control.settings import Settings

PERIOD = 1e-3  # s: 1 kHz
# franka_ros2 franka_bringup/config/controllers.yaml, joint impedance example (docs/robots.md).
FRANKA_KP = [600.0, 600.0, 600.0, 600.0, 250.0, 150.0, 50.0, 0.0]
FRANKA_KD = [30.0, 30.0, 30.0, 30.0, 10.0, 10.0, 5.0, 0.0]
# The URDF has no rotor inertia; a real arm's reflected inertia is what its gains are made for.
# 0.01 kg m^2 on each arm joint (a tenth of rnea_sim's default gap) is assumed here.
ARMATURE = [0.01] * 7 + [0.0]


@pytest.fixture(scope='module')
def panda():
    return RobotModel.from_urdf_file(robot_path('panda'))


def test_one_joint_matches_the_characteristic_polynomial_worked_by_hand():
    # One joint, M = 1, Kp = 0, one tick late: v+ = v - b Kd T v_(k-1): z^2 - z + Kd T = 0, so
    # the radius is sqrt(Kd T) once Kd T > 1/4 (complex roots): Kd T = 0.81 gives 0.9.
    matrix = loop_matrix(np.eye(1), np.zeros(1), np.array([810.0]), PERIOD, 1)
    assert matrix.shape == (2, 2)  # e is left out: Kp 0 feeds it back to nothing
    radius = np.max(np.abs(np.linalg.eigvals(matrix)))
    assert radius == pytest.approx(0.9, abs=1e-12)
    # Undelayed: v+ = (1 - Kd T) v, radius 0.19.
    matrix = loop_matrix(np.eye(1), np.zeros(1), np.array([810.0]), PERIOD, 0)
    assert np.max(np.abs(np.linalg.eigvals(matrix))) == pytest.approx(0.19, abs=1e-12)


def test_the_sims_pd_one_tick_late_is_refused_naming_panda_joint7(panda):
    margin = loop_margin(panda, [100.0] * 8, [10.0] * 8, PERIOD, delay=1, prediction=False)
    assert not margin.held
    assert (margin.joint, margin.gain, margin.value) == ('panda_joint7', 'kd.panda_joint7', 10.0)
    assert margin.radius_as_set == pytest.approx(1.4927, abs=1e-4)  # bench_control_margin
    line = margin.message()
    assert line.startswith('kd.panda_joint7 = 10 is more than the loop can hold on '
                           'panda_joint7: ')
    assert '\n' not in line
    # Joints 5 and 6 count too (the wrist's M^-1 couples them): every gain scaled holds.
    assert 0.0 < margin.scale < 1.0
    assert f'every gain times {margin.scale:.4f}'[:-1] in line
    assert margin.largest == pytest.approx(10.0 * margin.scale, rel=1e-12)
    kp, kd = np.full(8, 100.0), np.full(8, 10.0)
    assert loop_margin(panda, margin.scale * kp, margin.scale * kd, PERIOD).held
    above = margin.scale * (1 + 2 * BISECTION_PRECISION)
    assert not loop_margin(panda, above * kp, above * kd, PERIOD).held


def test_one_gain_too_high_is_named_with_the_largest_value_that_holds(panda):
    soft_kp = np.array([100.0, 100.0, 50.0, 100.0, 25.0, 25.0, 10.0, 50.0])
    kd = soft_kp / 10
    kd[6] = 10.0
    margin = loop_margin(panda, soft_kp, kd, PERIOD)
    assert (margin.held, margin.joint, margin.gain, margin.scale) == (
        False, 'panda_joint7', 'kd.panda_joint7', 1.0)
    line = margin.message()
    assert line.startswith('kd.panda_joint7 = 10 is more than the loop can hold on '
                           'panda_joint7: the largest kd.panda_joint7 it holds is ')
    # The largest value holds and a value above it by twice the bisection's precision does not.
    kd[6] = margin.largest
    assert loop_margin(panda, soft_kp, kd, PERIOD).held
    kd[6] = margin.largest * (1 + 2 * BISECTION_PRECISION)
    assert not loop_margin(panda, soft_kp, kd, PERIOD).held
    # The value printed is rounded down: it holds as printed.
    printed = float(line.split('it holds is ')[1].split(' ')[0])
    assert printed <= margin.largest
    kd[6] = printed
    assert loop_margin(panda, soft_kp, kd, PERIOD).held


def test_frankas_example_gains_need_the_prediction(panda):
    without = loop_margin(panda, FRANKA_KP, FRANKA_KD, PERIOD, delay=1, prediction=False,
                          armature=ARMATURE)
    assert not without.held
    assert without.gain.startswith(('kp.panda_joint', 'kd.panda_joint'))
    with_prediction = loop_margin(panda, FRANKA_KP, FRANKA_KD, PERIOD, delay=1,
                                  prediction=True, armature=ARMATURE)
    assert with_prediction.held and with_prediction.delay == 0
    # Without armature (the URDF has no rotor inertia): refused with prediction too.
    assert not loop_margin(panda, FRANKA_KP, FRANKA_KD, PERIOD, prediction=True).held
    # Two ticks late with prediction: still the undelayed loop (the model is the robot's).
    assert loop_margin(panda, FRANKA_KP, FRANKA_KD, PERIOD, delay=2, prediction=True,
                       armature=ARMATURE).radius == with_prediction.radius


def test_a_soft_set_and_the_documented_sets_hold(panda):
    # docs/node/control_laws.md, Latency
    soft_kp = [100.0, 100.0, 50.0, 100.0, 25.0, 25.0, 10.0, 50.0]
    margin = loop_margin(panda, soft_kp, [k / 10 for k in soft_kp], PERIOD)
    assert margin.held and margin.gain is None
    assert round(margin.radius_as_set, 3) == 0.999  # docs/node/control_laws.md, The gain check
    assert margin.radius < 1.0 and margin.radius_as_set < 1.0
    ur5 = RobotModel.from_urdf_file(robot_path('ur5'))
    kp = [400.0, 400.0, 200.0, 50.0, 50.0, 10.0]  # docs/node/control_laws.md, the damped rest
    assert loop_margin(ur5, kp, [k / 10 for k in kp], PERIOD).held
    assert loop_margin(panda, [400.0] * 8, [40.0] * 8, PERIOD, law='computed_torque').held


def test_the_margin_is_a_quarter_on_the_gains():
    # One joint, M = 1, one tick late, Kp 0: unstable from Kd T = 1 on. Kd T = 0.79 holds (0.79
    # x 1.25 < 1), 0.81 does not; no configuration matters (one joint, constant M).
    model = RobotModel.from_urdf_string(
        '<robot name="r"><link name="base"/><link name="arm"><inertial><mass value="1"/>'
        '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/>'
        '<axis xyz="0 0 1"/><limit effort="1" velocity="1" lower="-1" upper="1"/></joint>'
        '</robot>')
    assert GAIN_MARGIN == 0.25
    assert loop_margin(model, [0.0], [790.0], PERIOD).held
    refused = loop_margin(model, [0.0], [810.0], PERIOD)
    assert not refused.held and refused.gain == 'kd.j'
    assert refused.largest == pytest.approx(800.0, rel=2 * BISECTION_PRECISION)
    assert refused.largest <= 800.0


def test_zero_gains_hold_and_the_configurations_are_deterministic(panda):
    assert loop_margin(panda, [0.0] * 8, [0.0] * 8, PERIOD).held
    first, again = configurations(panda), configurations(panda)
    assert len(first) == 18
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    current = np.full(panda.nq, 0.1)
    assert np.array_equal(configurations(panda, current)[0], current)


@pytest.mark.parametrize('delay, period, ticks', [(0.0, 1e-3, 0), (1e-3, 1e-3, 1),
                                                  (1.5e-3, 1e-3, 2), (2e-3, 1e-3, 2)])
def test_a_delay_in_seconds_is_rounded_up_to_ticks(delay, period, ticks):
    assert delay_ticks(delay, period) == ticks


@pytest.mark.parametrize('delay', [-1.0, float('nan'), float('inf'), 1.0])
def test_a_bad_delay_is_refused_naming_it(delay):
    with pytest.raises(ValueError, match='delay is'):
        delay_ticks(delay, 1e-3)


def test_the_nodes_check_refuses_or_reports(panda):
    gains = {f'{kind}.{name}': value for name in panda.joint_names
             for kind, value in (('kp', 100.0), ('kd', 10.0))}
    settings = Settings(control_law='pd_feedforward', rate=1000.0, gains=gains)
    margin = gain_check.verdict(panda, settings)
    assert gain_check.refusal(margin, settings).endswith(
        '; gain_check: error accepts it as an ERROR')
    values = {}
    level, message = gain_check.report(margin, 0, 'ok', values)
    assert level == 2 and message.startswith('kd.panda_joint7 = 10 is more than')
    assert values['loop margin'].startswith('NOT HELD')
    reported = Settings(control_law='pd_feedforward', rate=1000.0, gains=gains,
                        gain_check='error')
    assert gain_check.refusal(margin, reported) is None
    assert gain_check.verdict(panda, Settings(gains=gains)) is None  # feedforward: no loop


def test_the_refusal_the_control_laws_page_shows_is_the_librarys(panda):
    # docs/node/control_laws.md, The gain check: the panda at the gains of Latency, Kd 10 on
    # panda_joint7.
    kp = np.array([100.0, 100.0, 50.0, 100.0, 25.0, 25.0, 10.0, 50.0])
    kd = kp / 10
    kd[6] = 10.0
    line = loop_margin(panda, kp, kd, PERIOD).message()
    page = (Path(__file__).resolve().parents[2] / 'docs' / 'node' / 'control_laws.md').read_text()
    assert f'\n```\n{line}\n```\n' in page


@pytest.mark.parametrize('kp, kd, period, delay, text', [
    ([float('nan')] * 8, [1.0] * 8, PERIOD, 1, 'kp[0] is nan: expected a finite gain >= 0'),
    ([1.0] * 8, [1.0] * 7 + [-1.0], PERIOD, 1, 'kd[7] is -1.0: expected a finite gain >= 0'),
    ([1.0] * 7, [1.0] * 8, PERIOD, 1, 'kp, kd have 7, 8 values: expected 8 each'),
    ([1.0] * 8, [1.0] * 8, 0.0, 1, 'period is 0.0: expected a finite number of seconds > 0'),
    ([1.0] * 8, [1.0] * 8, PERIOD, 101, 'delay is 101: expected 0 to 100 ticks'),
])
def test_bad_arguments_are_refused_naming_them(panda, kp, kd, period, delay, text):
    with pytest.raises(ValueError) as error:
        loop_margin(panda, kp, kd, period, delay=delay)
    assert str(error.value).startswith(text)


@pytest.mark.parametrize('armature, held', [(0.02, False), (0.03, True)])
def test_frankas_gains_one_tick_late_hold_with_enough_reflected_inertia(panda, armature, held):
    # docs/robots.md, Franka: refused with 0.02 kg m^2 or less on each joint, held from 0.03.
    margin = loop_margin(panda, FRANKA_KP, FRANKA_KD, PERIOD, armature=[armature] * 7 + [0.0])
    assert margin.held is held
