"""
``rnea_identify`` end to end on a synthetic UR5 whose true model differs from its URDF.

The generator (``synthetic_bag``): the true robot is the example-robot-data UR5 with four
bodies changed (mass x0.8 or x1.2, centre of mass moved by up to 3 cm, rotational inertia
about the centre of mass scaled by 0.7-1.4: still physical), plus per joint Coulomb friction
(s(v) = tanh(v / 0.01)), viscous friction, an offset, an armature, and Gaussian effort noise
of a known sigma per joint. The motion is a finite Fourier series inside the joint limits
(``bagdata.fourier_excitation``) sampled at 500 Hz with jittered stamps; the bag carries
positions, velocities and effort; accelerations are estimated by the tool.
"""
from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

from harness import bagdata
from harness.identify_bags import (ARMATURE, COULOMB, DURATION, identify, NOISE, OFFSET, RATE,
                                   synthetic_bag, true_parameters, UR5, VISCOUS)
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.identify import pipeline
from rnea_ros.identify.cli import main
from rnea_ros.identify.inertial_layout import INERTIAL, pseudo_inertia
from rnea_ros.params.actuation_file import read_actuation
from rnea_ros.recording import differentiate


@pytest.fixture(scope='module')
def ur5() -> RobotModel:
    return RobotModel.from_urdf_file(UR5)


@pytest.fixture(scope='module')
def bag(tmp_path_factory, ur5) -> Path:
    return synthetic_bag(tmp_path_factory.mktemp('synthetic') / 'bag', ur5, nan_effort=7)


@pytest.fixture(scope='module')
def short_bag(tmp_path_factory, ur5) -> Path:
    return synthetic_bag(tmp_path_factory.mktemp('short') / 'bag', ur5, seed=2, duration=4.0)


def refusal(capsys, bag: Path, tmp_path: Path) -> str:
    """Return what rnea_identify prints refusing ``bag`` (exit 2, no output directory)."""
    code, _, err = identify(capsys, bag, '--urdf', UR5, '--output', tmp_path / 'out')
    assert code == 2 and not (tmp_path / 'out').exists()
    return err


@pytest.fixture(scope='module')
def identified(tmp_path_factory, bag) -> Path:
    out = tmp_path_factory.mktemp('identified')
    assert main([str(bag), '--urdf', str(UR5), '--output', str(out)]) == 0
    return out


def test_identified_model_predicts_held_out_torques_to_the_noise(identified):
    report = json.loads((identified / 'identification.json').read_text())
    joints = list(report['noise'])
    validation = {m: np.array([report['rms'][m]['validation'][j] for j in joints])
                  for m in report['rms']}
    # Held-out RMS within 10 % of the noise: nothing left but the noise.
    assert np.all(validation['identified'] <= 1.1 * NOISE), validation['identified']
    assert np.all(validation['urdf'] > 3 * NOISE)  # the URDF is wrong, visibly
    assert np.all(validation['identified'] < validation['urdf+friction'])
    # The estimated noise is the true noise.
    np.testing.assert_allclose([report['noise'][j] for j in joints], NOISE, rtol=0.1)
    assert report['samples']['dropped_nan_effort'] == 7
    assert report['samples']['validation'] > 0.25 * RATE * DURATION


def test_friction_and_armature_recovered_within_10_percent(identified, ur5):
    actuation = read_actuation(identified / 'actuation.yaml', ur5)
    report = json.loads((identified / 'identification.json').read_text())
    base = {p['name']: p for p in report['excitation']['base_parameters']}
    np.testing.assert_allclose(actuation.coulomb, COULOMB, rtol=0.1)
    np.testing.assert_allclose(actuation.viscous, VISCOUS, rtol=0.1)
    grouped = [k for k, joint in enumerate(ur5.joint_names)
               if base[f'armature.{joint}']['absorbs']]
    alone = [k for k in range(ur5.nv) if k not in grouped]
    np.testing.assert_allclose(actuation.armature[alone], ARMATURE[alone], rtol=0.1)
    assert actuation.velocity_threshold == pytest.approx(0.01)
    # The first two armatures of a UR5 are only seen together with link parameters (e.g. the
    # masses of the wrist times their squared distance to the first axis): their base
    # parameters, armature plus what they absorb, are recovered.
    assert grouped == [0, 1]
    truth = ur5.with_inertial_parameters(true_parameters(ur5)).inertial_parameters()
    index = {f'{link}.{p}': (i, c) for i, link in enumerate(report['links'])
             for c, p in enumerate(INERTIAL)}
    for k in grouped:
        joint = ur5.joint_names[k]
        entry = base[f'armature.{joint}']
        expected = ARMATURE[k] + sum(item['coefficient'] * truth[index[item['name']]]
                                     for item in entry['absorbs'])
        assert entry['final'] == pytest.approx(expected, rel=0.02)


