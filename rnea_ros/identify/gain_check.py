"""
``rnea_identify --effort current``: each fitted effort gain checked against the validation data.

The anchor (``current``) fits the gains, but an anchor can be wrong: the URDF's rigid bodies
miss a tool, and every gain leans on them. So, when there are validation data (``--holdout``
above 0 or ``--validate``), the identification runs twice: with the fitted gains and with
every gain 1 (the effort as given: the driver's constants when the effort is recorded in the
driver's torque units). A determined gain is kept only if, with it, the identified model
predicts its joint's validation effort better: its validation RMS lower than with gain 1 by
at least ``MARGIN`` of it. Otherwise the gain is **not determined by the validation**: the
joint keeps gain 1, with a warning line giving both RMS. If some gain was so demoted, the
identification runs once more with the final gains: the model reported is the one fitted with
the gains written. A gain also moves the parameters its joint shares with others (a wrist's
gain, the wrist's mass in the shoulder's torque): if with the final gains the model predicts
any joint's validation effort worse than with gain 1 by more than ``MARGIN``, no gain is
kept. If every determined gain was demoted, the run with gain 1 is the result: the driver's
constants are kept, the identification stands, and the warnings say why.

What is compared: the model's prediction and the measured effort, in the effort's own units.
A measured torque is gain x effort - bias, so each run's torque residual is in its own scale:
with gain k the residual k e - W beta is k times the effort's, and a smaller gain alone would
look better. Divided by the gain, (k e - W beta) / k = e - W beta / k is how far the model,
turned into effort by its gain, is from the effort the arm reported, the same data for either
gain. The RMS is over the validation rows the fit models (``validation_moving``: without a
joint's rows where it is nearly at rest, its friction stiction there). A joint without such
rows cannot show its gain better: it keeps gain 1 too.

The validation sees what the data tell apart. A gain whose effect the parameters can take
(a scale of a pendulum's own parameters, or of a joint's friction and armature alone) predicts
the validation as well as gain 1: the validation does not favour it, and it is not kept. The
validation cannot confirm a common scale of all the gains: only an anchor can.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

MARGIN = 0.02  # a fitted gain must lower its joint's validation RMS by 2 % of it to be kept
SET = 'validation_moving'  # the rows compared (``pipeline``'s RMS of the identified model)


def check(gains, names, fit_with):
    """
    Check ``gains`` (``current.GainFit``) against the validation data (module docstring).

    ``fit_with(k)``: the identification (``pipeline._fit_robot``) with the efforts times the
    gains ``k``. Return (the gains with the demoted ones at 1 and the warnings, the
    identification with those gains).
    """
    run = fit_with(gains.gains)
    if run.validation_count == 0:
        return replace(gains, warnings=gains.warnings + [
            'the effort gains are not checked against validation data (--holdout 0 and no '
            '--validate): the identified model may predict worse than with gain 1']), run
    ones = fit_with(np.ones_like(gains.gains))
    with np.errstate(invalid='ignore', divide='ignore'):
        fitted = run.rms['identified'][SET] / gains.gains  # in the effort's units
    unit = ones.rms['identified'][SET]
    kept = gains.determined & (fitted <= (1.0 - MARGIN) * unit)  # NaN: not kept
    demoted = gains.determined & ~kept
    reasons = list(gains.reasons)
    warnings = list(gains.warnings)

    def demote(j: int, why: str) -> None:
        reasons[j] = why
        warnings.append(f'the effort gain of {names[j]} is {why}; it keeps gain 1 (the effort '
                        'as given)')
    for j in np.flatnonzero(demoted):
        if not np.isfinite(fitted[j]) or not np.isfinite(unit[j]):
            why = ('not determined by the validation: the joint does not move in the '
                   'validation data (no row to compare with gain 1)')
        else:
            why = (f'not determined by the validation: the identified model predicts its '
                   f'validation effort with RMS {fitted[j]:.4g} with the fitted gain '
                   f'{gains.gains[j]:.4g} and {unit[j]:.4g} with gain 1 (in units of the '
                   f'effort; the fitted gain must lower it by {100 * MARGIN:g} %)')
        demote(j, why)
    final = np.where(demoted, 1.0, gains.gains)
    last = run if not demoted.any() else fit_with(final) if kept.any() else ones
    with np.errstate(invalid='ignore', divide='ignore'):
        after = last.rms['identified'][SET] / final
    worse = np.flatnonzero(kept.any() & (after > (1.0 + MARGIN) * unit))
    if worse.size:  # the kept gains, through the parameters, predict another joint worse
        said = ', '.join(f'{names[j]} (RMS {after[j]:.4g} against {unit[j]:.4g} with gain 1)'
                         for j in worse)
        why = ('not determined by the validation: with the gains that validate on their own '
               f'joints the identified model predicts the validation effort of {said} worse '
               f'by more than {100 * MARGIN:g} %')
        for j in np.flatnonzero(kept):
            demote(j, why)
        demoted, kept, final, last = demoted | kept, np.zeros_like(kept), np.ones_like(final), \
            ones
    if demoted.any() and not kept.any():
        warnings.append('no effort gain validates better than gain 1: every joint keeps gain 1 '
                        "(the effort as given, the driver's constants when it is recorded in "
                        "the driver's torque units)")
    return replace(gains, gains=final, determined=kept, reasons=reasons, warnings=warnings,
                   validation=np.stack([fitted, unit])), last
