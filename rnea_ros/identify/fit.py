"""
Least squares on the base regressor, from normal equations accumulated in chunks.

The stacked regressor of a long log does not fit in memory (an hour at 1 kHz of a 7-DoF arm
is 3.6 M samples x 7 rows x ~80 base columns: 16 GB), so ``NormalEquations`` keeps per joint j
the Gram matrix G_j = W_j^T W_j, the moment h_j = W_j^T tau_j and the energy tau_j^T tau_j of
the rows of that joint, added chunk by chunk. Everything the fit and the report need follows:

- the residual sum of squares of any beta, per joint: tau^T tau - 2 beta^T h + beta^T G beta;
- the noise of each joint, sigma_j^2 = RSS_j(beta_0) / N_j from a first unweighted fit beta_0;
- the weighted fit: H = sum_j G_j / sigma_j^2, g = sum_j h_j / sigma_j^2, H beta = g, and the
  covariance of beta, H^-1 (torque noise independent between samples and joints).

A joint whose effort is NaN in a sample (a joint held by ``--lock`` that the bag gives no
effort for) has no row there: N_j counts its rows, and its RMS is NaN without any.

Solves are done on the column-scaled matrix (unit diagonal) with a pseudo-inverse
(``RCOND``): directions no data excite get zero, and a standard deviation of ``inf``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RCOND = 1e-12


def one_blas_thread():
    """
    Limit BLAS to one thread (a context manager, threadpoolctl).

    The normal equations are many small products (a chunk's samples x ~40 columns): OpenBLAS's own
    threads gain nothing there and stall on a loaded machine (measured: one 4096 x 44 Gram
    product 0.5 s with two threads at a load of 15 on 2 cores, 4 ms with one).
    """
    from threadpoolctl import threadpool_limits
    return threadpool_limits(limits=1, user_api='blas')


class NormalEquations:
    """
    Per-joint normal equations of the base regressor W (rows: samples x joints).

    ``sources[j]``/``positions[j]``: the regressor columns row j involves and their positions
    among the base parameters (``rows_of``); the joint terms follow the inertial ones, k per
    joint.
    """

    def __init__(self, nv: int, size: int, sources: np.ndarray, positions: np.ndarray,
                 counts: np.ndarray):
        self.gram = np.zeros((nv, size, size))
        self.moment = np.zeros((nv, size))
        self.energy = np.zeros(nv)
        self.count = 0
        self.joint_count = np.zeros(nv, dtype=np.int64)
        self._rows = [(sources[j, :counts[j]], positions[j, :counts[j]]) for j in range(nv)]

    def add(self, regressor: np.ndarray, joint: np.ndarray, tau: np.ndarray,
            transform=None) -> None:
        """
        Add samples to the sums.

        ``regressor``: the regressor chunk (n, nv, 10 nb); ``joint``: each joint's own term
        columns (n, nv, k) (zero on other rows, so not stored); ``tau`` (n, nv);
        ``transform``: a linear filter along time applied to both sides of each joint's rows
        (``rnea_ros.identify.filtering``). Call it inside ``one_blas_thread()``.
        """
        for j, x, t, where in self.joint_rows(regressor, joint, tau, transform):
            self.gram[j][np.ix_(where, where)] += x.T @ x
            self.moment[j, where] += t @ x
            self.energy[j] += t @ t
        self.count += tau.shape[0]
        self.joint_count += np.isfinite(tau).sum(axis=0)

    def joint_rows(self, regressor: np.ndarray, joint: np.ndarray, tau: np.ndarray,
                   transform=None):
        """Yield per joint j (j, its rows x, its torques t, their base columns); see ``add``."""
        nv, k = tau.shape[1], joint.shape[2]
        r = self.gram.shape[1] - nv * k
        measured = np.isfinite(tau)
        for j, (sources, positions) in enumerate(self._rows):
            x = np.concatenate([regressor[:, j, sources], joint[:, j, :]], axis=1)
            t = tau[:, j]
            if not measured[:, j].all():  # no row where the effort is not measured
                x, t = x[measured[:, j]], t[measured[:, j]]
            if transform is not None and t.size:
                x, t = transform(x), transform(t)
            yield j, x, t, np.concatenate([positions, r + j * k + np.arange(k)])

    def rss(self, beta: np.ndarray) -> np.ndarray:
        """Residual sum of squares per joint of the prediction W beta (>= 0)."""
        value = self.energy - 2.0 * self.moment @ beta + np.einsum(
            'k,jkl,l->j', beta, self.gram, beta)
        return np.maximum(value, 0.0)

    def rms(self, beta: np.ndarray) -> np.ndarray:
        """RMS residual per joint (NaN for a joint without rows)."""
        with np.errstate(invalid='ignore', divide='ignore'):
            return np.where(self.joint_count > 0,
                            np.sqrt(self.rss(beta) / np.maximum(self.joint_count, 1)), np.nan)

    def weighted(self, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(H, g): the normal equations with each joint's rows divided by its ``sigma``."""
        w = 1.0 / sigma ** 2
        return np.einsum('j,jkl->kl', w, self.gram), w @ self.moment


def rows_of(regressor: np.ndarray, inertial_columns: np.ndarray):
    """
    Find, per joint row, the base inertial columns that are ever nonzero in it.

    ``regressor`` (n, nv, P) at random states, ``inertial_columns`` the regressor column of
    each base inertial parameter. Returns (sources, positions, counts) for
    ``NormalEquations``.
    """
    nv = regressor.shape[1]
    used = np.abs(regressor[:, :, inertial_columns]).max(axis=0) > 0.0  # (nv, r_I)
    counts = used.sum(axis=1).astype(np.int64)
    sources = np.zeros((nv, max(int(counts.max()), 1)), dtype=np.int64)
    positions = np.zeros_like(sources)
    for j in range(nv):
        index = np.flatnonzero(used[j])
        positions[j, :index.size] = index
        sources[j, :index.size] = inertial_columns[index]
    return sources, positions, counts


def solve(H: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Minimum-norm solution of H x = g (H symmetric PSD), on the column-scaled system."""
    d = np.sqrt(np.diag(H))
    d[d == 0.0] = 1.0
    scaled = H / np.outer(d, d)
    return np.linalg.pinv(scaled, rcond=RCOND, hermitian=True) @ (g / d) / d


def _spectrum(H: np.ndarray):
    """
    Return (d, seen, values, vectors, small) of H as the fit sees it.

    ``d`` the column scales sqrt(diag H), ``seen`` the columns with data, the eigenvalues and
    vectors of the unit-diagonal H over them, and ``small`` the directions the fit does not
    resolve (at most ``RCOND`` of the largest eigenvalue, as ``solve``'s pseudo-inverse cuts
    them). ``values`` is None when no column has data.
    """
    d = np.sqrt(np.diag(H))
    seen = d > 0.0
    if not seen.any():
        return d, seen, None, None, None
    values, vectors = np.linalg.eigh(H[np.ix_(seen, seen)] / np.outer(d[seen], d[seen]))
    return d, seen, values, vectors, values <= RCOND * max(values.max(), 0.0)


def covariance_diagonal(H: np.ndarray) -> np.ndarray:
    """diag(H^-1), inf for parameters in a direction the data do not excite."""
    d, seen, values, vectors, small = _spectrum(H)
    out = np.full(H.shape[0], np.inf)
    if values is None:
        return out
    inverse = np.where(small, 0.0, 1.0 / np.where(small, 1.0, values))
    diagonal = (vectors ** 2) @ inverse
    blind = (vectors[:, small] ** 2).sum(axis=1) > 1e-6
    diagonal = np.where(blind, np.inf, diagonal)
    out[seen] = diagonal / d[seen] ** 2
    return out


def condition_number(H: np.ndarray) -> float:
    """
    Return the condition number of the (weighted) regressor with unit-norm columns.

    sqrt(cond(H)) over what the fit resolves (``_spectrum``): the columns with data and the
    directions above ``RCOND`` of the largest eigenvalue. The others (a still joint's terms,
    ``filtering``; a body held rigidly to another, lumped with it) are not determined:
    ``solve`` gives them nothing and ``covariance_diagonal`` an infinite standard deviation
    to every parameter in them, rather than an infinitely bad conditioning of the rest.
    ``inf`` when no column has data.
    """
    _, _, values, _, small = _spectrum(H)
    if values is None or small.all():
        return float('inf')
    return float(np.sqrt(values.max() / values[~small].min()))


@dataclass(frozen=True)
class Fit:
    """The weighted least-squares fit: beta, its standard deviation, the joint noise sigma."""

    beta: np.ndarray
    std: np.ndarray
    sigma: np.ndarray
    H: np.ndarray
    g: np.ndarray
    condition: float
    # The sandwich covariance of ``rnea_ros.identify.covariance`` once computed (``std`` is
    # then its diagonal's root), the white-noise one sqrt(diag(H^-1)), the residuals'
    # correlation time and Newey-West window [samples], the low-pass cutoff [Hz] (None: none).
    covariance: np.ndarray | None = None
    white_std: np.ndarray | None = None
    correlation_time: float = 1.0
    lag: int = 0
    cutoff: float | None = None


def weighted_fit(train: NormalEquations, raw: NormalEquations | None = None) -> Fit:
    """
    Unweighted fit -> per-joint noise -> fit weighted by it (see the module docstring).

    ``raw``: the same samples unfiltered when ``train`` is low-passed
    (``rnea_ros.identify.filtering``): the noise of each joint is its raw residual's RMS.
    """
    gram = train.gram.sum(axis=0)
    beta0 = solve(gram, train.moment.sum(axis=0))
    noise = train if raw is None else raw
    sigma = np.sqrt(noise.rss(beta0) / np.maximum(noise.joint_count, 1))
    floor = 1e-9 * max(float(sigma.max()), 1e-12)
    sigma = np.maximum(sigma, floor)  # a joint fitted exactly must not get an infinite weight
    H, g = train.weighted(sigma)
    beta = solve(H, g)
    return Fit(beta, np.sqrt(covariance_diagonal(H)), sigma, H, g, condition_number(H))
