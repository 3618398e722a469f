"""
When not to trust an identified model: the warnings and the links' uncertainties.

- ``departure_warnings``: the physically consistent solution (``physical``) should reproduce
  the least-squares base parameters to within their standard deviations (``covariance``).
  Where it departs by more than ``DEPARTURE`` of them, the data ask for something no rigid body
  gives (a biased torque or acceleration, something the model lacks), and the SDP has
  changed the links to repair it where the data did not say: the warning names them.
- ``validation_warnings``: the identified model should predict the validation data better
  than the URDF with only its joint terms fitted (``urdf+friction``), in the weighted mean
  square sum_j N_j rms_j^2 / sigma_j^2; where it does not, its inertias bought nothing.
- ``link_uncertainty``: the standard deviation of each link's mass and centre of mass: the
  linearised posterior of the SDP's objective, Cov(theta) = (E^T A E + diag(1 / s^2))^-1
  (A: the SDP's data metric, s: the prior scales), so a link the data do
  not see has its prior's uncertainty.
"""
from __future__ import annotations

import numpy as np

DEPARTURE = 3.0  # standard deviations
SHOWN = 6  # departures named in the warning (the largest)


def departures(names, least_squares: np.ndarray, std: np.ndarray, final: np.ndarray):
    """Return (name, least squares, std, final, z) per base parameter beyond ``DEPARTURE``."""
    with np.errstate(divide='ignore', invalid='ignore'):
        z = np.where(std > 0, (final - least_squares) / std, 0.0)
    z = np.where(np.isfinite(z), z, 0.0)
    order = np.argsort(-np.abs(z), kind='stable')
    return [(names[k], float(least_squares[k]), float(std[k]), float(final[k]), float(z[k]))
            for k in order if abs(z[k]) > DEPARTURE]


def departure_warnings(names, least_squares, std, final) -> list[str]:
    """Return the warning line of the module docstring (none when nothing departs)."""
    found = departures(names, least_squares, std, final)
    if not found:
        return []
    shown = ', '.join(f'{name} {ls:.4g} ± {s:.2g} -> {f:.4g} ({z:+.1f} σ)'
                      for name, ls, s, f, z in found[:SHOWN])
    more = f' and {len(found) - SHOWN} more' if len(found) > SHOWN else ''
    return [f'the physically consistent parameters depart from the least-squares base '
            f'parameters by more than {DEPARTURE:g} standard deviations in {len(found)} of '
            f'{len(names)}: {shown}{more}; the data ask for something no rigid body gives '
            '(biased torques or accelerations, an unmodelled effect): do not trust the changed '
            "links (--inertial none keeps the URDF's)"]


def validation_warnings(rms: dict, sigma: np.ndarray, counts: np.ndarray) -> list[str]:
    """Warn when ``identified`` is no better than ``urdf+friction`` on validation data."""
    def weighted(model):
        values = np.asarray(rms[model]['validation'], dtype=np.float64)
        ok = np.isfinite(values) & (counts > 0)
        return float(np.sum(counts[ok] * values[ok] ** 2 / sigma[ok] ** 2) / max(
            counts[ok].sum(), 1))
    identified, friction = weighted('identified'), weighted('urdf+friction')
    if not counts.sum() or not identified >= friction:
        return []
    return [f'the identified model does not predict the validation data better than the URDF '
            f'with fitted joint terms (weighted mean square {identified:.4g} against '
            f"{friction:.4g}): its inertias gain nothing over the URDF's (--inertial none keeps "
            'them)']


def link_uncertainty(lay, base, information: np.ndarray, scale: np.ndarray,
                     theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the standard deviations (nb,) of the masses and (nb, 3) of the centres of mass."""
    nb = len(lay.body_links)
    with np.errstate(divide='ignore'):
        precision = base.E.T @ information @ base.E + np.diag(1.0 / scale ** 2)
    precision = np.where(np.isfinite(precision), precision, 0.0)
    covariance = np.linalg.pinv(precision, hermitian=True)
    mass_std = np.empty(nb)
    com_std = np.empty((nb, 3))
    for i in range(nb):
        m = theta[10 * i]
        block = covariance[10 * i:10 * i + 4, 10 * i:10 * i + 4]
        mass_std[i] = np.sqrt(max(block[0, 0], 0.0))
        com = theta[10 * i + 1:10 * i + 4] / m if m > 0 else np.zeros(3)
        for a in range(3):
            # c = h / m: dc = (dh - c dm) / m
            gradient = np.zeros(4)
            gradient[0], gradient[1 + a] = -com[a] / m, 1.0 / m
            com_std[i, a] = np.sqrt(max(gradient @ block @ gradient, 0.0)) if m > 0 else np.inf
    return mass_std, com_std
