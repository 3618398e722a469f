"""
``ControlCore`` with ``prediction: model`` (``cycle_prediction``), its cycles driven by hand.

The predicted state is ``StatePredictor``'s from the sample to stamp + command_delay with the
commands the core published (each from the time it predicted for); the laws and the damped rest
act on it; a stall is carried through to ``prediction_horizon``, then held (ERROR); a prediction
that fails falls back to the measured state with its reason; without prediction nothing changes.
A stall is braked on the predicted state (the acceleration -2 v / collision_stop_time).
"""
from __future__ import annotations

from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import InputError, RobotModel
from rnea_ros.control.core import ControlCore
from rnea_ros.control.prediction import StatePredictor
from rnea_ros.control.safety import ERROR
from rnea_ros.control.settings import Settings
from rnea_ros.control.trajectory import Trajectory

KP, KD = 100.0, 10.0
Q0 = np.array([0.1, -0.3, 0.2, -1.8, 0.1, 1.6, 0.5, 0.01])
V0 = np.array([0.5, -0.4, 0.3, 0.6, -0.2, 0.8, -1.0, 0.0])


@pytest.fixture(scope='module')
def model():
    return RobotModel.from_urdf_file(robot_path('panda'))


def core_of(model, **values) -> ControlCore:
    gains = {f'kp.{name}': KP for name in model.joint_names[:7]}
    gains.update({f'kd.{name}': KD for name in model.joint_names[:7]})
    return ControlCore(model, Settings(rate=0.0, control_law='pd_feedforward', gains=gains,
                                       input_timeout=0.01).updated(values).validate())


def sample(core, t, q=Q0, v=V0):
    core.on_joint_states(core.joint_names, q, v, [], now=t)


def test_without_prediction_the_laws_act_on_the_measured_state(model):
    core = core_of(model)
    sample(core, 1.0)
    assert core.cycle(1.0, 0.0)
    q, v = core.torques.acted_on()
    assert q is core.state.q and v is core.state.v
    assert 'prediction' not in core.status(1.0, 0.0)[2]


