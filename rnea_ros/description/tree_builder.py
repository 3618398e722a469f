"""
Links and joints -> ``KinematicTree``: the walk every parser ends in.

The URDF and MJCF readers turn their files into the same links (``Inertial``) and joints
(``UrdfJoint``); ``TreeBuilder`` walks them depth-first from the root, folds fixed joints into
their parent's body (links kept as frames), numbers the independent joints' q and v, couples
mimic joints and checks each rigid body's inertia.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math
import warnings

import numpy as np

from rnea_ros.description.urdf_elements import Inertial, UrdfJoint
from rnea_ros.dynamics.tree import FREE_FLYER, Joint, KinematicTree, LinkFrame, PRISMATIC, REVOLUTE
from rnea_ros.errors import ModelWarning, URDFError

ROOT_JOINT_NAME = 'root_joint'

# Tolerances of the physical-consistency checks on inertia matrices: URDFs print their numbers
# with 6-9 significant digits, so exact checks would refuse real robots.
INERTIA_RTOL = 1e-6
INERTIA_ATOL = 1e-12  # kg m^2


@dataclass
class _Body:
    """A body under construction (see tree.py)."""

    name: str
    joint_type: int
    parent: int
    rotation: np.ndarray
    translation: np.ndarray
    axis: np.ndarray
    q_index: int
    v_index: int
    multiplier: float = 1.0
    offset: float = 0.0
    mimic_of: str | None = None
    link: str = ''  # the child link of the joint: its frame is the body frame
    mass: float = 0.0
    first_moment: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia_origin: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))


def _inertia_problem(inertia: np.ndarray, scale: float) -> str | None:
    """
    Why a rotational inertia about the centre of mass is not physical, or None.

    ``scale`` bounds the round-off already in ``inertia`` (kg m^2).
    """
    moments = np.linalg.eigvalsh(inertia)
    tol = INERTIA_RTOL * max(float(np.abs(moments).max()), scale) + INERTIA_ATOL
    if moments[0] < -tol:
        return f'inertia is not positive semi-definite (principal moments {moments.tolist()})'
    if moments[0] + moments[1] < moments[2] - tol:
        return (f'principal moments {moments.tolist()} break the triangle inequality '
                '(I1 + I2 >= I3): no rigid body has this inertia')
    return None


class TreeBuilder:
    """Depth-first walk from the root that folds fixed joints and numbers the bodies."""

    def __init__(self, name, links, joints, children, root, floating_base, inertia_check):
        self.name = name
        self.links = links
        self.joints = joints
        self.children = children
        self.root = root
        self.floating_base = floating_base
        self.inertia_check = inertia_check
        self.bodies: list[_Body] = []
        self.independent: list[Joint] = []
        self.link_frames: dict[str, LinkFrame] = {}
        self.nq = 0
        self.nv = 0

    def build(self) -> KinematicTree:
        if self.floating_base:
            body = self._add_free_flyer(ROOT_JOINT_NAME, 'free-flyer', -1, np.eye(3),
                                        np.zeros(3), math.inf)
            self.bodies[body].link = self.root
            self._walk(body)
        else:
            self._walk(-1)
        unreached = [name for name in self.links if name not in self.link_frames]
        if unreached:
            raise URDFError(f'links {unreached} are not reachable from root {self.root!r} '
                            '(their joints form a cycle)')
        self._couple_mimics()
        self._check_bodies()
        self._warn_massless()
        return self._freeze()

    def _add_body(self, **kwargs) -> int:
        self.bodies.append(_Body(**kwargs))
        return len(self.bodies) - 1

    def _add_free_flyer(self, name, kind, parent, rotation, translation, effort) -> int:
        self.independent.append(Joint(name, kind, self.nq, self.nv, 7, 6, effort_limit=effort))
        body = self._add_body(name=name, joint_type=FREE_FLYER, parent=parent, rotation=rotation,
                              translation=translation, axis=np.zeros(3), q_index=self.nq,
                              v_index=self.nv)
        self.nq += 7
        self.nv += 6
        return body

    def _walk(self, root_body: int):
        """
        Place every link in its body, depth first from the root, children in document order.

        Iterative (an explicit stack of joints still to place): a recursive walk overflows
        Python's stack on chains of about a thousand links, which real models can have.
        """
        self._place_link(self.root, root_body, np.eye(3), np.zeros(3))
        pending = [(joint, root_body, np.eye(3), np.zeros(3))
                   for joint in reversed(self.children[self.root])]
        while pending:
            joint, body, rotation, translation = pending.pop()
            joint_rotation = rotation @ joint.rotation
            with np.errstate(over='ignore'):
                joint_translation = translation + rotation @ joint.translation
            if not np.all(np.isfinite(joint_translation)):
                raise URDFError(f'joint {joint.name!r} <origin>: position overflows (finite '
                                'coordinates too large)')
            if joint.kind == 'fixed':
                child, rotation, translation = body, joint_rotation, joint_translation
            else:
                child = self._add_joint(joint, body, joint_rotation, joint_translation)
                self.bodies[child].link = joint.child
                rotation, translation = np.eye(3), np.zeros(3)
            self._place_link(joint.child, child, rotation, translation)
            pending.extend((grandchild, child, rotation, translation)
                           for grandchild in reversed(self.children[joint.child]))

    def _place_link(self, link: str, body: int, rotation: np.ndarray, translation: np.ndarray):
        """Record ``link`` at (rotation, translation) in ``body`` and fold its inertia in."""
        self.link_frames[link] = LinkFrame(link, body, rotation, translation)
        inertial = self.links[link]
        if inertial is not None and body >= 0:
            self._fold_inertia(self.bodies[body], inertial, rotation, translation)

    def _add_joint(self, joint: UrdfJoint, parent: int, rotation, translation) -> int:
        if joint.kind == 'floating':
            return self._add_free_flyer(joint.name, 'floating', parent, rotation, translation,
                                        joint.effort)
        if joint.kind == 'planar':
            return self._add_planar(joint, parent, rotation, translation)
        joint_type = PRISMATIC if joint.kind == 'prismatic' else REVOLUTE
        if joint.mimic is not None:
            return self._add_body(name=joint.name, joint_type=joint_type, parent=parent,
                                  rotation=rotation, translation=translation, axis=joint.axis,
                                  q_index=-1, v_index=-1, mimic_of=joint.name)
        self.independent.append(Joint(joint.name, joint.kind, self.nq, self.nv, 1, 1,
                                      joint.effort, joint.velocity, joint.lower, joint.upper))
        body = self._add_body(name=joint.name, joint_type=joint_type, parent=parent,
                              rotation=rotation, translation=translation, axis=joint.axis,
                              q_index=self.nq, v_index=self.nv)
        self.nq += 1
        self.nv += 1
        return body

    def _add_planar(self, joint: UrdfJoint, parent: int, rotation, translation) -> int:
        normal = joint.axis
        b1 = np.array([1.0, 0.0, 0.0]) - normal[0] * normal
        if np.linalg.norm(b1) < 1e-6:
            b1 = np.array([0.0, 1.0, 0.0]) - normal[1] * normal
        b1 /= np.linalg.norm(b1)
        b2 = np.cross(normal, b1)
        self.independent.append(Joint(joint.name, 'planar', self.nq, self.nv, 3, 3,
                                      joint.effort, joint.velocity))
        body = parent
        for step, (joint_type, axis) in enumerate(
                ((PRISMATIC, b1), (PRISMATIC, b2), (REVOLUTE, normal))):
            body = self._add_body(
                name=joint.name if step == 2 else f'{joint.name}[{step}]', joint_type=joint_type,
                parent=body, rotation=rotation if step == 0 else np.eye(3),
                translation=translation if step == 0 else np.zeros(3), axis=axis,
                q_index=self.nq + step, v_index=self.nv + step)
        self.nq += 3
        self.nv += 3
        return body

    @staticmethod
    def _fold_inertia(body: _Body, inertial: Inertial, rotation, translation):
        com = translation + rotation @ inertial.com
        inertia_com = rotation @ inertial.inertia @ rotation.T
        mass = inertial.mass
        with np.errstate(over='ignore', invalid='ignore'):  # _check_bodies names an overflow
            body.mass += mass
            body.first_moment = body.first_moment + mass * com
            body.inertia_origin = body.inertia_origin + inertia_com + mass * (
                float(com @ com) * np.eye(3) - np.outer(com, com))

    def _couple_mimics(self):
        by_name = {joint.name: joint for joint in self.independent}
        body_of = {body.name: body for body in self.bodies}
        for body in self.bodies:
            if body.mimic_of is None:
                continue
            multiplier, offset = 1.0, 0.0
            seen = [body.name]
            current = self.joints[body.name]
            while current.mimic is not None:
                # q_current = factor * q_master + shift, so the composed map
                # q_body = multiplier * q_current + offset gains multiplier * shift.
                master, factor, shift = current.mimic
                multiplier, offset = multiplier * factor, offset + multiplier * shift
                if master in seen:
                    raise URDFError(f'joint {body.name!r}: mimic chain {seen + [master]} is a '
                                    'cycle')
                seen.append(master)
                if master not in self.joints:
                    raise URDFError(f'joint {current.name!r} <mimic>: master joint {master!r} '
                                    'does not exist')
                current = self.joints[master]
            if current.name not in by_name or by_name[current.name].nv != 1:
                raise URDFError(f'joint {body.name!r} <mimic>: master joint {current.name!r} is '
                                f'a {current.kind} joint, expected revolute, continuous or '
                                'prismatic')
            master_body = body_of[current.name]
            body.q_index, body.v_index = master_body.q_index, master_body.v_index
            body.multiplier, body.offset = multiplier, offset

    def _check_bodies(self):
        """
        Check the inertia of each rigid body the dynamics uses (links folded together).

        Checked per body, not per link: real URDFs give small fixed-joint links (sensor mounts,
        antennas) inconsistent inertias, which are harmless once part of a larger body.
        """
        links_of = {index: [] for index in range(len(self.bodies))}
        for frame in self.link_frames.values():
            if frame.body >= 0:
                links_of[frame.body].append(frame.name)
        for index, body in enumerate(self.bodies):
            if body.mass < 0:
                continue
            names = links_of[index]
            where = (f'link {names[0]!r}' if len(names) == 1 else f'links {names}') + \
                f' (the body moved by joint {body.name!r}) <inertial>'
            inertia = body.inertia_origin
            if not all(np.all(np.isfinite(x)) for x in (body.mass, body.first_moment, inertia)):
                raise URDFError(f'{where}: mass, centre of mass or inertia too large (the '
                                'inertia about the body origin overflows)')
            scale = 0.0
            if body.mass > 0:
                com = body.first_moment / body.mass
                shift = body.mass * (float(com @ com) * np.eye(3) - np.outer(com, com))
                inertia = inertia - shift
                scale = float(np.abs(shift).max())
            problem = _inertia_problem(inertia, scale)
            if problem is None:
                continue
            message = f'{where}: {problem}'
            if self.inertia_check == 'error':
                raise URDFError(message + " (load with inertia_check='warn' to accept it)")
            warnings.warn(message, ModelWarning, stacklevel=5)

    def _warn_massless(self):
        """
        Warn about joints whose torque is zero whatever the motion (without external wrenches).

        That is a joint moving a subtree without mass and, unless the joint is prismatic (a
        force, which only mass resists), without rotational inertia either: a massless body
        with inertia still needs a torque to turn.
        """
        subtree_mass = [body.mass for body in self.bodies]
        subtree_inertia = [bool(np.any(body.inertia_origin != 0.0)) for body in self.bodies]
        for index in range(len(self.bodies) - 1, -1, -1):
            parent = self.bodies[index].parent
            if parent >= 0:
                subtree_mass[parent] += subtree_mass[index]
                subtree_inertia[parent] |= subtree_inertia[index]
        for body, mass, inertia in zip(self.bodies, subtree_mass, subtree_inertia):
            if mass != 0.0 or '[' in body.name:
                continue
            if body.joint_type == PRISMATIC:
                what = 'no mass'
            elif not inertia:
                what = 'no mass and no inertia'
            else:
                continue
            warnings.warn(f'joint {body.name!r} moves a subtree with {what}: its torque is '
                          'always zero (but for external wrenches)', ModelWarning, stacklevel=4)

    def _freeze(self) -> KinematicTree:
        bodies = self.bodies
        links = tuple(self.link_frames[name] for name in self.links)

        def stack(attribute, dtype=float):
            values = [getattr(body, attribute) for body in bodies]
            shape = np.shape(values[0]) if values else ()
            return np.array(values, dtype=dtype).reshape((len(bodies),) + shape)

        return KinematicTree(
            name=self.name, joints=tuple(self.independent), links=links,
            body_names=tuple(body.name for body in bodies),
            body_links=tuple(body.link for body in bodies),
            parent=stack('parent', np.int64), joint_type=stack('joint_type', np.int64),
            q_index=stack('q_index', np.int64), v_index=stack('v_index', np.int64),
            multiplier=stack('multiplier'), offset=stack('offset'),
            rot_tree=stack('rotation').reshape(-1, 3, 3),
            pos_tree=stack('translation').reshape(-1, 3), axis=stack('axis').reshape(-1, 3),
            mass=stack('mass'), first_moment=stack('first_moment').reshape(-1, 3),
            inertia_origin=stack('inertia_origin').reshape(-1, 3, 3),
            nq=self.nq, nv=self.nv, floating_base=self.floating_base)