def test_identified_urdf_round_trips_and_is_physical(identified, ur5):
    report = json.loads((identified / 'identification.json').read_text())
    phi = np.array([[entry['identified'][p] for p in INERTIAL]
                    for entry in report['links'].values()])
    loaded = RobotModel.from_urdf_file(identified / 'identified.urdf')
    np.testing.assert_allclose(loaded.inertial_parameters(), phi, rtol=0, atol=1e-9)
    for i, body in enumerate(phi):
        assert body[0] > 0
        assert np.linalg.eigvalsh(pseudo_inertia(body)).min() >= 0, f'body {i}'
    assert all(entry['physically_consistent'] for entry in report['links'].values())
    # Only <inertial> and <dynamics> lines differ from the input.
    before = UR5.read_text().splitlines()
    after = (identified / 'identified.urdf').read_text().splitlines()
    changed = {line.strip().split()[0] for line in set(after) - set(before)}
    assert changed <= {'<origin', '<mass', '<inertia', '<dynamics'}, changed
    assert len(after) == len(before) + sum('<inertial>' in line for line in after) \
        - sum('<inertial>' in line for line in before)
    # Identified friction is also in each joint's <dynamics>.
    actuation = read_actuation(identified / 'actuation.yaml', ur5)
    text = (identified / 'identified.urdf').read_text()
    for k, joint in enumerate(ur5.joint_names):
        viscous, coulomb = float(actuation.viscous[k]), float(actuation.coulomb[k])
        assert f'damping="{viscous!r}" friction="{coulomb!r}"' in text


def test_rnea_bag_with_the_identified_model_leaves_the_noise(identified, bag, tmp_path,
                                                             capsys):
    from rnea_ros.bag.cli import main as rnea_bag
    code = rnea_bag([str(bag), '--urdf', str(identified / 'identified.urdf'), '--actuation',
                     str(identified / 'actuation.yaml'), '--output', str(tmp_path),
                     '--no-plots'])
    assert code == 0, capsys.readouterr().err
    summary = json.loads((tmp_path / 'summary.json').read_text())
    rms = np.array([joint['rms_residual'] for joint in summary['joints']])
    # The whole bag (training and validation) with rnea_bag's own accelerations.
    assert np.all(rms <= 1.1 * NOISE), rms


def test_report_and_plots(identified):
    markdown = (identified / 'identification.md').read_text()
    for heading in ('RMS residual per joint', 'Actuation model', 'Excitation', 'Total mass'):
        assert heading in markdown
    report = json.loads((identified / 'identification.json').read_text())
    assert report['excitation']['condition_number'] < 100
    assert report['total_mass']['urdf'] != report['total_mass']['identified']
    assert {'validation_joints1.png', 'validation_joints2.png'} <= set(report['outputs'])
    assert (identified / 'validation_joints1.png').stat().st_size > 10_000


def test_report_gives_each_joints_differentiation_window(identified, bag, ur5):
    report = json.loads((identified / 'identification.json').read_text())
    entry = report['differentiation'][str(bag)]
    assert entry['window_rule'] == 'auto' and entry['time_base'] == 'stamps'
    assert list(entry['windows']) == list(ur5.joint_names)
    grid = differentiate.candidate_windows(bagdata.sample_times(int(RATE * DURATION),
                                                                rate=RATE))
    assert all(np.isclose(grid, w).any() for w in entry['windows'].values()), entry
    markdown = (identified / 'identification.md').read_text()
    windows = ', '.join(f'{joint} {w:.3g}' for joint, w in entry['windows'].items())
    assert f'- `{bag}`: differentiation windows [s] (auto): {windows}; time base: stamps' \
        in markdown


