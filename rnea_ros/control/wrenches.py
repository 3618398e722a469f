"""
The node's wrenches without ROS.

The node's wrenches without ROS: contact settings, measured wrenches, contact and joint
reaction wrench outputs.

Used by ``core.ControlCore`` (the cycle) and ``node`` (parameters, messages). Frames and
units follow ``RobotModel``: a wrench is [fx fy fz tx ty tz] (N, N m) on a link, in the link
frame about the link origin - the frame of a ``geometry_msgs/WrenchStamped`` whose ``frame_id``
is that link.

- ``contact_from_parameters``: one ``contacts.Contact`` from the ``contact.<link>.*`` parameter
  values, a ``ValueError`` naming the parameter when one is unusable;
- ``MeasuredWrenches``: the latest wrench of each ``wrench_topics`` entry, with its age; those
  older than ``input_timeout`` are dropped (zero) from ``f_ext``;
- ``ContactOutput``: a ``ContactSolver`` built once per model, the wrenches of the last solve
  (zero under a fault), its status for the diagnostics;
- ``ReactionOutput``: ``RobotModel.joint_reaction_wrenches`` in a preallocated array, with the
  child link of each joint (the frame they are expressed in).
"""
from __future__ import annotations

import math

import numpy as np

from rnea_ros.contacts import Contact, ContactSolver, KINDS, SURFACE
from rnea_ros.control.joint_input import NEVER, NON_FINITE, Rejected
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import InputError

UNKNOWN_FRAME = 'unknown_frame'


def contact_from_parameters(link: str, values: dict) -> Contact:
    """
    Build a ``Contact`` from ``values`` (field -> parameter value, the declared default unset).

    Raises ValueError naming the parameter (``contact.<link>.<field>``) and what was expected.
    """
    def name(field):
        return f'contact.{link}.{field}'

    def value(field):
        return values.get(field)

    kind = value('type')
    if kind not in KINDS:
        raise ValueError(f'parameter {name("type")!r} is {kind!r}: expected one of '
                         f'{list(KINDS)}')
    numbers = {}
    for field in ('friction', 'weight'):
        number = value(field)
        if (isinstance(number, bool) or not isinstance(number, (int, float))
                or not (math.isfinite(number) and number > 0)):
            raise ValueError(f'parameter {name(field)!r} is {number!r}: expected a finite '
                             f'number > 0')
        numbers[field] = float(number)
    vectors = {}
    for field, size in (('position', 3), ('normal', 3), ('half_extents', 2)):
        vector = value(field)
        if vector is None:
            if kind == SURFACE:
                raise ValueError(f'parameter {name(field)!r} is not set: a surface contact '
                                 f'needs the half-sizes [X, Y] (m) of its sole')
            continue
        try:
            vector = [float(x) for x in vector]
        except (TypeError, ValueError):
            vector = None
        if vector is None or len(vector) != size or not all(math.isfinite(x) for x in vector):
            raise ValueError(f'parameter {name(field)!r} is {value(field)!r}: expected '
                             f'{size} finite numbers')
        if field == 'normal' and math.hypot(*vector) < 1e-9:
            raise ValueError(f'parameter {name(field)!r} is zero: expected the ground normal')
        if field == 'half_extents' and min(vector) <= 0:
            raise ValueError(f'parameter {name(field)!r} is {vector}: expected 2 numbers > 0')
        vectors[field] = tuple(vector)
    try:
        return Contact(link, kind, numbers['friction'], weight=numbers['weight'], **vectors)
    except InputError as exc:
        raise ValueError(f'parameters contact.{link}.*: {exc}') from None


