"""
``rnea_bag --observer``: external torques, calibrated thresholds, detections on a push.

The bags: test/harness/bagdata.py's panda trajectory (exact velocities in the messages, desired
accelerations so that every sample is analysed) with link-side effort = what the dynamics need
minus an external torque, plus Gaussian noise of 0.05 N m. The first bag is collision-free and
calibrates the thresholds; the second has a 5 N m push on panda_joint2 from 1.0 to 1.3 s.
"""
from __future__ import annotations

import json

from harness.bagdata import (BAG_START, PANDA, panda_bag, realistic_bag, realistic_log,
                             RECEIVE_DELAY, sample_times, trajectory)
from harness.observer_bags import NOISE, PUSH, recording, run
import numpy as np
import pytest
import yaml

from rnea_ros import RobotModel
from rnea_ros.bag.cli import main
from rnea_ros.bag.report import read_table
from rnea_ros.observer import calibrate_thresholds, MomentumObserver
from rnea_ros.observer.collision import DEFAULT_FLOOR


@pytest.fixture(scope='module')
def pushed(tmp_path_factory):
    return recording(tmp_path_factory.mktemp('pushed'), 4, push=True)


def test_external_torques_are_the_observer_on_the_samples(tmp_path, capsys, quiet):
    model, bag, t, q, v, effort = quiet
    out = tmp_path / 'out'
    summary = run(capsys, bag, out, '--observer')
    table = read_table(out / 'external_torques.csv')
    expected = MomentumObserver(model, 50.0).run(t, q, v, effort)
    np.testing.assert_allclose(table['time'], t, atol=1e-9)
    for k, name in enumerate(model.joint_names):
        np.testing.assert_allclose(table[name], expected[:, k], atol=1e-9)
    # Collision-free: quiet, the filtered noise only (about 0.008 N m).
    assert np.abs(expected).max() < 0.05
    # The thresholds file: a node parameters file of the documented calibration.
    params = yaml.safe_load((out / 'collision_thresholds.yaml').read_text())['/**'][
        'ros__parameters']
    thresholds = calibrate_thresholds(expected)
    assert params == pytest.approx({f'collision_threshold.{name}': thresholds[k]
                                    for k, name in enumerate(model.joint_names)}, abs=1e-9)
    observer = summary['observer']
    assert observer['gain'] == 50.0 and observer['measured_effort'] == 'link_side'
    assert [j['joint'] for j in observer['joints']] == list(model.joint_names)
    assert 'collisions' not in summary
    assert {'external_torques.csv', 'collision_thresholds.yaml'} <= set(summary['outputs'])
    assert '## External torques (momentum observer)' in (out / 'summary.md').read_text()


def test_thresholds_from_a_quiet_bag_detect_the_push_on_another(
        tmp_path, capsys, quiet, pushed):
    calibration = tmp_path / 'calibration'
    run(capsys, quiet[1], calibration, '--observer')
    out = tmp_path / 'out'
    summary = run(capsys, pushed[1], out, '--observer', '--collision-thresholds',
                  str(calibration / 'collision_thresholds.yaml'))
    (event,) = summary['collisions']
    assert event['joint'] == 'panda_joint2'
    # The observer's first-order rise (gain 50/s) crosses a threshold of ~0.3 N m within 2 ms
    # of the push; the 1 kHz samples are within 0.2 ms of their nominal times.
    assert PUSH[0] <= event['start'] < PUSH[0] + 0.005
    assert PUSH[1] < event['end'] < PUSH[1] + 0.2
    assert event['peak'] == pytest.approx(PUSH[2], abs=0.1)
    assert not (out / 'collision_thresholds.yaml').exists()
    assert '## Collisions' in (out / 'summary.md').read_text()
    assert 'Collisions' in (out / 'report.html').read_text()


def test_a_run_without_observer_has_no_observer_output(tmp_path, capsys, quiet):
    summary = run(capsys, quiet[1], tmp_path / 'out')
    assert 'observer' not in summary and 'collisions' not in summary
    assert not (tmp_path / 'out' / 'external_torques.csv').exists()