def test_inertial_none_keeps_the_urdf_inertias(tmp_path, capsys, bag, short_bag):
    code, out, err = identify(capsys, bag, short_bag, '--urdf', UR5, '--output', tmp_path,
                              '--inertial', 'none', '--no-plots')
    assert code == 0, err
    loaded = RobotModel.from_urdf_file(tmp_path / 'identified.urdf')
    np.testing.assert_array_equal(loaded.inertial_parameters(),
                                  RobotModel.from_urdf_file(UR5).inertial_parameters())
    # The joint terms of the URDF's model: the urdf+friction model, with friction >= 0.
    actuation = read_actuation(tmp_path / 'actuation.yaml', loaded)
    assert np.all(actuation.coulomb >= 0) and np.all(actuation.viscous >= 0)
    report = json.loads((tmp_path / 'identification.json').read_text())
    for data in ('training', 'validation'):
        np.testing.assert_allclose(list(report['rms']['identified'][data].values()),
                                   list(report['rms']['urdf+friction'][data].values()),
                                   rtol=0.05)
    assert 'urdf+friction' in out
    # 70 % of each bag, less half the longest window at each end of each bag.
    left_out = sum(max(entry['windows'].values()) * RATE
                   for entry in report['differentiation'].values())
    assert report['samples']['training'] == pytest.approx(
        0.7 * (RATE * (DURATION + 4) - left_out), rel=0.01)


def test_base_mode_and_validation_bag(tmp_path, capsys, ur5, bag, short_bag):
    code, out, err = identify(capsys, bag, '--urdf', UR5, '--output', tmp_path / 'out',
                              '--inertial', 'base', '--validate', short_bag, '--no-plots')
    assert code == 0, err
    report = json.loads((tmp_path / 'out' / 'identification.json').read_text())
    # Less the samples within half a window of the ends, as rnea_bag leaves out (the longest
    # window chosen: 25 ms each end for 0.05 s).
    window = max(report['differentiation'][str(short_bag)]['windows'].values())
    assert report['samples']['validation'] == pytest.approx(4.0 * RATE - window * RATE, abs=2)
    rms = np.array(list(report['rms']['identified']['validation'].values()))
    assert np.all(rms <= 1.15 * NOISE), rms
    # Base parameters are not link inertias: the URDF's are kept.
    loaded = RobotModel.from_urdf_file(tmp_path / 'out' / 'identified.urdf')
    np.testing.assert_array_equal(loaded.inertial_parameters(), ur5.inertial_parameters())


def test_poorly_exciting_bag_warns_naming_parameters(tmp_path, capsys, ur5):
    bag = synthetic_bag(tmp_path / 'bag', ur5, moving=[0, 5], duration=4.0)
    code, out, err = identify(capsys, bag, '--urdf', UR5, '--output', tmp_path / 'out',
                              '--no-plots')
    assert code == 0, err
    warning = next(line for line in err.splitlines() if 'barely excite' in line)
    assert 'armature.elbow_joint' in warning and 'wrist_3_link.Ixx' in warning
    assert 'friction.shoulder_pan_joint.viscous' not in warning  # joint 1 moves: seen
    # Joints 2-5 never move: their rows are left out, the base is the UR5's holding them.
    still = next(line for line in err.splitlines() if 'joints moving faster' in line)
    assert ': shoulder_lift_joint (0.0 %), elbow_joint (0.0 %), wrist_1_joint (0.0 %), ' \
        'wrist_2_joint (0.0 %); at rest' in still, still
    report = json.loads((tmp_path / 'out' / 'identification.json').read_text())
    assert len(report['excitation']['base_parameters']) == 31  # of 58 with every joint moving


def ramp_bag(path: Path, model: RobotModel, duration: float = 2.0, seed: int = 1) -> Path:
    """
    Write a short bag of every joint at a constant acceleration (0.2 rad/s^2, one direction).

    The generator's true robot and joint terms, but a motion that barely tells them apart: each
    joint's Coulomb friction is constant (its velocity never changes sign), its armature term
    nearly so (the tool's estimated acceleration is constant but for its noise), like its offset.
    """
    truth = model.with_inertial_parameters(true_parameters(model))
    times = bagdata.sample_times(int(RATE * duration), rate=RATE, jitter=0.05, seed=seed)
    t = (times - bagdata.BAG_START)[:, None] * 1e-9
    rng = np.random.default_rng(seed)
    a = np.broadcast_to(0.2 * rng.choice([-1.0, 1.0], model.nv), (t.size, model.nv))
    v = 0.2 * np.sign(a) + a * t
    q = np.array([-0.5, -1.3, 1.3, -1.5, -1.57, 0.0]) + 0.2 * np.sign(a) * t + 0.5 * a * t ** 2
    tau = truth.rnea_batch(q, v, a) + COULOMB * np.tanh(v / 0.01) + VISCOUS * v + OFFSET \
        + ARMATURE * a + rng.standard_normal(v.shape) * NOISE
    return bagdata.joint_states_bag(path, times, model.joint_names, q, v, tau)


