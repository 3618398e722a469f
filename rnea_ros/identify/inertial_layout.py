"""
The parameter vector theta of identification, its names, columns and prior scales.

Model (SI units; revolute joints in N m, rad/s, rad/s^2; prismatic joints in N, m/s, m/s^2)::

    tau = Y(q, v, a) phi + sum_j e_j (fc_j s(v_j) + fv_j v_j + f0_j + Ia_j a_j)

- ``phi``: the 10 standard inertial parameters of every moving body, in ``INERTIAL`` order
  (mass, first moment m c, rotational inertia about the body origin), in the body frame: the
  frame of the URDF link its joint moves (``RobotModel.inertial_parameters``).
- Per independent joint j, its row only, the terms of ``rnea_ros.dynamics.actuation``:
  Coulomb friction fc_j with the smooth sign s(v) = tanh(v / velocity_threshold), viscous
  friction fv_j, a constant offset f0_j (sensor bias, unmodelled spring) and the armature Ia_j
  (reflected rotor inertia). ``--friction none`` leaves friction out; the armature stays.

theta = [phi of body 0 .. body nb-1, joint terms of joint 0 .. nv-1]. Names: ``<link>.<p>``
for the inertial parameters (the link carrying the body's ``<inertial>``),
``friction.<joint>.<term>`` and ``armature.<joint>`` for the joint terms, the names of the
node's parameters.

Prior scales ``scale``: the size of a change that the URDF prior finds plausible (one standard
deviation of the Gaussian prior around the URDF): with m_s = max(m, 0.1 kg) and the length
l_s = max(radius of gyration, |c|, 0.05 m), the first moments m_s l_s, the rotational inertias
m_s l_s^2, and the mass ``MASS_PRIOR`` m_s: a URDF's masses (weighed or from CAD) are its
surest numbers, and a joint-torque log rarely tells one link's mass from its neighbours' (a
prior as wide as the mass let a 30 s UR5 log of the exact URDF move the total mass by 3 %
inside the data's noise); friction 10 % of the joint's effort limit (10 N m without one);
armature that torque over 10 rad/s^2.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.dynamics.actuation import Actuation, DEFAULT_VELOCITY_THRESHOLD, FRICTION_FIELDS

INERTIAL = ('m', 'mc_x', 'mc_y', 'mc_z', 'Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz')
# The friction models of ``Actuation`` and the terms each one has.
FRICTION_MODELS = {'coulomb-viscous-offset': FRICTION_FIELDS, 'none': ()}
DEFAULT_FRICTION = 'coulomb-viscous-offset'
MASS_PRIOR = 0.1  # of the mass: the prior scale of a body's mass (module docstring)


@dataclass(frozen=True)
class Layout:
    """Where each parameter sits in theta; see the module docstring."""

    body_links: tuple[str, ...]
    joint_names: tuple[str, ...]
    friction_terms: tuple[str, ...]
    velocity_threshold: float

    @property
    def n_inertial(self) -> int:
        return 10 * len(self.body_links)

    @property
    def joint_terms(self) -> tuple[str, ...]:
        return self.friction_terms + ('armature',)

    @property
    def size(self) -> int:
        return self.n_inertial + len(self.joint_names) * len(self.joint_terms)

    @property
    def names(self) -> list[str]:
        names = [f'{link}.{p}' for link in self.body_links for p in INERTIAL]
        for joint in self.joint_names:
            names += [f'friction.{joint}.{t}' for t in self.friction_terms]
            names.append(f'armature.{joint}')
        return names

    def joint_index(self, joint: int, term: str) -> int:
        """Index in theta of a joint term ('coulomb', 'viscous', 'offset', 'armature')."""
        return self.n_inertial + joint * len(self.joint_terms) + self.joint_terms.index(term)

    def joint_features(self, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """(N, nv, k) per joint its own columns: [s(v), v, 1] (the friction terms), then a."""
        if not self.friction_terms:
            return a[:, :, None]
        friction = self.actuation(np.zeros((len(self.joint_names), 4))).friction_regressor(v)
        return np.concatenate([friction, a[:, :, None]], axis=2)

    def actuation(self, values: np.ndarray) -> Actuation:
        """Build the ``Actuation`` of joint-term values (nv, k) in ``joint_terms`` order."""
        terms = dict(zip(self.joint_terms, values.T))
        zeros = np.zeros(len(self.joint_names))
        return Actuation(self.joint_names, terms.get('coulomb', zeros),
                         terms.get('viscous', zeros), terms.get('offset', zeros),
                         terms['armature'], self.velocity_threshold,
                         'none' if not self.friction_terms else DEFAULT_FRICTION)

    def joint_columns(self, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """(N, nv, nv k) the regressor columns of every joint term (zero off the joint's row)."""
        features = self.joint_features(v, a)
        n, nv, k = features.shape
        out = np.zeros((n, nv, nv * k))
        for j in range(nv):
            out[:, j, j * k:(j + 1) * k] = features[:, j, :]
        return out


def layout(model, friction: str = DEFAULT_FRICTION,
           velocity_threshold: float = DEFAULT_VELOCITY_THRESHOLD) -> Layout:
    """Lay out theta for a fixed-base model with the friction model ``friction``."""
    return Layout(tuple(model.body_names), tuple(model.joint_names), FRICTION_MODELS[friction],
                  velocity_threshold)


def prior(model, lay: Layout) -> tuple[np.ndarray, np.ndarray]:
    """(theta of the URDF with zero joint terms, prior scale of every parameter)."""
    phi = np.asarray(model.inertial_parameters(), dtype=np.float64)
    theta = np.zeros(lay.size)
    theta[:lay.n_inertial] = phi.ravel()
    scale = np.zeros(lay.size)
    for i, body in enumerate(phi):
        mass = body[0]
        com = body[1:4] / mass if mass > 0 else np.zeros(3)
        inertia = inertia_matrix(body[4:])
        inertia_com = inertia - mass * (com @ com * np.eye(3) - np.outer(com, com))
        gyration = np.sqrt(max(np.trace(inertia_com), 0.0) / (2 * mass)) if mass > 0 else 0.0
        m_s = max(mass, 0.1)
        l_s = max(gyration, float(np.linalg.norm(com)), 0.05)
        scale[10 * i:10 * i + 10] = [MASS_PRIOR * m_s] + [m_s * l_s] * 3 + [m_s * l_s ** 2] * 6
    limits = model.effort_limits
    for j in range(len(lay.joint_names)):
        torque = 0.1 * limits[j] if np.isfinite(limits[j]) and limits[j] > 0 else 10.0
        for term in lay.friction_terms:
            scale[lay.joint_index(j, term)] = torque
        scale[lay.joint_index(j, 'armature')] = torque / 10.0
    return theta, scale


def inertia_matrix(six: np.ndarray) -> np.ndarray:
    """[Ixx, Ixy, Iyy, Ixz, Iyz, Izz] -> the symmetric 3x3 matrix."""
    ixx, ixy, iyy, ixz, iyz, izz = six
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def pseudo_inertia(phi: np.ndarray) -> np.ndarray:
    """
    Return the 4x4 pseudo-inertia [[0.5 tr(I) 1 - I, h], [h^T, m]] of one body's parameters.

    Positive semi-definite (with m > 0) exactly when a mass density gives these parameters
    (Wensing, Kim and Slotine 2017): the physical consistency the fit enforces.
    """
    inertia = inertia_matrix(phi[4:])
    out = np.empty((4, 4))
    out[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    out[:3, 3] = out[3, :3] = phi[1:4]
    out[3, 3] = phi[0]
    return out
