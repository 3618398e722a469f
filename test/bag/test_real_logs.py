"""
``rnea_bag`` with default settings on realistic logs (``bagdata.realistic_log``).

Jittered stamps, dropped packets, quantised positions, the robot's own filtered velocities,
noisy effort with an offset, at 1 kHz, 500 Hz and 100 Hz: no spikes, the better acceleration
route per joint, and joints the bag never publishes held by --lock / --lock-missing.
"""
from __future__ import annotations

import json

from harness import bagdata
from harness.bagdata import BAG_START, PANDA
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.bag.cli import main

FINGER = 'panda_finger_joint1'
HOLD = {FINGER: 0.02}  # the gripper stays closed around an object


@pytest.fixture(scope='module')
def panda() -> RobotModel:
    return RobotModel.from_urdf_file(PANDA)


def replay(capsys, bag, out, *extra):
    code = main([str(bag), '--urdf', str(PANDA), '--output', str(out), '--no-plots',
                 '--format', 'csv', *extra])
    captured = capsys.readouterr()
    return code, captured.err


def torques_at_samples(out, log):
    """torques.csv and the log's sample indices of its rows."""
    data = np.loadtxt(out / 'torques.csv', delimiter=',', skiprows=1, ndmin=2)
    # Time counts from the bag start: the first message's receive time (stamp + 0.3 ms).
    seconds = (log.times_ns - log.times_ns[0] - bagdata.RECEIVE_DELAY) * 1e-9
    rows = np.searchsorted(np.round(seconds, 9), np.round(data[:, 0], 9))
    np.testing.assert_allclose(seconds[rows], data[:, 0], atol=1e-9)
    return data[:, 1:], rows


@pytest.mark.parametrize('rate', [1000.0, 500.0, 100.0])
def test_no_spikes_with_default_settings(tmp_path, capsys, panda, rate):
    log = bagdata.realistic_log(panda, 10.0, rate, seed=0, hold=HOLD)
    assert len(log.holes) >= 2  # packets were dropped
    bag = bagdata.realistic_bag(tmp_path / 'bag', log)
    code, err = replay(capsys, bag, tmp_path / 'out')
    assert code == 0, err
    torques, rows = torques_at_samples(tmp_path / 'out', log)
    expected = panda.rnea_batch(log.q_true[rows], log.v_true[rows], log.a_true[rows])
    error = np.abs(torques - expected)
    rms = np.sqrt(np.mean(error ** 2, axis=0))
    ratio = error.max(axis=0) / rms
    assert ratio.max() < 5.0, dict(zip(log.names, ratio.round(2)))
    # The holes were fitted through: one segment; only half a window at each end left out.
    summary = json.loads((tmp_path / 'out' / 'summary.json').read_text())
    diff = summary['run']['differentiation']
    assert diff['segments'] == 1
    assert diff['window'] == pytest.approx(max(0.05, 10 / rate), rel=0.01)  # median interval
    assert diff['max_gap'] == pytest.approx(diff['window'] / 2)
    per_end = diff['window'] / 2 * rate
    assert abs(diff['edge_samples_left_out'] - 2 * per_end) <= 4
    assert rows.size == log.times_ns.size - diff['edge_samples_left_out']
    # Gains of the kept samples: no one-sided fit (~60 times the median) among them.
    assert diff['gain_second_max'] < 3 * diff['gain_second_median']
    routes = {r['joint']: r for r in summary['run']['acceleration_routes']}
    assert routes[FINGER]['velocity_delay'] is None  # a joint at rest has no delay to measure
    # Small absolute errors too: the arm joints' torques are tens of N·m.
    assert rms[:7].max() < 0.05


