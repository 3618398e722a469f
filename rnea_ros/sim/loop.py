"""
The closed loop without DDS: the plant, its controller and a feed-forward in one process.

``run_in_process`` steps exactly as ``rnea_sim`` does in lockstep, with the node's answer
computed in-process: at step k the encoders are read, the reference is sampled at t_k, the
feed-forward of that state is taken as the effort command of step k, and the PD + feed-forward
drives one physics step. It is the reference the loop over DDS is compared with (same errors
when the node answers every state in time), and with ``true_feedforward`` the limit a perfect
model gives.

With a ``Recorder`` the run is also what ``rnea_sim --record`` keeps of it: each step's
``joint_states`` as the sim publishes them in lockstep (stamp of step k; the encoders' positions,
the velocities and the torque sensor's reading of the step before, through the gap; one message
in ``gap.drop`` left out, and those of the gap's outage), so that a run can be identified
(``rnea_identify``) like a real log;
with ``desired=True`` also each step's ``desired_accelerations`` (the reference sampled at that
step, stamped as its state), as the sim publishes them for the node.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import InputError
from rnea_ros.recording.fitness import RunFitness
from rnea_ros.sim.controller import JointController
from rnea_ros.sim.plant import Plant
from rnea_ros.sim.record import Recorder
from rnea_ros.sim.trajectory import Reference

# (measured positions, measured velocities, reference) of the actuated joints -> their torques
START_NS = 1_700_000_000 * 10**9  # the stamp of sim time 0 in a recording (an epoch time)
Feedforward = Callable[[np.ndarray, np.ndarray, Reference], np.ndarray]


@dataclass(frozen=True)
class TrackingRun:
    """Per step: sim time, reference and true positions, applied effort (actuated joints)."""

    times: np.ndarray
    reference: np.ndarray
    position: np.ndarray
    effort: np.ndarray

    def rms_error(self) -> float:
        """RMS of reference - true position over every step and joint [rad or m]."""
        return float(np.sqrt(np.mean(np.square(self.reference - self.position))))

    def max_error(self) -> float:
        return float(np.max(np.abs(self.reference - self.position)))


def rnea_feedforward(model: RobotModel, plant: Plant) -> Feedforward:
    """
    Return the node's feed-forward with ``state_source: measured``: rnea(q, v, a_desired).

    ``model`` is what the node is given (the URDF, or ``plant.true_urdf`` for the limit); a
    fixed base only (a floating base needs the contact solution).
    """
    if plant.floating_base:
        raise InputError('rnea_feedforward: a fixed base only (a floating base needs contacts)')
    q, v, a = model.neutral_configuration(), np.zeros(model.nv), np.zeros(model.nv)
    columns_q = np.array([model.joint(n).idx_q for n in plant.joint_names])
    columns_v = np.array([model.joint(n).idx_v for n in plant.joint_names])

    def feedforward(position, velocity, reference):
        q[columns_q], v[columns_v], a[columns_v] = position, velocity, reference.acceleration
        return model.rnea(q, v, a)[columns_v]
    return feedforward


def run_in_process(plant: Plant, controller: JointController, duration: float,
                   feedforward: Feedforward | None = None, recorder: Recorder | None = None,
                   start_ns: int = START_NS, late_steps: int = 0,
                   desired: bool = False, fitness: RunFitness | None = None) -> TrackingRun:
    """
    Step ``duration`` seconds of sim time from the plant's current state (see above).

    ``recorder``: add the run's ``joint_states`` to it, stamped ``start_ns`` + sim time, and
    with ``desired`` its ``desired_accelerations``. ``fitness``: told every step (limit
    contacts, saturation: ``fitness.entry('lockstep')`` is the recording's metadata).
    ``late_steps``: the command computed from the state of step k is applied from step
    k + ``late_steps`` on (1: a robot whose effort interface takes the answer to a state in
    its next tick, as a ros2_control effort controller fed over a topic does).
    """
    steps = int(round(duration / plant.timestep))
    n = len(plant.joint_names)
    times = np.arange(steps) * plant.timestep
    reference, position, effort = (np.zeros((steps, n)) for _ in range(3))
    drops = np.random.default_rng(plant.gap.seed + 3)  # the sim's own draws of lost messages
    pending: deque = deque()  # the commands computed, not applied yet
    for k, t in enumerate(times):
        measured = plant.measured_position(), plant.measured_velocity()
        withheld = plant.gap.withheld(t)  # the outage draws nothing, as in the sim
        if recorder is not None and not withheld and not (
                plant.gap.drop > 0 and drops.random() < plant.gap.drop):
            recorder.add_joint_states(start_ns + round(t * 1e9), plant.joint_names, *measured,
                                      plant.measured_effort())
        sample = controller.sample(t)
        if recorder is not None and desired:
            recorder.add_desired(start_ns + round(t * 1e9), plant.joint_names, sample)
        if feedforward is not None:
            pending.append(feedforward(*measured, sample)[controller.command_columns])
            if len(pending) > late_steps:
                controller.set_command(pending.popleft(), t)
        reference[k] = sample.position
        position[k] = plant.q()[plant.actuated_q]
        effort[k] = controller.effort(t, *measured)
        plant.step(effort[k])
        if fitness is not None:
            fitness.step(plant.q()[plant.actuated_q], effort[k], plant.applied_effort)
        effort[k] = plant.applied_effort
    return TrackingRun(times, reference, position, effort)
