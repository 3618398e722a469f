"""
The momentum observer on generated data with a known external torque, and its bad inputs.

The data: the panda follows the analytic trajectory of test/harness/bagdata.py at 1 kHz; the
measured effort is what the dynamics need minus the external torque tau_ext the environment applies
(M a + C v + g = tau_m + tau_ext), plus white noise. Tolerances are stated per test.
"""
from __future__ import annotations

from harness.bagdata import PANDA, trajectory
from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import InputError, RobotModel
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.observer import MomentumObserver

RATE = 1000.0
GAIN = 50.0
NOISE = 0.05  # N m, the effort's white noise


@pytest.fixture(scope='module')
def panda():
    return RobotModel.from_urdf_file(PANDA)


def motion(model, duration=2.0, rate=RATE):
    t = np.arange(int(duration * rate)) / rate
    return t, trajectory(t), trajectory(t, 1), trajectory(t, 2)


def push(t, nv, start=0.5):
    """Return a constant external torque on joints 2 and 4 from ``start`` on."""
    tau = np.zeros((t.size, nv))
    tau[t >= start, 1] = 3.0
    tau[t >= start, 3] = -2.0
    return tau


def test_constant_push_converges_to_the_external_torque(panda):
    t, q, v, a = motion(panda)
    tau_ext = push(t, panda.nv)
    rng = np.random.default_rng(0)
    effort = panda.rnea_batch(q, v, a) - tau_ext + rng.normal(0.0, NOISE, tau_ext.shape)
    observer = MomentumObserver(panda, GAIN)
    r = np.array([observer.update(tk, *sample) for tk, *sample in zip(t, q, v, effort)])
    settled = t >= 0.5 + 10 / GAIN  # ten time constants after the push
    # The filtered noise is about NOISE * sqrt(K dt / 2) = 0.008 N m: 0.05 is six of it.
    assert np.abs(r[settled] - tau_ext[settled]).max() < 0.05
    quiet = t < 0.5
    assert np.abs(r[quiet]).max() < 0.05  # collision-free: quiet


def test_noise_free_data_give_the_external_torque_to_the_discretisation_error(panda):
    t, q, v, a = motion(panda)
    tau_ext = push(t, panda.nv)
    observer = MomentumObserver(panda, GAIN)
    r = observer.run(t, q, v, panda.rnea_batch(q, v, a) - tau_ext)
    settled = t >= 0.5 + 15 / GAIN  # the push's transient: 3 e^-15 = 1e-6 N m
    # The trapezoid rule's error over 1 ms of this motion is ~1e-6 N m.
    assert np.abs(r[settled] - tau_ext[settled]).max() < 1e-4
    assert np.abs(r[t < 0.5]).max() < 1e-4


def test_motor_effort_subtracts_friction_and_armature(panda):
    t, q, v, a = motion(panda)
    tau_ext = push(t, panda.nv)
    names = panda.joint_names
    actuation = Actuation.from_parameters(panda, {
        **{f'friction.{n}.coulomb': 0.8 for n in names[:7]},
        **{f'friction.{n}.viscous': 0.3 for n in names[:7]},
        **{f'armature.{n}': 0.2 for n in names[:7]}})
    effort = (panda.rnea_batch(q, v, a) + actuation.friction_torques_batch(v)
              + actuation.armature_torques(a) - tau_ext)
    motor = MomentumObserver(panda, GAIN, measured_effort='motor', actuation=actuation)
    settled = t >= 0.5 + 15 / GAIN
    assert np.abs(motor.run(t, q, v, effort)[settled] - tau_ext[settled]).max() < 1e-4
    # The same effort taken as link-side torque: friction and armature look external.
    link_side = MomentumObserver(panda, GAIN, actuation=actuation)
    assert np.abs(link_side.run(t, q, v, effort)[settled] - tau_ext[settled]).max() > 0.5


