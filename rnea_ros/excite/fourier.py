"""
Periodic joint trajectories as finite Fourier series that start and end at rest (Swevers 1997).

Per moving joint j, with harmonics l = 1..N of the base frequency f (omega_l = 2 pi f l)::

    q_j(t) = r_j + sum_l [a_jl / omega_l sin(omega_l t) - b_jl / omega_l (cos(omega_l t) - 1)]
    v_j(t) = sum_l [a_jl cos(omega_l t) + b_jl sin(omega_l t)]
    a_j(t) = sum_l omega_l [-a_jl sin(omega_l t) + b_jl cos(omega_l t)]

so q_j(0) = r_j, the rest configuration, whatever the coefficients. At rest at t = 0 (and so
at every whole period): v_j(0) = sum_l a_jl = 0 and a_j(0) = sum_l omega_l b_jl = 0; the
first harmonic's coefficients are solved from these two equations, so the free coefficients
x_j = [a_j2..a_jN, b_j2..b_jN] (2 N - 2 per joint, ``FourierBasis.size`` per joint) give a
trajectory at rest at t = 0 and at every multiple of the period 1 / f. Positions, velocities
and accelerations are linear in x: ``FourierBasis.matrices`` gives the (T, 2 N - 2) matrices
that map one joint's x to its samples.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FourierBasis:
    """Harmonics 1..``harmonics`` of ``base_frequency`` [Hz]; see the module docstring."""

    harmonics: int
    base_frequency: float

    @property
    def period(self) -> float:
        """Return the period [s]: 1 / base_frequency."""
        return 1.0 / self.base_frequency

    @property
    def size(self) -> int:
        """Return the count of free coefficients of one joint: 2 (harmonics - 1)."""
        return 2 * (self.harmonics - 1)

    @property
    def omegas(self) -> np.ndarray:
        """Return omega_l = 2 pi f l [rad/s] of l = 1..harmonics."""
        return 2.0 * np.pi * self.base_frequency * np.arange(1, self.harmonics + 1)

    def coefficients(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return (a, b) of every harmonic, (..., N) each, of the free coefficients x."""
        n = self.harmonics
        x = np.asarray(x, dtype=np.float64)
        a_rest, b_rest = x[..., :n - 1], x[..., n - 1:]
        omegas = self.omegas
        a1 = -a_rest.sum(axis=-1, keepdims=True)
        b1 = -(b_rest * omegas[1:]).sum(axis=-1, keepdims=True) / omegas[0]
        return (np.concatenate([a1, a_rest], axis=-1), np.concatenate([b1, b_rest], axis=-1))

    def matrices(self, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Gq, Gv, Ga), each (T, 2N - 2): q_j - r_j = Gq x_j, v_j = Gv x_j, a_j = Ga x_j."""
        omegas = self.omegas
        phase = np.outer(np.asarray(times, dtype=np.float64), omegas)
        sin, cos = np.sin(phase), np.cos(phase)
        # Per harmonic, what a_l and b_l contribute; then the first harmonic's dependence.
        q_a, q_b = sin / omegas, -(cos - 1.0) / omegas
        v_a, v_b = cos, sin
        a_a, a_b = -omegas * sin, omegas * cos
        ratio = omegas[1:] / omegas[0]
        out = []
        for by_a, by_b in ((q_a, q_b), (v_a, v_b), (a_a, a_b)):
            from_a = by_a[:, 1:] - by_a[:, :1]
            from_b = by_b[:, 1:] - by_b[:, :1] * ratio
            out.append(np.concatenate([from_a, from_b], axis=1))
        return tuple(out)