def test_a_real_gap_splits_the_fit_and_its_ends_are_left_out(tmp_path, capsys, panda):
    log = bagdata.realistic_log(panda, 4.0, 1000.0, seed=1, holes=None, hold=HOLD)
    gap = (log.times_ns > BAG_START + 2_000_000_000) & (log.times_ns < BAG_START + 2_200_000_000)
    fields = bagdata.RealisticLog.__dataclass_fields__
    log = bagdata.RealisticLog(*(getattr(log, f)[~gap] if f in bagdata.PER_SAMPLE else
                                 getattr(log, f) for f in fields))
    bag = bagdata.realistic_bag(tmp_path / 'bag', log)
    code, err = replay(capsys, bag, tmp_path / 'out')
    assert code == 0, err
    assert 'samples within half a differentiation window (0.05 s) of the ends' in err
    torques, rows = torques_at_samples(tmp_path / 'out', log)
    expected = panda.rnea_batch(log.q_true[rows], log.v_true[rows], log.a_true[rows])
    error = np.abs(torques - expected)
    assert (error.max(axis=0) / np.sqrt(np.mean(error ** 2, axis=0))).max() < 5.0
    summary = json.loads((tmp_path / 'out' / 'summary.json').read_text())
    assert summary['run']['differentiation']['segments'] == 2
    assert abs(summary['run']['differentiation']['edge_samples_left_out'] - 100) <= 4


# ---------------------------------------------------------------- acceleration route

def _route_errors(panda, log):
    """RMS torque error (arm joints) of each route, computed as rnea_bag does."""
    from rnea_ros.recording.differentiate import derivatives
    by_q = derivatives(log.times_ns, log.q)
    by_v = derivatives(log.times_ns, log.v_reported)
    keep = ~by_q.edge
    expected = panda.rnea_batch(log.q_true[keep], log.v_true[keep], log.a_true[keep])
    errors = {}
    for name, a in (('positions', by_q.second), ('velocities', by_v.first)):
        a = a.copy()
        a[:, 7] = 0.0
        tau = panda.rnea_batch(log.q[keep], log.v_reported[keep], a[keep])
        errors[name] = np.sqrt(np.mean((tau - expected) ** 2, axis=0))[:7]
    return errors


@pytest.mark.parametrize('case, kwargs, route', [
    # A velocity sensor (white noise 2e-3 rad/s) beside coarse positions (12-bit): one
    # differentiation of the velocities is better.
    ('raw velocities', {'velocity_source': 'sensor', 'velocity_filter': None,
                        'velocity_noise': 2e-3, 'quantum': 2.0 ** -12}, 'velocities'),
    # The driver's velocity is low-passed at 10 Hz (16 ms delay): the positions, although
    # the velocity looks smooth.
    ('filtered velocities', {'velocity_filter': 10.0}, 'positions'),
    # The default log: the robot's 50 Hz filtered difference of fine positions.
    ('default', {}, 'positions'),
])
def test_acceleration_route_per_joint(tmp_path, capsys, panda, case, kwargs, route):
    log = bagdata.realistic_log(panda, 6.0, 1000.0, seed=2, hold=HOLD, **kwargs)
    bag = bagdata.realistic_bag(tmp_path / 'bag', log)
    code, err = replay(capsys, bag, tmp_path / 'out', '--lock', f'{FINGER}=0.02')
    assert code == 0, err
    summary = json.loads((tmp_path / 'out' / 'summary.json').read_text())
    routes = {r['joint']: r for r in summary['run']['acceleration_routes']}
    assert routes[FINGER]['route'] == 'locked'
    arm = [routes[name] for name in log.names[:7]]
    assert [r['route'] for r in arm] == [route] * 7, case
    errors = _route_errors(panda, log)
    other = 'positions' if route == 'velocities' else 'velocities'
    # The chosen route is no worse than the other (10 % margin), joint by joint.
    assert np.all(errors[route] <= 1.1 * errors[other]), (errors, case)
    for r in arm:
        assert r['position_noise'] > 0 and r['velocity_noise'] > 0
        assert r['error_positions'] > 0 and r['error_velocities'] > 0
    if case == 'filtered velocities':
        # The delay is detected: 1 / (2 pi 10 Hz) + half a sample of the difference.
        assert [r['velocity_delay'] for r in arm] == pytest.approx([0.0164] * 7, abs=0.002)
    if case == 'raw velocities':
        assert [r['position_noise'] for r in arm] == pytest.approx(
            [2.0 ** -12 / np.sqrt(12)] * 7, rel=0.15)
        assert [r['velocity_noise'] for r in arm] == pytest.approx([2e-3] * 7, rel=0.15)
    text = (tmp_path / 'out' / 'summary.md').read_text()
    assert f'| `panda_joint1` | {route} |' in text


# ---------------------------------------------------------------- locked joints

