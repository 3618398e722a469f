"""
``rnea_identify`` judged against the simulated robot, whose true parameters are known.

The default-gap panda recorded in lockstep on Fourier excitations (``sim_identification``:
``TRAINING`` s to identify, ``VALIDATION`` s of another seed to validate), identified from the
URDF the node is given, and compared with the plant: its base parameters, the validation
residual against the torque sensor's noise, and the closed-loop tracking with the identified
model's feed-forward against the true model's (the plant's inverse dynamics, and the same with
its dry friction compensated as the node compensates friction). One recording and
identification for the module; the shorter recordings of the full check (60 s and 25 s,
``bench/bench_identify_sim.py``) keep its wall time near a minute.
"""
from __future__ import annotations

import numpy as np
import pytest
from sim_identification import judge, table

pytestmark = pytest.mark.timeout(600)

TRAINING, VALIDATION = 30.0, 15.0  # s of recording
RESIDUAL = 1.2  # validation RMS residual <= this many times the sensor noise, every joint
TRACKING = 1.3  # closed-loop RMS tracking error <= this many times the true model's


@pytest.fixture(scope='module')
def judged(tmp_path_factory):
    result = judge(tmp_path_factory.mktemp('identify_sim'), TRAINING, VALIDATION)
    print('\n' + table(result))
    return result


def test_the_truth_is_the_plants_own():
    """The truth's joint terms: the gap's per joint, a mimic finger's added to its master's."""
    from oracle import robot_path
    from sim_identification import true_base_parameters
    names, truth = true_base_parameters(robot_path('panda').read_text())
    value = dict(zip(names, truth))
    assert value['armature.panda_joint3'] == pytest.approx(0.1, abs=1e-12)
    assert value['friction.panda_joint7.coulomb'] == pytest.approx(0.5, abs=1e-12)
    assert value['friction.panda_finger_joint1.viscous'] == pytest.approx(0.4, abs=1e-12)


def test_the_identified_model_predicts_far_better_than_the_urdf(judged):
    """Met today: every joint's validation residual at most half the URDF's."""
    assert np.all(judged.residual <= 0.5 * judged.residual_urdf), table(judged)


def test_the_identified_feedforward_tracks_within_1_3_of_the_true_model(judged):
    """Closed loop, lockstep (in-process): identified <= 1.3 x the plant's inverse dynamics."""
    assert judged.tracking_identified < judged.tracking_urdf, table(judged)
    assert judged.tracking_ratio <= TRACKING, table(judged)


def test_the_identified_feedforward_tracks_within_1_3_of_the_true_model_with_friction(judged):
    """
    And of the true model with its dry friction compensated as the node does (0.22 mrad).

    Met (1.22x on 30 s, 1.20x on 60 s) with what the recording is declared (``--offset
    sensor-bias --effort-delay 0.001``) and the wrist's slow rows left out of the fit; 12x
    with the sensor's biases applied as torques, 2.4x with the effort paired with the state
    of its own stamp, 1.8x with the wrist's stiction rows kept (60 s).
    """
    assert judged.tracking_ratio_friction <= TRACKING, table(judged)


def test_the_validation_residual_where_the_arm_moves_is_within_1_2_of_the_sensor_noise(judged):
    """
    On the rows the fit models (rms.identified.validation_moving), joints 1-7: 1.0-1.1x.

    The finger never moves past the friction's band (every row is at rest, none left out): its
    residual is that of every row, 1.2x.
    """
    arm = [k for k, name in enumerate(judged.joints) if 'finger' not in name]
    assert len(arm) == 7
    assert np.all(judged.residual_moving[arm] <= RESIDUAL * judged.noise), table(judged)


@pytest.mark.xfail(strict=True, reason="the plant's, not met: the validation residual is "
                   '1.4-1.85x the sensor noise (0.05 N m) on joints 1-7 and 1.2x on the finger, '
                   'with 30 s or 60 s of training: 0.15-0.42 N m RMS below 0.05 rad/s, where '
                   'the plant sticks (MuJoCo frictionloss) and no friction curve of the '
                   'velocity can follow; the same gap without dry friction: 1.00-1.01x')
def test_the_validation_residual_is_within_1_2_of_the_sensor_noise(judged):
    assert np.all(judged.residual <= RESIDUAL * judged.noise), table(judged)


@pytest.mark.xfail(strict=True, reason='not met: 4 of 78 least-squares base parameters '
                   '(30 s; 9 with 60 s) are off the truth by more than 5 % and 3 std: the '
                   'finger joint (it never moves past 0.01 m/s: its friction is all stiction; '
                   'armature -6.5 +- 0.5 for 0.2, viscous 280 +- 56 for 0.4), panda_link3.Ixx '
                   'and panda_link6.Ixy (3-4 std); without dry friction 2 misses, the '
                   "plant's 1 kHz Euler step: none recorded at 4 kHz")
def test_the_base_parameters_are_within_5_percent_or_3_std_of_the_truth(judged):
    missed = judged.misses(judged.least_squares)
    assert not np.any(missed), [judged.names[k] for k in np.flatnonzero(missed)]