@pytest.mark.parametrize('measured_effort', ['link_side', 'motor'])
def test_the_effort_bias_is_taken_out_of_the_measured_effort(panda, measured_effort):
    """A sensor bias declared in the actuation model leaves r; undeclared, r converges to -bias."""
    t, q, v, a = motion(panda, duration=1.0)
    bias = np.linspace(-1.5, 2.0, panda.nv)
    declared = Actuation.from_parameters(panda, {
        f'effort_bias.{name}': float(value) for name, value in zip(panda.joint_names, bias)})
    undeclared = Actuation.zeros(panda)
    effort = panda.rnea_batch(q, v, a) + bias  # no external torque: the sensor reads + bias
    settled = t >= 15 / GAIN
    for actuation, expected in ((declared, np.zeros(panda.nv)), (undeclared, -bias)):
        observer = MomentumObserver(panda, GAIN, measured_effort=measured_effort,
                                    actuation=actuation)
        r = observer.run(t, q, v, effort)
        assert np.abs(r[settled] - expected).max() < 1e-4  # discretisation error ~1e-6 N m
        one = MomentumObserver(panda, GAIN, measured_effort=measured_effort,
                               actuation=actuation)
        first = zip(t[:50], q[:50], v[:50], effort[:50])
        by_sample = np.array([one.update(tk, *s) for tk, *s in first])
        assert np.array_equal(by_sample, r[:50])  # update takes the bias out as run does
    # A new model (a payload) keeps the actuation model's bias: no jump, r stays near 0.
    observer = MomentumObserver(panda, GAIN, measured_effort=measured_effort,
                                actuation=declared)
    observer.run(t[:500], q[:500], v[:500], effort[:500])
    observer.set_model(panda.with_inertial_parameters(panda.inertial_parameters()))
    assert np.abs(observer.run(t[500:], q[500:], v[500:], effort[500:])).max() < 1e-4


def test_update_and_run_give_the_same_residual_bit_for_bit(panda):
    t, q, v, a = motion(panda, duration=0.3)
    effort = panda.rnea_batch(q, v, a) - push(t, panda.nv, start=0.1)
    one = MomentumObserver(panda, GAIN)
    by_sample = np.array([one.update(tk, *s) for tk, *s in zip(t, q, v, effort)])
    assert np.array_equal(MomentumObserver(panda, GAIN).run(t, q, v, effort), by_sample)
    # In chunks, continuing from the state.
    two = MomentumObserver(panda, GAIN)
    chunks = np.vstack([two.run(t[:100], q[:100], v[:100], effort[:100]),
                        two.run(t[100:], q[100:], v[100:], effort[100:])])
    assert np.array_equal(chunks, by_sample)


def test_a_repeated_or_older_stamp_does_not_integrate(panda):
    t, q, v, a = motion(panda, duration=0.3)
    effort = panda.rnea_batch(q, v, a) - push(t, panda.nv, start=0.1)
    once = MomentumObserver(panda, GAIN).run(t, q, v, effort)
    observer = MomentumObserver(panda, GAIN)
    for k in range(t.size):
        r = observer.update(t[k], q[k], v[k], effort[k])
        assert np.array_equal(r, once[k])
        # The node's cycle reusing the sample, and a late message: nothing changes.
        assert np.array_equal(observer.update(t[k], q[k], v[k], effort[k] + 9.0), once[k])
        if k:
            assert np.array_equal(observer.update(t[k - 1], q[k], v[k], effort[k]), once[k])
    assert np.array_equal(observer.residual, once[-1])


def test_first_sample_returns_zeros_and_reset_starts_again(panda):
    t, q, v, a = motion(panda, duration=0.2)
    effort = panda.rnea_batch(q, v, a) - push(t, panda.nv, start=0.0)
    observer = MomentumObserver(panda, GAIN)
    assert np.array_equal(observer.update(t[0], q[0], v[0], effort[0]), np.zeros(panda.nv))
    first = observer.run(t, q, v, effort)
    assert np.abs(first[-1]).max() > 1.0
    observer.reset()
    assert np.array_equal(observer.residual, np.zeros(panda.nv))
    assert np.array_equal(observer.run(t, q, v, effort), MomentumObserver(panda, GAIN).run(
        t, q, v, effort))


def test_large_gain_and_slow_samples_stay_stable(panda):
    """K dt = 10 (100/s at 10 Hz): the exact update converges; Euler's would diverge."""
    t, q, v, a = motion(panda, duration=3.0, rate=1000.0)
    tau_ext = push(t, panda.nv)
    effort = panda.rnea_batch(q, v, a) - tau_ext
    r = MomentumObserver(panda, 100.0).run(t[::100], q[::100], v[::100], effort[::100])
    # At 10 Hz the trapezoid rule's error is of the order of dt^2 beta'' ~ 0.1 N m.
    assert np.abs(r[-10:] - tau_ext[::100][-10:]).max() < 0.3


def test_set_model_keeps_the_residual_and_takes_the_payload(panda):
    """A payload in the data shows as an external torque until the model has it."""
    phi = panda.inertial_parameters()
    phi[7, 0] += 2.0  # 2 kg at the hand's origin (body 'panda_link7' holds the hand)
    loaded = panda.with_inertial_parameters(phi)
    t, q, v, a = motion(panda)
    effort = loaded.rnea_batch(q, v, a)
    observer = MomentumObserver(panda, GAIN)
    before = observer.run(t[:1000], q[:1000], v[:1000], effort[:1000])
    assert np.abs(before[-1]).max() > 1.0
    observer.set_model(loaded)
    assert np.array_equal(observer.residual, before[-1])  # r kept
    after = observer.run(t[1000:], q[1000:], v[1000:], effort[1000:])
    # No jump at the swap, then a decay to the discretisation error.
    assert np.abs(after[0]).max() <= np.abs(before[-1]).max() * 1.01
    assert np.abs(after[-1]).max() < 1e-3