@pytest.fixture(scope='module')
def gripperless(tmp_path_factory, panda):
    """Write a bag without the finger (the driver publishes the arm only); the finger at 0.0."""
    log = bagdata.realistic_log(panda, 2.0, 500.0, seed=3, hold={FINGER: 0.0})
    path = tmp_path_factory.mktemp('gripperless') / 'bag'
    return log, bagdata.realistic_bag(path, log, omit=(FINGER,))


def test_missing_joint_is_an_error_that_names_the_options(tmp_path, capsys, gripperless):
    _, bag = gripperless
    code, err = replay(capsys, bag, tmp_path / 'out')
    assert code == 2
    assert err == ('rnea_bag: error: joint_states never gives a position for the URDF joints '
                   "['panda_finger_joint1'] (the dynamics needs every joint; wrong URDF or "
                   'topic? To hold them at a fixed position: --lock JOINT=VALUE[,...] or '
                   '--lock-missing)\n')


@pytest.mark.parametrize('option', [['--lock-missing'], ['--lock', f'{FINGER}=0']])
def test_missing_joint_held(tmp_path, capsys, panda, gripperless, option):
    log, bag = gripperless
    code, err = replay(capsys, bag, tmp_path / 'out', *option)
    assert code == 0, err
    if option == ['--lock-missing']:
        assert ('rnea_bag: warning: joints the bag never publishes are held fixed '
                '(--lock-missing): panda_finger_joint1=0') in err
    torques, rows = torques_at_samples(tmp_path / 'out', log)
    expected = panda.rnea_batch(log.q_true[rows], log.v_true[rows], log.a_true[rows])
    assert np.abs(torques - expected)[:, :7].max() < 0.1
    summary = json.loads((tmp_path / 'out' / 'summary.json').read_text())
    assert summary['run']['locked_joints'] == {
        FINGER: {'position': 0.0, 'source': option[0]}}
    assert '`panda_finger_joint1` = 0 (' in (tmp_path / 'out' / 'summary.md').read_text()


def test_lock_missing_stays_inside_the_limits(panda):
    from rnea_ros.recording import locks
    joints = [j for j in panda.joints if j.nv == 1]
    held = locks.missing_positions(joints)
    assert held['panda_joint1'] == 0.0  # 0 is inside [-2.9, 2.9]
    assert held['panda_joint4'] == pytest.approx(-0.0698)  # upper limit nearest to 0
    assert held[FINGER] == 0.0


@pytest.mark.parametrize('value, message', [
    ('gripper=0.01', "--lock: 'gripper' is not a one-DoF joint of the URDF; joints: "
                     "['panda_joint1', 'panda_joint2', 'panda_joint3', 'panda_joint4', "
                     "'panda_joint5', 'panda_joint6', 'panda_joint7', 'panda_finger_joint1']"),
    (f'{FINGER}=open', f'--lock {FINGER}=open: the position must be a finite number (rad, or '
                       'm for a prismatic joint)'),
    (f'{FINGER}=nan', f'--lock {FINGER}=nan: the position must be a finite number (rad, or '
                      'm for a prismatic joint)'),
    (f'{FINGER}=0.1', f'--lock {FINGER}=0.1: outside the joint limits [0, 0.04]'),
    (FINGER, f"--lock: expected JOINT=VALUE[,JOINT=VALUE...], got '{FINGER}'"),
    (f'{FINGER}=0,{FINGER}=0.01', f"--lock: '{FINGER}' is given twice"),
])
def test_bad_lock(tmp_path, capsys, gripperless, value, message):
    _, bag = gripperless
    code, err = replay(capsys, bag, tmp_path / 'out', '--lock', value)
    assert code == 2
    assert err == f'rnea_bag: error: {message}\n'


def test_lock_overrides_a_published_joint(tmp_path, capsys, panda):
    log = bagdata.realistic_log(panda, 1.0, 500.0, seed=4, hold=HOLD)
    bag = bagdata.realistic_bag(tmp_path / 'bag', log)
    code, err = replay(capsys, bag, tmp_path / 'out', '--lock', f'{FINGER}=0.03')
    assert code == 0, err
    assert 'rnea_bag: warning: --lock overrides the positions the bag gives for ' \
        "['panda_finger_joint1']" in err
    summary = json.loads((tmp_path / 'out' / 'summary.json').read_text())
    assert summary['run']['locked_joints'] == {FINGER: {'position': 0.03, 'source': '--lock'}}
