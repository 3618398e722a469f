"""
``rnea_identify --mjcf``: the identified model as MJCF (``rnea_ros.identify.mjcf_out``).

The export round-trips: identified.xml read by ``load_mjcf`` is the model of identified.urdf and
actuation.yaml (inertias, armature, viscous and Coulomb friction) to 1e-9; MuJoCo simulating
identified.xml is tracked by the identified model's feed-forward as the plant it is.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
import warnings

from harness.identify_bags import identify, synthetic_bag, UR5
from harness.oracle import robot_path
import mujoco
import numpy as np
import pytest

from rnea_ros import ModelWarning, RobotModel
from rnea_ros.description.mjcf import load_mjcf
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.errors import MJCFError
from rnea_ros.identify import mjcf_out
from rnea_ros.params.actuation_file import read_actuation

TOLERANCE = 1e-9


@pytest.fixture(scope='module')
def bag(tmp_path_factory) -> Path:
    ur5 = RobotModel.from_urdf_file(UR5)
    return synthetic_bag(tmp_path_factory.mktemp('bag') / 'bag', ur5, seed=4, duration=4.0)


@pytest.fixture(scope='module')
def exported(tmp_path_factory, bag) -> Path:
    out = tmp_path_factory.mktemp('identified') / 'out'
    from rnea_ros.identify.cli import main
    assert main([str(bag), '--urdf', str(UR5), '--output', str(out), '--no-plots',
                 '--mjcf']) == 0
    return out


def test_the_mjcf_export_round_trips_to_the_identified_model(exported):
    report = json.loads((exported / 'identification.json').read_text())
    assert report['outputs'] == ['identified.urdf', 'actuation.yaml', 'identified.xml',
                                 'identification.json', 'identification.md']
    identified = RobotModel.from_urdf_file(exported / 'identified.urdf')
    terms = read_actuation(exported / 'actuation.yaml', identified)
    robot = load_mjcf(exported / 'identified.xml')
    assert robot.model.joint_names == identified.joint_names
    assert robot.model.body_names == identified.body_names
    scale = np.abs(identified.inertial_parameters()).max()
    np.testing.assert_allclose(robot.model.inertial_parameters(),
                               identified.inertial_parameters(), rtol=0, atol=1e-12 * scale)
    for term in ('coulomb', 'viscous', 'armature'):  # the offsets have no MuJoCo counterpart
        assert np.all(getattr(terms, term) > 0)
        np.testing.assert_allclose(getattr(robot.actuation, term), getattr(terms, term),
                                   rtol=1e-15, atol=0)
    np.testing.assert_array_equal(robot.actuation.offset, 0.0)
    np.testing.assert_allclose(robot.model.gravity, identified.gravity, rtol=0, atol=0)
    rng = np.random.default_rng(5)
    for _ in range(5):
        q = rng.uniform(-2, 2, identified.nq)
        v, a = rng.normal(size=(2, identified.nv))
        expected = identified.rnea(q, v, a)
        error = np.abs(robot.model.rnea(q, v, a) - expected).max()
        assert error < TOLERANCE * max(1.0, np.abs(expected).max())
    for name in identified.link_names:  # every link where the identified model places it
        for got, want in zip(robot.model.link_placement(q, name),
                             identified.link_placement(q, name)):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    limits = {joint.name: (joint.lower, joint.upper, joint.effort_limit)
              for joint in identified.joints}
    assert {joint.name: (joint.lower, joint.upper, joint.effort_limit)
            for joint in robot.model.joints} == limits


def test_mujoco_running_the_export_is_tracked_by_the_identified_model(exported):
    """
    Computed torque from the identified model on MuJoCo simulating identified.xml.

    The command is what the node sends: rnea + armature a + friction (its smooth Coulomb sign
    against MuJoCo's frictionloss constraint) + PD. Tracking within 2e-3 rad, 10x better than
    the PD alone: MuJoCo runs the robot that was identified.
    """
    identified = RobotModel.from_urdf_file(exported / 'identified.urdf')
    terms = read_actuation(exported / 'actuation.yaml', identified)
    mj = mujoco.MjModel.from_xml_path(str(exported / 'identified.xml'))
    assert mj.nu == identified.nv
    rate, seconds = 1000.0, 2.0
    mj.opt.timestep = 1.0 / rate
    mj.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    times = np.arange(int(rate * seconds)) / rate
    frequency = 2 * np.pi * 0.5
    amplitude = 0.5

    def reference(t):
        return (amplitude * np.sin(frequency * t) * np.ones(identified.nv),
                amplitude * frequency * np.cos(frequency * t) * np.ones(identified.nv),
                -amplitude * frequency ** 2 * np.sin(frequency * t) * np.ones(identified.nv))

    errors = {}
    for feed_forward in (True, False):
        data = mujoco.MjData(mj)
        data.qpos[:], data.qvel[:], _ = reference(0.0)
        worst = 0.0
        for t in times:
            q_ref, v_ref, a_ref = reference(t)
            command = 400.0 * (q_ref - data.qpos) + 40.0 * (v_ref - data.qvel)
            if feed_forward:
                command += identified.rnea(q_ref, v_ref, a_ref) + terms.armature * a_ref \
                    + terms.friction_torques(v_ref)
            data.ctrl[:] = command
            mujoco.mj_step(mj, data)
            worst = max(worst, float(np.abs(data.qpos - reference(t + 1.0 / rate)[0]).max()))
        errors[feed_forward] = worst
    assert errors[True] < 2e-3, errors
    assert errors[True] < 0.1 * errors[False], errors


def test_mjcf_with_payload_is_one_usage_line(capsys, bag, tmp_path):
    with pytest.raises(SystemExit) as exited:
        identify(capsys, bag, '--urdf', UR5, '--output', tmp_path / 'out', '--payload', 'tool0',
                 '--mjcf')
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith('error: argument --mjcf: not allowed with argument --payload\n')
    assert len(err.splitlines()) == 1 and not (tmp_path / 'out').exists()


def test_a_model_mujoco_refuses_writes_nothing(capsys, bag, tmp_path, monkeypatch):
    def refuse(text):
        raise MJCFError('MuJoCo cannot compile the identified model: Error: no')
    monkeypatch.setattr(mjcf_out, '_compile', refuse)
    code, _, err = identify(capsys, bag, '--urdf', UR5, '--output', tmp_path / 'out',
                            '--no-plots', '--inertial', 'none', '--mjcf')
    assert code == 2
    assert err == ('rnea_identify: error: --mjcf: MuJoCo cannot compile the identified model: '
                   'Error: no\n')
    assert not (tmp_path / 'out').exists()


def _quiet(path) -> RobotModel:
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ModelWarning)
        return RobotModel.from_urdf_file(path, inertia_check='warn')


def test_a_mimic_joint_is_written_as_a_joint_equality_and_read_back(tmp_path):
    panda = _quiet(robot_path('panda'))
    rng = np.random.default_rng(3)
    terms = dataclasses.replace(Actuation.zeros(panda), armature=rng.uniform(0, 1, panda.nv),
                                viscous=rng.uniform(0, 1, panda.nv))
    path = tmp_path / 'panda.xml'
    path.write_text(mjcf_out.mjcf_text(panda, terms))
    assert ('<joint name="mimic panda_finger_joint2" joint1="panda_finger_joint2" '
            'joint2="panda_finger_joint1" polycoef="0.0 1.0 0.0 0.0 0.0"') in path.read_text()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ModelWarning)
        robot = load_mjcf(path, inertia_check='warn')
    assert robot.model.joint_names == panda.joint_names
    np.testing.assert_allclose(robot.actuation.armature, terms.armature, rtol=1e-15)
    np.testing.assert_allclose(robot.actuation.viscous, terms.viscous, rtol=1e-15)
    q = rng.uniform(-1, 1, panda.nq)
    v, a = rng.normal(size=(2, panda.nv))
    expected = panda.rnea(q, v, a)
    assert np.abs(robot.model.rnea(q, v, a) - expected).max() < \
        TOLERANCE * max(1.0, np.abs(expected).max())


def test_what_mjcf_cannot_carry_is_refused_by_joint():
    ur5 = RobotModel.from_urdf_file(UR5)
    viscous = np.zeros(ur5.nv)
    viscous[2] = -0.5
    negative = dataclasses.replace(Actuation.zeros(ur5), viscous=viscous)
    with pytest.raises(MJCFError) as caught:
        mjcf_out.mjcf_text(ur5, negative)
    assert str(caught.value) == ("joint 'elbow_joint': viscous -0.5 < 0, MuJoCo's damping "
                                 'must be >= 0')