def test_joint_terms_of_a_barely_exciting_bag_stay_near_the_urdf(tmp_path, ur5, short_bag):
    # Fitted unregularised, the nearly collinear armature, offset and Coulomb columns of the
    # ramps took values of hundreds: the URDF + joint terms predicted other motions 3-8 x worse
    # than the URDF alone. With the prior toward zero and friction, armature >= 0 it is no worse.
    result = pipeline.identify([ramp_bag(tmp_path / 'ramp', ur5)], UR5, validate=str(short_bag))
    urdf, friction = (np.asarray(result.rms[m]['validation']) for m in ('urdf', 'urdf+friction'))
    assert np.all(friction <= 1.2 * urdf), (friction, urdf)
    lay = result.layout
    for j in range(ur5.nv):
        for term in ('coulomb', 'viscous', 'armature'):
            assert result.theta_friction[lay.joint_index(j, term)] >= 0.0
    warning = next(w for w in result.warnings if 'barely excite' in w)
    assert 'armature.elbow_joint' in warning and 'friction.elbow_joint.offset' in warning


def test_a_late_effort_is_paired_with_its_state_by_effort_delay(tmp_path, capsys, ur5):
    """
    --effort-delay S: the effort stamped t balanced the state of t - S, and is paired with it.

    Regression: the effort was always paired with the state of its own stamp; on the simulated
    robot (its effort at stamp k is the torque of the step from k - 1) that took the shoulder's
    gravity change over a step for viscous friction (0.2585 for 0.2).
    """
    late = 2  # samples: 4 ms at 500 Hz
    bag = synthetic_bag(tmp_path / 'late', ur5, seed=5, late=late)
    rms, viscous = {}, {}
    for delay in (0.0, late / RATE):
        out = tmp_path / f'out{delay}'
        code, _, err = identify(capsys, bag, '--urdf', UR5, '--output', out, '--no-plots',
                                '--effort-delay', delay)
        assert code == 0, err
        report = json.loads((out / 'identification.json').read_text())
        assert report['settings']['effort_delay'] == delay
        rms[delay] = np.array([report['rms']['identified']['validation'][j]
                               for j in ur5.joint_names])
        viscous[delay] = read_actuation(out / 'actuation.yaml', ur5).viscous
    assert np.any(rms[0.0] > 1.3 * NOISE), rms[0.0]  # unpaired: visibly more than the noise
    assert np.all(rms[late / RATE] <= 1.1 * NOISE), rms[late / RATE]
    np.testing.assert_allclose(viscous[late / RATE], VISCOUS, rtol=0.1)


def test_validation_residual_where_the_joints_move_leaves_out_stiction(tmp_path, capsys, ur5):
    """
    rms.<model>.validation_moving: the validation rows the fit would use (no rows at rest).

    Where a joint is nearly at rest stiction holds it with any torque within its Coulomb
    friction, which no friction curve of the velocity gives: the residual on every row says
    so, the one on the rows the model claims is the noise (on the simulated panda: 1.4-1.8
    and 1.0-1.1 times the noise).
    """
    bags = [synthetic_bag(tmp_path / name, ur5, seed=seed, stuck=1.0)
            for name, seed in (('train', 6), ('check', 7))]
    code, _, err = identify(capsys, bags[0], '--urdf', UR5, '--validate', bags[1], '--output',
                            tmp_path / 'out', '--no-plots')
    assert code == 0, err
    report = json.loads((tmp_path / 'out' / 'identification.json').read_text())
    rms = {name: np.array([report['rms']['identified'][name][j] for j in ur5.joint_names])
           for name in ('validation', 'validation_moving')}
    assert np.all(rms['validation_moving'] <= 1.1 * NOISE), rms
    assert np.any(rms['validation'] > 1.3 * NOISE), rms
    assert '| identified | validation_moving |' in (tmp_path / 'out' / 'identification.md'
                                                    ).read_text()


