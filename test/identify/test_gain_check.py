"""
``identify.gain_check.check`` on stand-in identifications: which fitted gains it keeps.

``fit_with(k)`` stands for the identification with the efforts times the gains ``k``: its
validation RMS per joint (in torque units, ``validation_moving`` of the identified model) is
given per set of gains, so each rule of the check is seen on its own.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rnea_ros.identify.current import Anchor, GainFit
from rnea_ros.identify.gain_check import check, MARGIN

NAMES = ('wrist', 'shoulder')


def _gains(fitted, determined=(True, True)):
    """Return a ``GainFit`` of these least-squares gains; not ``determined`` ones at 1."""
    fitted, determined = np.asarray(fitted, dtype=float), np.asarray(determined)
    reasons = [None if ok else 'not determined by the anchor: the test says so'
               for ok in determined]
    return GainFit(np.where(determined, fitted, 1.0), fitted, 0.01 * fitted, determined,
                   np.ones(fitted.size), 100, Anchor(prior=0.05), [], reasons)


def _fits(table):
    """``fit_with`` answering the RMS ``table[tuple(k)]``; the gains asked are in ``asked``."""
    asked = []

    def fit_with(k):
        asked.append(tuple(float(x) for x in k))
        rms = np.asarray(table[asked[-1]], dtype=float)
        return SimpleNamespace(rms={'identified': {'validation_moving': rms}},
                               validation_count=50, name=asked[-1])
    return fit_with, asked


def test_a_gain_that_validates_is_kept_and_its_run_reported():
    fit_with, asked = _fits({(0.5, 1.0): [0.5 * 0.8, 2.0], (1.0, 1.0): [1.0, 2.0]})
    gains, run = check(_gains([0.5, 0.9], (True, False)), NAMES, fit_with)
    assert gains.gains.tolist() == [0.5, 1.0] and gains.warnings == []
    assert gains.reasons == [None, 'not determined by the anchor: the test says so']
    assert gains.validation.ravel() == pytest.approx([0.8, 2.0, 1.0, 2.0], rel=1e-12)
    assert run.name == (0.5, 1.0) and asked == [(0.5, 1.0), (1.0, 1.0)]


def test_a_gain_that_makes_another_joint_worse_keeps_gain_1_and_the_gain_1_run():
    """The wrist's gain validates on the wrist, but the shoulder's validation gets worse."""
    worse = 2.0 * (1 + MARGIN) * 1.01
    fit_with, asked = _fits({(0.5, 1.0): [0.5 * 0.8, worse], (1.0, 1.0): [1.0, 2.0]})
    gains, run = check(_gains([0.5, 0.9], (True, False)), NAMES, fit_with)
    assert gains.gains.tolist() == [1.0, 1.0] and not gains.determined.any()
    assert run.name == (1.0, 1.0) and asked == [(0.5, 1.0), (1.0, 1.0)]
    assert gains.warnings == [
        'the effort gain of wrist is not determined by the validation: with the gains that '
        'validate on their own joints the identified model predicts the validation effort of '
        f'shoulder (RMS {worse:.4g} against 2 with gain 1) worse by more than 2 %; it keeps '
        'gain 1 (the effort as given)',
        'no effort gain validates better than gain 1: every joint keeps gain 1 (the effort as '
        "given, the driver's constants when it is recorded in the driver's torque units)"]


def test_after_a_demotion_the_model_is_fitted_again_with_the_final_gains():
    fit_with, asked = _fits({(0.5, 1.2): [0.4, 2.4], (1.0, 1.0): [1.0, 2.0],
                             (0.5, 1.0): [0.4, 2.0]})
    gains, run = check(_gains([0.5, 1.2]), NAMES, fit_with)
    assert gains.gains.tolist() == [0.5, 1.0] and gains.determined.tolist() == [True, False]
    assert run.name == (0.5, 1.0) and asked[-1] == (0.5, 1.0)
    assert gains.reasons[1].startswith('not determined by the validation: the identified model '
                                       'predicts its validation effort with RMS 2 with the '
                                       'fitted gain 1.2 and 2 with gain 1')


def test_a_joint_still_in_the_validation_data_is_not_determined_and_says_so_without_nan():
    """No moving validation row of the wrist: its RMS is NaN; the warning says why instead."""
    fit_with, _ = _fits({(0.5, 1.0): [np.nan, 2.0], (1.0, 1.0): [np.nan, 2.0]})
    gains, _ = check(_gains([0.5, 0.9], (True, False)), NAMES, fit_with)
    assert gains.gains.tolist() == [1.0, 1.0] and not gains.determined.any()
    assert gains.warnings[0] == (
        'the effort gain of wrist is not determined by the validation: the joint does not move '
        'in the validation data (no row to compare with gain 1); it keeps gain 1 (the effort as '
        'given)')
    assert not any('nan' in warning for warning in gains.warnings)
