"""
``StatePredictor`` against an independent truth: SciPy's adaptive ODE solver on the model.

The truth integrates dq/dt = v (a free-flyer: the position by R v_linear, the quaternion by
q * [w / 2, 0]) and dv/dt = forward_dynamics(q, v, command) with rtol 1e-12, one solve per
command held (zero-order hold), on the same model: what it checks is the predictor's
integration and its command bookkeeping, not the model (test_forward_dynamics checks that).
"""
from __future__ import annotations

import math
import os
import subprocess
import sys

from harness.oracle import robot_path
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from rnea_ros import InputError, RobotModel
from rnea_ros.control.prediction import StatePredictor
from rnea_ros.dynamics import Actuation

STAMP = 10.0
DELAY = 0.002  # two ticks at 1 kHz


def load(name: str, floating_base: bool) -> RobotModel:
    return RobotModel.from_urdf_file(robot_path(name), floating_base=floating_base)


def quaternion_rate(quaternion, w):
    """d/dt of (x, y, z, s) turning at the body-frame angular velocity w."""
    x, y, z, s = quaternion
    return 0.5 * np.array([s * w[0] + y * w[2] - z * w[1], s * w[1] + z * w[0] - x * w[2],
                           s * w[2] + x * w[1] - y * w[0], -x * w[0] - y * w[1] - z * w[2]])


def rotation(quaternion):
    x, y, z, s = quaternion / np.linalg.norm(quaternion)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * s), 2 * (x * z + y * s)],
                     [2 * (x * y + z * s), 1 - 2 * (x * x + z * z), 2 * (y * z - x * s)],
                     [2 * (x * z - y * s), 2 * (y * z + x * s), 1 - 2 * (x * x + y * y)]])


def truth(model, q, v, commands, stamp, target, gravity=None, actuation=None):
    """(q, v) at target by solve_ivp; commands: [(time, torque)], each held until the next."""
    state = np.concatenate([q, v])
    floating = model.floating_base

    def rate(_, x, torque):
        q, v = x[:model.nq], x[model.nq:]
        if floating:
            q = q.copy()
            q[3:7] /= np.linalg.norm(q[3:7])
        dq = np.empty(model.nq)
        if floating:
            dq[:3] = rotation(q[3:7]) @ v[:3]
            dq[3:7] = quaternion_rate(q[3:7], v[3:6])
            dq[7:] = v[6:]
        else:
            dq[:] = v
        return np.concatenate([dq, model.forward_dynamics(q, v, torque, gravity=gravity,
                                                          actuation=actuation)])

    switches = [t for t, _ in commands if stamp < t < target]
    bounds = [stamp, *switches, target]
    for start, end in zip(bounds[:-1], bounds[1:]):
        torque = next((c for t, c in reversed(commands) if t <= start), commands[0][1])
        solution = solve_ivp(rate, (start, end), state, args=(torque,), rtol=1e-12, atol=1e-12,
                             method='DOP853')
        state = solution.y[:, -1]
    q, v = state[:model.nq].copy(), state[model.nq:]
    if floating:
        q[3:7] /= np.linalg.norm(q[3:7])
    return q, v


def random_state(model, rng, speed=2.0):
    q = model.neutral_configuration()
    for joint in model.joints:
        if joint.nq == 7:
            quaternion = rng.standard_normal(4)
            q[joint.idx_q:joint.idx_q + 7] = np.r_[rng.uniform(-1, 1, 3),
                                                   quaternion / np.linalg.norm(quaternion)]
        else:
            q[joint.idx_q] = rng.uniform(max(joint.lower, -2.0), min(joint.upper, 2.0))
    return q, speed * rng.uniform(-1, 1, model.nv)


def state_error(model, predicted, expected, v0):
    """Largest error of q and of v, relative to the motion over the delay (|v| and |dv|)."""
    q_error = np.abs(predicted[0] - expected[0]).max() / (np.abs(v0).max() * DELAY)
    v_error = np.abs(predicted[1] - expected[1]).max() / np.abs(expected[1] - v0).max()
    return q_error, v_error


def actuation_of(model, rng):
    zero = Actuation.zeros(model)
    rows = np.array([bool(name) for name in zero.joint_names])
    return Actuation(zero.joint_names, rows * rng.uniform(0.5, 2.0, model.nv),
                     rows * rng.uniform(0.5, 2.0, model.nv), rows * rng.uniform(-1, 1, model.nv),
                     rows * rng.uniform(0.05, 0.3, model.nv))


