"""
``rnea_identify --effort current``: what the anchor determines, and its options' errors.

A robot of a planar two-link arm and a separate pendulum on a fixed base (``URDF``:
``arm_joint``, ``elbow_joint``, ``other_joint``, horizontal axes) swings along sines; its
effort is the URDF's own torque divided by a gain per joint, with white noise. The anchor bag
has a payload of known mass on a link: on ``fore_tip`` (0.3 m out on the forearm) it loads
the arm and determines its two gains, while ``other_joint`` shares no parameter with it (not
determined: a warning, gain 1); on ``arm_link`` (its origin on the axis of ``arm_joint``) it
loads no joint at all: nothing can be fitted, exit 2. With the URDF's parameters as the
anchor (``--anchor-prior``; here the URDF is the truth) every gain is fitted, and the arm's
validate; the pendulum's does not (its own parameters take its gain: the validation predicts
as well with gain 1). With a tool the URDF misses (``TOOL`` on ``fore_tip``) and gains in truth
1, the URDF anchor biases the arm's gains, and the validation keeps gain 1 for every joint.
"""
from __future__ import annotations

import json

from harness import bagdata
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.identify.cli import main as rnea_identify
from rnea_ros.identify.gain_check import MARGIN
from rnea_ros.params.actuation_file import read_actuation

URDF = """<robot name="arm_and_pendulum">
  <link name="base"/>
  <joint name="arm_joint" type="revolute">
    <parent link="base"/><child link="arm_link"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="100" velocity="10"/>
  </joint>
  <link name="arm_link"><inertial><origin xyz="0.2 0 0"/><mass value="2.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <joint name="elbow_joint" type="revolute">
    <parent link="arm_link"/><child link="fore_link"/><origin xyz="0.4 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="100" velocity="10"/>
  </joint>
  <link name="fore_link"><inertial><origin xyz="0.15 0 0"/><mass value="1.0"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="fore_tip_joint" type="fixed">
    <parent link="fore_link"/><child link="fore_tip"/><origin xyz="0.3 0 0"/>
  </joint>
  <link name="fore_tip"/>
  <joint name="other_joint" type="revolute">
    <parent link="base"/><child link="other_link"/><origin xyz="0 0.5 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="100" velocity="10"/>
  </joint>
  <link name="other_link"><inertial><origin xyz="0.15 0 0"/><mass value="1.5"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
</robot>
"""
GAINS = {'arm_joint': 1.25, 'elbow_joint': 0.9, 'other_joint': 0.85}
MASS = 1.0  # kg on the anchor link
NOISE = 0.01  # N m
RATE = 500.0
DURATION = 6.0
TOOL = 0.5  # kg on fore_tip, missing from the URDF (a tool the URDF does not know)