@pytest.mark.parametrize('extra, message', [
    (['--observer', '--observer-gain', '0'],
     "rnea_bag: error: argument --observer-gain: '0': expected a number from 0.1 to 1000"),
    (['--observer', '--observer-gain', 'nan'],
     "rnea_bag: error: argument --observer-gain: 'nan': expected a number from 0.1 to 1000"),
    (['--observer', '--observer-gain', '1e300'],  # the observer's state overflowed to inf
     "rnea_bag: error: argument --observer-gain: '1e300': expected a number from 0.1 to 1000"),
    (['--collision-thresholds', 'x.yaml'],
     'rnea_bag: error: --collision-thresholds needs --observer'),
    (['--observer', '--floating-base'],
     'rnea_bag: error: --observer: a floating base needs the base wrench and odometry terms in '
     'the momentum balance; fixed-base robots only'),
])
def test_bad_observer_options_are_refused(tmp_path, capsys, quiet, extra, message):
    try:
        code = main([str(quiet[1]), '--output', str(tmp_path / 'out'), '--urdf', str(PANDA),
                     *extra])
    except SystemExit as exc:  # the parser's refusal of a bound
        code = exc.code
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == message
    assert not (tmp_path / 'out').exists()


JOINTS = [f'panda_joint{k}' for k in range(1, 8)] + ['panda_finger_joint1']
HELD_WAY_OUT = ('(a joint the bag does not publish, a gripper, held by --lock or --lock-missing '
                'is out of the observer)')


@pytest.mark.parametrize('values, message', [
    ({'panda_joint1': 1.0},
     f'no collision_threshold.<joint> for {JOINTS[1:]}'),
    ({**dict.fromkeys(JOINTS, 1.0), 'elbow': 1.0},
     f"unknown joints ['elbow']; expected {JOINTS}"),
    ({**dict.fromkeys(JOINTS, 1.0), 'panda_joint3': -0.5},
     'parameter collision_threshold.panda_joint3: expected a number from 1e-06 to 1e+06 (N m), '
     'got -0.5'),
    ({**dict.fromkeys(JOINTS, 1.0), 'panda_joint3': 10 ** 400},  # was a traceback
     'parameter collision_threshold.panda_joint3: expected a number from 1e-06 to 1e+06 (N m), '
     'got 100000000000000000...0000000000000000000'),
    ({**dict.fromkeys(JOINTS, 1.0), 'panda_joint3': 'high'},
     'parameter collision_threshold.panda_joint3: expected a number from 1e-06 to 1e+06 (N m), '
     "got 'high'"),
])
def test_a_bad_thresholds_file_is_refused(tmp_path, capsys, quiet, values, message):
    path = tmp_path / 'thresholds.yaml'
    path.write_text(yaml.safe_dump({'/**': {'ros__parameters': {
        f'collision_threshold.{joint}': value for joint, value in values.items()}}}))
    code = main([str(quiet[1]), '--output', str(tmp_path / 'out'), '--urdf', str(PANDA),
                 '--no-plots', '--observer', '--collision-thresholds', str(path)])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f'rnea_bag: error: {path}: {message}')
    assert not (tmp_path / 'out').exists()


def test_a_bag_without_effort_is_refused(tmp_path, capsys):
    bag = panda_bag(tmp_path / 'bag', sample_times(200), desired=True)
    code = main([str(bag), '--output', str(tmp_path / 'out'), '--urdf', str(PANDA),
                 '--no-plots', '--observer'])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        'rnea_bag: error: --observer needs the measured effort of every joint in every '
        f'sample; missing or not finite for {JOINTS} {HELD_WAY_OUT}')


