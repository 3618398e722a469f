"""
The node's control core without ROS: inputs -> state -> torques, with the fault policy.

``ControlCore`` wires the parts of one model's cycle, each allocated once: ``CycleState`` (the
inputs merged into arrays), ``Reference`` (the desired motion followed, sampled once a cycle),
``CycleTorques`` (the inverse dynamics, the laws, the rest, the reactions; they act on the
state ``CyclePrediction`` predicts with ``prediction: model``), the momentum observer
(``observer_outputs``, ``observer_queue``), the effort limits, the watch of the loop
(``loop_watch``: an oscillation, sustained clipping; while it holds the loop unstable the
observer's threshold crossings are not collisions) and the fault state. The
ROS node (``rnea_ros.node``) only converts messages to the calls below, and binds the outputs to
the arrays of its preallocated messages (``bind_outputs``), so a cycle writes them in place:

- ``on_joint_states`` / ``on_odometry`` / ``on_base_acceleration`` / ``on_wrench`` /
  ``on_desired``: inputs (``CycleState``; joint_states also queued for the observer);
- ``cycle(now, ros_time)``: one control cycle; afterwards ``position``, ``velocity``, ``effort``
  (the one-degree-of-freedom joints, model order) and ``command`` (``command_joints`` order) hold
  what to publish, when it returns True. Its numerical work is three compiled calls (input ages,
  ``RobotModel.rnea`` into a preallocated tau, then clip + finiteness + outputs in one), so the
  Python around it stays short: the node runs it on the latency path;
- ``use(settings)``: a new ``settings.Settings`` snapshot (a live set), between two cycles;
- ``trajectory_efforts`` (module of that name), ``status``: a trajectory's efforts, diagnostics.

``now`` is steady-clock seconds (watchdogs); ``ros_time`` is ROS time in seconds (trajectory
sampling, which is defined in ROS time). Other modules read the public fields only.
"""
from __future__ import annotations

import numpy as np

from rnea_ros.contacts import ContactSolver
from rnea_ros.control.control_law import leave_gravity_out
from rnea_ros.control.cycle_kernels import finish_outputs, input_ages
from rnea_ros.control.cycle_prediction import CyclePrediction
from rnea_ros.control.cycle_state import CycleState
from rnea_ros.control.cycle_torques import CycleTorques
from rnea_ros.control.loop_watch import LoopWatch
from rnea_ros.control.observer_outputs import ObserverOutput, stamp_seconds
from rnea_ros.control.observer_queue import SampleQueue
from rnea_ros.control.reference import Reference
from rnea_ros.control.safety import (COLLISION, EffortLimiter, FaultState, JOINT_STATES_MISSING,
                                     LOOP_HOLD, LOOP_UNSTABLE, MODEL_MISMATCH, NON_FINITE_OUTPUT)
from rnea_ros.control.settings import check_model, Settings
from rnea_ros.control.status import core_status
from rnea_ros.control.trajectory import Trajectory
from rnea_ros.control.trajectory_efforts import trajectory_efforts
from rnea_ros.dynamics.model import RobotModel

__all__ = ['ControlCore']


