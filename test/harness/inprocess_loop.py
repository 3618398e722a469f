"""
The closed loop without ROS: the simulated robot's PD plus a feed-forward computed in-process.

The references of the closed-loop tests and benchmark: the same plant (``rnea_ros.sim.Plant``,
same URDF, same gap), the same joint controller (``rnea_ros.sim.controller.JointController``:
the PD, the trajectory sampled from the same points as ``rnea_sim`` samples them, an effort
command added), the same trajectory (``closed_loop.trajectory_points``), and a feed-forward
computed at each step in this process from the measured state and the desired acceleration (no
DDS, no latency): nothing (the PD alone), ``RobotModel.rnea`` of the URDF the node is given,
or the plant's own inverse dynamics (the limit: what a perfect rigid-body model gives).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.demos.closed_loop import KD, KP, tracked_joints, Tracking, trajectory_points
from rnea_ros.sim import loop as sim_loop
from rnea_ros.sim.controller import JointController
from rnea_ros.sim.gap import load_gap
from rnea_ros.sim.plant import Plant

# feed-forward(plant, q, v, a_desired) -> one torque per actuated joint; q, v, a: full layout
Feedforward = Callable[[Plant, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def model_feedforward(model: RobotModel) -> Feedforward:
    """Return ``model.rnea`` at the measured state and the desired acceleration (a node cycle)."""
    def feedforward(plant: Plant, q, v, a) -> np.ndarray:
        return model.rnea(q, v, a)[plant.actuated_v]
    return feedforward


def true_feedforward(plant: Plant, q, v, a) -> np.ndarray:
    """Return the plant's own inverse dynamics: true rigid bodies, armature, viscous friction."""
    return plant.inverse_dynamics(q, v, a)[plant.actuated_v]


def start_tracking(urdf: str, gap: str, duration: float, kp: float, kd: float,
                   point_efforts: bool = False, robot_gravity: bool = False,
                   substeps: int = 1, **controller_keywords):
    """
    Return (plant, controller, tracked) of a run: the plant at the demo trajectory's start.

    ``controller`` (``JointController`` with ``kp``, ``kd`` and ``controller_keywords``) holds
    the trajectory of ``duration`` s, its points carrying ``RobotModel.rnea`` with
    ``point_efforts``; with ``robot_gravity`` it adds the plant's g(q) itself (the sim's
    ``gravity_compensated_by_robot``); ``tracked``: the indices of the tracked joints among the
    actuated ones; ``substeps``: the plant's physics steps per tick (``Plant``).
    """
    plant = Plant(urdf, gap=load_gap(gap), substeps=substeps)
    model, names = plant.nominal, plant.joint_names
    times, Q, V, A = trajectory_points(model, duration)
    lower = np.array([model.joint(name).lower for name in names])
    upper = np.array([model.joint(name).upper for name in names])
    controller = JointController(names, kp, kd, lower, upper, Q[0], **controller_keywords)
    if robot_gravity:
        controller.gravity = plant.gravity_torques
    efforts = model.rnea_batch(Q, V, A) if point_efforts else None
    controller.set_trajectory(model.joint_names, times, Q, V, A, efforts, start=0.0)
    q_start = model.neutral_configuration()
    q_start[plant.actuated_q] = Q[0]
    plant.reset(q_start)
    return plant, controller, [names.index(name) for name in tracked_joints(model)]


def run_in_process(urdf: str, gap: str, feedforward: Feedforward | None, duration: float,
                   kp: float = KP, kd: float = KD, point_efforts: bool = False,
                   late_steps: int = 0, **controller_keywords) -> Tracking:
    """
    Track the demo trajectory for ``duration`` s at 1 kHz; the tracking error of the run.

    The steps are ``rnea_ros.sim.loop.run_in_process``'s (the sim's lockstep without DDS).
    ``point_efforts``: the trajectory's points carry ``RobotModel.rnea`` at their desired
    state, as the node's ``joint_trajectory_with_effort`` does (path a; ``feedforward`` is then
    usually None); otherwise ``feedforward`` gives an effort command at each step (path b).
    ``late_steps``: the command computed from the state of step k is applied from step
    k + ``late_steps`` on (see ``sim.loop.run_in_process``).
    ``controller_keywords`` go to ``start_tracking`` (e.g. ``command_interface``).
    """
    plant, controller, tracked = start_tracking(urdf, gap, duration, kp, kd, point_efforts,
                                                **controller_keywords)
    run = sim_loop.run_in_process(plant, controller, duration,
                                  None if feedforward is None else full_layout(plant, feedforward),
                                  late_steps=late_steps)
    return Tracking.of(run.reference[:, tracked] - run.position[:, tracked])


def full_layout(plant: Plant, feedforward: Feedforward) -> sim_loop.Feedforward:
    """Return ``feedforward`` called with the model's whole q, v and the desired acceleration."""
    model = plant.nominal
    q, v, a = model.neutral_configuration(), np.zeros(model.nv), np.zeros(model.nv)

    def of_actuated(position, velocity, reference):
        q[plant.actuated_q], v[plant.actuated_v] = position, velocity
        a[plant.actuated_v] = reference.acceleration
        return feedforward(plant, q, v, a)
    return of_actuated
