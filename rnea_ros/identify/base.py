"""
Base (identifiable) parameters: which combinations of theta the torques can tell apart.

Many standard parameters never change the joint torques (a fixed-base robot's first body has
one that matters, its inertia about the first axis) or only in fixed combinations (a body's
mass moves with its child's first moment along their common axis). The base parameters
beta = E theta are the independent combinations: every torque is W(q, v, a) beta, W being
the regressor's base columns.

Method: the regressor of ``SAMPLES`` random states (q uniform inside the joint limits, v and a
standard normal; a fixed seed, so every run finds the same base), columns scaled to unit norm.
The joint-term columns (friction, armature) are kept as base columns first, so their values
stay directly readable; the inertial columns, with the joint columns projected out, go through
QR with column pivoting (``scipy.linalg.qr``). Numerical rank: the count of |R_kk| above
``TOLERANCE`` |R_00| (structurally dependent columns give 1e-14 or less). The other inertial
columns are expressed in the base columns by least squares: E = [I | K] in base/dependent
order, beta_k = theta_k + sum_d K_kd theta_d. Given ``states`` (a designed motion, as
``rnea_excite`` has) replace the random ones; a joint term the states never excite (the
friction of a joint held still) has a zero column and is left out of the base. Given ``rows``,
only those joints' torques count: a joint still in the data (``filtering``) has no row in the
fit, and held at its position (``held_states``) the bodies it holds rigidly together are one;
``all_joint_terms`` keeps its terms as base parameters all the same (zero columns, which the
fit reports as not determined), as ``fit.NormalEquations`` lays them out: k per joint.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

SAMPLES = 200
TOLERANCE = 1e-8
SEED = 1


@dataclass(frozen=True)
class BaseParameters:
    """
    The base parameters beta = ``E`` theta.

    ``columns``: the theta index of each base parameter (its leading column: inertial base
    columns first, then every joint term), ``names`` theirs, with the dependent parameters
    each one absorbs in ``grouped`` ((name, coefficient) lists).
    """

    columns: np.ndarray
    E: np.ndarray
    names: tuple[str, ...]
    grouped: tuple[tuple[tuple[str, float], ...], ...]
    rank_tolerance: float

    @property
    def size(self) -> int:
        return int(self.columns.size)


def random_states(model, count: int = SAMPLES, seed: int = SEED):
    """(q, v, a) of ``count`` random states: q inside the joint limits (±pi without limits)."""
    rng = np.random.default_rng(seed)
    lower = np.array([j.lower if np.isfinite(j.lower) else -np.pi for j in model.joints])
    upper = np.array([j.upper if np.isfinite(j.upper) else np.pi for j in model.joints])
    q = rng.uniform(lower, upper, (count, model.nv))
    return q, rng.standard_normal((count, model.nv)), rng.standard_normal((count, model.nv))


def held_states(model, held: np.ndarray, positions: np.ndarray, count: int = SAMPLES,
                seed: int = SEED):
    """``random_states`` with the joints of mask ``held`` (nv,) at rest at ``positions``."""
    q, v, a = random_states(model, count, seed)
    q[:, held] = positions
    v[:, held] = 0.0
    a[:, held] = 0.0
    return q, v, a


def base_parameters(model, lay, tolerance: float = TOLERANCE, states=None,
                    rows: np.ndarray | None = None,
                    all_joint_terms: bool = False) -> BaseParameters:
    """
    Find the base parameters of ``model`` with the joint terms of ``lay`` (``Layout``).

    ``states``: (q, v, a) arrays of the motion to tell the parameters apart on (default:
    ``random_states``); ``rows``: mask (nv,) of the joints whose torques count (default: all);
    ``all_joint_terms``: every joint term a base parameter, excited or not (module docstring).
    """
    q, v, a = random_states(model) if states is None else states
    rows = np.ones(model.nv, dtype=bool) if rows is None else np.asarray(rows, dtype=bool)
    inertial = model.regressor_batch(q, v, a)[:, rows, :].reshape(-1, lay.n_inertial)
    joint_all = lay.joint_columns(v, a)[:, rows, :].reshape(inertial.shape[0], -1)
    joint_norms = np.linalg.norm(joint_all, axis=0)
    excited = np.flatnonzero(joint_norms > 0.0)
    joint = joint_all[:, excited]
    norms = np.linalg.norm(inertial, axis=0)
    seen = np.flatnonzero(norms > tolerance * norms.max())
    scaled = inertial[:, seen] / norms[seen]
    joint_scaled = joint / joint_norms[excited]
    basis, _ = np.linalg.qr(joint_scaled)
    rest = scaled - basis @ (basis.T @ scaled)
    _, r, pivots = scipy.linalg.qr(rest, mode='economic', pivoting=True)
    diagonal = np.abs(np.diag(r))
    rank = int(np.sum(diagonal > tolerance * diagonal[0])) if diagonal.size else 0
    base_inertial = np.sort(seen[pivots[:rank]])
    dependent = np.setdiff1d(np.arange(lay.n_inertial), base_inertial)
    kept = np.arange(joint_norms.size) if all_joint_terms else excited
    columns = np.concatenate([base_inertial, lay.n_inertial + kept])
    full = np.concatenate([inertial, joint_all], axis=1)
    unit = np.linalg.norm(full, axis=0)
    unit[unit == 0.0] = 1.0
    full /= unit
    coefficients, *_ = np.linalg.lstsq(full[:, columns], full[:, dependent], rcond=None)
    coefficients *= unit[dependent] / unit[columns][:, None]
    coefficients[np.abs(coefficients) < 1e-10 * max(1.0, np.abs(coefficients).max())] = 0.0
    E = np.zeros((columns.size, lay.size))
    E[np.arange(columns.size), columns] = 1.0
    E[:, dependent] = coefficients
    names = lay.names
    grouped = tuple(tuple((names[d], float(coefficients[k, n]))
                          for n, d in enumerate(dependent) if coefficients[k, n] != 0.0)
                    for k in range(columns.size))
    return BaseParameters(columns, E, tuple(names[c] for c in columns), grouped, tolerance)
