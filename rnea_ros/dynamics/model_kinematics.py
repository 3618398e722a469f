"""
The kinematics of ``RobotModel``: link placements, Jacobians, joint reaction wrenches.

``RobotModel`` inherits these methods; they run the kernels of ``kinematics.py`` (and RNEA's
body forces for the reaction wrenches) on the model's packed arrays, after its argument checks
(``checks.py``). Frames and the [linear; angular] order: the ``RobotModel`` docstring.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from rnea_ros.dynamics import checks, kinematics
from rnea_ros.dynamics import rnea as kernels
from rnea_ros.errors import InputError


class KinematicsMethods:
    """``RobotModel``'s link placements, Jacobians and joint reaction wrenches (a base of it)."""

    def link_placement(self, q, link: str) -> tuple[np.ndarray, np.ndarray]:
        """
        World pose (R (3, 3), p (3,)) of a link frame for configuration q.

        Fixed base: the URDF root link is the world frame. Floating base: q[:7] places it.
        """
        rotations, positions = self.link_placements(q, (link,))
        return rotations[0], positions[0]

    def link_placements(self, q, links) -> tuple[np.ndarray, np.ndarray]:
        """World poses of several links at once: R (k, 3, 3), p (k, 3)."""
        q, _, _ = self._checked_state(q, self._zeros_v, self._zeros_v)
        rows = np.array([self._link_row(link, 'link') for link in links], dtype=np.int64)
        out = np.zeros((len(rows), 12))
        kinematics.link_placements(self._model, self._work, self._bodies, q, self._link_body,
                                   self._link_pose, rows, out)
        checks.finite(out, 'link_placements', 'placement')
        return kinematics.placement_matrices(out)

    def link_jacobian(self, q, link: str, frame: str = 'local') -> np.ndarray:
        """
        Jacobian (6, nv) of a link frame: its spatial velocity [linear; angular] = J v.

        ``frame`` as Pinocchio's ReferenceFrame: 'local' (link axes, velocity of the link
        origin), 'local_world_aligned' (world axes, velocity of the link origin), 'world'
        (world axes, velocity of the point at the world origin).
        """
        if frame not in ('local', 'local_world_aligned', 'world'):
            raise InputError(f"frame: expected 'local', 'local_world_aligned' or 'world', "
                             f'got {frame!r}')
        q, _, _ = self._checked_state(q, self._zeros_v, self._zeros_v)
        row = self._link_row(link, 'link')
        jac = np.zeros((6, self.nv))
        placement = np.zeros(12)
        kinematics.link_jacobian_world_aligned(self._model, self._work, self._bodies, q,
                                               self._link_body, self._link_pose, row,
                                               placement, jac)
        rotation, position = kinematics.placement_matrices(placement)
        with np.errstate(all='ignore'):  # an overflow is refused below, by name
            if frame == 'local':
                jac = np.vstack([rotation.T @ jac[:3], rotation.T @ jac[3:]])
            elif frame == 'world':
                # Velocity of the point at the world origin: v_O = v_link - w x p_link.
                jac[:3] -= np.cross(jac[3:].T, position).T
        checks.finite(placement, 'link_jacobian', 'link placement')
        return checks.finite(jac, 'link_jacobian', 'Jacobian')

    def joint_reaction_wrenches(self, q, v, a, f_ext: Mapping | None = None, gravity=None
                                ) -> dict[str, np.ndarray]:
        """
        Return the wrench each moving joint transmits, from inverse dynamics (q, v, a, f_ext).

        For every revolute, continuous, prismatic, floating and planar joint (mimic joints and
        'root_joint' included), by joint name: [force; torque] (N, N m) that the parent body
        applies on the child body through the joint, in the child link frame about its origin
        (what biomechanics calls joint forces and moments). Projected on the joint axis it
        gives the joint's torque (before mimic folding). Fixed joints are folded into bodies
        and have no entry.
        """
        # Leaves the body forces in work.
        self._rnea_checked(q, v, a, f_ext, gravity, None, 'joint_reaction_wrenches')
        start = kernels.W_FORCE
        forces = self._work.reshape(-1, kernels.WORK_WIDTH)[:, start:start + 6]
        wrenches = {}
        for body, name in enumerate(self._tree.body_names):
            if '[' in name:  # the inner bodies of a planar joint
                continue
            rotation = self._canonical[body]  # canonical body frame -> URDF child link frame
            with np.errstate(all='ignore'):  # an overflow is refused below, by name
                wrench = np.concatenate([rotation @ forces[body, 3:],
                                         rotation @ forces[body, :3]])
            wrenches[name] = checks.finite(wrench, 'joint_reaction_wrenches',
                                           f'wrench of joint {name!r}')
        return wrenches