def test_set_model_refuses_other_joints(panda):
    observer = MomentumObserver(panda, GAIN)
    ur5 = RobotModel.from_urdf_file(robot_path('ur5'))
    with pytest.raises(InputError) as error:
        observer.set_model(ur5)
    assert str(error.value) == (f'model: expected the joints {list(panda.joint_names)}, got '
                                f'{list(ur5.joint_names)}')
    assert observer.model is panda


def test_gain_per_joint(panda):
    t, q, v, a = motion(panda, duration=0.2)
    tau_ext = push(t, panda.nv, start=0.0)
    effort = panda.rnea_batch(q, v, a) - tau_ext
    gains = np.full(panda.nv, 5.0)
    gains[1] = 200.0
    observer = MomentumObserver(panda, gains)
    r = observer.run(t, q, v, effort)
    assert np.array_equal(observer.gain, gains)
    # After 0.1 s: joint 2 (200/s) has settled, joint 4 (5/s) has risen by 1 - e^-0.5 = 39 %.
    k = 100
    assert abs(r[k, 1] - 3.0) < 1e-3
    assert abs(r[k, 3] / -2.0 - (1 - np.exp(-5.0 * t[k]))) < 0.01


@pytest.mark.parametrize('gain, message', [
    (0.0, 'observer_gain: expected finite positive values (1/s), got 0.0'),
    (-5.0, 'observer_gain: expected finite positive values (1/s), got -5.0'),
    (float('nan'), 'observer_gain: expected finite positive values (1/s), got nan'),
    ([1.0, 2.0],
     'observer_gain: expected a positive number (1/s) or 8 of them, got shape (2,)'),
    ([50.0] * 7 + [0.0],
     'observer_gain: expected finite positive values (1/s), got [50.0, 50.0, 50.0, 50.0, '
     '50.0, 50.0, 50.0, 0.0]'),
    ('50', 'observer_gain: expected a positive number (1/s) or 8 of them, got str'),
])
def test_bad_gain_is_refused_by_name(panda, gain, message):
    with pytest.raises(InputError) as error:
        MomentumObserver(panda, gain)
    assert str(error.value) == message
    observer = MomentumObserver(panda, GAIN)
    with pytest.raises(InputError) as error:
        observer.gain = gain
    assert str(error.value) == message
    assert np.array_equal(observer.gain, np.full(panda.nv, GAIN))  # kept


def test_bad_measured_effort_and_samples_are_refused_by_name(panda):
    with pytest.raises(InputError) as error:
        MomentumObserver(panda, GAIN, measured_effort='current')
    assert str(error.value) == ("measured_effort: expected one of ('link_side', 'motor'), "
                                "got 'current'")
    observer = MomentumObserver(panda, GAIN)
    q, v = panda.neutral_configuration(), np.zeros(panda.nv)
    observer.update(0.0, q, v, np.zeros(panda.nv))
    effort = np.zeros(panda.nv)
    effort[3] = np.inf
    with pytest.raises(InputError) as error:
        observer.update(0.001, q, v, effort)
    assert str(error.value) == 'effort[3] is inf: values must be finite'
    with pytest.raises(InputError) as error:
        observer.update(float('nan'), q, v, np.zeros(panda.nv))
    assert str(error.value) == 'stamp: expected a finite time in seconds, got nan'
    with pytest.raises(InputError) as error:
        observer.update(0.002, q[:3], v, np.zeros(panda.nv))
    assert str(error.value) == 'q: expected shape (8,), got (3,)'
    # Refused samples leave the state: the next good one integrates from t = 0.
    assert np.array_equal(observer.update(0.001, q, v, np.zeros(panda.nv)),
                          MomentumObserver(panda, GAIN).run([0.0, 0.001], [q, q], [v, v],
                                                            np.zeros((2, panda.nv)))[1])


def test_update_takes_lists_and_strided_arrays_as_float64_arrays(panda):
    """The fast path hands float64 arrays to the kernel; anything else is converted first."""
    t, q, v, a = motion(panda, duration=0.01)
    effort = panda.rnea_batch(q, v, a)
    expected = MomentumObserver(panda, GAIN).run(t, q, v, effort)
    observer = MomentumObserver(panda, GAIN)
    strided = np.asfortranarray(effort)  # rows of a Fortran array are not contiguous
    readonly = v.copy()
    readonly.flags.writeable = False
    for k in range(t.size):
        r = observer.update(t[k], q[k].tolist(), readonly[k], strided[k])
        assert np.array_equal(r, expected[k])