@pytest.mark.parametrize('delay', ['nan', '2'])
def test_bad_effort_delay_is_refused(tmp_path, capsys, short_bag, delay):
    with pytest.raises(SystemExit) as exit_:  # the parser's bound (test_option_bounds.py)
        identify(capsys, short_bag, '--urdf', UR5, '--output', tmp_path / 'out',
                 '--effort-delay', delay)
    assert exit_.value.code == 2 and not (tmp_path / 'out').exists()
    assert capsys.readouterr().err == ('rnea_identify: error: argument --effort-delay: '
                                       f"'{delay}': expected a number from -1 to 1\n")


def test_bag_without_effort_is_refused(tmp_path, capsys, ur5):
    times = bagdata.sample_times(500, rate=RATE)
    q = np.zeros((500, 6))
    bag = bagdata.joint_states_bag(tmp_path / 'bag', times, ur5.joint_names, q, q)
    code, out, err = identify(capsys, bag, '--urdf', UR5, '--output', tmp_path / 'out')
    assert code == 2
    assert err == (f'rnea_identify: error: {bag}: joint_states carries no effort for '
                   f'{list(ur5.joint_names)}: identification needs the measured joint '
                   'torques\n')


def test_bag_with_an_all_zero_effort_is_refused_naming_it(tmp_path, capsys, ur5):
    times = bagdata.sample_times(500, rate=RATE)
    q = np.sin(np.outer(times * 1e-9, np.arange(1, 7)))
    bag = bagdata.joint_states_bag(tmp_path / 'bag', times, ur5.joint_names, q, q,
                                   np.zeros_like(q))
    code, out, err = identify(capsys, bag, '--urdf', UR5, '--output', tmp_path / 'out')
    assert code == 2 and not (tmp_path / 'out').exists()
    assert err == (f'rnea_identify: error: {bag}: joint_states carries an effort of 0 in every '
                   f'sample for every joint {list(ur5.joint_names)}: identification needs the '
                   'measured joint torques\n')


def test_unknown_joints_are_refused(tmp_path, capsys, ur5):
    times = bagdata.sample_times(500, rate=RATE)
    names = list(ur5.joint_names) + ['gripper_joint']
    q = np.zeros((500, 7))
    bag = bagdata.joint_states_bag(tmp_path / 'bag', times, names, q, q, q)
    code, out, err = identify(capsys, bag, '--urdf', UR5, '--output', tmp_path / 'out')
    assert code == 2
    assert err == (f'rnea_identify: error: {bag}: joint_states names joints that are not in '
                   "the URDF: ['gripper_joint'] (wrong URDF? --ignore-extra-joints skips "
                   'them)\n')


def test_too_few_samples_are_refused(tmp_path, capsys, ur5):
    bag = synthetic_bag(tmp_path / 'bag', ur5, duration=0.1)
    code, out, err = identify(capsys, bag, '--urdf', UR5, '--output', tmp_path / 'out',
                              '--window', '0.05')
    assert code == 2
    assert err.startswith('rnea_identify: error: too few samples: 18 training samples for 58 '
                          'base parameters (at least 116 needed)'), err
    assert err.count('\n') == 1


def test_a_robot_held_still_is_refused(tmp_path, capsys, ur5):
    """Every joint slower than 0.05 rad/s: nothing but stiction to identify from."""
    n = 2000
    times = bagdata.BAG_START + np.arange(n, dtype=np.int64) * 1_000_000
    q = np.tile([0.0, -1.3, 1.3, -1.5, -1.57, 0.0], (n, 1)) \
        + 0.01 * np.sin(np.linspace(0, 6, n))[:, None]
    effort = np.random.default_rng(0).normal(0.0, 0.1, (n, 6))
    bag = bagdata.joint_states_bag(tmp_path / 'bag', times, ur5.joint_names, q, None, effort)
    code, out, err = identify(capsys, bag, '--urdf', UR5, '--output', tmp_path / 'out')
    assert code == 2
    assert err == ('rnea_identify: error: no joint moves faster than 0.05 rad/s (m/s) in 5 % '
                   'of the training samples: the robot is held still, its torques are '
                   'stiction, there is nothing to identify\n'), err
    assert not (tmp_path / 'out').exists()


def test_floating_base_is_refused(tmp_path, capsys):
    text = UR5.read_text().replace(
        '<joint name="shoulder_pan_joint" type="revolute">',
        '<joint name="shoulder_pan_joint" type="floating">')
    assert 'type="floating"' in text
    urdf = tmp_path / 'floating.urdf'
    urdf.write_text(text)
    code, out, err = identify(capsys, tmp_path / 'missing', '--urdf', urdf, '--output',
                              tmp_path / 'out')
    assert code == 2
    assert err == ('rnea_identify: error: the robot has a floating base or a floating/planar '
                   "joint ['shoulder_pan_joint']: rnea_identify identifies fixed-base robots "
                   'only\n')