def test_a_gripper_held_without_effort_is_out_of_the_observer(tmp_path, capsys):
    # An arm log without its gripper (the arm's driver does not publish it), the gripper held
    # by --lock-missing: the arm's external torques are the observer's on the whole model.
    model = RobotModel.from_urdf_file(PANDA)
    log = realistic_log(model, duration=2.0, rate=500.0, seed=9, holes=None,
                        hold={'panda_finger_joint1': 0.0})
    bag = realistic_bag(tmp_path / 'arm', log, omit=('panda_finger_joint1',))
    out = tmp_path / 'out'
    code = main([str(bag), '--output', str(out), '--urdf', str(PANDA), '--no-plots',
                 '--format', 'csv', '--observer', '--lock-missing'])
    err = capsys.readouterr().err
    assert code == 0, err
    summary = json.loads((out / 'summary.json').read_text())
    assert "--observer: ['panda_finger_joint1'] held fixed without a measured effort: out of " \
        'the observer (external torque 0, threshold the floor)' in summary['warnings']
    table = read_table(out / 'external_torques.csv')
    t = table['time']
    # The analysed samples: their stamps, from the bag's start (its first receive time).
    stamps = log.times_ns[0] + RECEIVE_DELAY + np.round(t * 1e9).astype(np.int64)
    keep = np.searchsorted(log.times_ns, stamps - 1000)
    assert np.abs(log.times_ns[keep] - stamps).max() <= 1000 and t.size > 800
    # The arm's residual: the observer's on the whole model with any finger effort (its row
    # is its own); the finger's: zero.
    effort = np.hstack([log.effort[keep, :7], np.zeros((t.size, 1))])
    expected = MomentumObserver(model, 50.0).run(t, log.q[keep], log.v_reported[keep], effort)
    for k in range(7):
        np.testing.assert_allclose(table[JOINTS[k]], expected[:, k], atol=1e-9)
    np.testing.assert_array_equal(table['panda_finger_joint1'], 0.0)
    params = yaml.safe_load((out / 'collision_thresholds.yaml').read_text())['/**'][
        'ros__parameters']
    assert params['collision_threshold.panda_finger_joint1'] == DEFAULT_FLOOR


def effort_bag(directory, change):
    """Write the quiet recording with its effort changed by ``change(effort)`` (N, 8)."""
    model = RobotModel.from_urdf_file(PANDA)
    times = sample_times(2000, jitter=0.2, seed=3)
    t = (times - BAG_START) * 1e-9
    effort = model.rnea_batch(trajectory(t), trajectory(t, 1), trajectory(t, 2))
    effort += np.random.default_rng(3).normal(0.0, NOISE, effort.shape)
    return panda_bag(directory / 'bag', times, desired=True, effort=change(effort))


def with_column(effort, k, value):
    effort[:, k] = value
    return effort


ALL_JOINTS = ', '.join(f'{name} (0)' for name in JOINTS)
UNREAD = 'a sensor that is not read carries nothing to calibrate or detect with'
# The joints the model loads (their torque spreads at least a tenth of the largest's): the arm
# up to the elbow; the wrist and the finger carry too little to judge.
LOADED = JOINTS[:4]


def far(correlation: int, ratio: int) -> str:
    joints = ', '.join(f'{name} (correlation {correlation}, residual {ratio} times the '
                       "torque's spread)" for name in LOADED)
    return (f"the measured effort is far from the model's torque for {joints}; expected a "
            "correlation of at least 0.5 and a residual spread of at most 3 times the torque's "
            '(wrong sign or scale of the effort, wrong --measured-effort, wrong URDF?)')


