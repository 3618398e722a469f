"""Joint torques split into the terms of the equation of motion, for a whole recording at once.

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
Entries follow ``RobotModel.joint_names`` / v order; units N·m (revolute), N (prismatic), and
for a free-flyer [force; torque] in the root-link frame.

``contact_wrenches`` is the hook for contact wrenches (not wired yet): once it returns wrenches
per link, the external term follows from them with no other change here.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

TERMS = ('inertial', 'velocity_product', 'gravity', 'external')
# Samples per rnea_batch call: bounds the temporary arrays and paces the progress report.
CHUNK = 1 << 18


@dataclass(frozen=True)
class Decomposition:
    """(N, nv) arrays: ``total`` and one per term of ``TERMS`` in ``terms``."""

    total: np.ndarray
    terms: dict[str, np.ndarray]


def contact_wrenches(model, q: np.ndarray, v: np.ndarray,
                     a: np.ndarray) -> Mapping[str, np.ndarray] | None:
    """Contact wrenches per link, (N, 6) [force; torque] in the link frame about its origin
    (the ``f_ext`` convention of ``RobotModel``), for a floating-base recording.

    Hook, not wired yet: it returns None and the external term is zero. The plan is
    ``rnea_ros.contacts.ContactSolver`` per sample, which also needs to know which links touch
    the ground at each sample (a contact schedule: a bag does not record it), and a
    ``contact_wrenches/<link>`` topic per link in the bag tool's ``--write-bag`` output.
    """
    return None


def decompose(model, q: np.ndarray, v: np.ndarray, a: np.ndarray,
              f_ext: Mapping[str, np.ndarray] | None = None, threads: int | None = None,
              progress: Callable[[int], None] | None = None) -> Decomposition:
    """The terms of the equation of motion at N samples: q (N, nq), v (N, nv), a (N, nv).

    ``f_ext``: link name -> (N, 6) wrenches (see ``RobotModel.rnea_batch``). ``progress(k)``
    is called after each chunk with the number of samples done.
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
    return Decomposition(total, terms)


def effort_labels(model) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Column label and unit of each tau entry (v order).

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