CASES = [('panda', False), ('ur5', False), ('solo12', True)]


@pytest.mark.parametrize('name, floating_base', CASES)
@pytest.mark.parametrize('method, bound', [('rk4', 1e-4), ('euler', 0.2)])
def test_prediction_over_two_ticks_matches_the_truth(name, floating_base, method, bound):
    """Three commands held in turn, one switching inside a substep's span; armature, friction."""
    model = load(name, floating_base)
    rng = np.random.default_rng(21)
    actuation = actuation_of(model, rng)
    q, v = random_state(model, rng)
    commands = [(STAMP - 0.0013, 20.0 * rng.uniform(-1, 1, model.nv)),
                (STAMP + 0.0007, 20.0 * rng.uniform(-1, 1, model.nv)),
                (STAMP + 0.0015, 20.0 * rng.uniform(-1, 1, model.nv))]
    predictor = StatePredictor(model, actuation=actuation, method=method)
    for time, command in commands:
        predictor.push_command(time, command)
    predicted = [x.copy() for x in predictor.predict(q, v, STAMP, STAMP + DELAY)]
    expected = truth(model, q, v, commands, STAMP, STAMP + DELAY, actuation=actuation)
    q_error, v_error = state_error(model, predicted, expected, v)
    assert q_error < bound and v_error < bound, (q_error, v_error)
    # Without the middle switch the answer differs: the bookkeeping of commands counts.
    held = StatePredictor(model, actuation=actuation, method=method)
    held.push_command(*commands[0])
    other = held.predict(q, v, STAMP, STAMP + DELAY)[1].copy()
    assert np.abs(other - expected[1]).max() > 10 * np.abs(predicted[1] - expected[1]).max()


def test_rk4_is_chosen_for_its_error_per_cost():
    """
    RK4's 4 solves per substep buy an error ~1e4 times smaller than semi-implicit Euler's.

    Euler at a 0.25 ms substep (the same 4 solves a millisecond) is still ~1e3 times worse.
    """
    model = load('panda', False)
    rng = np.random.default_rng(22)
    q, v = random_state(model, rng, speed=3.0)
    commands = [(STAMP, 30.0 * rng.uniform(-1, 1, model.nv))]
    expected = truth(model, q, v, commands, STAMP, STAMP + DELAY)
    errors = {}
    for method, substep in (('rk4', 1e-3), ('euler', 1e-3), ('euler', 2.5e-4)):
        predictor = StatePredictor(model, method=method, substep=substep)
        predictor.push_command(*commands[0])
        errors[method, substep] = max(state_error(
            model, predictor.predict(q, v, STAMP, STAMP + DELAY), expected, v))
    assert errors['rk4', 1e-3] * 1e3 < errors['euler', 2.5e-4] < errors['euler', 1e-3], errors