@pytest.mark.parametrize('change, message', [
    (np.zeros_like, f'--observer: the measured effort is the same in every sample for '
     f'{ALL_JOINTS}: {UNREAD}'),
    (lambda e: with_column(e, 1, 12.5), '--observer: the measured effort is the same in every '
     f'sample for panda_joint2 (12.5): {UNREAD}'),
    (lambda e: with_column(e, 3, np.nan),
     '--observer needs the measured effort of every joint in every sample; missing or not '
     f"finite for ['panda_joint4'] {HELD_WAY_OUT}"),
    (lambda e: -e, '--observer: ' + far(-1, 2)),
    (lambda e: 10.0 * e, '--observer: ' + far(1, 9)),
], ids=['all zero', 'constant', 'missing', 'wrong sign', 'wrong scale'])
@pytest.mark.parametrize('detect', [False, True])
def test_effort_without_information_is_refused(tmp_path, capsys, change, message, detect):
    # Calibrating on it would give thresholds that blind the detection (the residual is the
    # model's torque itself); detecting with it would report the whole bag.
    bag = effort_bag(tmp_path, change)
    thresholds = tmp_path / 'thresholds.yaml'
    thresholds.write_text(yaml.safe_dump({'/**': {'ros__parameters': {
        f'collision_threshold.{joint}': 1.0 for joint in JOINTS}}}))
    code = main([str(bag), '--output', str(tmp_path / 'out'), '--urdf', str(PANDA),
                 '--no-plots', '--observer']
                + (['--collision-thresholds', str(thresholds)] if detect else []))
    assert (code, capsys.readouterr().err) == (2, f'rnea_bag: error: {message}\n')
    assert not (tmp_path / 'out').exists()


NESTED = '{a: ' * 200 + '1' + '}' * 200
ALIASES = '/**:\n  ros__parameters:\n    a0: &a0 {x: 1, y: 1}\n' + ''.join(
    f'    a{k}: &a{k} {{x: *a{k - 1}, y: *a{k - 1}}}\n' for k in range(1, 40))
# 9**9 strings in about 300 bytes: the threshold's repr in its error took hours and gigabytes.
BOMB = ('/**:\n  ros__parameters:\n    collision_threshold.panda_joint1: [&a [x, x, x, x, x, x, '
        'x, x, x], ' + ', '.join(f'&{chr(98 + k)} [{", ".join([f"*{chr(97 + k)}"] * 9)}]'
                                 for k in range(8)) + ']\n')


@pytest.mark.parametrize('text, message', [
    ('[' * 100_000 + ']' * 100_000, 'cannot read collision thresholds: nested too deeply for '
     'the parser'),
    (f'/**:\n  ros__parameters:\n    {NESTED}\n', 'parameter names nested deeper than 100 levels '
     f"under {'a.' * 40!r}..."),
    (ALIASES, 'cannot read collision thresholds: YAML aliases repeat more than 100000 nodes '
     '(expected a document without alias bombs)'),
    (BOMB, 'cannot read collision thresholds: YAML aliases repeat more than 100000 nodes '
     '(expected a document without alias bombs)'),
    ('- 1\n- 2\n', 'expected a ROS 2 parameters file: /**: ros__parameters: {...}'),
    (b'\xff\xfe\x00\x80', 'cannot read collision thresholds: not UTF-8 text (byte 0xff at '
     'offset 0)'),
    ('/**:\n  ros__parameters:\n    ? [a, b]\n    : 1\n', 'cannot read collision thresholds: '
     'malformed YAML: found unhashable key at line 3, column 7'),
    ('/**:\n  ros__parameters:\n' + ''.join(f'    collision_threshold.{joint}: .nan\n'
                                            for joint in JOINTS),
     'parameter collision_threshold.panda_joint1: expected a number from 1e-06 to 1e+06 (N m), '
     'got nan'),
], ids=['deep brackets', 'deep names', 'aliases', 'bomb', 'not a mapping', 'not text',
        'unhashable key', 'nan'])
def test_a_hostile_thresholds_file_is_one_line(tmp_path, capsys, quiet, text, message):
    path = tmp_path / 'thresholds.yaml'
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    code = main([str(quiet[1]), '--output', str(tmp_path / 'out'), '--urdf', str(PANDA),
                 '--no-plots', '--observer', '--collision-thresholds', str(path)])
    assert (code, capsys.readouterr().err) == (2, f'rnea_bag: error: {path}: {message}\n')
    assert not (tmp_path / 'out').exists()
