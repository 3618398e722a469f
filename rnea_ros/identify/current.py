"""
``rnea_identify --effort current``: each joint's effort gain, identified with the robot.

An arm that reports motor current gives per joint an effort e_j proportional to its torque:
torque = k_j e_j - b_j (``Actuation.effort_gain`` and ``effort_bias``, units per unit of the
effort, e.g. N m per A). The robot's torque is linear in its base parameters and joint terms
x (``fit``: the rows W_j of joint j), so k_j e_j = W_j x (the offset column takes the bias):
linear and homogeneous in (x, k). Scaled together by any s, x and the gains fit every sample as
well: the data give the gains only up to a common scale, and something must anchor it.

The anchor is a payload of known mass m [kg] on a link (``--anchor-payload LINK=KG``), attached
while the anchor bags were recorded (``--anchor-bags``): in their samples the link's body has
the payload's parameters added, the mass known, its first moment and rotational inertia (9
numbers, in the link frame about its origin: ``dynamics.payload.link_parameters``) unknown::

    W_j x + P_j phi' - k_j e_j = -m p_j      (anchor samples; P, p zero in the others)

with P the payload's columns (``dynamics.payload.payload_block``) but its mass column p. Or
(``--anchor-prior W``, instead) the URDF's rigid bodies fix the scale: the least squares
subject to the base inertial parameters being the URDF's (a KKT system), which leaves per
joint its gain and joint terms. The gains then lean on the URDF's masses, as right as they
are (a tool the URDF misses biases them): with the URDF's torques within a fraction W, each
gain is uncertain by W of itself, added to its standard deviation. (A looser anchor, one
scale per set of joints fixed by the URDF's parameters in the prior metric, was tried: on
short real logs the scale went into parameters the data barely excite, and every gain to
zero.) Either is solved as the identification's weighted least squares
(``fit.weighted_fit``: each joint's rows divided by its noise, on the same low-passed rows
the identification uses), the gains' standard deviations from the residuals correlated in
time as the base parameters' are (``covariance``, Newey-West; of the constrained fit, with
its KKT inverse).

A gain is not determined (its joint keeps gain 1, the effort as given, with a warning) when

- its joint has no rows (held still or no effort in the training data);
- the anchor does not reach it: the payload's mass loads no joint whose rows share a
  parameter with this joint's, directly or through other joints, nor do they share one the
  prior holds (the rank test: each set of joints so connected has its own scale, fixed only by
  an anchor on one of them);
- or the anchor reaches it too weakly: the gain is not ``DETERMINED`` standard deviations
  away from zero, or outside the bounds of ``Actuation.effort_gain``. Among the reasons: the
  payload's unknown centre of mass and inertia take the torque of its mass wherever the
  joints only turn its link about its origin (a payload on the link of a single joint: its
  mass and first moment give the same torques); its mass shows where they move that origin.

No determined gain at all is an ``InputError`` (exit 2): nothing can be fitted. A determined
gain is then checked against the validation data (``gain_check``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from rnea_ros.dynamics.actuation import MAX_EFFORT_GAIN, MIN_EFFORT_GAIN
from rnea_ros.dynamics.payload import check_payload, moving_mass, Payload, payload_block
from rnea_ros.errors import InputError
from rnea_ros.identify import base as base_params
from rnea_ros.identify import covariance, fit

EFFORTS = ('torque', 'current')
MIN_PRIOR, MAX_PRIOR = 0.0, 1.0  # --anchor-prior: a fraction of the URDF's torques
DETERMINED = 3.0  # standard deviations from zero: a gain closer is not determined
CHUNK = 20_000
FREE = 9  # the payload's parameters but its mass: first moment (3), rotational inertia (6)


@dataclass(frozen=True)
class Anchor:
    """
    What fixes the gains' scale (module docstring): a payload or the URDF's parameters.

    A payload of known ``mass`` [kg] on ``link``, attached while ``bags`` were recorded (link
    None: none); or ``prior``: the URDF's base inertial parameters taken as right, its torques
    within this fraction (None: none).
    """

    link: str | None = None
    mass: float = 0.0
    bags: tuple[str, ...] = ()
    prior: float | None = None

    def __str__(self) -> str:
        said = [f'{self.mass:g} kg on {self.link} in the anchor bags'] if self.link else []
        if self.prior is not None:
            said.append(f"the URDF's inertial parameters, its torques within "
                        f'{self.prior:g} of themselves')
        return ' and '.join(said)


@dataclass
class GainFit:
    """The effort gains (nv,), their standard deviations and which of them are determined."""

    gains: np.ndarray  # 1 where not determined
    fitted: np.ndarray  # the least-squares gains, determined or not
    std: np.ndarray
    determined: np.ndarray
    sigma: np.ndarray  # the joints' noise [N m or N]
    samples: int
    anchor: Anchor
    warnings: list[str] = field(default_factory=list)
    reasons: list[str | None] = field(default_factory=list)  # why not determined, per joint
    # ``gain_check``: the validation RMS per joint in the effort's units with the fitted gains
    # (row 0) and with gain 1 (row 1); None: not checked (no validation data).
    validation: np.ndarray | None = None


def check_options(effort: str, anchor_payload: str | None, anchor_bags,
                  anchor_prior: float | None = None) -> None:
    """Refuse a combination of ``--effort`` and the anchor options that cannot be fitted."""
    if effort not in EFFORTS:
        raise InputError(f'--effort must be one of {EFFORTS}, got {effort!r}')
    if effort == 'torque' and (anchor_payload is not None or anchor_bags
                               or anchor_prior is not None):
        raise InputError('--anchor-payload, --anchor-bags and --anchor-prior anchor the effort '
                         'gains of --effort current: with --effort torque there is no gain to '
                         'fit')
    if anchor_prior is not None and anchor_payload is not None:
        raise InputError('--anchor-prior and --anchor-payload each fix the scale of the gains: '
                         'give one')
    if (anchor_payload is None) != (not anchor_bags):
        raise InputError('--anchor-payload LINK=KG and --anchor-bags BAG... go together: the '
                         'payload of known mass and the bags recorded with it')
    if effort == 'current' and anchor_payload is None and anchor_prior is None:
        raise InputError('--effort current needs --anchor-payload LINK=KG and --anchor-bags '
                         'BAG..., or --anchor-prior W: without a known mass the gains and the '
                         'parameters are known only up to a scale')
    if anchor_prior is not None and not (np.isfinite(anchor_prior)
                                         and MIN_PRIOR <= anchor_prior <= MAX_PRIOR):
        raise InputError(f'--anchor-prior must be a number from {MIN_PRIOR:g} to {MAX_PRIOR:g} '
                         f"(a fraction of the URDF's torques), got {anchor_prior}")


def parse_anchor(text: str | None, bags, model, prior: float | None = None) -> Anchor:
    """Return the ``Anchor`` of the options (``check_options`` first); InputError names them."""
    if text is None:
        return Anchor(prior=prior)
    link, equals, number = text.rpartition('=')
    try:
        mass = float(number) if equals and link else float('nan')
    except ValueError:
        mass = float('nan')
    if not (np.isfinite(mass) and mass > 0):
        raise InputError(f'--anchor-payload: expected LINK=KG, a link and the known mass in kg '
                         f'(> 0) of the payload fixed to it, got {text!r}')
    try:
        payload_block(model.tree, link)
        check_payload(Payload(link, mass, (0.0, 0.0, 0.0), (0.0,) * 6), model.link_names,
                      moving_mass(model.tree))
    except InputError as exc:
        raise InputError(str(exc).replace('payload.link', '--anchor-payload', 1)
                         .replace('payload.mass', '--anchor-payload mass', 1)) from None
    return Anchor(link, mass, tuple(str(bag) for bag in bags), prior)


def scaled(sets, gains: np.ndarray) -> list:
    """Return ``sets`` (``samples.Samples``) with each joint's effort times its gain."""
    return [replace(data, effort=data.effort * gains) for data in sets]


