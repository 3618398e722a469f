"""
Standard deviations of the least-squares base parameters that hold for correlated residuals.

H^-1 (the inverse of the weighted normal matrix, ``fit.weighted_fit``) is the covariance of
beta only if the residuals are white: independent from sample to sample. They are not: the
torques and the regressor are low-passed (``filtering``), and what the model misses (an
acceleration error, a friction that is not quite tanh) lasts as long as the motion that
causes it. Correlated residuals carry less information than as many independent ones, and
H^-1 then claims a precision the data do not have.

The estimate here is the sandwich beta - beta_true = H^-1 sum_t s_t, Cov = H^-1 S H^-1, with
s_t = sum_j w_tj r_tj / sigma_j^2 the score of sample t (w_tj its filtered regressor row,
r_tj its filtered residual) and S the long-run covariance of the scores, by Newey and West
(1987): S = sum over lags |l| <= L of (1 - |l| / (L + 1)) Gamma_l (Bartlett weights: S stays
positive semi-definite). The lag window L comes from the data: ``LAGS`` x the integrated
autocorrelation time tau of the weighted residuals r_tj / sigma_j (pooled over the joints,
Sokal's window: the smallest M >= 5 tau(M)). To keep memory bounded on long logs the scores
are summed over blocks of ``block`` consecutive samples (at most ``MAX_BLOCKS`` blocks) and
the lags counted in blocks (at most ``MAX_SPAN``: longer windows sum neighbouring blocks).
With white residuals it is the heteroskedasticity-robust sandwich; with the residuals of a
low-passed fit it follows their correlation. The residuals
come from the fitted beta, which absorbed part of them: S is scaled by n / (n - p), n = N / tau
the effective count of independent samples and p the base parameters (without it the
estimate ran 10 % low on a 30 s log).

A block bootstrap would need the same block length and many refits; Newey-West needs one pass.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.identify.fit import covariance_diagonal, RCOND

LAGS = 10.0  # Newey-West window, in integrated autocorrelation times
SOKAL = 5.0
MAX_LAG = 4096  # samples of the residual autocorrelation
MAX_BLOCKS = 20_000
MIN_BLOCK = 5
MAX_SPAN = 64  # Newey-West window in blocks (coarser blocks beyond)


@dataclass(frozen=True)
class Correlation:
    """``covariance`` (p, p) of beta; ``time`` tau [samples]; ``lag`` L [samples]."""

    covariance: np.ndarray
    time: float
    lag: int

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(np.maximum(np.diag(self.covariance), 0.0))

    def inflation(self, white_std: np.ndarray) -> float:
        """
        Return the median ratio of these variances to the white-noise ones (H^-1).

        H / inflation is the data metric of the physical-consistency SDP
        (``rnea_ros.identify.physical``): the weighted residual's increase, in the units of
        this covariance, keeping the residual's own shape (a fit that cannot reach beta, e.g.
        with the URDF's inertias held, still minimises the residual).
        """
        seen = np.isfinite(white_std) & (white_std > 0) & np.isfinite(self.std)
        if not seen.any():
            return 1.0
        return float(max(np.median((self.std[seen] / white_std[seen]) ** 2), 1e-12))


class Scores:
    """The block sums of the scores and the residual autocovariance, added chunk by chunk."""

    def __init__(self, equations, beta: np.ndarray, sigma: np.ndarray, samples: int):
        self.equations = equations
        self.samples = samples
        self.beta = beta
        self.weight = 1.0 / sigma ** 2
        self.block = max(MIN_BLOCK, -(-samples // MAX_BLOCKS))
        self.blocks: list[np.ndarray] = []
        self.autocovariance = np.zeros(MAX_LAG + 1)
        self.pairs = np.zeros(MAX_LAG + 1)

    def add(self, regressor: np.ndarray, joint: np.ndarray, tau: np.ndarray,
            transform=None) -> None:
        """Add one chunk (the arguments of ``fit.NormalEquations.add``)."""
        n = tau.shape[0]
        score = np.zeros((n, self.beta.size))
        for j, x, t, where in self.equations.joint_rows(regressor, joint, tau, transform):
            if t.size != n:  # rows left out (an unmeasured effort): their score is 0
                keep = np.isfinite(tau[:, j])
                residual = np.zeros(n)
                residual[keep] = t - x @ self.beta[where]
                rows = np.zeros((n, where.size))
                rows[keep] = x
                x = rows
            else:
                residual = t - x @ self.beta[where]
            score[:, where] += x * (residual * self.weight[j])[:, None]
            self._autocovariance(residual * np.sqrt(self.weight[j]))
        edges = np.arange(0, n, self.block)
        self.blocks.append(np.add.reduceat(score, edges, axis=0) if n else score)

    def _autocovariance(self, u: np.ndarray) -> None:
        n = u.size
        if n == 0:
            return
        lags = min(n - 1, MAX_LAG)
        length = 1 << int(np.ceil(np.log2(2 * n)))
        spectrum = np.fft.rfft(u, length)
        values = np.fft.irfft(spectrum * np.conj(spectrum), length)[:lags + 1]
        self.autocovariance[:lags + 1] += values
        self.pairs[:lags + 1] += n - np.arange(lags + 1)

    def correlation_time(self) -> float:
        """Integrated autocorrelation time [samples] of the weighted residuals (>= 1)."""
        if self.autocovariance[0] <= 0:
            return 1.0
        with np.errstate(invalid='ignore', divide='ignore'):
            rho = (self.autocovariance / np.maximum(self.pairs, 1)) \
                / (self.autocovariance[0] / self.pairs[0])
        rho = np.where(self.pairs > 0, rho, 0.0)
        tau = 1.0 + 2.0 * np.cumsum(rho[1:])
        window = np.arange(1, rho.size)
        stop = np.flatnonzero(window >= SOKAL * tau)
        value = tau[stop[0]] if stop.size else tau[-1]
        return float(max(value, 1.0))

    def result(self, H: np.ndarray, inverse: np.ndarray | None = None) -> Correlation:
        """
        Cov(beta) = H^-1 S H^-1 (``inf`` on the diagonal where H sees nothing).

        ``inverse``: what takes the place of H^-1 (a constrained fit's: the top-left block of
        the inverse of its KKT matrix).
        """
        time = self.correlation_time()
        lag = int(np.ceil(LAGS * time))
        blocks = np.concatenate(self.blocks, axis=0) if self.blocks else \
            np.zeros((0, self.beta.size))
        span = max(1, int(np.ceil(lag / self.block)))
        if span > MAX_SPAN:  # coarser blocks: the window's cost stays bounded
            factor = int(np.ceil(span / MAX_SPAN))
            blocks = np.add.reduceat(blocks, np.arange(0, blocks.shape[0], factor), axis=0)
            span = int(np.ceil(span / factor))
        S = blocks.T @ blocks
        for m in range(1, min(span, blocks.shape[0] - 1) + 1):
            gamma = blocks[m:].T @ blocks[:-m]
            S += (1.0 - m / (span + 1.0)) * (gamma + gamma.T)
        if inverse is None:
            d = np.sqrt(np.diag(H))
            d[d == 0.0] = 1.0
            inverse = np.linalg.pinv(H / np.outer(d, d), rcond=RCOND, hermitian=True) \
                / np.outer(d, d)
        effective = self.samples / time
        covariance = inverse @ S @ inverse * effective / max(effective - self.beta.size, 1.0)
        covariance = 0.5 * (covariance + covariance.T)
        blind = ~np.isfinite(covariance_diagonal(H))
        covariance[blind, :] = 0.0
        covariance[:, blind] = 0.0
        covariance[blind, blind] = np.inf
        return Correlation(covariance, time, lag)