def _bag(path, model: RobotModel, seed: int, gains=GAINS):
    """Write ``DURATION`` s of two sines; effort = torque / gain + noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(DURATION * RATE)) / RATE
    omega = 2 * np.pi * np.array([0.5, 0.37, 0.43])[None, :]
    phase = rng.uniform(0, 2 * np.pi, 3)[None, :]
    q = 1.2 * np.sin(omega * t[:, None] + phase)
    v = 1.2 * omega * np.cos(omega * t[:, None] + phase)
    a = -1.2 * omega ** 2 * np.sin(omega * t[:, None] + phase)
    gains = np.array([gains[name] for name in model.joint_names])
    effort = model.rnea_batch(q, v, a) / gains + NOISE * rng.standard_normal(q.shape)
    times = bagdata.BAG_START + np.round(t * 1e9).astype(np.int64)
    return bagdata.joint_states_bag(path, times, model.joint_names, q, v, effort)


@pytest.fixture(scope='module')
def robot(tmp_path_factory):
    folder = tmp_path_factory.mktemp('anchor')
    urdf = folder / 'two.urdf'
    urdf.write_text(URDF)
    model = RobotModel.from_urdf_string(URDF)
    loaded = model.with_payload('fore_tip', MASS, (0.0, 0.02, 0.0), (1e-3, 0, 0, 1e-3, 0, 1e-3))
    return urdf, _bag(folder / 'training', model, 0), _bag(folder / 'anchor', loaded, 1), folder


def _run(urdf, training, anchor, out, link, *extra):
    return rnea_identify([str(training), '--urdf', str(urdf), '--output', str(out),
                          '--no-plots', '--friction', 'none', '--effort', 'current',
                          '--anchor-payload', f'{link}={MASS}', '--anchor-bags', str(anchor),
                          *extra])


def test_a_joint_the_payload_does_not_reach_keeps_gain_1_with_a_warning(robot, capsys):
    urdf, training, anchor, folder = robot
    out = folder / 'tip'
    assert _run(urdf, training, anchor, out, 'fore_tip') == 0
    err = capsys.readouterr().err
    gains = json.loads((out / 'identification.json').read_text())['effort_gain']['joints']
    for joint in ('arm_joint', 'elbow_joint'):
        assert gains[joint]['determined'], gains
        assert gains[joint]['gain'] == pytest.approx(GAINS[joint], rel=0.01), gains
        assert abs(gains[joint]['gain'] - GAINS[joint]) <= 3 * gains[joint]['std'], gains
    other = gains['other_joint']
    assert not other['determined'] and other['gain'] == 1.0
    assert ('warning: the effort gain of other_joint is not determined by the anchor (1 kg on '
            'fore_tip in the anchor bags): the anchor loads no joint whose torque shares a '
            'parameter') in err
    model = RobotModel.from_urdf_string(URDF)
    written = read_actuation(out / 'actuation.yaml', model).effort_gain
    assert written == pytest.approx([gains[joint]['gain'] for joint in model.joint_names],
                                    rel=1e-12)


def _prior(urdf, training, out, *extra):
    return rnea_identify([str(training), '--urdf', str(urdf), '--output', str(out),
                          '--no-plots', '--friction', 'none', '--effort', 'current',
                          '--anchor-prior', '0.05', *extra])


def test_the_urdf_prior_anchors_every_joint_and_the_validation_the_arms(robot, capsys):
    """
    --anchor-prior alone: the URDF (here the truth) fixes each gain, the pendulum's too.

    The validation favours the arm's two gains (their torques share parameters, so gain 1
    cannot be made up by them) but not the pendulum's: its own link's parameters, scaled by
    its gain, predict its effort as well with gain 1. It keeps gain 1, said by a warning.
    """
    urdf, training, _, folder = robot
    out = folder / 'prior'
    code = _prior(urdf, training, out)
    err = capsys.readouterr().err
    assert code == 0, err
    data = json.loads((out / 'identification.json').read_text())['effort_gain']
    gains = data['joints']
    assert data['validation_checked']
    for joint, truth in GAINS.items():
        assert gains[joint]['least_squares'] == pytest.approx(truth, rel=0.01), gains
        assert abs(gains[joint]['least_squares'] - truth) <= 3 * gains[joint]['std'], gains
    for joint in ('arm_joint', 'elbow_joint'):
        rms = gains[joint]['validation_rms']
        assert gains[joint]['determined'] and gains[joint]['reason'] is None, gains
        assert gains[joint]['gain'] == gains[joint]['least_squares']
        assert rms['fitted_gain'] <= (1 - MARGIN) * rms['gain_1'], gains
    other = gains['other_joint']
    assert not other['determined'] and other['gain'] == 1.0, other
    rms = other['validation_rms']
    assert rms['fitted_gain'] == pytest.approx(rms['gain_1'], rel=MARGIN), other
    assert ('warning: the effort gain of other_joint is not determined by the validation: the '
            'identified model predicts its validation effort with RMS '
            f"{rms['fitted_gain']:.4g} with the fitted gain {other['least_squares']:.4g} and "
            f"{rms['gain_1']:.4g} with gain 1 (in units of the effort; the fitted gain must "
            'lower it by 2 %); it keeps gain 1 (the effort as given)\n') in err, err
    assert other['reason'].startswith('not determined by the validation: ')
    # The gains written rest on the URDF's masses: said, with their standard deviations.
    named = ', '.join(f"{joint} {gains[joint]['gain']:.4g} +- {gains[joint]['std']:.2g}"
                      for joint in ('arm_joint', 'elbow_joint'))
    assert ('warning: the effort gains anchored by the URDF (--anchor-prior 0.05) are as right '
            f'as its masses: {named}; a mass the URDF misses (a tool, a cable) or has wrong on '
            'a light link (the wrist, where the torques are small) biases them beyond these '
            'standard deviations, unseen by the validation: a payload of known mass '
            '(--anchor-payload) measures them\n') in err, err


def test_a_payload_that_loads_no_joint_determines_nothing_exit_2(robot, capsys):
    urdf, training, anchor, folder = robot
    out = folder / 'axis'
    assert _run(urdf, training, anchor, out, 'arm_link') == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1, err
    assert err.startswith('rnea_identify: error: --effort current: no effort gain is '
                          'determined by the anchor (1 kg on arm_link in the anchor bags): '
                          'arm_joint: the anchor loads no joint'), err
    assert not out.exists()


@pytest.mark.parametrize('extra, message', [
    (['--effort', 'current'], '--effort current needs --anchor-payload LINK=KG and '
     '--anchor-bags BAG..., or --anchor-prior W'),
    (['--anchor-prior', '1'], '--anchor-payload, --anchor-bags and --anchor-prior anchor the '
     'effort gains of --effort current'),
    (['--effort', 'current', '--anchor-payload', 'fore_tip=1'], '--anchor-payload LINK=KG and '
     '--anchor-bags BAG... go together'),
    (['--effort', 'current', '--anchor-payload', 'arm_tip', '--anchor-bags', 'x'],
     '--anchor-payload: expected LINK=KG, a link and the known mass in kg (> 0) of the payload '
     "fixed to it, got 'arm_tip'"),
    (['--effort', 'current', '--anchor-payload', 'fore_tip=-1', '--anchor-bags', 'x'],
     '--anchor-payload: expected LINK=KG'),
    (['--effort', 'current', '--anchor-payload', 'hand=1', '--anchor-bags', 'x'],
     "--anchor-payload: unknown link 'hand'"),
    (['--effort', 'current', '--anchor-payload', 'base=1', '--anchor-bags', 'x'],
     "--anchor-payload: link 'base' is fixed to the world"),
    (['--effort', 'current', '--anchor-payload', 'fore_tip=100', '--anchor-bags', 'x'],
     '--anchor-payload mass is 100 kg: expected at most 5 times'),
    (['--payload', 'fore_tip', '--effort', 'current'], '--payload identifies a payload from '
     'joint torques: --effort current and the --anchor options do not apply'),
])
def test_bad_anchor_options_are_one_line_exit_2(robot, capsys, extra, message):
    urdf, training, _, folder = robot
    out = folder / 'bad'
    code = rnea_identify([str(training), '--urdf', str(urdf), '--output', str(out), *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count('\n') == 1, err
    assert err.startswith(f'rnea_identify: error: {message}'), err
    assert not out.exists()


@pytest.fixture(scope='module')
def tool_bag(tmp_path_factory):
    """Record the arm with ``TOOL`` kg on fore_tip, which the URDF misses; gains in truth 1."""
    model = RobotModel.from_urdf_string(URDF).with_payload(
        'fore_tip', TOOL, (0.0, 0.0, 0.0), (1e-4, 0, 0, 1e-4, 0, 1e-4))
    ones = dict.fromkeys(GAINS, 1.0)
    return _bag(tmp_path_factory.mktemp('tool') / 'training', model, 2, ones)


def test_gains_the_validation_does_not_favour_keep_gain_1(robot, tool_bag, capsys):
    """
    A tool the URDF misses biases the gains the URDF anchors: the validation keeps gain 1.

    The URDF's lighter forearm fixes the scale, so the arm's gains come out low (the torque
    of the missing tool taken by them); identified with them, the model predicts the
    validation effort worse than with gain 1, the truth. Every joint keeps gain 1 (the
    pendulum's gain, right, validates no better either), and the model written is the one
    identified with gain 1.
    """
    urdf, _, _, folder = robot
    out = folder / 'tool'
    code = _prior(urdf, tool_bag, out)
    err = capsys.readouterr().err
    assert code == 0, err
    data = json.loads((out / 'identification.json').read_text())
    gains = data['effort_gain']['joints']
    for joint in ('arm_joint', 'elbow_joint'):
        assert gains[joint]['least_squares'] < 0.95, gains  # biased by the missing tool
    for joint, entry in gains.items():
        rms = entry['validation_rms']
        assert not entry['determined'] and entry['gain'] == 1.0, gains
        assert rms['fitted_gain'] > (1 - MARGIN) * rms['gain_1'], gains
        assert (f'warning: the effort gain of {joint} is not determined by the validation: the '
                'identified model predicts its validation effort with RMS '
                f"{rms['fitted_gain']:.4g} with the fitted gain {entry['least_squares']:.4g} "
                f"and {rms['gain_1']:.4g} with gain 1 (in units of the effort; the fitted gain "
                'must lower it by 2 %); it keeps gain 1 (the effort as given)\n') in err, err
    assert ('warning: no effort gain validates better than gain 1: every joint keeps gain 1 '
            "(the effort as given, the driver's constants when it is recorded in the driver's "
            'torque units)\n') in err, err
    model = RobotModel.from_urdf_string(URDF)
    assert read_actuation(out / 'actuation.yaml', model).effort_gain == \
        pytest.approx(np.ones(3), abs=0.0)
    # The model written is the one identified with gain 1: its validation RMS is that run's.
    identified = data['rms']['identified']['validation_moving']
    assert [identified[joint] for joint in GAINS] == pytest.approx(
        [gains[joint]['validation_rms']['gain_1'] for joint in GAINS], rel=1e-9)


def test_without_validation_data_the_gains_are_not_checked(robot, capsys):
    urdf, training, _, folder = robot
    out = folder / 'unchecked'
    assert _prior(urdf, training, out, '--holdout', '0') == 0
    err = capsys.readouterr().err
    assert err.count('the effort gains are not checked') == 1, err
    assert ('warning: the effort gains are not checked against validation data (--holdout 0 '
            'and no --validate): the identified model may predict worse than with gain 1\n'
            ) in err, err
    data = json.loads((out / 'identification.json').read_text())['effort_gain']
    assert not data['validation_checked']
    for joint, truth in GAINS.items():
        entry = data['joints'][joint]
        assert entry['determined'] and entry['gain'] == pytest.approx(truth, rel=0.01), entry
        assert entry['validation_rms'] == {'fitted_gain': None, 'gain_1': None}
