"""
The desired motion the cycle follows: the latest desired_accelerations message on the model.

``Desired`` maps a ``trajectory.Trajectory`` (one point: constant accelerations; several: a
trajectory sampled at the ROS time) onto the model's joints, with the arrays a cycle samples
into, allocated once. ``cycle_state.CycleState.on_desired`` makes one per message and numbers
it (``number``: the desired motions taken so far, this one included; ``reference`` follows under
a feedback law only one numbered above the last rest). ROS-free.
"""
from __future__ import annotations

import numpy as np

from rnea_ros.control.joint_input import Rejected
from rnea_ros.control.trajectory import Trajectory, TrajectorySampler

__all__ = ['Desired', 'UNKNOWN_JOINTS']

UNKNOWN_JOINTS = 'unknown_joints'


class Desired:
    """The latest desired-motion message mapped onto the model's joints."""

    def __init__(self, trajectory: Trajectory, index: dict[str, int], start: float, now: float):
        known = [(k, index[name]) for k, name in enumerate(trajectory.joint_names)
                 if name in index]
        if not known:
            raise Rejected(UNKNOWN_JOINTS, f'none of the joints {list(trajectory.joint_names)} '
                                           f'is a joint of the model')
        self.trajectory = trajectory
        self.sampler = TrajectorySampler(trajectory)
        n = len(trajectory.joint_names)
        self.source = np.array([k for k, _ in known], dtype=np.int64)
        self.target = np.array([j for _, j in known], dtype=np.int64)
        self.identity = (len(known) == n and len(index) == n
                         and all(k == j for k, j in known))
        self.q, self.v, self.a = np.zeros(n), np.zeros(n), np.zeros(n)
        self.gathered = np.zeros(len(known))
        self.constant = trajectory.n_points == 1
        self.has_positions = trajectory.positions is not None
        self.has_velocities = trajectory.velocities is not None or not self.constant
        self.start = start
        self.received = now
        self.a_full: np.ndarray | None = None  # constant: the joint-space a, set by the owner
        self.number = 0  # set by the owner: the desired motions it took, this one included

    def active(self, now: float, ros_time: float, timeout: float) -> bool:
        """Tell whether it applies: a point within ``timeout`` of receipt, a trajectory's end."""
        if self.constant:
            return now - self.received <= timeout
        return ros_time - self.start <= self.sampler.end_time + timeout

    def scatter(self, values: np.ndarray, out: np.ndarray) -> None:
        """Write trajectory-ordered ``values`` into the joint-ordered ``out``."""
        if self.identity:
            out[:] = values
        else:
            np.take(values, self.source, out=self.gathered)
            out[self.target] = self.gathered
