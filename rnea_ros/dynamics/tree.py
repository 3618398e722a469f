"""
The kinematic tree as plain arrays: what the URDF parser produces and the kernels consume.

A *body* is a rigid set of URDF links that move together: the child link of a moving joint plus
every link hanging below it through fixed joints. Bodies are numbered so that a parent always comes
before its children (index -1 is the fixed world). Each body has exactly one joint to its parent.

Frames and vectors
------------------
- ``rot_tree[i]`` / ``pos_tree[i]``: orientation and origin of body i's *joint frame* (before the
  joint moves) expressed in the parent body's frame. For URDF joints this is the joint ``<origin>``
  composed with the placement of the parent link inside its body.
- ``axis[i]``: unit joint axis in the joint frame (revolute: rotation axis; prismatic: direction).
- Inertia of body i in its own frame: ``mass[i]``, ``first_moment[i] = mass * com`` and
  ``inertia_origin[i]``, the 3x3 rotational inertia about the body origin.
- Body motion and force vectors inside the kernels follow Featherstone: [angular; linear].
  The public API converts to Pinocchio's [linear; angular] where it exposes spatial vectors.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The joint types of ``joint_type`` (declared with their kernels' helpers in ``joints``).
from rnea_ros.dynamics.joints import FREE_FLYER, PRISMATIC, REVOLUTE  # noqa: F401


@dataclass(frozen=True)
class Joint:
    """
    One independent joint: an entry of ``RobotModel.joint_names``.

    ``kind`` is the URDF type ('revolute', 'continuous', 'prismatic', 'floating', 'planar') or
    'free-flyer' for the root joint added by ``floating_base=True``. ``idx_q``/``idx_v`` are its
    first entries in q and v, ``nq``/``nv`` its sizes. Limits are ``inf`` (or -inf) where the URDF
    gives none.
    """

    name: str
    kind: str
    idx_q: int
    idx_v: int
    nq: int
    nv: int
    effort_limit: float = np.inf
    velocity_limit: float = np.inf
    lower: float = -np.inf
    upper: float = np.inf


@dataclass(frozen=True)
class LinkFrame:
    """Where a URDF link sits: its body (-1: fixed to the world) and its pose in that body."""

    name: str
    body: int
    rotation: np.ndarray
    translation: np.ndarray


@dataclass(frozen=True)
class KinematicTree:
    """
    Everything the dynamics needs, as arrays indexed by body (see the module docstring).

    Per body: ``parent``, ``joint_type``, ``q_index``/``v_index`` (first q/v entry the body's joint
    reads), ``multiplier``/``offset`` (mimic coupling: joint position = multiplier*q + offset,
    1 and 0 for independent joints), ``rot_tree``, ``pos_tree``, ``axis``, ``mass``,
    ``first_moment``, ``inertia_origin``, ``body_names`` (name of the body's joint),
    ``body_links`` (the joint's child link, whose frame is the body frame; '' for the two inner
    bodies of a planar joint, which carry no inertia).
    """

    name: str
    joints: tuple[Joint, ...]
    links: tuple[LinkFrame, ...]
    body_names: tuple[str, ...]
    body_links: tuple[str, ...]
    parent: np.ndarray
    joint_type: np.ndarray
    q_index: np.ndarray
    v_index: np.ndarray
    multiplier: np.ndarray
    offset: np.ndarray
    rot_tree: np.ndarray
    pos_tree: np.ndarray
    axis: np.ndarray
    mass: np.ndarray
    first_moment: np.ndarray
    inertia_origin: np.ndarray
    nq: int
    nv: int
    floating_base: bool

    @property
    def n_bodies(self) -> int:
        return len(self.body_names)
