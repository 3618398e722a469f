"""
``stall_estimate.StallEstimate``: the payload fitted from a closed loop's own samples, gated.

Synthetic closed loop: the panda of the package with a payload and joint friction it does not
know, integrated (semi-implicit Euler, 1 ms) under a PD about a sinusoid plus the nominal model's
inverse dynamics, the command held over each step; the estimator records each pair of samples
with the command held, as ``cycle_prediction`` does, and fits the last 0.5 s.
"""
from __future__ import annotations

import tracemalloc
from types import SimpleNamespace

from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.control import stall_estimate
from rnea_ros.control.core import ControlCore
from rnea_ros.control.loop_margin import DEFAULT_PERIOD
from rnea_ros.control.prediction import StatePredictor
from rnea_ros.control.settings import ParameterRejected, Settings
from rnea_ros.control.stall_estimate import StallEstimate
from rnea_ros.dynamics.actuation import Actuation

LINK = 'panda_hand'
MASS, COM = 0.5, (0.0, 0.02, 0.08)  # kg, m in the link frame: the default gap's payload scale
MASS_TOLERANCE = 0.05  # kg: 10 % of the payload
TICK = 1e-3


@pytest.fixture(scope='module')
def model():
    return RobotModel.from_urdf_string(robot_path('panda').read_text())


def closed_loop(model, robot, actuation, seconds=0.6, amplitude=0.4):
    """Yield (q0, v0, t0, q1, v1, t1, tau) of a PD-tracked sinusoid on ``robot``."""
    n = model.nv
    q, v = model.neutral_configuration(), np.zeros(n)
    phase = np.arange(n) * 0.7
    for k in range(int(round(seconds / TICK))):
        t = k * TICK
        q_d = amplitude * np.sin(2.0 * np.pi * t + phase)
        v_d = amplitude * 2.0 * np.pi * np.cos(2.0 * np.pi * t + phase)
        a_d = -amplitude * (2.0 * np.pi) ** 2 * np.sin(2.0 * np.pi * t + phase)
        tau = model.rnea(q, v, a_d) + 100.0 * (q_d - q) + 10.0 * (v_d - v)
        a = robot.forward_dynamics(q, v, tau, actuation=actuation)
        v1 = v + TICK * a
        q1 = q + TICK * v1
        yield q, v, t, q1, v1, t + TICK, tau
        q, v = q1, v1


def test_a_known_payload_is_recovered_from_closed_loop_samples(model):
    robot = model.with_payload(LINK, MASS, COM, (1e-4, 0.0, 0.0, 1e-4, 0.0, 1e-4))
    friction = Actuation.from_parameters(robot, {
        **{f'friction.{name}.coulomb': 0.3 for name in model.joint_names[:7]},
        **{f'friction.{name}.viscous': 0.2 for name in model.joint_names[:7]}})
    estimate = StallEstimate(model, np.zeros(model.nv), LINK)
    for sample in closed_loop(model, robot, friction):
        estimate.record(*sample)
    payload = estimate.fit()
    assert payload is not None, estimate.reason
    print(estimate.describe())
    assert abs(payload.mass - MASS) <= MASS_TOLERANCE, payload
    assert np.allclose(payload.com, COM, atol=0.02), payload


def test_the_true_model_gives_no_estimate(model):
    estimate = StallEstimate(model, np.zeros(model.nv), LINK)
    for sample in closed_loop(model, model, None):
        estimate.record(*sample)
    assert estimate.fit() is None
    assert 'below 0.05 kg' in estimate.reason, estimate.reason


def test_non_finite_samples_leave_no_estimate(model):
    estimate = StallEstimate(model, np.zeros(model.nv), LINK)
    robot = model.with_payload(LINK, MASS, COM, (0.0,) * 6)
    for q0, v0, t0, q1, v1, t1, tau in closed_loop(model, robot, None):
        estimate.record(q0, v0 * np.nan, t0, q1, v1, t1, tau)
    assert estimate.fit() is None
    assert estimate.reason == (f'0 finite samples in the window (at least '
                               f'{stall_estimate.MIN_SAMPLES})')


def test_an_arm_at_rest_gives_no_estimate(model):
    estimate = StallEstimate(model, np.zeros(model.nv), LINK)
    q, v = model.neutral_configuration(), np.zeros(model.nv)
    robot = model.with_payload(LINK, MASS, COM, (0.0,) * 6)
    for k in range(500):
        estimate.record(q, v, k * TICK, q, v, (k + 1) * TICK, robot.gravity_torques(q))
    assert estimate.fit() is None
    assert estimate.reason == 'the arm moved slower than 0.1 rad/s in the window'


def test_a_link_fixed_to_the_world_is_refused(model):
    with pytest.raises(Exception, match="link 'panda_link0' is fixed to the world"):
        StallEstimate(model, np.zeros(model.nv), 'panda_link0')


