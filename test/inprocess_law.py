"""
A feedback control law closed in-process around the simulated robot, one tick late, no ROS.

The reference of the closed-loop test of ``control_law``: the same plant (``rnea_ros.sim.Plant``,
same URDF and gap), the same effort interface (``JointController`` with ``command_interface:
effort``: the command is the whole torque), the same trajectory (``closed_loop
.trajectory_points``), and the node's own core (``Feedforward`` with the law and the gains)
computing each command from the measured state and the sampled reference, applied from the next
tick as over a topic (lockstep). ``stall_at``: from then on the core gets no desired motion (the
node's inputs stalled), so it publishes the damped rest.
"""
from __future__ import annotations

from collections import deque

from inprocess_loop import start_tracking
import numpy as np

from rnea_ros.control.feedforward import Feedforward
from rnea_ros.control.settings import Settings
from rnea_ros.control.trajectory import Trajectory
from rnea_ros.demos.closed_loop import Tracking


def run_law_in_process(urdf: str, gap: str, duration: float, law: str, gains: dict,
                       stall_at: float | None = None, late_steps: int = 1
                       ) -> tuple[Tracking, np.ndarray, np.ndarray]:
    """
    Track the demo trajectory with ``law`` for ``duration`` s at 1 kHz.

    Returns the tracking error before the stall (all of the run without one), and the actuated
    positions and velocities at every step (steps, joints).
    """
    plant, controller, tracked = start_tracking(urdf, gap, duration, 0.0, 0.0,
                                                command_interface='effort')
    model, names = plant.nominal, plant.joint_names
    core = Feedforward(model, Settings(rate=0.0, control_law=law, gains=gains).validate())
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
        core.on_joint_states(names, q, v, [], now=t)
        if stall_at is None or t < stall_at:
            core.on_desired(Trajectory.from_points(names, [(
                0, reference.position, reference.velocity, reference.acceleration)]), t, now=t)
        assert core.cycle(t, t)
        pending.append(core.command.copy())
        if len(pending) > late_steps:
            controller.set_command(pending.popleft(), t)
        plant.step(controller.effort(t, q, v))
    return Tracking.of(error), positions, velocities
