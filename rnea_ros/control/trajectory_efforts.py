"""
Efforts at every point of a trajectory, as the cycle of a ``core.ControlCore`` would.

With the same contact solution, armature, friction, ``torque_terms`` and effort limits as the
cycle (the ``planned_trajectory`` input's answer, ``joint_trajectory_with_effort``). ROS-free.
"""
from __future__ import annotations

import numpy as np

from rnea_ros.control.desired import UNKNOWN_JOINTS
from rnea_ros.control.joint_input import NON_FINITE, Rejected
from rnea_ros.control.safety import all_finite
from rnea_ros.control.trajectory import MISSING_FIELD, point_derivatives, Trajectory
from rnea_ros.errors import InputError

__all__ = ['trajectory_efforts']


def trajectory_efforts(core, trajectory: Trajectory,
                       measured_q: np.ndarray | None = None) -> np.ndarray:
    """
    Efforts (N, n) at the points of ``trajectory`` (its joint order) by inverse dynamics.

    Each point's positions/velocities/accelerations (missing ones from the splines, see
    ``trajectory.point_derivatives``); joints the trajectory does not name stay at their
    latest measured position at rest; a floating base at its latest odometry pose, at rest.
    ``torque_terms`` and the effort limits apply. ``measured_q``: the measured q to use
    (a snapshot taken by a caller running beside the cycles), default the current one.
    Raises ``Rejected``. ``core``: the ``ControlCore`` whose model, state and settings apply
    (one snapshot for all the points; its public fields only).
    """
    settings, state, torques = core.settings, core.state, core.torques
    index = [state.joint_index.get(name) for name in trajectory.joint_names]
    known = [k for k, j in enumerate(index) if j is not None]
    if not known:
        raise Rejected(UNKNOWN_JOINTS, f'none of the joints {list(trajectory.joint_names)} '
                                       f'is a joint of the model')
    if trajectory.positions is None:
        raise Rejected(MISSING_FIELD, 'the points carry no positions')
    q_points, v_points, a_points = point_derivatives(trajectory)
    n_points = trajectory.n_points
    q = np.repeat((state.q if measured_q is None else measured_q)[None], n_points, axis=0)
    v = np.zeros((n_points, core.model.nv))
    a = np.zeros((n_points, core.model.nv))
    columns = [index[k] for k in known]
    q[:, [state.q_offset + j for j in columns]] = q_points[:, known]
    if settings.torque_terms != 'gravity':
        v[:, [state.v_offset + j for j in columns]] = v_points[:, known]
    if settings.torque_terms == 'full':
        a[:, [state.v_offset + j for j in columns]] = a_points[:, known]
    try:
        if core.trajectory_contacts is not None:  # balanced by the contacts, as the cycle
            tau = np.array([core.trajectory_contacts.solve(q[k], v[k], a[k]).tau
                            for k in range(n_points)])
        else:
            tau = core.model.rnea_batch(q, v, a)
    except InputError as exc:
        raise Rejected(NON_FINITE, f'inverse dynamics failed: {exc}') from None
    # The joint terms as in the cycle: friction at the points' (desired) velocities.
    tau += torques.actuation.armature * a
    if settings.friction_compensation and torques.friction_joints:
        v_friction = np.zeros((n_points, core.model.nv))
        v_friction[:, [state.v_offset + j for j in columns]] = v_points[:, known]
        tau += torques.actuation.friction_torques_batch(v_friction)
    for row in tau:
        if not all_finite(row):
            raise Rejected(NON_FINITE, 'the efforts are not finite')
        core.limiter.clip(row)
    if settings.gravity_compensated_by_robot:  # the robot adds g(q) to each point
        tau -= core.model.rnea_batch(q, np.zeros_like(v), np.zeros_like(a))
    efforts = np.zeros((n_points, len(trajectory.joint_names)))
    efforts[:, known] = tau[:, [state.v_offset + j for j in columns]]
    return efforts