def test_the_rest_acts_on_the_state_predicted_one_period_ahead(model):
    core = core_of(model, prediction='model')
    reference = StatePredictor(model)
    sample(core, 1.0)
    assert core.cycle(1.0, 0.0)  # no desired motion: the damped rest g(q) - Kd v
    q, v = reference.predict(Q0, V0, 1.0, 1.001)  # no command yet: zero torque
    np.testing.assert_allclose(core.prediction.q, q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(core.prediction.v, v, rtol=0, atol=1e-12)
    rest = model.gravity_torques(q) - np.r_[[KD] * 7, 0.0] * v
    np.testing.assert_allclose(core.torques.tau, rest, rtol=0, atol=1e-9)
    np.testing.assert_allclose(core.position, q[:8], rtol=0, atol=1e-12)
    # The next sample: the prediction integrates the command published, from 1.001 on.
    command = core.torques.tau.copy()
    reference.push_command(1.001, command)
    arrays = core.prediction.q, core.prediction.v
    sample(core, 1.001, q, v)
    assert core.cycle(1.001, 0.0)
    expected_q, expected_v = reference.predict(q, v, 1.001, 1.002)
    np.testing.assert_allclose(core.prediction.q, expected_q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(core.prediction.v, expected_v, rtol=0, atol=1e-12)
    assert core.prediction.q is arrays[0] and core.prediction.v is arrays[1]  # preallocated


def test_the_one_step_error_compares_the_prediction_with_the_next_sample(model):
    core = core_of(model, prediction='model', command_delay=0.002)
    reference = StatePredictor(model)
    sample(core, 1.0)
    assert core.cycle(1.0, 0.0)
    reference.push_command(1.002, core.torques.tau.copy())
    q, v = reference.predict(Q0, V0, 1.0, 1.001)
    v = v.copy()
    v[2] += 0.25  # measured: 0.25 rad/s off the model on panda_joint3
    sample(core, 1.001, q.copy(), v)
    # Not in the merge of the sample (the inputs thread holds the lock the cycle waits on):
    # kept, and measured after the next cycle published (the node) or at the status.
    assert core.prediction.pending and core.prediction.errors == 0
    values = core.status(1.001, 0.0)[2]
    assert not core.prediction.pending and core.prediction.errors == 1
    assert values['prediction'] == 'model, 2 ms ahead of the sample'
    last, rms, largest = values['one-step prediction error v [rad/s] (last, RMS, max)'].split(', ')
    assert float(last) == pytest.approx(0.25, abs=1e-3) and float(largest) == float(last)
    assert float(values['one-step prediction error q [rad] (last, RMS, max)'].split(', ')[0]) \
        < 1e-9


def test_a_stall_is_carried_through_braking_then_held(model):
    core = core_of(model, prediction='model', prediction_horizon=0.05)
    t = 1.0
    for _ in range(5):  # joint_states every millisecond: the input_timeout (0.01 s) applies
        t += 0.001
        sample(core, t)
        assert core.cycle(t, 0.0)
    for _ in range(30):  # stale from 0.01 s on: braking on the predicted state
        t += 0.001
        assert core.cycle(t, 0.0)
    assert core.fault.code == 'joint_states_stale' and core.prediction.valid
    q, v = core.prediction.q, core.prediction.v
    # Every joint decelerates as -2 v / T (T: collision_stop_time), scaled within the limits.
    acceleration = model.forward_dynamics(q, v, core.torques.tau)
    scale = -acceleration @ v / (2.0 / 0.1 * v @ v)
    assert 0.0 < scale <= 1.0, scale
    np.testing.assert_allclose(acceleration, -2.0 / 0.1 * scale * v, rtol=0, atol=1e-6)
    for _ in range(40):  # past the horizon: g(q) at the last predicted pose, ERROR
        t += 0.001
        assert core.cycle(t, 0.0)
    assert core.prediction.held
    held = core.prediction.q.copy()
    assert core.cycle(t + 0.001, 0.0)
    np.testing.assert_array_equal(core.prediction.q, held)
    np.testing.assert_allclose(core.torques.tau, model.gravity_torques(held), rtol=0, atol=1e-9)
    level, message, values = core.status(t, 0.0)
    assert level == ERROR and 'prediction_horizon passed: holding g(q) at the last predicted ' \
        'pose' in message, message
    assert values['prediction'] == 'held: past prediction_horizon, g(q) at the last predicted pose'
    sample(core, t + 0.002)  # joint_states back: predicted from the sample again
    assert core.cycle(t + 0.002, 0.0)
    assert core.prediction.valid and not core.prediction.held


def test_after_a_stall_the_rest_holds_the_first_pose_back_until_a_newer_motion(model):
    """
    Hold the first pose known again after a stall, until a newer motion is followed.

    Regression: the law's damped rest g(q) - D v after a stall held no pose (the default gap's
    panda sagged on at 0.5 rad/s, test_prediction_in_process).
    """
    core = core_of(model, prediction='model')
    names = core.joint_names
    core.on_desired(Trajectory.from_points(names, [(0.0, Q0, V0, np.zeros(8))]), 0.0, now=1.0)
    t = 1.0
    for _ in range(5):
        t += 0.001
        sample(core, t)
        assert core.cycle(t, 0.0) and not core.torques.law.resting
    for _ in range(30):  # stale: the stall's brake
        t += 0.001
        assert core.cycle(t, 0.0)
    assert core.torques.stalled and core.torques.stalls == 1
    sample(core, t + 0.001, Q0, np.zeros(8))  # back, at rest
    assert core.cycle(t + 0.001, 0.0) and core.torques.law.resting
    q_rest = core.prediction.q.copy()
    np.testing.assert_array_equal(core.torques.after_stall.q_rest, q_rest)
    moved = Q0 + np.r_[0.02, np.zeros(7)]  # sagged: pulled back towards q_rest
    sample(core, t + 0.002, moved, np.zeros(8))
    assert core.cycle(t + 0.002, 0.0)
    expected = np.zeros(8)
    assert core.torques.brake.torques(core.prediction.q, core.prediction.v, 0.1,
                                      core.limiter.upper, expected, q_rest)
    np.testing.assert_allclose(core.torques.tau, expected, rtol=0, atol=1e-9)
    assert core.torques.tau[0] < model.gravity_torques(core.prediction.q)[0] - 1.0
    # The desired motion from before the stall stays held back; a newer one is followed.
    core.on_desired(Trajectory.from_points(names, [(0.0, moved, np.zeros(8), np.zeros(8))]),
                    0.0, now=t + 0.003)
    sample(core, t + 0.003, moved, np.zeros(8))
    assert core.cycle(t + 0.003, 0.0)
    assert not core.torques.stalled and not core.torques.law.resting


def test_a_failed_prediction_falls_back_to_the_measured_state_with_its_reason(
        model, monkeypatch):
    core = core_of(model, prediction='model')

    def fails(*args):
        raise InputError('predict: the predicted state is not finite (inputs too large?)')
    monkeypatch.setattr(core.prediction.predictor, 'predict', fails)
    sample(core, 1.0)
    assert core.cycle(1.0, 0.0)
    q, v = core.torques.acted_on()
    assert q is core.state.q and v is core.state.v
    assert np.isfinite(core.effort).all()
    values = core.status(1.0, 0.0)[2]
    assert values['prediction fallbacks (measured state used)'] == (
        '1: prediction failed, acting on the measured state: predict: the predicted state is '
        'not finite (inputs too large?)')


def test_a_stamp_stepping_back_drops_the_commands_recorded(model):
    core = core_of(model, prediction='model')
    sample(core, 5.0)
    assert core.cycle(5.0, 0.0)
    assert core.prediction.predictor.command_count == 1
    sample(core, 2.0)
    assert core.prediction.predictor.command_count == 0
    assert core.cycle(2.0, 0.0)
    assert core.prediction.valid and core.prediction.predictor.command_count == 1


def test_a_live_set_turns_it_on_and_off(model):
    core = core_of(model)
    core.use(core.settings.updated({'prediction': 'model'}))
    sample(core, 1.0)
    assert core.cycle(1.0, 0.0)
    assert core.torques.acted_on()[0] is core.prediction.q
    core.use(core.settings.updated({'prediction': 'none'}))
    assert core.cycle(1.0, 0.0)
    assert core.torques.acted_on()[0] is core.state.q


def test_a_live_set_under_feedforward_is_reported_unused(model):
    core = ControlCore(model, Settings(rate=0.0).validate())
    core.use(core.settings.updated({'prediction': 'model'}))
    sample(core, 1.0)
    assert core.cycle(1.0, 0.0)
    assert core.torques.acted_on()[0] is core.state.q
    assert core.status(1.0, 0.0)[2]['prediction'] == 'model set, unused under feedforward'
