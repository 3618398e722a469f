"""
Estimates that are right or say they are not, on the exact URDF (``sine_log``).

The torques of ``sine_log`` come from the URDF itself, so the truth of every base parameter is
known: E theta_urdf with the generator's friction. On such logs (stamp jitter, encoder steps,
velocity noise: accelerations 0.07 rad/s^2 off) the least-squares base parameters must sit
within 3 of their own standard deviations of the truth, and where the data are silent the
links stay at the URDF.
"""
from __future__ import annotations

import json

from harness import sine_log
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.identify import pipeline, trust
from rnea_ros.identify.cli import main

SEEDS = (1, 2, 3)
DURATION = 20.0


@pytest.fixture(scope='module')
def ur5() -> RobotModel:
    return RobotModel.from_urdf_file(sine_log.UR5)


@pytest.fixture(scope='module', params=SEEDS)
def result(request, tmp_path_factory, ur5):
    log = sine_log.sine_log(ur5, DURATION, request.param)
    bag = sine_log.sine_bag(tmp_path_factory.mktemp('sines') / 'bag', log)
    return pipeline.identify([bag], sine_log.UR5)


def truth(result) -> np.ndarray:
    """Return the true base parameters: the URDF's, with the generator's friction."""
    lay = result.layout
    theta = result.theta_urdf.copy()
    for j in range(len(lay.joint_names)):
        theta[lay.joint_index(j, 'coulomb')] = sine_log.COULOMB[j]
        theta[lay.joint_index(j, 'viscous')] = sine_log.VISCOUS[j]
    return result.base.E @ theta


def test_least_squares_base_parameters_within_3_std_of_the_truth(result):
    fit = result.fit
    z = (fit.beta - truth(result)) / fit.std
    worst = int(np.argmax(np.abs(z)))
    assert np.abs(z).max() < 3.0, (result.base.names[worst], z[worst])
    # The standard deviations are honest, neither inflated nor too small: the z scatter as
    # N(0, 1) (58 of them: RMS within [0.7, 1.3]).
    assert 0.7 < np.sqrt(np.mean(z ** 2)) < 1.3
    assert fit.cutoff is not None and fit.correlation_time > 1.0


def test_exact_urdf_keeps_total_mass_and_links_within_their_uncertainty(result):
    lay = result.layout
    phi_urdf = result.theta_urdf[:lay.n_inertial].reshape(-1, 10)
    phi = result.theta[:lay.n_inertial].reshape(-1, 10)
    assert phi[:, 0].sum() == pytest.approx(phi_urdf[:, 0].sum(), rel=0.01)
    mass_std, com_std = result.uncertainty
    assert np.all(np.abs(phi[:, 0] - phi_urdf[:, 0]) <= 3 * mass_std)
    moved = np.abs(phi[:, 1:4] / phi[:, :1] - phi_urdf[:, 1:4] / phi_urdf[:, :1])
    assert np.all(moved <= 3 * com_std), moved / com_std
    assert not any('depart' in w for w in result.warnings)


def test_departure_warning_line():
    names = ('a.m', 'b.mc_x', 'c.Izz')
    lines = trust.departure_warnings(names, np.array([1.0, 2.0, 3.0]),
                                     np.array([0.1, 0.1, np.inf]), np.array([1.05, 1.5, 9.0]))
    assert lines == ['the physically consistent parameters depart from the least-squares base '
                     'parameters by more than 3 standard deviations in 1 of 3: b.mc_x 2 ± 0.1 '
                     '-> 1.5 (-5.0 σ); the data ask for something no rigid body gives (biased '
                     'torques or accelerations, an unmodelled effect): do not trust the changed '
                     "links (--inertial none keeps the URDF's)"]


def test_unphysical_torques_warn_in_the_output_and_the_reports(tmp_path, capsys, ur5):
    # The torques of a wrist with a negative mass: no rigid body gives them, the SDP must
    # depart from the least squares, and says so.
    phi = ur5.inertial_parameters().copy()
    phi[-1] *= -4.0
    log = sine_log.sine_log(ur5, DURATION, 1, true_model=ur5.with_inertial_parameters(phi))
    bag = sine_log.sine_bag(tmp_path / 'bag', log)
    code = main([str(bag), '--urdf', str(sine_log.UR5), '--output', str(tmp_path / 'out'),
                 '--no-plots'])
    err = capsys.readouterr().err
    assert code == 0, err
    prefix = ('rnea_identify: warning: the physically consistent parameters depart from the '
              'least-squares base parameters by more than 3 standard deviations in ')
    line = next(line for line in err.splitlines() if line.startswith(prefix))
    assert 'wrist_3_link' in line
    summary = (tmp_path / 'out' / 'identification.md').read_text()
    assert line.removeprefix('rnea_identify: warning: ') in summary
    assert ('| base parameter | least squares | std | white std | relative std | final | '
            'departure | absorbs |') in summary
    report = json.loads((tmp_path / 'out' / 'identification.json').read_text())
    assert line.removeprefix('rnea_identify: warning: ') in report['warnings']
    wrist = report['links']['wrist_3_link']
    assert wrist['mass_std'] > 0 and len(wrist['com_std']) == 3


def test_validation_warning_line():
    sigma, counts = np.array([1.0, 0.5]), np.array([100, 100])
    rms = {'identified': {'validation': [1.0, 0.6]},
           'urdf+friction': {'validation': [1.0, 0.55]}}
    assert trust.validation_warnings(rms, sigma, counts) == [
        'the identified model does not predict the validation data better than the URDF with '
        'fitted joint terms (weighted mean square 1.22 against 1.105): its inertias gain '
        "nothing over the URDF's (--inertial none keeps them)"]
    rms['identified']['validation'] = [0.9, 0.55]
    assert trust.validation_warnings(rms, sigma, counts) == []
