"""
Contact inverse dynamics: the contact wrenches that balance a floating base, and the torques.

A floating-base robot's equations of motion have six unactuated rows: the base wrench
``rnea(q, v, a, f_ext)[:6]`` must vanish, and only the contacts can make it so. ``ContactSolver``
finds contact wrenches lambda that do it, then the joint torques with them::

    minimise    1/2 lambda^T H lambda                   (weighted norm of the wrenches)
    subject to  A(q) lambda = b(q, v, a)                 (6 base rows: the base wrench vanishes)
                C lambda <= 0                            (friction cones, centre of pressure)

``b`` is the base wrench without contacts, ``rnea(q, v, a, f_ext=measured)[:6]`` turned into
world axes; column j of ``A`` is the base wrench (world axes, about the root-body origin) that a
unit value of variable j applies. RNEA is linear in ``f_ext``, so ``A lambda = b`` is exactly
``rnea(q, v, a, f_ext=measured + contacts)[:6] == 0``. The QP is solved by DAQP (a dual
active-set solver for small dense QPs: fastest of DAQP, quadprog and ProxQP measured on these
problems), whose equality rows hold to rounding error.

Contacts (``Contact``)
----------------------
- ``'point'``: a 3-D force at a point fixed in the link (``position``, link frame; default its
  origin), e.g. a quadruped's foot. Unknown: the force in world axes. Friction pyramid about the
  ground ``normal`` (world frame, default +z: flat ground).
- ``'surface'``: a 6-D wrench from a rectangular sole lying on the ground: centre ``position``
  and half-sizes ``half_extents = (X, Y)`` along the link's x and y axes; the link's +z axis is
  the sole normal, pointing out of the ground into the robot. Unknown: [force; moment about the
  sole centre], in link axes. Constraints: the contact wrench cone of the rectangle (Caron,
  Pham, Nakamura, ICRA 2015: the wrenches that four corner forces, each in its friction pyramid,
  can produce), 16 rows: friction on the resultant, centre of pressure inside the sole, and the
  torsional friction bound on the yaw moment.

Friction is linearised as a 4-facet pyramid, ``|f_t1| <= mu' f_n`` and ``|f_t2| <= mu' f_n``
with ``mu' = mu / sqrt(2)``: the pyramid inscribed in the circular cone of coefficient
``friction`` (an inner approximation: every accepted force lies inside the true cone). Its
tangent axes: the world x axis projected on the ground plane (y if x is the normal) and normal
x t1; for a sole, the link's x and y axes. The normal force is unilateral (>= 0, implied by the
pyramid).

Cost: ``weight`` times the squared force (N^2) plus, for a sole, ``weight / (X^2 + Y^2)`` times
the squared moment about the sole centre: a moment costs like the corner forces that make it.

Outputs (``ContactSolution``), per contact in the order given:

- ``wrenches``: [fx fy fz tx ty tz] (N, N m) that the ground applies on the link, *in the link
  frame about the link origin* - the ``f_ext`` convention of ``RobotModel.rnea``, and the frame
  of a ``geometry_msgs/WrenchStamped`` with ``frame_id`` = the link;
- ``world_wrenches``: the same wrenches in world axes, still about the link origin;
- ``centers_of_pressure``: world point where the resultant acts (the contact point of a point
  contact; for a sole, its centre of pressure on the sole plane, NaN when it carries no load);
- ``tau``: ``rnea(q, v, a, f_ext=measured + contacts)``, (nv,).

Infeasible motions (e.g. the base accelerating downwards faster than gravity while in contact:
the feet would have to pull on the ground; or more sideways acceleration than friction allows)
have no exact solution. The solver then solves a second QP with a slack s on the base rows, ``A
lambda + s = b``, of cost ``1/2 lambda^T H lambda + RESIDUAL_WEIGHT/2 * (|s_f|^2 + |s_n|^2 / 1
m^2)``: the wrenches inside the cones that leave the smallest base wrench unbalanced. It
returns them with ``feasible=False``, ``status='least_violation'`` and the ``residual``: the
base rows ``tau[:6]`` [force; moment about the root origin] in the root frame, i.e. the wrench
that a fictitious actuator on the base would still have to apply (zero when feasible). The
joint torques ``tau[6:]`` are those of the returned wrenches. Everything stays finite; nothing
is silent. Bad inputs (sizes, non-finite values) raise ``InputError``.

A solver owns its workspace: use one per thread. Units are SI. The records ``Contact`` and
``ContactSolution`` live in ``contact.py``, the jitted per-cycle kernels in ``kernels.py``, the
cone rows in ``cones.py``, measured wrenches as ``f_ext`` entries in ``measured.py``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import daqp
import numpy as np

from rnea_ros.contacts.cones import contact_wrench_cone, friction_pyramid, tangent_frame
from rnea_ros.contacts.contact import Contact, ContactSolution, POINT
from rnea_ros.contacts.kernels import (contact_problem, contact_torques, contact_wrenches,
                                       POINT_CODE, SURFACE_CODE)
from rnea_ros.errors import InputError

if TYPE_CHECKING:
    from rnea_ros.dynamics.model import RobotModel

# Slack weight of the least-violation QP, relative to the wrench weights (1 / N^2).
RESIDUAL_WEIGHT = 1e6
# Constraint tolerance of DAQP (N, N m): how far an inequality may be violated at the optimum.
PRIMAL_TOLERANCE = 1e-9
_UNBOUNDED = -1e30  # DAQP's "no lower bound"


@dataclass(frozen=True)
class ContactQP:
    """
    The QP of one instant, for analysis and cross-checks with other solvers.

    minimise 1/2 x^T H x subject to A x = b, C x <= 0. ``x`` stacks the contacts' unknowns
    (point: world force; surface: [force; moment about the sole centre] in link axes); ``A``,
    ``b``: base wrench in world axes about the root-body origin. ``wrenches(x)`` gives the
    link-frame wrenches (k, 6) of a solution.
    """

    H: np.ndarray
    A: np.ndarray
    b: np.ndarray
    C: np.ndarray
    solver: ContactSolver
    frames: np.ndarray

    def wrenches(self, x) -> np.ndarray:
        out = np.zeros((len(self.solver.contacts), 6))
        world = np.zeros_like(out)
        cop = np.zeros((len(self.solver.contacts), 3))
        s = self.solver
        contact_wrenches(np.asarray(x, dtype=np.float64), s._kinds, s._offsets, s._points,
                         self.frames, out, world, cop)
        return out


class ContactSolver:
    """
    Contact wrenches and joint torques of a floating-base ``RobotModel`` (module docstring).

    Everything that does not depend on the state is built here: the constraint rows in the
    contacts' own frames, the cost, both QPs' matrices and DAQP workspaces, and the jitted
    kernels are compiled. ``solve`` then runs one kernel (RNEA, placements, A and b), DAQP,
    and one kernel (wrenches, RNEA with them).
    """

    def __init__(self, model: RobotModel, contacts: Sequence[Contact | str]):
        """``contacts``: ``Contact`` records, or link names for default point contacts."""
        root = model.joints[0] if model.joints else None
        if root is None or root.nv != 6 or root.idx_v != 0:
            raise InputError('contact inverse dynamics needs a floating base: load the model '
                             'with floating_base=True')
        contacts = tuple(c if isinstance(c, Contact) else Contact(c) for c in contacts)
        if not contacts:
            raise InputError('contacts: expected at least one contact')
        self._model = model
        self._contacts = contacts
        self._links = tuple(contact.link for contact in contacts)
        link_rows = {name: row for row, name in enumerate(model.link_names)}
        self._link_rows = link_rows
        packed = model.packed
        self._packed = packed.model
        self._work = packed.new_workspace()
        self._bodies = np.zeros(12 * packed.n_bodies)
        self._link_body, self._link_pose = packed.link_body, packed.link_pose
        self._gravity = model.gravity
        k = len(contacts)
        self._rows = np.zeros(k, dtype=np.int64)
        self._kinds = np.zeros(k, dtype=np.int64)
        self._offsets = np.zeros(k, dtype=np.int64)
        self._points = np.zeros((k, 3))
        blocks, costs = [], []
        m = 0
        for c, contact in enumerate(contacts):
            if contact.link not in link_rows:
                raise InputError(f'contact {contact.link!r}: unknown link; links: '
                                 f'{list(model.link_names)}')
            row = link_rows[contact.link]
            if self._link_body[row] < 0:
                raise InputError(f'contact {contact.link!r}: the link is fixed to the world')
            self._rows[c] = row
            self._kinds[c] = POINT_CODE if contact.kind == POINT else SURFACE_CODE
            self._offsets[c] = m
            self._points[c] = contact.position
            blocks.append(_constraint_rows(contact))
            costs.append(_cost(contact))
            m += contact.size
        self._n = m
        n_in = sum(len(block) for block in blocks)
        self._C = np.zeros((n_in, m))
        self._H = np.zeros((m, m))
        r = 0
        for c, (block, cost) in enumerate(zip(blocks, costs)):
            j, size = self._offsets[c], contacts[c].size
            self._C[r:r + len(block), j:j + size] = block
            self._H[j:j + size, j:j + size] = np.diag(cost)
            r += len(block)
        # Stage 1: [A; C] x in [b; -inf] .. [b; 0], the first 6 rows equalities.
        self._con = np.zeros((6 + n_in, m))
        self._con[6:] = self._C
        self._upper = np.zeros(6 + n_in)
        self._lower = np.full(6 + n_in, _UNBOUNDED)
        self._sense = np.zeros(6 + n_in, dtype=np.int32)
        self._sense[:6] = 5  # DAQP: equality
        # Stage 2 (least violation): unknowns [x; s], [A I; C 0] [x; s] in the same bounds.
        self._con2 = np.zeros((6 + n_in, m + 6))
        self._con2[:6, m:] = np.eye(6)
        self._con2[6:, :m] = self._C
        self._H2 = np.zeros((m + 6, m + 6))
        self._H2[:m, :m] = self._H
        self._H2[m:, m:] = RESIDUAL_WEIGHT * np.eye(6)
        self._frames = np.zeros((k, 12))
        self._fext = np.zeros((len(model.link_names), 6))
        self._fext_total = np.zeros_like(self._fext)
        self._qp = daqp.Model()
        self._qp2 = daqp.Model()
        self._restart = True  # pass the constraint senses to DAQP on the next solve
        self._measured = False  # self._fext holds measured wrenches from the last call
        self._warm_up()

    # ------------------------------------------------------------------ description
    @property
    def model(self) -> RobotModel:
        return self._model

    @property
    def contacts(self) -> tuple[Contact, ...]:
        return self._contacts

    @property
    def links(self) -> tuple[str, ...]:
        """Contact links, in the order of the contacts (repeated if a link has several)."""
        return self._links

    @property
    def n_variables(self) -> int:
        """Return the number of QP unknowns: 3 per point contact, 6 per surface contact."""
        return self._n

    @property
    def n_constraints(self) -> int:
        """Inequality rows: 4 per point contact, 16 per surface contact (plus 6 equalities)."""
        return self._C.shape[0]

    # ------------------------------------------------------------------ solving
    def solve(self, q, v, a, f_ext: Mapping | None = None, gravity=None) -> ContactSolution:
        """
        Contact wrenches and joint torques for the state (q, v, a).

        q (nq,), v (nv,), a (nv,) in ``RobotModel``'s conventions (q[:7] root pose, v[:6] and
        a[:6] base velocity and acceleration in the root frame); ``f_ext``: measured wrenches
        (link name -> [f; n] in the link frame about its origin, e.g. force-torque sensors or
        a force plate), included in the dynamics before the contacts balance the rest;
        ``gravity``: world 3-vector (default the model's). Raises ``InputError`` for bad
        inputs; an infeasible motion is not an error (see ``ContactSolution.feasible``).
        """
        q, v, a, g, fext = self._inputs(q, v, a, f_ext, gravity)
        tau = np.empty(self._model.nv)
        if not contact_problem(self._packed, self._work, self._bodies, q, v, a, g,
                               self._link_body, self._link_pose, fext, tau, self._rows,
                               self._kinds, self._offsets, self._points, self._frames,
                               self._con, self._upper, self._lower):
            self._raise_input_error(q, v, a, f_ext, g)
        x, status = self._solve_qp()
        wrenches = np.empty((len(self._contacts), 6))
        world = np.empty_like(wrenches)
        cop = np.empty((len(self._contacts), 3))
        if not contact_torques(self._packed, self._work, q, v, a, g, self._link_body,
                               self._link_pose, fext, self._fext_total, tau, x, self._rows,
                               self._kinds, self._offsets, self._points, self._frames,
                               wrenches, world, cop):
            self._raise_input_error(q, v, a, f_ext, g)
        return ContactSolution(self._links, wrenches, world, cop, tau, status == 'optimal',
                               status)

    def problem(self, q, v, a, f_ext: Mapping | None = None, gravity=None) -> ContactQP:
        """Return the QP that ``solve`` would solve at this state (copies), see ``ContactQP``."""
        q, v, a, g, fext = self._inputs(q, v, a, f_ext, gravity)
        tau = np.empty(self._model.nv)
        frames = np.zeros_like(self._frames)
        con = self._con.copy()
        upper, lower = self._upper.copy(), self._lower.copy()
        if not contact_problem(self._packed, self._work, self._bodies, q, v, a, g,
                               self._link_body, self._link_pose, fext, tau, self._rows,
                               self._kinds, self._offsets, self._points, frames, con,
                               upper, lower):
            self._raise_input_error(q, v, a, f_ext, g)
        return ContactQP(self._H.copy(), con[:6].copy(), upper[:6].copy(), self._C.copy(),
                         self, frames)

    def _solve_qp(self) -> tuple[np.ndarray, str]:
        """
        Stage 1 (exact base rows), then stage 2 (least violation) if stage 1 fails.

        DAQP exit flags: > 0 solved, -1 infeasible; any other failure (cycling, iteration
        limit, dependent equality rows) is treated like infeasibility.
        """
        qp = self._qp
        if self._restart:
            flag = qp.update(A=self._con, bupper=self._upper, blower=self._lower,
                             sense=self._sense)
        else:
            flag = qp.update(A=self._con, bupper=self._upper, blower=self._lower)
        if flag >= 0:
            x, _, flag, _ = qp.solve()
        # A failed solve leaves no working set worth warm-starting from.
        self._restart = flag <= 0
        if flag > 0:
            return x, 'optimal'
        self._con2[:6, :self._n] = self._con[:6]
        flag = self._qp2.update(A=self._con2, bupper=self._upper, blower=self._lower,
                                sense=self._sense)
        if flag >= 0:
            x, _, flag, _ = self._qp2.solve()
            if flag > 0:
                return x[:self._n], 'least_violation'
        return np.zeros(self._n), 'failed'

    # ------------------------------------------------------------------ inputs
    def _inputs(self, q, v, a, f_ext, gravity):
        q = np.ascontiguousarray(q, dtype=np.float64)
        v = np.ascontiguousarray(v, dtype=np.float64)
        a = np.ascontiguousarray(a, dtype=np.float64)
        model = self._model
        if q.shape != (model.nq,) or v.shape != (model.nv,) or a.shape != (model.nv,):
            model.rnea(q, v, a)  # raises InputError naming the argument
        if gravity is None:
            g = self._gravity
        else:
            g = np.ascontiguousarray(gravity, dtype=np.float64)
            if g.shape != (3,):
                raise InputError(f'gravity: expected shape (3,), got {g.shape}')
        fext = self._fext
        if f_ext:
            fext[:] = 0.0
            for link, value in f_ext.items():
                row = self._link_rows.get(link)
                if row is None:
                    raise InputError(f'f_ext: unknown link {link!r}')
                value = np.asarray(value, dtype=np.float64)
                if value.shape != (6,):
                    raise InputError(f'f_ext[{link!r}]: expected shape (6,), got {value.shape}')
                fext[row] += value
            self._measured = True
        elif self._measured:
            fext[:] = 0.0
            self._measured = False
        return q, v, a, g, fext

    def _raise_input_error(self, q, v, a, f_ext, g):
        """Raise the input error of a non-finite value: ``RobotModel.rnea`` names it."""
        self._model.rnea(q, v, a, f_ext=f_ext, gravity=g)
        raise InputError('contact solve: a result is not finite (inputs too large?)')

    def _warm_up(self) -> None:
        """Compile the kernels and set up both DAQP workspaces at the neutral configuration."""
        model = self._model
        q = model.neutral_configuration()
        zeros = np.zeros(model.nv)
        tau = np.empty(model.nv)
        contact_problem(self._packed, self._work, self._bodies, q, zeros, zeros, self._gravity,
                        self._link_body, self._link_pose, self._fext, tau, self._rows,
                        self._kinds, self._offsets, self._points, self._frames, self._con,
                        self._upper, self._lower)
        self._con2[:6, :self._n] = self._con[:6]
        stages = ((self._qp, self._H, self._con), (self._qp2, self._H2, self._con2))
        for qp, hessian, con in stages:
            # Set up with every row a loose inequality: always well posed (equality rows can
            # be dependent, e.g. fewer than 6 unknowns); every solve passes the real sense.
            loose = np.full(len(con), 1e30)
            qp.setup(hessian, np.zeros(len(hessian)), con, loose, -loose,
                     np.zeros(len(con), dtype=np.int32))
            settings = qp.settings
            settings['primal_tol'] = PRIMAL_TOLERANCE
            qp.settings = settings
        self.solve(q, zeros, zeros)


# ---------------------------------------------------------------------- construction helpers
def _constraint_rows(contact: Contact) -> np.ndarray:
    """Inequality rows on the contact's unknowns (see ``Contact``), ``rows @ x <= 0``."""
    if contact.kind == POINT:
        # Unknown: world force f_w; pyramid on the (t1, t2, n) components T^T f_w.
        return friction_pyramid(contact.friction) @ tangent_frame(contact.normal).T
    return contact_wrench_cone(contact.friction, *contact.half_extents)


def _cost(contact: Contact) -> np.ndarray:
    """Diagonal of the cost Hessian on the contact's unknowns."""
    if contact.kind == POINT:
        return np.full(3, contact.weight)
    x, y = contact.half_extents
    return np.repeat([contact.weight, contact.weight / (x * x + y * y)], 3)