def core_with(model, link):
    """Return a ControlCore under pd_feedforward with prediction and ``link`` estimated."""
    return ControlCore(model, Settings(rate=0.0, control_law='pd_feedforward',
                                       prediction='model',
                                       stall_payload_estimate=link).validate())


def test_a_link_the_model_lacks_is_refused_naming_the_parameter(model):
    with pytest.raises(ParameterRejected) as error:
        core_with(model, 'no_such_link')
    assert str(error.value) == "parameter 'stall_payload_estimate': unknown link 'no_such_link'"


def test_the_estimate_unset_live_gives_the_stall_the_model_back(model):
    core = core_with(model, LINK)
    robot = model.with_payload(LINK, MASS, COM, (0.0,) * 6)
    estimate = core.prediction.estimate
    for sample in closed_loop(model, robot, None):
        estimate.record(*sample)
    core.install_stall_model(core.estimate_payload(core.stall_samples()))
    assert core.torques.stall_brake.model is not model
    assert 'kg on' in core.prediction.status()['stall payload estimate']
    core.use(core.settings.updated({'stall_payload_estimate': ''}, core.joint_names))
    assert core.prediction.estimate is None and core.prediction.stall_arrays is None
    assert core.torques.stall_brake.model is model


def test_recording_a_pair_allocates_no_array(model):
    """Per sample pair, as on the cycle path: the command held looked up, the pair kept."""
    estimate = StallEstimate(model, np.zeros(model.nv), LINK)
    predictor = StatePredictor(model)
    q, v, held = model.neutral_configuration(), np.zeros(model.nv), np.zeros(model.nv)

    def pairs(count, first):
        for k in range(first, first + count):
            predictor.push_command(k * TICK, held)
            assert predictor.command_at((k + 0.5) * TICK, held)
            estimate.record(q, v, k * TICK, q, v, (k + 1) * TICK, held)
    pairs(10, 0)  # compiled, warm
    count = 2 * stall_estimate.CAPACITY

    def traced(first):
        tracemalloc.start()
        start, _ = tracemalloc.get_traced_memory()
        pairs(count, first)
        end, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return end - start, peak - start
    # Views of the preallocated rows only: nothing kept, no (nv,) array made per pair beyond.
    # tracemalloc counts every thread of the process (pytest-xdist's among them, which under load
    # allocated 834 bytes in one window): an allocation of the pairs' shows in every attempt.
    attempts = [traced(10 + k * count) for k in range(3)]
    assert any(kept <= 0 and peak < 1024 for kept, peak in attempts), attempts


def test_pairs_the_node_answered_late_are_not_recorded(model):
    """
    A pair is recorded only when its samples and the two before arrived spaced as stamped.

    Late (a burst after the node or the network lagged, or the first sample after it), the
    robot held an older command than the one pushed for the pair: real time over DDS, a few
    such pairs made the fit 0.5 kg with its centre of mass 0.34 m off the flange.
    """
    core = core_with(model, LINK)
    estimate, predictor = core.prediction.estimate, core.prediction.predictor
    q, v = model.neutral_configuration(), np.zeros(model.nv)
    predictor.push_command(0.0, np.zeros(model.nv))  # a command known over every pair

    def recorded():
        return estimate._count

    def sample(k, arrival):
        stamp = SimpleNamespace(sec=k // 1000, nanosec=(k % 1000) * 1_000_000)
        core.on_joint_states(core.joint_names, q, v, [], now=100.0 + arrival, stamp=stamp)

    for k in range(1, 21):  # on time: from the third sample on, each pair
        sample(k, k * TICK)
    assert recorded() == 18
    for k in range(21, 31):  # a burst 10 ms late: none, nor the pair after it
        sample(k, 40 * TICK + k * 1e-5)
    sample(31, 41 * TICK)
    assert recorded() == 18
    for k in range(32, 36):  # spaced as stamped again (10 ms late): recorded again
        sample(k, (k + 10) * TICK)
    assert recorded() == 22
    # A cycle published a fault output (the stall brake): no pair arriving within
    # input_timeout and two periods after it, on time or not; then recorded again.
    fault = 100.0 + 45.5 * TICK
    core.prediction.commanded(np.zeros(model.nv), fault=fault)
    quiet_until = fault + core.settings.input_timeout + 2.0 * DEFAULT_PERIOD
    count = int((quiet_until - fault) / TICK) + 10
    arrivals = [(k, 100.0 + (k + 10) * TICK) for k in range(36, 36 + count)]
    for k, arrival in arrivals:
        sample(k, arrival - 100.0)
    after = sum(arrival >= quiet_until for _, arrival in arrivals)
    assert 0 < after < len(arrivals)
    assert recorded() == 22 + after