class _Layout:
    """Where the unknowns sit: base inertial, payload (``FREE``), per joint its terms and -e."""

    def __init__(self, model, lay, base, anchor: Anchor):
        self.nv, self.k = model.nv, len(lay.joint_terms)
        self.r = base.size - self.nv * self.k
        self.block, self.transform = payload_block(model.tree, anchor.link) \
            if anchor.link else (0, None)
        self.mass = anchor.mass
        self.n_inertial = lay.n_inertial
        inertial_columns = base.columns[base.columns < lay.n_inertial]
        q, v, a = base_params.random_states(model)
        sources, positions, counts = fit.rows_of(model.regressor_batch(q, v, a),
                                                 inertial_columns)
        width = sources.shape[1] + FREE
        self.sources = np.zeros((self.nv, width), dtype=np.int64)
        self.positions = np.zeros_like(self.sources)
        for j in range(self.nv):
            c = counts[j]
            self.sources[j, :c + FREE] = np.concatenate(
                [sources[j, :c], lay.n_inertial + np.arange(FREE)])
            self.positions[j, :c + FREE] = np.concatenate([positions[j, :c],
                                                           self.r + np.arange(FREE)])
        self.counts = counts + FREE
        self.shared = self.r + FREE  # the columns rows of several joints share
        self.size = self.shared + self.nv * (self.k + 1)

    def equations(self) -> fit.NormalEquations:
        return fit.NormalEquations(self.nv, self.size, self.sources, self.positions,
                                   self.counts)

    def gain_index(self, j: int) -> int:
        return self.shared + j * (self.k + 1) + self.k


