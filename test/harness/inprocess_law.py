"""
A feedback control law closed in-process around the simulated robot, one tick late, no ROS.

The reference of the closed-loop test of ``control_law``: the same plant (``rnea_ros.sim.Plant``,
same URDF and gap), the same effort interface (``JointController`` with ``command_interface:
effort``: the command is the whole torque), the same trajectory (``closed_loop
.trajectory_points``), and the node's own core (``ControlCore`` with the law and the gains)
computing each command from the measured state and the sampled reference, applied from the next
tick as over a topic (lockstep). ``stall_at``: from then on the core gets no desired motion (the
node's inputs stalled), so it publishes the damped rest. ``each``: a test's hand on the core and
the plant at every step, before the cycle (it may send its own desired motion, push the arm).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable

from harness.inprocess_loop import start_tracking
import numpy as np

from rnea_ros import RobotModel
from rnea_ros.control.core import ControlCore
from rnea_ros.control.payload import model_with
from rnea_ros.control.settings import Settings
from rnea_ros.control.trajectory import Trajectory
from rnea_ros.demos.closed_loop import KD, KP, Tracking, trajectory_points
from rnea_ros.dynamics.payload import Payload
from rnea_ros.sim.plant import Plant

# Per robot, the Kp of the node's gains in docs/node/control_laws.md, Kd a tenth of it: the
# panda's at the sim's former PD (KP, KD) with the distal joints softer (at KP, KD on every
# joint the loop one tick late is unstable on panda_joint7: bench/bench_control_margin.py, gain
# margin 0.45; these: 2.2), the ur5's of test/control/test_control_law.py (5.7).
LAW_KP = {'panda': (KP, KP, KP / 2, KP, KP / 4, KP / 4, KP / 10, KP / 2),
          'ur5': (400.0, 400.0, 200.0, 50.0, 50.0, 10.0)}


def law_gains(model: RobotModel, robot: str) -> dict:
    """Return the node's ``kp.<joint>``, ``kd.<joint>`` of ``robot`` (``LAW_KP``)."""
    values = {f'kp.{name}': kp for name, kp in zip(model.joint_names, LAW_KP[robot])}
    values.update({f'kd.{name}': kp * KD / KP
                   for name, kp in zip(model.joint_names, LAW_KP[robot])})
    return values


def run_law_in_process(urdf: str, gap: str, duration: float, law: str, gains: dict,
                       stall_at: float | None = None, late_steps: int = 1,
                       robot_gravity: bool = False, node_gravity: bool = False,
                       settings: dict | None = None,
                       each: Callable[[float, ControlCore, Plant], bool] | None = None,
                       params: dict | None = None, silent: tuple | None = None,
                       whole: bool = False, substeps: int = 1, efforts: bool = False,
                       payload: Payload | None = None) -> tuple[Tracking, np.ndarray,
                                                                np.ndarray]:
    """
    Track the demo trajectory with ``law`` for ``duration`` s at 1 kHz.

    ``robot_gravity``: the robot adds the plant's g(q) to the command (the sim's
    ``gravity_compensated_by_robot``); ``node_gravity``: the node's setting of that name;
    ``settings``: the core's other settings. ``each(t, core, plant)``, called at every step
    before the cycle, returns whether the core gets the step's reference as its desired motion
    (with ``whole`` it is called all the same, its answer unused).
    ``params``: more node parameters (``prediction``, ``command_delay``, ``armature.<joint>``);
    ``silent``: (start, end) s during which the core gets no joint_states (its cycles go on, as
    a node's clock runs them); ``whole``: the core takes the whole trajectory at the start (as
    the node takes a JointTrajectory) instead of the reference point of each step;
    ``substeps``: the plant's physics steps per tick; ``efforts``: the joint_states carry the
    plant's measured efforts (for the observer); ``payload``: the node's ``payload.*`` (its
    model carries it, as the node installs it).

    Returns the tracking error before the stall (all of the run without one), and the actuated
    positions and velocities at every step (steps, joints).
    """
    plant, controller, tracked = start_tracking(urdf, gap, duration, 0.0, 0.0,
                                                robot_gravity=robot_gravity,
                                                command_interface='effort', substeps=substeps)
    model, names = plant.nominal, plant.joint_names
    core = ControlCore(model if payload is None else model_with(model, payload),
                       Settings(rate=0.0, control_law=law, gains=gains,
                                gravity_compensated_by_robot=node_gravity,
                                **(settings or {})).updated(params or {}, names).validate())
    steps = int(round(duration / plant.timestep))
    tracking_steps = steps if stall_at is None else int(round(stall_at / plant.timestep))
    error = np.empty((tracking_steps, len(tracked)))
    positions, velocities = np.empty((steps, len(names))), np.empty((steps, len(names)))
    pending: deque = deque()
    for k in range(steps):
        t = k * plant.timestep
        q, v = plant.measured_position(), plant.measured_velocity()
        positions[k], velocities[k] = plant.q()[plant.actuated_q], v
        reference = controller.sample(t)
        if k < tracking_steps:
            error[k] = reference.position[tracked] - positions[k][tracked]
        if silent is None or not silent[0] <= t < silent[1]:
            core.on_joint_states(names, q, v, plant.measured_effort() if efforts else [], now=t)
        wanted = each is None or each(t, core, plant)  # every step, whole or not
        if whole and k == 0:
            times, Q, V, A = trajectory_points(model, duration)
            core.on_desired(Trajectory.from_points(names, list(zip(times, Q, V, A))), t, now=t)
        elif not whole and wanted and (stall_at is None or t < stall_at):
            core.on_desired(Trajectory.from_points(names, [(
                0, reference.position, reference.velocity, reference.acceleration)]), t, now=t)
        assert core.cycle(t, t)
        pending.append(core.command.copy())
        if len(pending) > late_steps:
            controller.set_command(pending.popleft(), t)
        plant.step(controller.effort(t, q, v))
    return Tracking.of(error), positions, velocities