class ControlCore:
    """Control state and torques for one model (see the module docstring)."""

    def __init__(self, model: RobotModel, settings: Settings):
        check_model(model, settings)
        self.model = model
        self.settings = settings
        self.state = CycleState(model, settings)
        self.reference = Reference()
        self.torques = CycleTorques(self.state, settings)
        self.prediction = CyclePrediction(model, self.torques.actuation, settings, self.state)
        self.torques.predicted = self.prediction
        n = len(self.state.joint_names)
        # Outputs (``bind_outputs`` may replace them with the arrays of outgoing messages).
        self.position, self.velocity, self.effort = np.zeros(n), np.zeros(n), np.zeros(n)
        self.command = np.zeros(len(self.state.command_joints))
        self.limiter = EffortLimiter(model.effort_limits, settings.effort_limit_scale)
        self.torques.upper = self.limiter.upper  # updated in place (a live effort_limit_scale)
        self.watch = LoopWatch(self.state.joint_names, self.state.v_offset, self.limiter.upper)
        self.fault = FaultState()
        self.model_mismatch: str | None = None
        self.clipped_cycles = 0
        self.non_finite_outputs = 0
        self.loop_margin = None  # the verdict on the feedback gains (gain_check), the node's
        # Contact solution of trajectory points: its own solver on its own model copy (it runs
        # on the executor thread, beside the cycles).
        self.trajectory_contacts = (ContactSolver(model.copy(), settings.contacts)
                                    if self.torques.contacts is not None else None)
        # External torques, wrenches and collisions from the measured efforts (a fixed base).
        self.observer = (ObserverOutput(model, settings, self.torques.actuation,
                                        self.state.joint_names,
                                        self.state.joints.track_effort())
                         if settings.observer else None)
        self.observer_queue = (SampleQueue(settings.observer_queue, model.nq, model.nv, n)
                               if settings.observer else None)
        if self.observer is not None:  # an instability's crossings are not collisions
            self.observer.loop_unstable = self.watch.unstable
        # Compile (or load from the cache) every helper now, not in the first cycle.
        input_ages(self.state.joints.position_time, self.state.joints.velocity_time,
                   self.state.command_joint)
        self._finish(settings.gravity_compensated_by_robot)
        self.limiter.clip(np.zeros(model.nv))

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Return the model's one-DoF joints, in v order: the joints of the outputs."""
        return self.state.joint_names

    @property
    def command_joints(self) -> tuple[str, ...]:
        """Return the joints of ``command``, in its order (``command_joints``)."""
        return self.state.command_joints

    def use(self, settings: Settings) -> None:
        """
        Take a new settings snapshot (a live set), between two cycles: the node holds its lock.

        A cycle reads ``settings`` once, at its start. What is derived from the snapshot (the
        effort limits, the gains per v entry, the observer's thresholds) is rebuilt here, not
        read from it each cycle.
        """
        if settings.effort_limit_scale != self.limiter.scale:
            self.limiter.scale = settings.effort_limit_scale
        if settings.gains != self.settings.gains:
            self.torques.law.use(settings.gains)
        if self.observer is not None:
            self.observer.use(settings)
        self.prediction.use(settings)
        if self.prediction.stall_arrays is None:  # no estimate (or a new link): the model's
            self.torques.stall_brake.model = self.model
        self.settings = settings

    def bind_outputs(self, position: np.ndarray, velocity: np.ndarray, effort: np.ndarray,
                     command: np.ndarray) -> None:
        """
        Write the outputs of every cycle into these arrays.

        Write the outputs of every cycle into these arrays (e.g. views of the buffers of
        preallocated messages) instead of the ones of ``position``... ``command``.
        """
        for name, array, size in (('position', position, len(self.joint_names)),
                                  ('velocity', velocity, len(self.joint_names)),
                                  ('effort', effort, len(self.joint_names)),
                                  ('command', command, len(self.command_joints))):
            if array.dtype != np.float64 or array.shape != (size,):
                raise ValueError(f'{name}: expected a float64 array of shape ({size},)')
        self.position, self.velocity, self.effort, self.command = (position, velocity, effort,
                                                                   command)

    # ------------------------------------------------------------------ inputs
    def on_joint_states(self, names, position, velocity, effort, now: float, stamp=None,
                        observe: bool = True) -> None:
        """
        Merge a sensor_msgs/JointState sample (raises ``Rejected``); queue it for the observer.

        ``observe``: integrate the queued samples now (``observe_queued``); False when more
        messages of the same batch follow (the node integrates the batch after its last one).
        """
        state = self.state
        state.on_joint_states(names, position, velocity, effort, now, stamp)
        if self.prediction.on:
            self.prediction.sampled(stamp_seconds(stamp, now), now)
        if self.observer is not None:
            self.observer_queue.push(stamp_seconds(stamp, now), state.q, state.v,
                                     state.joints.effort, state.joints.with_effort, now)
            if observe:
                self.observe_queued()

    def observe_queued(self) -> None:
        """Integrate every queued joint_states sample in stamp order (``observer_queue``)."""
        if self.observer_queue is not None:
            self.observer_queue.integrate(self.observer)

    def on_odometry(self, position, orientation, linear, angular, now: float,
                    stamp=None) -> None:
        """Take a nav_msgs/Odometry sample (``CycleState.on_odometry``)."""
        self.state.on_odometry(position, orientation, linear, angular, now, stamp)

    def on_base_acceleration(self, linear, angular, now: float,
                             stamp: float | None = None) -> None:
        """Take a geometry_msgs/Accel in the base frame (``CycleState.on_base_acceleration``)."""
        self.state.on_base_acceleration(linear, angular, now, stamp, self.settings)

    def on_wrench(self, index: int, frame: str, values, now: float) -> None:
        """Take a geometry_msgs/WrenchStamped of ``wrench_topics[index]`` (raises ``Rejected``)."""
        self.state.on_wrench(index, frame, values, now)

    def on_desired(self, trajectory: Trajectory, start: float, now: float) -> None:
        """Take a desired motion (``CycleState.on_desired``; raises ``Rejected``)."""
        self.state.on_desired(trajectory, start, now)

    def take_state_from(self, other: ControlCore) -> None:
        """Continue from another model's core (a new robot_description with the same joints)."""
        self.state.take_state_from(other.state)
        self.reference.take_state_from(other.reference)
        self.torques.take_state_from(other.torques)
        self.prediction.take_state_from(other.prediction)
        self.clipped_cycles = other.clipped_cycles
        self.non_finite_outputs = other.non_finite_outputs
        self.fault = other.fault
        self.watch.take_state_from(other.watch)
        if self.observer is not None and other.observer is not None:
            other.observe_queued()  # none is lost at a change of model
            self.observer.take_state_from(other.observer)
            self.observer_queue.pushed = other.observer_queue.pushed
            self.observer_queue.overflowed = other.observer_queue.overflowed

    # ------------------------------------------------------------------ the cycle
    def input_fault(self, now: float, settings: Settings | None = None) -> str | None:
        """Return the fault code that holds for the inputs at steady time ``now`` (None: fine)."""
        if self.model_mismatch is not None:
            return MODEL_MISMATCH
        return self.state.input_fault(now, self.settings if settings is None else settings)

    def cycle(self, now: float, ros_time: float) -> bool:
        """
        Run one control cycle; True if the outputs are to be published.

        One control cycle; True if ``position``/``velocity``/``effort``/``command`` are to
        be published (always finite and clipped), False if nothing is (fault_output 'none').
        The settings snapshot is read once: the whole cycle runs with the same one. Under a
        feedback law, a cycle that rests with a measured pose holds back every desired motion
        taken so far (``reference``). The loop watch takes every cycle computed from fresh
        inputs, its torque before the clip; its stop (``unstable_reaction``) goes before a
        collision's.
        """
        settings, torques, desired = self.settings, self.torques, self.state.desired
        feedback, watch = torques.law.feedback, self.watch
        self.prediction.advance(now)  # the state the answer meets (``acted_on``)
        code = self.input_fault(now, settings)
        if code is None and watch.latched:
            code = LOOP_UNSTABLE
        elif code is None and watch.holding and not watch.released(
                desired, self.reference.rest_number, now, ros_time,
                settings.acceleration_timeout):
            code = LOOP_HOLD
        if code is None and self.observer is not None and self.observer.reacting:
            code = COLLISION
        if code is None:
            followed = self.reference.follow(desired, now, ros_time + self.prediction.ahead,
                                             settings.acceleration_timeout, feedback)
            code = torques.compute(followed, now, settings)
            if code is None:
                law = torques.law
                watch.observe(torques.tau, torques.used_v if law.resting or not feedback
                              else law.error_rate, feedback, settings.unstable_reaction, now)
                clipped = (self._finish(settings.gravity_compensated_by_robot)
                           if torques.wrenches_finite() else -1)
                if clipped >= 0:
                    self.prediction.commanded(torques.tau)
                    if clipped:
                        self.clipped_cycles += 1
                    self.fault.update(None, now)
                    if feedback and torques.law.resting:
                        self.reference.rested(desired)
                    return True
                code = NON_FINITE_OUTPUT
        else:
            self.reference.watch_clock(desired, ros_time)
        # A fault: the fault output at the measured state (finite by construction).
        self.fault.update(code, now)
        if code == NON_FINITE_OUTPUT:
            self.non_finite_outputs += 1
        if feedback and code != JOINT_STATES_MISSING:
            self.reference.rested(desired)
        if code == COLLISION:
            mode, latch = settings.collision_reaction, self.observer.latches
        elif code in (LOOP_UNSTABLE, LOOP_HOLD):
            mode, latch = 'stop', watch.stop_latch
        else:
            mode, latch = settings.fault_output, 0
        with_gravity = torques.fault_output(code, mode, latch, settings, self.limiter.upper)
        if with_gravity is None:
            return False
        if self._finish(with_gravity and settings.gravity_compensated_by_robot) > 0:
            self.clipped_cycles += 1
        self.prediction.commanded(torques.tau, fault=now)
        return True

    def _finish(self, gravity_out: bool) -> int:
        """
        Clip tau and write the outputs; -1 (nothing written) if tau is not finite.

        ``gravity_out`` (``gravity_compensated_by_robot``, a tau with gravity): the total is
        clipped and g(q) taken out of what is written (the robot adds it).
        """
        limiter, torques, state = self.limiter, self.torques, self.state
        clip, clipped = limiter.scale > 0, 0
        if gravity_out:
            clipped = int(limiter.clip(torques.tau)) if clip else 0
            if leave_gravity_out(self.model, torques.used_q, torques.zeros, torques.tau,
                                 torques.gravity):
                clip = False
        written = finish_outputs(torques.tau, limiter.lower, limiter.upper, clip,
                                 state.command_index, torques.used_q, torques.used_v,
                                 state.q_offset, state.v_offset, self.position, self.velocity,
                                 self.effort, self.command)
        return written if written < 0 else max(written, clipped)

    # ------------------------------------------------------------------ trajectories
    def trajectory_efforts(self, trajectory: Trajectory,
                           measured_q: np.ndarray | None = None) -> np.ndarray:
        """Efforts (N, n) at the points of ``trajectory`` (``trajectory_efforts.efforts``)."""
        return trajectory_efforts(self, trajectory, measured_q)

    def stall_samples(self) -> tuple | None:
        """
        Return the samples ``stall_payload_estimate`` fits (copies); None: no fit to make.

        Under the node's lock (the inputs write them); none while stalled (``stall_estimate``).
        """
        if self.prediction.estimate is None or self.torques.stalled:
            return None
        return self.prediction.estimate.window()

    def estimate_payload(self, samples: tuple) -> tuple:
        """
        Fit ``stall_samples``: return the stall's (model, prediction arrays); off the lock.

        The fit allocates: the node's status timer calls it, not a cycle. The model carries
        the estimate (``StallEstimate.model_for``), or is the core's own when it is gated.
        """
        estimate = self.prediction.estimate
        estimate.fit(samples)
        model = estimate.model_for(self.model)
        return model, model.forward_dynamics_arrays(self.torques.actuation)

    def install_stall_model(self, fitted: tuple) -> None:
        """Install ``estimate_payload``'s result for the next stall; between two cycles."""
        self.torques.stall_brake.model, self.prediction.stall_arrays = fitted

    # ------------------------------------------------------------------ diagnostics
    def status(self, now: float, ros_time: float) -> tuple[int, str, dict[str, str]]:
        """(level, message, key -> value) describing the inputs and the fault state."""
        return core_status(self, now, ros_time)
