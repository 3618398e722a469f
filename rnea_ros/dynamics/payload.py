"""
A payload rigidly fixed to a link: its check and its inertial parameters in the link's body.

A ``Payload`` is what a tool, a gripped workpiece or a load adds to one link of a robot: its
``mass`` [kg], its centre of mass ``com`` [m] in the link frame and its rotational ``inertia``
[kg m^2] about that centre of mass, in the link frame, as the six numbers (ixx, ixy, ixz, iyy,
iyz, izz) of a URDF ``<inertia>``. ``check_payload`` refuses what no rigid body has (a
non-finite number, a negative mass, an inertia that is not symmetric positive semi-definite or
breaks the triangle inequalities), what no payload on a link of a robot is (beyond
``MAX_RADIUS`` and ``MAX_MASS_RATIO``) and a link the model does not have, with a
``ValueError`` (``InputError``) naming the field and the bound. ``payload_parameters`` gives
the payload's 10 inertial parameters in the frame of the body the link is fixed to, in
``RobotModel.inertial_parameters`` order, so that ``RobotModel.with_payload`` adds them to
that body's (no new compilation: the model is repacked by ``with_inertial_parameters``).

The parameters are linear in the payload's own, taken about the link origin in the link frame
(``link_parameters``): ``body_transform`` is the 10 x 10 matrix that moves them into the body
frame, which is what identifying a payload needs (``rnea_ros.identify.payload``).
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from rnea_ros.errors import InputError

INERTIA_FIELDS = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')
# Relative round-off allowed in the eigenvalue, triangle and bound checks.
TOLERANCE = 1e-9
# What a payload on a link of a robot can physically be: its matter within MAX_RADIUS [m] of the
# link origin (so |com| <= MAX_RADIUS, and no principal moment of its inertia about the com
# above mass * MAX_RADIUS^2: a thin ring of that radius), and its mass at most MAX_MASS_RATIO
# times the robot's (the moving bodies of its model). A value beyond them is a typo (mm for m,
# g for kg) that would drive every torque to its limit.
MAX_RADIUS = 3.0
MAX_MASS_RATIO = 5.0


@dataclass(frozen=True)
class Payload:
    """
    A payload on ``link``: mass [kg], com [m] and inertia [kg m^2] about the com, link frame.

    ``inertia``: (ixx, ixy, ixz, iyy, iyz, izz). ``link=''`` is no payload.
    """

    link: str = ''
    mass: float = 0.0
    com: tuple[float, float, float] = (0.0, 0.0, 0.0)
    inertia: tuple[float, float, float, float, float, float] = (0.0,) * 6

    @property
    def inertia_matrix(self) -> np.ndarray:
        """Return the symmetric 3x3 rotational inertia about the centre of mass."""
        return inertia_matrix(self.inertia)


NO_PAYLOAD = Payload()


def inertia_matrix(six) -> np.ndarray:
    """(ixx, ixy, ixz, iyy, iyz, izz) -> the symmetric 3x3 matrix."""
    ixx, ixy, ixz, iyy, iyz, izz = (float(x) for x in six)
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def _numbers(value, size: int, field: str) -> tuple[float, ...]:
    """Return ``value`` as ``size`` finite floats, or raise InputError naming ``field``."""
    wanted = 'a number' if size == 1 else f'{size} numbers'
    if isinstance(value, (str, bytes)):
        raise InputError(f'{field}: expected {wanted}, got {value!r}')
    try:
        items = [value] if size == 1 and np.ndim(value) == 0 else list(np.ravel(value))
    except (TypeError, ValueError):
        raise InputError(f'{field}: expected {wanted}, got {value!r}') from None
    if len(items) != size:
        raise InputError(f'{field}: expected {size} numbers, got {len(items)}')
    out = []
    for k, item in enumerate(items):
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, float, np.number)):
            raise InputError(f'{field}: expected numbers, got {item!r}')
        number = float(item)
        if not math.isfinite(number):
            where = field if size == 1 else f'{field}[{k}]'
            raise InputError(f'{where} is {number}: expected a finite number')
        out.append(number)
    return tuple(out)


def moving_mass(tree) -> float:
    """Return the mass [kg] of the moving bodies of ``tree`` (a ``KinematicTree``)."""
    return float(np.sum(tree.mass))


def check_payload(payload: Payload, link_names=None, robot_mass: float | None = None
                  ) -> Payload:
    """
    Return ``payload`` with plain float fields, or raise ``InputError`` naming the bad field.

    Checked: finite numbers of the right count, mass >= 0, the inertia about the com positive
    semi-definite and within the triangle inequalities (ixx + iyy >= izz and its rotations: a
    mass density exists), the payload within ``MAX_RADIUS`` and (given ``robot_mass`` [kg])
    ``MAX_MASS_RATIO``, and, given ``link_names``, a link of the model (or '').
    """
    if not isinstance(payload.link, str):
        raise InputError(f'payload.link: expected a link name (a string), got {payload.link!r}')
    if link_names is not None and payload.link and payload.link not in link_names:
        raise InputError(f'payload.link: unknown link {payload.link!r}')
    (mass,) = _numbers(payload.mass, 1, 'payload.mass')
    if mass < 0.0:
        raise InputError(f'payload.mass is {mass:g} kg: expected >= 0')
    if robot_mass is not None and mass > MAX_MASS_RATIO * robot_mass * (1 + TOLERANCE):
        raise InputError(f'payload.mass is {mass:g} kg: expected at most {MAX_MASS_RATIO:g} '
                         f"times the robot's mass ({MAX_MASS_RATIO:g} x {robot_mass:g} kg = "
                         f'{MAX_MASS_RATIO * robot_mass:g} kg)')
    com = _numbers(payload.com, 3, 'payload.com')
    distance = math.hypot(*com)
    if distance > MAX_RADIUS:
        raise InputError(f'payload.com {list(com)} is {distance:g} m from the link origin: '
                         f'expected at most {MAX_RADIUS:g} m')
    six = _numbers(payload.inertia, 6, 'payload.inertia')
    inertia = inertia_matrix(six)
    eigen = np.linalg.eigvalsh(inertia)
    slack = TOLERANCE * max(float(np.abs(np.diag(inertia)).sum()), 1e-300)
    if eigen[0] < -slack:
        raise InputError(f'payload.inertia {list(six)} is not positive semi-definite (smallest '
                         f'eigenvalue {eigen[0]:.6g} kg m^2): no rigid body has it')
    for k, name in enumerate(('ixx', 'iyy', 'izz')):
        others = np.trace(inertia) - inertia[k, k]
        if others < inertia[k, k] - slack:
            raise InputError(f'payload.inertia breaks the triangle inequality: {name} '
                             f'({inertia[k, k]:g}) exceeds the sum of the other two '
                             f'({others:g}): no mass density has it')
    largest = mass * MAX_RADIUS ** 2
    if eigen[-1] > largest * (1 + TOLERANCE) + slack:
        raise InputError(f'payload.inertia has a principal moment of {eigen[-1]:g} kg m^2: '
                         f'expected at most mass x ({MAX_RADIUS:g} m)^2 = {largest:g} kg m^2 '
                         f'(its matter within {MAX_RADIUS:g} m)')
    return Payload(payload.link, mass, com, six)


def link_parameters(payload: Payload) -> np.ndarray:
    """
    Return the payload's 10 parameters about the link origin, in the link frame.

    Order of ``RobotModel.inertial_parameters``: m, m c, then the inertia about the link
    origin as I_xx, I_xy, I_yy, I_xz, I_yz, I_zz.
    """
    m = float(payload.mass)
    c = np.asarray(payload.com, dtype=np.float64)
    inertia = payload.inertia_matrix + m * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), inertia[0, 0], inertia[0, 1], inertia[1, 1], inertia[0, 2],
                     inertia[1, 2], inertia[2, 2]])


def from_link_parameters(link: str, phi) -> Payload:
    """Return the payload (mass, com, inertia about its com) of parameters about the origin."""
    phi = np.asarray(phi, dtype=np.float64)
    m = float(phi[0])
    c = phi[1:4] / m if m > 0 else np.zeros(3)
    about_origin = np.array([[phi[4], phi[5], phi[7]], [phi[5], phi[6], phi[8]],
                             [phi[7], phi[8], phi[9]]])
    inertia = about_origin - m * (c @ c * np.eye(3) - np.outer(c, c))
    return Payload(link, m, tuple(float(x) for x in c),
                   tuple(float(inertia[i, j]) for i, j in
                         ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))))


def _moved(phi: np.ndarray, rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """Parameters phi given in frame L -> the same body in frame B, x_B = R x_L + t."""
    m, h = phi[0], phi[1:4]
    inertia = np.array([[phi[4], phi[5], phi[7]], [phi[5], phi[6], phi[8]],
                        [phi[7], phi[8], phi[9]]])
    # Second moments S = sum m x x^T = tr(I)/2 1 - I move as x x^T does.
    second = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    rh = rotation @ h
    moved = (rotation @ second @ rotation.T + np.outer(rh, translation)
             + np.outer(translation, rh) + m * np.outer(translation, translation))
    out = np.trace(moved) * np.eye(3) - moved
    return np.array([m, *(rh + m * translation), out[0, 0], out[0, 1], out[1, 1], out[0, 2],
                     out[1, 2], out[2, 2]])


def body_transform(rotation, translation) -> np.ndarray:
    """
    Return the 10 x 10 matrix T with phi_body = T phi_link for a link at (rotation, translation).

    (rotation, translation): the link's placement in its body frame (x_body = R x_link + t);
    phi in ``link_parameters`` order. The map is linear in phi, so its columns are the images
    of the unit vectors.
    """
    rotation = np.asarray(rotation, dtype=np.float64).reshape(3, 3)
    translation = np.asarray(translation, dtype=np.float64).reshape(3)
    return np.column_stack([_moved(e, rotation, translation) for e in np.eye(10)])


def payload_block(tree, link: str) -> tuple[int, np.ndarray]:
    """
    Return (b, T): the ``body_names`` block ``link`` is fixed to and its ``body_transform``.

    InputError for a link the tree does not have or one fixed to the world (no joint moves it:
    a payload there changes no torque).
    """
    from rnea_ros.dynamics.regressor import body_columns
    frames = {frame.name: frame for frame in tree.links}
    if link not in frames:
        raise InputError(f'payload.link: unknown link {link!r}')
    frame = frames[link]
    if frame.body < 0:
        raise InputError(f'payload.link: link {link!r} is fixed to the world: a payload there '
                         'changes no joint torque')
    return int(body_columns(tree)[frame.body]), body_transform(frame.rotation, frame.translation)
