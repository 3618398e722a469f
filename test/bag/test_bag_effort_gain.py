"""
``effort_gain.<joint>`` in rnea_bag's residuals, the library's observer and the node's.

An effort reported as a motor current, (torque + bias) / gain: with the actuation model's gain and
bias declared, the residuals are those of the torque itself; without, the current taken as a
torque leaves most of the torque in them.
"""
from __future__ import annotations

import json
from types import SimpleNamespace

from harness.bagdata import BAG_START, PANDA, panda_bag, sample_times, trajectory
from harness.current_sensor import as_current, PARAMETERS
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.bag.cli import main as rnea_bag
from rnea_ros.control.core import ControlCore
from rnea_ros.control.settings import Settings
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.observer import MomentumObserver
from rnea_ros.params.actuation_file import actuation_yaml


@pytest.fixture(scope='module')
def panda() -> RobotModel:
    return RobotModel.from_urdf_file(PANDA)


def test_rnea_bag_residuals_of_a_current_based_effort(panda, tmp_path, capsys):
    times = sample_times(1500, seed=3)
    t = (times - BAG_START) * 1e-9
    q, v, a = trajectory(t), trajectory(t, 1), trajectory(t, 2)
    noise = np.random.default_rng(7).normal(0.0, 0.05, (t.size, panda.nv))
    effort = as_current(panda, panda.rnea_batch(q, v, a) + noise)
    bag = panda_bag(tmp_path / 'bag', times, desired=True, effort=effort)
    path = tmp_path / 'actuation.yaml'
    path.write_text(actuation_yaml(Actuation.from_parameters(panda, PARAMETERS)))
    rms = {}
    for name, extra in (('with', ['--actuation', str(path)]), ('without', [])):
        out = tmp_path / name
        code = rnea_bag([str(bag), '--output', str(out), '--no-plots', '--urdf', str(PANDA),
                         *extra])
        assert code == 0, capsys.readouterr().err
        summary = json.loads((out / 'summary.json').read_text())
        rms[name] = {j['joint']: j['rms_residual'] for j in summary['joints']}
    for joint in ('panda_joint1', 'panda_joint2', 'panda_joint4'):
        assert rms['with'][joint] < 0.08, (joint, rms)  # the noise (0.05) and differentiation
        assert rms['without'][joint] > 1.0, (joint, rms)
    used = json.loads((tmp_path / 'with' / 'summary.json').read_text())['actuation']
    assert used['effort_gain_joints'] == ['panda_joint1', 'panda_joint2', 'panda_joint4']
    assert '- effort gain on `panda_joint1`, `panda_joint2`, `panda_joint4`' in \
        (tmp_path / 'with' / 'summary.md').read_text()


@pytest.mark.parametrize('measured_effort', ['link_side', 'motor'])
def test_the_observers_take_the_gain(panda, measured_effort):
    """The library's observer and the node's: r -> 0 with the gain declared."""
    t = np.arange(1000) * 1e-3
    q, v, a = trajectory(t), trajectory(t, 1), trajectory(t, 2)
    effort = as_current(panda, panda.rnea_batch(q, v, a))
    declared = Actuation.from_parameters(panda, PARAMETERS)
    settled = t >= 15 / 50.0
    r = MomentumObserver(panda, 50.0, measured_effort=measured_effort,
                         actuation=declared).run(t, q, v, effort)
    assert np.abs(r[settled]).max() < 1e-4
    r = MomentumObserver(panda, 50.0, measured_effort=measured_effort,
                         actuation=Actuation.zeros(panda)).run(t, q, v, effort)
    assert np.abs(r[settled]).max() > 1.0  # the current taken as a torque
    # The node: at rest the sensor reads (gravity + bias) / gain.
    q0, v0 = np.full(panda.nv, 0.1), np.zeros(panda.nv)
    current = as_current(panda, panda.gravity_torques(q0))
    # Undeclared, the current is taken as the torque: r = gravity - current (r is the torque
    # the model needs beyond the measured one).
    for parameters, expected in ((PARAMETERS, 0.0), ({}, panda.gravity_torques(q0) - current)):
        settings = Settings(observer=True, measured_effort=measured_effort,
                            actuation=parameters).validate()
        core = ControlCore(panda, settings)
        for k in range(400):  # 20 time constants of the gain 50 1/s
            core.on_joint_states(core.joint_names, q0, v0, current, k * 1e-3,
                                 SimpleNamespace(sec=0, nanosec=1_000_000 * k))
        np.testing.assert_allclose(core.observer.residual, expected, rtol=0, atol=1e-8)
