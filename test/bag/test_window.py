"""
The differentiation window chosen from the data, and the stamps' regular clock.

Generated logs (``bagdata.realistic_log``, panda, analytic torques known) with what real loggers
do: stamps that miss the sampling instants (normal noise, sized so that finite differences of
the logged positions over the logged stamps disagree with the robot's own velocities by about
20 % RMS), 8 ms holes every 5 s on average, velocities low-passed by the driver, 16-bit
encoders. ``rnea_bag`` with its defaults must show no spike (no sample's torque error above
5 times its joint's RMS error) and an RMS within 1.2 times that of the best fixed window chosen
afterwards; the windows it chose are in summary.json and summary.md.
"""
from __future__ import annotations

import json
from types import SimpleNamespace

from harness import bagdata
from harness.bagdata import PANDA
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.bag.cli import main
from rnea_ros.recording import accelerations, clock, differentiate

FINGER = 'panda_finger_joint1'
HOLD = {FINGER: 0.02}
ARM = slice(0, 7)
# Stamp noise [s] that makes finite differences disagree with the velocities by ~20 % RMS.
STAMP_ERROR = 1.15e-4


@pytest.fixture(scope='module')
def panda() -> RobotModel:
    return RobotModel.from_urdf_file(PANDA)


def jittered_log(panda, seed: int, duration: float = 12.0, **overrides):
    """Generate the log of the module docstring (1 kHz)."""
    settings = {'jitter': 0.0, 'stamp_error': STAMP_ERROR, 'holes': (5.0, 0.008, 0.008),
                'velocity_filter': 50.0, 'quantum': 2.0 ** -16, 'hold': HOLD}
    settings.update(overrides)
    return bagdata.realistic_log(panda, duration, 1000.0, seed=seed, **settings)


def disagreement(log) -> float:
    """RMS of (position differences / stamp differences - velocity) / RMS velocity, arm."""
    step = np.diff(log.times_ns) * 1e-9
    one = step < 1.5e-3  # consecutive samples, not across a hole
    finite = np.diff(log.q[:, ARM], axis=0) / step[:, None]
    measured = 0.5 * (log.v_reported[1:, ARM] + log.v_reported[:-1, ARM])
    return float(np.sqrt(np.mean((finite - measured)[one] ** 2))
                 / np.sqrt(np.mean(measured[one] ** 2)))


def torque_errors(panda, log, window) -> tuple[np.ndarray, np.ndarray]:
    """Per sample kept and arm joint, |tau - tau_analytic| with ``window``, as rnea_bag."""
    series = SimpleNamespace(times_ns=log.times_ns, position=log.q, velocity=log.v_reported,
                             names=list(log.names), locked={FINGER: (0.02, '--lock')})
    estimate = accelerations.estimate(series, ['revolute'] * 7 + ['prismatic'], None, window,
                                      differentiate.DEFAULT_ORDER, None)
    keep = ~estimate.edge
    got = panda.rnea_batch(log.q[keep], estimate.velocity[keep], estimate.acceleration[keep])
    expected = panda.rnea_batch(log.q_true[keep], log.v_true[keep], log.a_true[keep])
    return np.abs(got - expected)[:, ARM], keep


def rms(error: np.ndarray) -> float:
    return float(np.sqrt(np.mean(error ** 2)))


def test_the_generated_log_has_the_real_loggers_effects(panda):
    log = jittered_log(panda, 0)
    assert 0.15 < disagreement(log) < 0.25
    assert len(log.holes) >= 1
    assert np.allclose(np.diff(log.holes, axis=1), 8_000_000, atol=1_000_000)