class MeasuredWrenches:
    """
    The latest wrench per measured-wrench topic (``wrench_topics`` order) and its link.

    ``update`` stores a sample (raises ``Rejected`` for a frame that is no model link or a
    non-finite value); ``f_ext(now, timeout)`` gives the fresh ones as an ``f_ext`` mapping
    (summed per link), or None when there are none, so the caller keeps the plain RNEA path.
    """

    def __init__(self, topics, link_names):
        self.topics = tuple(topics)
        self._links = frozenset(link_names)
        self.frames: list[str | None] = [None] * len(self.topics)
        self.wrenches = np.zeros((len(self.topics), 6))
        self.times = np.full(len(self.topics), NEVER)
        self._f_ext: dict[str, np.ndarray] = {}
        self.fresh = 0  # topics used in the last f_ext

    def update(self, index: int, frame: str, values, now: float) -> None:
        """``values``: [fx fy fz tx ty tz] in the ``frame`` link frame."""
        if frame not in self._links:
            raise Rejected(UNKNOWN_FRAME, f'frame_id {frame!r} is not a link of the model')
        for k, value in enumerate(values):
            if not math.isfinite(value):
                part = 'force' if k < 3 else 'torque'
                raise Rejected(NON_FINITE, f'wrench.{part}.{"xyz"[k % 3]} is {value}')
        self.wrenches[index] = values
        self.frames[index] = frame
        self.times[index] = now

    def take_state_from(self, other: MeasuredWrenches) -> None:
        if other.topics == self.topics:
            for k, frame in enumerate(other.frames):
                if frame in self._links:
                    self.frames[k] = frame
                    self.wrenches[k] = other.wrenches[k]
                    self.times[k] = other.times[k]

    def f_ext(self, now: float, timeout: float) -> dict[str, np.ndarray] | None:
        """Return the wrenches not older than ``timeout`` by link (None if there are none)."""
        f_ext = self._f_ext
        f_ext.clear()
        fresh = 0
        for k, frame in enumerate(self.frames):
            if frame is None or now - self.times[k] > timeout:
                continue
            fresh += 1
            if frame in f_ext:
                f_ext[frame] = f_ext[frame] + self.wrenches[k]
            else:
                f_ext[frame] = self.wrenches[k]
        self.fresh = fresh
        return f_ext if fresh else None

    def stale(self, now: float, timeout: float) -> list[str]:
        """Topics with no sample younger than ``timeout`` (never received included)."""
        return [topic for k, topic in enumerate(self.topics) if now - self.times[k] > timeout]

    def status(self, now: float) -> dict[str, str]:
        values = {}
        for k, topic in enumerate(self.topics):
            age = 'never' if self.times[k] == NEVER else f'{now - self.times[k]:.4f}'
            values[f'wrench {topic} age [s]'] = age
            if self.frames[k] is not None:
                values[f'wrench {topic} frame'] = self.frames[k]
        return values


class ContactOutput:
    """
    Contact wrenches of a floating-base model, one ``ContactSolver`` for its lifetime.

    ``solve`` writes the joint torques into ``tau`` (the solution's, base rows included) and the
    wrenches into ``wrenches`` ((k, 6), ``links`` order); ``zero`` is the fault output. The
    solver allocates its ``ContactSolution`` per call (a few small arrays).
    """

    def __init__(self, model: RobotModel, contacts):
        self.solver = ContactSolver(model, contacts)  # raises InputError
        self.links = self.solver.links
        self.wrenches = np.zeros((len(self.links), 6))
        self.status = 'none'
        self.feasible = False
        self.residual_norm = 0.0
        self.least_violation_cycles = 0
        self.failed_cycles = 0

    def solve(self, q, v, a, f_ext, tau: np.ndarray) -> None:
        """Solve the contact wrenches; raises ``InputError`` (non-finite inputs or results)."""
        solution = self.solver.solve(q, v, a, f_ext=f_ext)
        tau[:] = solution.tau
        self.wrenches[:] = solution.wrenches
        self.status, self.feasible = solution.status, solution.feasible
        self.residual_norm = solution.residual_norm
        if solution.status == 'least_violation':
            self.least_violation_cycles += 1
        elif solution.status == 'failed':
            self.failed_cycles += 1

    def f_ext(self, measured: dict | None) -> dict[str, np.ndarray]:
        """Return the contact wrenches plus ``measured``, as an ``f_ext`` mapping (allocates)."""
        f_ext = {link: wrench.copy() for link, wrench in (measured or {}).items()}
        for link, wrench in zip(self.links, self.wrenches):
            f_ext[link] = f_ext[link] + wrench if link in f_ext else wrench.copy()
        return f_ext

    def zero(self) -> None:
        self.wrenches.fill(0.0)

    def take_state_from(self, other: ContactOutput) -> None:
        self.least_violation_cycles = other.least_violation_cycles
        self.failed_cycles = other.failed_cycles

    def diagnostics(self) -> dict[str, str]:
        return {'contact solver status': self.status,
                'contact feasible': str(self.feasible).lower(),
                'contact residual': f'{self.residual_norm:.3g}',
                'contact least-violation cycles': str(self.least_violation_cycles),
                'contact failed cycles': str(self.failed_cycles)}


class ReactionOutput:
    """
    ``RobotModel.joint_reaction_wrenches`` of every moving joint, in a preallocated array.

    ``joints`` and ``frames`` (the child link of each joint: the frame of its wrench) in row
    order; ``compute`` fills ``wrenches`` (n, 6), ``zero`` is the fault output.
    """

    def __init__(self, model: RobotModel):
        self.model = model
        tree = model.tree
        child_links = {joint: link for joint, link in zip(tree.body_names, tree.body_links)
                       if link}
        zeros = np.zeros(model.nv)
        self.joints = tuple(model.joint_reaction_wrenches(model.neutral_configuration(),
                                                          zeros, zeros))
        self.frames = tuple(child_links.get(joint, joint) for joint in self.joints)
        self.wrenches = np.zeros((len(self.joints), 6))

    def compute(self, q, v, a, f_ext) -> None:
        """Compute the joint reaction wrenches; raises ``InputError``."""
        reactions = self.model.joint_reaction_wrenches(q, v, a, f_ext=f_ext)
        for k, joint in enumerate(self.joints):
            self.wrenches[k] = reactions[joint]

    def zero(self) -> None:
        self.wrenches.fill(0.0)
