"""
What a contact is and what a contact solve returns: ``Contact`` and ``ContactSolution``.

The contact model (kinds, friction pyramids, the sole's wrench cone, the cost) and the frames of
the outputs are described in ``rnea_ros.contacts.solver``. ``finite_vector`` is the check of
every vector field: an ``InputError`` naming the field.
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from rnea_ros.errors import InputError

POINT, SURFACE = 'point', 'surface'
KINDS = (POINT, SURFACE)
DEFAULT_FRICTION = 0.7
_VARIABLES = {POINT: 3, SURFACE: 6}


@dataclass(frozen=True)
class Contact:
    """
    One contact of the robot with the ground (the model: ``rnea_ros.contacts.solver``).

    ``link``: a model link; ``kind``: 'point' or 'surface'; ``friction``: Coulomb coefficient
    mu > 0; ``position``: link frame (m), the contact point or the sole centre; ``normal``: world
    ground normal of a point contact; ``half_extents``: (X, Y) > 0 (m), half-length along the
    link x axis and half-width along its y axis, required for a sole; ``weight``: > 0, scales
    this contact's share of the cost. The defaults make a point contact at the link origin with
    mu = 0.7 on flat ground.
    """

    link: str
    kind: str = POINT
    friction: float = DEFAULT_FRICTION
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
    half_extents: tuple[float, float] | None = None
    weight: float = 1.0

    def __post_init__(self):
        """
        Check every field and store the numbers as floats.

        Check every field (``InputError`` names the contact and the field) and store the
        numbers as floats and tuples of floats, e.g. when they come from a parameter file.
        """
        where = f'contact {self.link!r}'
        if self.kind not in KINDS:
            raise InputError(f'{where}: kind {self.kind!r}, expected one of {KINDS}')
        for name in ('friction', 'weight'):
            value = getattr(self, name)
            try:
                number = float(value)
            except (TypeError, ValueError):
                number = math.nan
            if isinstance(value, bool) or not (math.isfinite(number) and number > 0):
                raise InputError(f'{where}: {name} must be a finite number > 0, got {value!r}')
            object.__setattr__(self, name, number)
        position = finite_vector(self.position, 3, f'{where}: position')
        normal = finite_vector(self.normal, 3, f'{where}: normal')
        if np.linalg.norm(normal) < 1e-9:
            raise InputError(f'{where}: normal is zero')
        object.__setattr__(self, 'position', tuple(position.tolist()))
        object.__setattr__(self, 'normal', tuple(normal.tolist()))
        if self.kind == SURFACE:
            if self.half_extents is None:
                raise InputError(f'{where}: a surface contact needs half_extents (X, Y) of its '
                                 'sole, in m')
            extents = finite_vector(self.half_extents, 2, f'{where}: half_extents')
            if np.any(extents <= 0.0):
                raise InputError(f'{where}: half_extents must be > 0, got {tuple(extents)}')
            object.__setattr__(self, 'half_extents', tuple(extents.tolist()))

    @property
    def size(self) -> int:
        """Return the number of unknowns: 3 (point) or 6 (surface)."""
        return _VARIABLES[self.kind]


@dataclass(frozen=True)
class ContactSolution:
    """
    Result of ``ContactSolver.solve`` (frames and units: ``rnea_ros.contacts.solver``).

    ``links``: contact links, the row order of the arrays; ``wrenches`` (k, 6) link frame about
    the link origin; ``world_wrenches`` (k, 6) world axes about the link origin;
    ``centers_of_pressure`` (k, 3) world; ``tau`` (nv,); ``feasible``: the base rows hold
    exactly with every wrench in its cone; ``status``: 'optimal', 'least_violation' or
    'failed' (both QPs failed: zero contact wrenches); ``residual``: ``tau[:6]``, the base
    wrench [force; moment] in the root frame that the contacts leave unbalanced (what a
    fictitious base actuator would have to add), below 1e-9 when feasible.
    """

    links: tuple[str, ...]
    wrenches: np.ndarray
    world_wrenches: np.ndarray
    centers_of_pressure: np.ndarray
    tau: np.ndarray
    feasible: bool
    status: str

    @property
    def residual(self) -> np.ndarray:
        """tau[:6]: [force (N); moment (N m) about the root origin], root frame."""
        return self.tau[:6]

    @property
    def residual_norm(self) -> float:
        """Euclidean norm of the residual, force (N) and moment (N m) together."""
        return float(np.linalg.norm(self.tau[:6]))

    def f_ext(self) -> dict[str, np.ndarray]:
        """
        Return the contact wrenches as an ``f_ext`` mapping.

        The contact wrenches as an ``f_ext`` mapping (link -> (6,), link frame; summed when
        two contacts share a link).
        """
        out: dict[str, np.ndarray] = {}
        for link, wrench in zip(self.links, self.wrenches):
            out[link] = out[link] + wrench if link in out else wrench.copy()
        return out


def finite_vector(value, size: int, name: str) -> np.ndarray:
    """Return ``value`` as ``size`` finite floats; ``InputError`` names ``name`` otherwise."""
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f'{name}: expected {size} numbers, got {value!r}') from None
    if array.shape != (size,) or not np.all(np.isfinite(array)):
        raise InputError(f'{name}: expected {size} finite numbers, got {value!r}')
    return array