def test_samples_are_counted_as_rnea_bag_counts_them(tmp_path, capsys, short_bag):
    from rnea_ros.bag.cli import main as rnea_bag
    code, out, err = identify(capsys, short_bag, '--urdf', UR5, '--output', tmp_path / 'i',
                              '--holdout', '0', '--no-plots')
    assert code == 0, err
    identified = int(out.split()[1])
    assert rnea_bag([str(short_bag), '--urdf', str(UR5), '--output', str(tmp_path / 'b'),
                     '--no-plots']) == 0
    assert capsys.readouterr().out == f'rnea_bag: {identified} samples -> {tmp_path / "b"}\n'
    # The ends' half windows left out (12.5 samples each for 0.05 s), the longest window's.
    report = json.loads((tmp_path / 'i' / 'identification.json').read_text())
    window = max(report['differentiation'][str(short_bag)]['windows'].values())
    assert identified == pytest.approx(4.0 * RATE - window * RATE, abs=1)


def test_wrong_length_effort_is_named(tmp_path, capsys, ur5):
    times = bagdata.sample_times(500, rate=RATE)
    q = np.zeros((500, 6))
    bag = bagdata.joint_states_bag(tmp_path / 'bag', times, ur5.joint_names, q, q, q[:, :5])
    assert refusal(capsys, bag, tmp_path) == (
        f'rnea_identify: error: {bag}: /joint_states: every message is malformed: message 0 '
        'has 6 names, 6 positions, 6 velocities and 5 efforts (expected distinct names, one '
        'position per name, and one velocity and effort per name or none)\n')


def test_unpublished_joint_is_named_with_the_options_that_hold_it(
        tmp_path, capsys, monkeypatch, ur5):
    bag = synthetic_bag(tmp_path / 'bag', ur5, duration=4.0, unpublished=5)
    assert refusal(capsys, bag, tmp_path) == (
        f'rnea_identify: error: {bag}: joint_states never gives a position for the URDF joints '
        "['wrist_3_joint'] (the dynamics needs every joint; wrong URDF or topic? To hold them "
        'at a fixed position: --lock JOINT=VALUE[,...] or --lock-missing)\n')
    # Held, the joint adds no equations (the bag gives no effort for it); the output directory
    # defaults to ./<first bag name>_identified, as rnea_bag's to ./<bag name>_rnea.
    monkeypatch.chdir(tmp_path)
    code, out, err = identify(capsys, bag, '--urdf', UR5, '--lock', 'wrist_3_joint=0',
                              '--no-plots')
    assert code == 0, err
    assert out.startswith(f'rnea_identify: {int(out.split()[1])} training samples -> '
                          f'{tmp_path / "bag_identified"}\n')
    report = json.loads((tmp_path / 'bag_identified' / 'identification.json').read_text())
    assert report['rms']['identified']['validation']['wrist_3_joint'] is None
    rms = [report['rms']['identified']['validation'][j] for j in ur5.joint_names[:5]]
    assert np.all(np.array(rms) <= 1.2 * NOISE[:5]), rms


def test_bad_lock_is_named_without_the_bag(tmp_path, capsys, short_bag):
    code, out, err = identify(capsys, short_bag, '--urdf', UR5, '--output', tmp_path / 'o',
                              '--lock', 'elbow=1')
    assert (code, err) == (2, "rnea_identify: error: --lock: 'elbow' is not a one-DoF joint of "
                              "the URDF; joints: ['shoulder_pan_joint', 'shoulder_lift_joint', "
                              "'elbow_joint', 'wrist_1_joint', 'wrist_2_joint', "
                              "'wrist_3_joint']\n")


@pytest.mark.parametrize('command', [[sys.executable, '-m', 'rnea_ros.identify'],
                                     [str(Path(sys.executable).with_name('rnea_identify'))]])
def test_module_console_script_and_help(command):
    result = subprocess.run(command + ['--help'], capture_output=True, text=True, check=True)
    for option in ('--urdf', '--output', '--joint-states', '--holdout', '--validate',
                   '--friction', '--inertial', '--no-plots', '--threads', '--timings',
                   '--clock', '--lock', '--lock-missing', '--ignore-extra-joints'):
        assert option in result.stdout
