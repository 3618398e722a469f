"""
Least squares on the base regressor, from normal equations accumulated in chunks.

The stacked regressor of a long log does not fit in memory (an hour at 1 kHz of a 7-DoF arm
is 3.6 M samples x 7 rows x ~80 base columns: 16 GB), so ``NormalEquations`` keeps per joint j
the Gram matrix G_j = W_j^T W_j, the moment h_j = W_j^T tau_j and the energy tau_j^T tau_j of
the rows of that joint, added chunk by chunk. Everything the fit and the report need follows:

- the residual sum of squares of any beta, per joint: tau^T tau - 2 beta^T h + beta^T G beta;
- the noise of each joint, sigma_j^2 = RSS_j(beta_0) / N from a first unweighted fit beta_0;
- the weighted fit: H = sum_j G_j / sigma_j^2, g = sum_j h_j / sigma_j^2, H beta = g, and the
  covariance of beta, H^-1 (torque noise independent between samples and joints);
- a fit of the joint terms alone with the inertial part held at the URDF's.

Solves are done on the column-scaled matrix (unit diagonal) with a pseudo-inverse
(``RCOND``): directions no data excite get zero, and a standard deviation of ``inf``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RCOND = 1e-12


class NormalEquations:
    """Per-joint normal equations of the base regressor W (rows: samples x joints)."""

    def __init__(self, nv: int, size: int):
        self.gram = np.zeros((nv, size, size))
        self.moment = np.zeros((nv, size))
        self.energy = np.zeros(nv)
        self.count = 0

    def add(self, inertial: np.ndarray, joint: np.ndarray, tau: np.ndarray) -> None:
        """
        Add samples to the sums.

        ``inertial``: the base regressor's inertial columns (n, nv, r_I); ``joint``: each
        joint's own term columns (n, nv, k) (zero on other rows, so not stored); ``tau``
        (n, nv). The joint blocks follow the inertial columns, k per joint.
        """
        r, k = inertial.shape[2], joint.shape[2]
        for j in range(tau.shape[1]):
            rows = np.ascontiguousarray(inertial[:, j, :])
            own = joint[:, j, :]
            block = slice(r + j * k, r + (j + 1) * k)
            cross = rows.T @ own
            self.gram[j, :r, :r] += rows.T @ rows
            self.gram[j, :r, block] += cross
            self.gram[j, block, :r] += cross.T
            self.gram[j, block, block] += own.T @ own
            self.moment[j, :r] += tau[:, j] @ rows
            self.moment[j, block] += tau[:, j] @ own
        self.energy += np.einsum('nj,nj->j', tau, tau)
        self.count += tau.shape[0]

    def rss(self, beta: np.ndarray) -> np.ndarray:
        """Residual sum of squares per joint of the prediction W beta (>= 0)."""
        value = self.energy - 2.0 * self.moment @ beta + np.einsum(
            'k,jkl,l->j', beta, self.gram, beta)
        return np.maximum(value, 0.0)

    def rms(self, beta: np.ndarray) -> np.ndarray:
        """RMS residual per joint (NaN without samples)."""
        if self.count == 0:
            return np.full(self.energy.shape, np.nan)
        return np.sqrt(self.rss(beta) / self.count)

    def weighted(self, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(H, g): the normal equations with each joint's rows divided by its ``sigma``."""
        w = 1.0 / sigma ** 2
        return np.einsum('j,jkl->kl', w, self.gram), w @ self.moment


def solve(H: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Minimum-norm solution of H x = g (H symmetric PSD), on the column-scaled system."""
    d = np.sqrt(np.diag(H))
    d[d == 0.0] = 1.0
    scaled = H / np.outer(d, d)
    return np.linalg.pinv(scaled, rcond=RCOND, hermitian=True) @ (g / d) / d


def covariance_diagonal(H: np.ndarray) -> np.ndarray:
    """diag(H^-1), inf for parameters in a direction the data do not excite."""
    d = np.sqrt(np.diag(H))
    seen = d > 0.0
    out = np.full(H.shape[0], np.inf)
    if not seen.any():
        return out
    scaled = H[np.ix_(seen, seen)] / np.outer(d[seen], d[seen])
    values, vectors = np.linalg.eigh(scaled)
    small = values <= RCOND * max(values.max(), 0.0)
    inverse = np.where(small, 0.0, 1.0 / np.where(small, 1.0, values))
    diagonal = (vectors ** 2) @ inverse
    blind = (vectors[:, small] ** 2).sum(axis=1) > 1e-6
    diagonal = np.where(blind, np.inf, diagonal)
    out[seen] = diagonal / d[seen] ** 2
    return out


def condition_number(H: np.ndarray) -> float:
    """Condition number of the (weighted) regressor with unit-norm columns: sqrt(cond(H))."""
    d = np.sqrt(np.diag(H))
    if np.any(d == 0.0):
        return float('inf')
    values = np.linalg.eigvalsh(H / np.outer(d, d))
    return float(np.sqrt(values.max() / values.min())) if values.min() > 0 else float('inf')


@dataclass(frozen=True)
class Fit:
    """The weighted least-squares fit: beta, its standard deviation, the joint noise sigma."""

    beta: np.ndarray
    std: np.ndarray
    sigma: np.ndarray
    H: np.ndarray
    g: np.ndarray
    condition: float


def weighted_fit(train: NormalEquations) -> Fit:
    """Unweighted fit -> per-joint noise -> fit weighted by it (see the module docstring)."""
    gram = train.gram.sum(axis=0)
    beta0 = solve(gram, train.moment.sum(axis=0))
    sigma = np.sqrt(train.rss(beta0) / max(train.count, 1))
    floor = 1e-9 * max(float(sigma.max()), 1e-12)
    sigma = np.maximum(sigma, floor)  # a joint fitted exactly must not get an infinite weight
    H, g = train.weighted(sigma)
    beta = solve(H, g)
    return Fit(beta, np.sqrt(covariance_diagonal(H)), sigma, H, g, condition_number(H))


def fit_joint_terms(H: np.ndarray, g: np.ndarray, fixed: np.ndarray,
                    free: np.ndarray) -> np.ndarray:
    """
    Fit only the ``free`` entries of beta, the others held at ``fixed``.

    With ``fixed`` the URDF's beta and ``free`` the joint terms: the friction and armature of
    a model whose inertia is the URDF's (minimum weighted residual).
    """
    beta = fixed.copy()
    rest = ~free
    rhs = g[free] - H[np.ix_(free, rest)] @ fixed[rest]
    beta[free] = solve(H[np.ix_(free, free)], rhs)
    return beta