def _sweep(model, lay, layout: _Layout, sets, anchored: list[bool], consumers, threads):
    """Feed each chunk's [regressor, payload], [joint terms, -e] and right side to consumers."""
    columns = slice(10 * layout.block, 10 * layout.block + 10)
    with fit.one_blas_thread():
        for data, attached in zip(sets, anchored):
            for start in range(0, len(data), CHUNK):
                stop = min(start + CHUNK, len(data))
                q, v, a = (x[start:stop] for x in (data.q, data.v, data.a))
                Y = model.regressor_batch(q, v, a, threads=threads)
                effort = data.effort[start:stop]
                if attached:
                    payload = Y[:, :, columns] @ layout.transform
                    rhs = -layout.mass * payload[:, :, 0]
                    payload = payload[:, :, 1:]
                else:
                    payload = np.zeros(Y.shape[:2] + (FREE,))
                    rhs = np.zeros(effort.shape)
                measured = np.isfinite(effort)
                rhs = np.where(measured, rhs, np.nan)  # no row where no effort
                regressor = np.concatenate([Y, payload], axis=2)
                joint = np.concatenate([lay.joint_features(v, a),
                                        -np.where(measured, effort, 0.0)[:, :, None]], axis=2)
                for consumer, transform in consumers:
                    consumer.add(regressor, joint, rhs if transform is None else
                                 transform.leave_out(rhs, v), transform)


def fit_gains(model, lay, base, train, anchor_sets, anchor: Anchor, low_pass,
              threads=None, prior=None) -> GainFit:
    """
    Fit the gains on ``train`` and ``anchor_sets`` (module docstring).

    ``prior``: (theta of the URDF, prior scale) of ``parameters.prior``, for ``anchor.prior``.
    """
    layout = _Layout(model, lay, base, anchor)
    sets = list(train) + list(anchor_sets)
    attached = [False] * len(train) + [True] * len(anchor_sets)
    raw, filtered = layout.equations(), layout.equations()
    _sweep(model, lay, layout, sets, attached, [(raw, None), (filtered, low_pass)], threads)
    n = sum(len(data) for data in sets)
    uses = np.einsum('jkk->jk', filtered.gram)[:, :layout.shared] > 0.0
    c, d_c, relative = _urdf_constraints(layout, base, anchor, prior, uses)
    x, sigma, H, inverse = _weighted_fit(filtered, raw, c, d_c)
    scores = covariance.Scores(filtered, x, sigma, n)
    _sweep(model, lay, layout, sets, attached, [(scores, low_pass)], threads)
    std_all = scores.result(H, inverse).std
    index = [layout.gain_index(j) for j in range(layout.nv)]
    fitted = x[index]
    std = np.sqrt(std_all[index] ** 2 + (relative * fitted) ** 2)  # the URDF's uncertainty
    reasons = _undetermined(lay, layout, filtered, fitted, std, c)
    determined = np.array([reason is None for reason in reasons])
    names = lay.joint_names
    where = str(anchor)
    if not determined.any():
        raise InputError('--effort current: no effort gain is determined by the anchor '
                         f'({where}): ' + '; '.join(f'{name}: {reason}' for name, reason
                                                    in zip(names, reasons)))
    warnings = [f'the effort gain of {name} is not determined by the anchor ({where}): '
                f'{reason}; it keeps gain 1 (the effort as given)'
                for name, reason in zip(names, reasons) if reason is not None]
    gains = np.where(determined, fitted, 1.0)
    reasons = [None if reason is None else f'not determined by the anchor: {reason}'
               for reason in reasons]
    return GainFit(gains, fitted, std, determined, sigma, n, anchor, warnings, reasons)


def prior_warnings(gains: GainFit, names) -> list[str]:
    """
    Say what the gains anchored by the URDF (``--anchor-prior``) rest on; [] for a payload.

    Their scale is the URDF's masses: a mass it misses (a tool, a cable) or a light link it
    has wrong (a wrist's, whose torques are small) goes into the gains beyond their standard
    deviations, and the validation cannot tell (the same URDF predicts it). Each determined
    gain is named (``names``: the joints) with its standard deviation.
    """
    if gains.anchor.prior is None or not gains.determined.any():
        return []
    named = ', '.join(f'{name} {gain:.4g} +- {std:.2g}' for name, gain, std, determined in zip(
        names, gains.gains, gains.std, gains.determined) if determined)
    return [f'the effort gains anchored by the URDF (--anchor-prior {gains.anchor.prior:g}) are '
            f'as right as its masses: {named}; a mass the URDF misses (a tool, a cable) or has '
            'wrong on a light link (the wrist, where the torques are small) biases them beyond '
            'these standard deviations, unseen by the validation: a payload of known mass '
            '(--anchor-payload) measures them']


