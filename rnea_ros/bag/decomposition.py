"""
Joint torques split into the terms of the equation of motion, for a whole recording at once.

    tau = M(q) a + C(q, v) v + g(q) + tau_ext
        = inertial + velocity_product + gravity + external

the first three from one kinematics sweep by ``RobotModel.rnea_terms_batch``, the external one
by ``RobotModel.rnea_batch`` (RNEA is linear in a, in gravity and in the wrenches, and its
velocity part vanishes at v = 0):

- inertial          rnea(q, 0, a), gravity 0
- velocity_product  rnea(q, v, 0), gravity 0 (Coriolis and centrifugal)
- gravity           rnea(q, 0, 0) with the model's gravity
- external          rnea(q, 0, 0, f_ext), gravity 0: -J^T f_ext, the torques the external
                    wrenches alone require (zero without wrenches)

and the total is their sum (equal to rnea(q, v, a, f_ext) up to rounding, ~1e-15 relative).
With an actuation model (``rnea_ros.dynamics.actuation.Actuation``: the terms the URDF has no
room for) the inertial term also holds the armature torques armature * a, and a fifth term

- friction          coulomb * tanh(v / threshold) + viscous * v + offset, per joint

enters the total: then total = rnea(q, v, a, f_ext) + armature * a + friction.
Entries follow ``RobotModel.joint_names`` / v order; units N·m (revolute), N (prismatic), and
for a free-flyer [force; torque] in the root-link frame.

``contact_wrenches`` gives the contact wrenches of a floating-base recording (one
``rnea_ros.contacts.ContactSolver`` over the samples, given the links in contact); passed as
``f_ext``, they make the external term and the total rnea(q, v, a, f_ext=contacts).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

TERMS = ('inertial', 'velocity_product', 'gravity', 'external')
# The term an actuation model adds (``Decomposition.terms`` has it only with an actuation model).
FRICTION = 'friction'
# Samples per rnea_batch call: bounds the temporary arrays and paces the progress report.
CHUNK = 1 << 18
# Samples between progress reports of the contact loop.
CONTACT_PROGRESS = 4096


@dataclass(frozen=True)
class Decomposition:
    """(N, nv) arrays: ``total`` and one per term in ``terms`` (``TERMS``, then ``FRICTION``)."""

    total: np.ndarray
    terms: dict[str, np.ndarray]


@dataclass(frozen=True)
class ContactWrenches:
    """
    Contact wrenches of a recording (``contact_wrenches``), N samples, k contact links.

    ``links``: the contact links; ``wrenches``: link -> (N, 6) [force; torque] that the ground
    applies, in the link frame about its origin (the ``f_ext`` convention of ``RobotModel``);
    ``feasible`` (N,): the base wrench balanced exactly with every force in its friction
    pyramid; ``residual_norm`` (N,): norm of the base wrench left unbalanced (0 if feasible).
    """

    links: tuple[str, ...]
    wrenches: dict[str, np.ndarray]
    feasible: np.ndarray
    residual_norm: np.ndarray

    @property
    def infeasible(self) -> int:
        return int((~self.feasible).sum())


def contact_wrenches(model, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                     contacts: Sequence | None = None,
                     progress: Callable[[int], None] | None = None) -> ContactWrenches | None:
    """
    Solve the contact wrenches per link of a floating-base recording.

    Contact wrenches per link, (N, 6) [force; torque] in the link frame about its origin
    (the ``f_ext`` convention of ``RobotModel``), for a floating-base recording.

    ``contacts``: ``rnea_ros.contacts.Contact`` records or link names (default point
    contacts), in contact for every sample: a bag does not record a contact schedule. None or
    empty: no contacts, returns None (the external term is then zero). One
    ``ContactSolver`` solves the samples in turn; infeasible samples get the least-violation
    wrenches (see ``rnea_ros.contacts``) and are flagged in ``feasible``. ``progress(k)`` is
    called every ``CONTACT_PROGRESS`` samples and at the end with the number done.
    """
    if not contacts:
        return None
    from rnea_ros.contacts import ContactSolver
    solver = ContactSolver(model, contacts)
    links = tuple(dict.fromkeys(solver.links))
    rows = {link: [c for c, name in enumerate(solver.links) if name == link] for link in links}
    n = q.shape[0]
    per_contact = np.empty((n, len(solver.links), 6))
    feasible = np.empty(n, dtype=bool)
    residual = np.empty(n)
    solve = solver.solve
    for k in range(n):
        solution = solve(q[k], v[k], a[k])
        per_contact[k] = solution.wrenches
        feasible[k] = solution.feasible
        residual[k] = 0.0 if solution.feasible else solution.residual_norm
        if progress is not None and (k + 1) % CONTACT_PROGRESS == 0:
            progress(k + 1)
    if progress is not None:
        progress(n)
    wrenches = {link: per_contact[:, rows[link]].sum(axis=1) for link in links}
    return ContactWrenches(links, wrenches, feasible, residual)


def decompose(model, q: np.ndarray, v: np.ndarray, a: np.ndarray,
              f_ext: Mapping[str, np.ndarray] | None = None, threads: int | None = None,
              progress: Callable[[int], None] | None = None,
              actuation=None) -> Decomposition:
    """
    Split the equation of motion at N samples into its terms.

    ``f_ext``: link name -> (N, 6) wrenches (see ``RobotModel.rnea_batch``). ``progress(k)``
    is called after each chunk with the number of samples done. ``actuation``: a
    ``Actuation`` of ``model`` adds its armature to the inertial term and its friction as the
    ``FRICTION`` term (see the module docstring).
    """
    n, nv = q.shape[0], model.nv
    terms = {term: np.empty((n, nv)) for term in TERMS[:3]}
    terms['external'] = np.zeros((n, nv))
    zeros = np.zeros((min(n, CHUNK), nv))
    no_gravity = (0.0, 0.0, 0.0)
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        rows = slice(start, stop)
        qc, zero = q[rows], zeros[:stop - start]
        (terms['inertial'][rows], terms['velocity_product'][rows],
         terms['gravity'][rows]) = model.rnea_terms_batch(qc, v[rows], a[rows], threads=threads)
        if actuation is not None:
            terms['inertial'][rows] += actuation.armature_torques(a[rows])
        if f_ext:
            wrenches = {link: np.asarray(w)[rows] for link, w in f_ext.items()}
            terms['external'][rows] = model.rnea_batch(qc, zero, zero, f_ext=wrenches,
                                                       gravity=no_gravity, threads=threads)
        if progress is not None:
            progress(stop)
    total = terms['inertial'] + terms['velocity_product']
    total += terms['gravity']
    if f_ext:
        total += terms['external']
    if actuation is not None:
        terms[FRICTION] = actuation.friction_torques_batch(v)
        total += terms[FRICTION]
    return Decomposition(total, terms)


def effort_labels(model) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """
    Column label and unit of each tau entry (v order).

    One-DoF joints: the joint name; unit 'N·m' (revolute, continuous) or 'N' (prismatic).
    A free-flyer or URDF floating joint J: 'J.fx', 'J.fy', 'J.fz' (N), 'J.tx', 'J.ty', 'J.tz'
    (N·m), the wrench in its child-link frame; a planar joint: 'J.fx', 'J.fy' (N), 'J.tz' (N·m).
    """
    labels: list[str] = []
    units: list[str] = []
    for joint in model.joints:
        if joint.nv == 1:
            labels.append(joint.name)
            units.append('N' if joint.kind == 'prismatic' else 'N·m')
        elif joint.nv == 6:
            labels += [f'{joint.name}.{axis}' for axis in ('fx', 'fy', 'fz', 'tx', 'ty', 'tz')]
            units += ['N'] * 3 + ['N·m'] * 3
        else:
            labels += [f'{joint.name}.{axis}' for axis in ('fx', 'fy', 'tz')]
            units += ['N', 'N', 'N·m']
    return tuple(labels), tuple(units)