@pytest.mark.parametrize('seed', [0, 1])
def test_defaults_no_spike_and_near_the_best_fixed_window(tmp_path, capsys, panda, seed):
    log = jittered_log(panda, seed)
    bag = bagdata.realistic_bag(tmp_path / 'bag', log)
    out = tmp_path / 'out'
    code = main([str(bag), '--urdf', str(PANDA), '--output', str(out), '--no-plots',
                 '--format', 'csv'])
    assert code == 0, capsys.readouterr().err
    data = np.loadtxt(out / 'torques.csv', delimiter=',', skiprows=1, ndmin=2)
    seconds = (log.times_ns - log.times_ns[0] - bagdata.RECEIVE_DELAY) * 1e-9
    rows = np.searchsorted(np.round(seconds, 9), np.round(data[:, 0], 9))
    np.testing.assert_allclose(seconds[rows], data[:, 0], atol=1e-9)
    expected = panda.rnea_batch(log.q_true[rows], log.v_true[rows], log.a_true[rows])
    error = np.abs(data[:, 1:] - expected)[:, ARM]
    per_joint = np.sqrt(np.mean(error ** 2, axis=0))
    assert (error.max(axis=0) / per_joint).max() < 5.0, error.max(axis=0) / per_joint
    # The best fixed window (one for every joint), chosen afterwards on the truth.
    fixed = {float(w): rms(torque_errors(panda, log, float(w))[0])
             for w in differentiate.candidate_windows(log.times_ns)}
    best = min(fixed.values())
    assert rms(error) <= 1.2 * best, (rms(error), fixed)
    # The windows chosen, per joint, and the time base, in summary.json and summary.md.
    summary = json.loads((out / 'summary.json').read_text())
    diff = summary['run']['differentiation']
    assert diff['window_rule'] == 'auto'
    assert diff['time_base'] == accelerations.REGULAR
    assert diff['clock_residual_ratio'] < clock.GAIN
    grid = differentiate.candidate_windows(log.times_ns)
    assert set(diff['windows']) == set(log.names)
    for joint, window in diff['windows'].items():
        assert np.isclose(grid, window).any(), (joint, window)
    assert diff['window'] == pytest.approx(max(diff['windows'].values()))
    routes = {r['joint']: r for r in summary['run']['acceleration_routes']}
    assert {j: r['window'] for j, r in routes.items()} == diff['windows']
    text = (out / 'summary.md').read_text()
    assert 'window chosen per joint from the data' in text
    assert 'over the regular clock fitted to the stamps' in text
    joint1 = f'| `panda_joint1` | {routes["panda_joint1"]["route"]} | ' \
        f'{diff["windows"]["panda_joint1"]:.3g} |'
    assert joint1 in text


def test_the_stamps_regular_clock_is_chosen_only_for_stamp_noise(panda):
    # Stamp noise (the samples were taken on a regular clock): the regular clock.
    noisy = jittered_log(panda, 2, duration=4.0)
    free = slice(0, 7)
    _, info = accelerations.choose_clock(noisy.times_ns, noisy.q[:, free], 0.05, 3, 0.025)
    assert info['time_base'] == accelerations.REGULAR and info['residual_ratio'] < 0.5
    # Sampling-time jitter (the stamps are the instants): the stamps.
    uneven = jittered_log(panda, 2, duration=4.0, jitter=2e-4, stamp_error=0.0)
    times, info = accelerations.choose_clock(uneven.times_ns, uneven.q[:, free], 0.05, 3,
                                             0.025)
    assert info['time_base'] == accelerations.STAMPS and info['residual_ratio'] > 1.0
    assert times is uneven.times_ns
    # Evenly stamped: the same times, the stamps.
    even = uneven.times_ns[0] + 1_000_000 * np.arange(4000)
    _, info = accelerations.choose_clock(even, np.sin(np.arange(4000) * 1e-3)[:, None], 0.05,
                                         3, 0.025)
    assert info == {'time_base': accelerations.STAMPS, 'residual_ratio': None}


def test_regular_clock_keeps_holes_and_removes_stamp_noise():
    rng = np.random.default_rng(3)
    ticks = np.arange(30_000)
    keep = np.ones(ticks.size, dtype=bool)
    keep[5000:5008] = False  # an 8 ms hole
    keep[20_000:20_001] = False  # one dropped sample
    instants = (ticks * 1_000_000 * (1 + 3e-5))[keep]  # a clock 30 ppm fast
    stamps = np.round(instants + rng.normal(0.0, 1.4e5, instants.size)).astype(np.int64)
    order = np.argsort(stamps)
    stamps, instants = stamps[order], np.sort(instants)
    regular = clock.regularise(stamps)
    offset = (regular - instants) - np.median(regular - instants)
    assert np.sqrt(np.mean(offset ** 2)) < 0.15 * np.sqrt(np.mean((stamps - instants) ** 2))
    assert np.abs(offset).max() < 1e5  # 0.1 ms: no sample shifted by a tick
    step = np.diff(regular)
    assert np.flatnonzero(step > 1.5e6).tolist() == [4999, 19_991]
    assert step[4999] == pytest.approx(9e6, abs=5e4) and step[19_991] == pytest.approx(2e6,
                                                                                       abs=5e4)


def test_a_number_fixes_the_window_and_a_bad_one_is_named(tmp_path, capsys, panda):
    log = jittered_log(panda, 4, duration=2.0)
    bag = bagdata.realistic_bag(tmp_path / 'bag', log)
    out = tmp_path / 'out'
    assert main([str(bag), '--urdf', str(PANDA), '--output', str(out), '--no-plots',
                 '--format', 'csv', '--window', '0.08']) == 0
    diff = json.loads((out / 'summary.json').read_text())['run']['differentiation']
    assert diff['window_rule'] == 'fixed' and diff['window'] == 0.08
    assert set(diff['windows'].values()) == {0.08}
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main([str(bag), '--urdf', str(PANDA), '--window', 'wide'])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "rnea_bag: error: argument --window: 'wide': expected 'auto' or a number from 1e-09 to "
        '1e+09')