def _urdf_constraints(layout: _Layout, base, anchor: Anchor, prior, uses: np.ndarray):
    """
    Return (C, d, relative std) of the prior anchor, or (None, None, 0).

    C x = d: each base inertial parameter some joint's rows see is the URDF's; the gains are
    then as uncertain as the URDF's torques: relative std ``anchor.prior``.
    """
    if anchor.prior is None:
        return None, None, 0.0
    theta, _ = prior
    seen = np.flatnonzero(uses[:, :layout.r].any(axis=0))
    C = np.zeros((seen.size, layout.size))
    C[np.arange(seen.size), seen] = 1.0
    return C, (base.E @ theta)[seen], anchor.prior


def _solve(H: np.ndarray, g: np.ndarray, C: np.ndarray | None, d_c: np.ndarray | None):
    """(x, the inverse for the covariance): H x = g, or subject to C x = d_c (KKT)."""
    if C is None:
        return fit.solve(H, g), None
    d = np.sqrt(np.diag(H))
    d[d == 0.0] = 1.0
    n, m = H.shape[0], C.shape[0]
    kkt = np.zeros((n + m, n + m))
    kkt[:n, :n] = H / np.outer(d, d)
    kkt[:n, n:] = (C / d).T
    kkt[n:, :n] = C / d
    inverse = np.linalg.pinv(kkt, rcond=fit.RCOND, hermitian=True)
    x = (inverse @ np.concatenate([g / d, d_c]))[:n] / d
    return x, inverse[:n, :n] / np.outer(d, d)


def _weighted_fit(filtered, raw, c, d_c):
    """``fit.weighted_fit``, subject to c x = d_c if given: (x, sigma, H, inverse)."""
    x0, _ = _solve(filtered.gram.sum(axis=0), filtered.moment.sum(axis=0), c, d_c)
    sigma = np.sqrt(raw.rss(x0) / np.maximum(raw.joint_count, 1))
    sigma = np.maximum(sigma, 1e-9 * max(float(sigma.max()), 1e-12))
    H, g = filtered.weighted(sigma)
    x, inverse = _solve(H, g, c, d_c)
    return x, sigma, H, inverse


def _undetermined(lay, layout: _Layout, equations, fitted, std,
                  c: np.ndarray | None) -> list[str | None]:
    """Per joint None (its gain determined) or why not (module docstring)."""
    nv, shared = layout.nv, layout.shared
    diagonal = np.einsum('jkk->jk', equations.gram)
    has_rows = equations.joint_count > 0
    uses = diagonal[:, :shared] > 0.0  # (nv, shared): the shared parameters each row sees
    energy = equations.energy  # the anchor's torque per joint, squared and summed
    reached = has_rows & ((energy > 1e-12 * max(float(energy.max()), 1e-300))
                          | (uses & (c is not None and (c[:, :shared] != 0).any(axis=0)))
                          .any(axis=1))
    while True:  # joints sharing a parameter with a reached one share its scale
        seen = uses[reached].any(axis=0)
        grown = reached | (has_rows & (uses & seen).any(axis=1))
        if (grown == reached).all():
            break
        reached = grown
    reasons: list[str | None] = []
    for j in range(nv):
        if not has_rows[j]:
            reasons.append('its joint has no rows to fit (held still, or no effort)')
        elif not reached[j]:
            reasons.append('the anchor loads no joint whose torque shares a parameter with '
                           "this joint's, so its gain and the parameters in its torque are "
                           'known only up to a common scale')
        elif not (np.isfinite(std[j]) and fitted[j] > DETERMINED * std[j]
                  and MIN_EFFORT_GAIN <= fitted[j] <= MAX_EFFORT_GAIN):
            reasons.append(f'the fit gives {fitted[j]:.4g} +- {std[j]:.2g}, not '
                           f'{DETERMINED:g} standard deviations from zero within '
                           f'[{MIN_EFFORT_GAIN:g}, {MAX_EFFORT_GAIN:g}]: ' + (
                               "the URDF's torques on it are too small against its effort"
                               if c is not None else
                               'the payload mass loads it too little, or its unknown centre of '
                               'mass and inertia take that torque (its mass shows where the '
                               'joints move the origin of its link)'))
        else:
            reasons.append(None)
    return reasons