def test_gravity_compensated_by_the_robot_holds_the_arm_still():
    model = load('panda', False)
    q, _ = random_state(model, np.random.default_rng(23))
    v = np.zeros(model.nv)
    compensated = StatePredictor(model, gravity_compensated_by_robot=True)
    compensated.push_command(STAMP, np.zeros(model.nv))
    q1, v1 = compensated.predict(q, v, STAMP, STAMP + 0.01)
    np.testing.assert_allclose(v1, 0.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(q1, q, rtol=0, atol=1e-12)
    falling = StatePredictor(model)
    falling.push_command(STAMP, np.zeros(model.nv))
    assert np.abs(falling.predict(q, v, STAMP, STAMP + 0.01)[1]).max() > 1e-3


def test_without_commands_the_torque_is_zero_and_target_at_stamp_returns_the_sample():
    model = load('ur5', False)
    q, v = random_state(model, np.random.default_rng(24))
    predictor = StatePredictor(model)
    q0, v0 = predictor.predict(q, v, STAMP, STAMP)
    np.testing.assert_array_equal(q0, q)
    np.testing.assert_array_equal(v0, v)
    predicted = predictor.predict(q, v, STAMP, STAMP + DELAY)
    expected = truth(model, q, v, [(STAMP, np.zeros(model.nv))], STAMP, STAMP + DELAY)
    assert max(state_error(model, predicted, expected, v)) < 1e-6


def test_the_ring_buffer_keeps_the_newest_commands():
    model = load('ur5', False)
    predictor = StatePredictor(model, capacity=3)
    for k in range(5):
        predictor.push_command(STAMP + k * 1e-3, np.full(model.nv, float(k)))
    assert predictor.command_count == 3
    q, v = random_state(model, np.random.default_rng(25))
    # Before the oldest kept command (2), the oldest is in force.
    expected = truth(model, q, v, [(STAMP, np.full(model.nv, 2.0))], STAMP, STAMP + 1e-3)
    assert max(state_error(model, predictor.predict(q, v, STAMP, STAMP + 1e-3), expected,
                           v)) < 1e-6
    predictor.clear()
    assert predictor.command_count == 0


FIRST_USE = """
import sys
import numpy as np
from rnea_ros import RobotModel
from rnea_ros.control import prediction
predictor = prediction.StatePredictor(RobotModel.from_urdf_file(sys.argv[1]))
built = len(prediction._command_in_force.signatures)
predictor.push_command(0.0, np.ones(6))
out = np.empty(6)
print(built, predictor.command_at(0.5, out), len(prediction._command_in_force.signatures))
"""


def test_command_at_compiles_nothing_after_construction():
    """Its kernel is compiled (or loaded) when the predictor is built, not on the control path."""
    done = subprocess.run([sys.executable, '-c', FIRST_USE, str(robot_path('ur5'))],
                          capture_output=True, text=True, timeout=600, check=True)
    assert done.stdout.split() == ['1', 'True', '1'], done.stdout


ALLOCATIONS = """
import numpy as np, sys
from numba.core.runtime import rtsys
from rnea_ros import RobotModel
from rnea_ros.control.prediction import StatePredictor
model = RobotModel.from_urdf_file(sys.argv[1], floating_base=True)
predictor = StatePredictor(model)
predictor.push_command(0.0, np.ones(model.nv))
q, v = model.neutral_configuration(), np.ones(model.nv)
out_q, out_v = np.empty(model.nq), np.empty(model.nv)
predictor.predict(q, v, 0.0, 0.002, out_q, out_v)
before = rtsys.get_allocation_stats().alloc
for _ in range(100):
    predictor.predict(q, v, 0.0, 0.002, out_q, out_v)
middle = rtsys.get_allocation_stats().alloc
for _ in range(100):
    model.rnea(q, v, v, out=out_v)  # 5 arrays into the kernel: numba wraps each one
after = rtsys.get_allocation_stats().alloc
print(middle - before, after - middle, np.linalg.norm(out_q[3:7]))
"""
ROLLOUT_ARRAYS = 10  # the arrays ``rollout`` takes


def test_predict_into_given_arrays_allocates_nothing():
    """
    Count numba's allocations (NUMBA_NRT_STATS, set before numba loads: in a child).

    numba wraps each array argument on entry (rnea's 5 count 5 per call): a predict costs its
    arguments' wraps and nothing more.
    """
    done = subprocess.run([sys.executable, '-c', ALLOCATIONS, str(robot_path('solo12'))],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, 'NUMBA_NRT_STATS': '1'}, check=True)
    allocations, rnea, norm = done.stdout.split()
    assert int(rnea) == 100 * 5, done.stdout
    assert int(allocations) == 100 * ROLLOUT_ARRAYS, done.stdout
    assert math.isclose(float(norm), 1.0, rel_tol=0, abs_tol=1e-12)


@pytest.mark.parametrize('call, message', [
    (lambda p, q, v: p.predict(q, v, STAMP, STAMP - 1.0), r'^target: expected a time at or'),
    (lambda p, q, v: p.predict(q[:-1], v, STAMP, STAMP), r'^q: expected a float64 array'),
    (lambda p, q, v: p.predict(q, np.r_[np.nan, v[1:]], STAMP, STAMP), r'^v: values must be'),
    (lambda p, q, v: p.push_command(STAMP, np.zeros(2)), r'^command: expected 6 real'),
    (lambda p, q, v: p.push_command(math.inf, np.zeros(6)), r'^time: expected a finite'),
    (lambda p, q, v: (p.push_command(STAMP, np.zeros(6)), p.push_command(STAMP - 1, q[:6])),
     r'^time: 9.0 is before the last'),
    (lambda p, q, v: StatePredictor(p.model, method='rk5'), r'^method: expected one of'),
    (lambda p, q, v: StatePredictor(p.model, substep=0.0), r'^substep: expected a positive'),
])
def test_bad_arguments_are_named(call, message):
    model = load('ur5', False)
    predictor = StatePredictor(model)
    predictor.model = model
    q, v = random_state(model, np.random.default_rng(27))
    with pytest.raises(InputError, match=message):
        call(predictor, q, v)
