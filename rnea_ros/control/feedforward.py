"""
The node's control logic without ROS: inputs -> state -> torques, with the fault policy.

``Feedforward`` owns one ``RobotModel`` and every array the control cycle touches, allocated
once. The ROS node (``node.node``) only converts messages to the calls below, and binds the
outputs to the arrays of its preallocated messages (``bind_outputs``), so a cycle writes them in
place:

- ``on_joint_states`` / ``on_odometry`` / ``on_base_acceleration`` / ``on_desired``: inputs;
- ``cycle(now, ros_time)``: one control cycle; afterwards ``position``, ``velocity``, ``effort``
  (the one-degree-of-freedom joints, model order) and ``command`` (``command_joints`` order) hold
  what to publish, when it returns True. Its numerical work is three compiled calls (input ages,
  ``RobotModel.rnea`` into a preallocated tau, then clip + finiteness + outputs in one), so the
  Python around it stays short: the node runs it on the latency path;
- ``use(settings)``: a new ``settings.Settings`` snapshot (a live set), between two cycles;
- ``trajectory_efforts`` (module of that name), ``status``: a trajectory's efforts, diagnostics.

State layout: q = [base pose (7, floating base only); joint positions], v = [base twist (6);
joint velocities], following ``RobotModel``. Only one-degree-of-freedom joints can come from
``sensor_msgs/JointState``, so a model with other multi-DoF joints (URDF ``floating``/``planar``)
is refused. ``now`` is steady-clock seconds (watchdogs); ``ros_time`` is ROS time in seconds
(trajectory sampling, which is defined in ROS time).

Joint terms (``rnea_ros.dynamics.actuation``, parameters ``armature.<joint>`` and
``friction.<joint>.*``): the armature torque (armature x the acceleration used) is part of the
dynamics whenever set; the friction torque is added to the published torques only with
``friction_compensation``, at the desired velocity of the joints the active desired motion gives
a velocity for (a multi-point trajectory always does, a single point when it carries
velocities), at the measured velocity for the others. Neither is added to the fault output.
"""
from __future__ import annotations

import math

import numpy as np

from rnea_ros.contacts import ContactSolver
from rnea_ros.control.collision_reaction import StopReaction
from rnea_ros.control.control_law import ControlLaw, leave_gravity_out, rest_torques
from rnea_ros.control.cycle_kernels import add_joint_terms, finish_outputs, input_ages
from rnea_ros.control.desired import Desired
from rnea_ros.control.joint_input import (accel_values, base_spatial_acceleration,
                                          BaseStateInput, JointStateInput, low_pass, NEVER,
                                          NEVER_RECEIVED, Rejected, STALE, VELOCITY_STALE)
from rnea_ros.control.observer_outputs import ObserverOutput, stamp_seconds
from rnea_ros.control.observer_queue import SampleQueue
from rnea_ros.control.safety import (all_finite, COLLISION, EffortLimiter, ERROR, fault_torques,
                                     FaultState, JOINT_STATES_MISSING, JOINT_STATES_STALE,
                                     MODEL_MISMATCH, NON_FINITE_OUTPUT, ODOMETRY_STALE,
                                     VELOCITY_MISSING)
from rnea_ros.control.settings import (actuated_joints, check_model, ModelRejected,
                                       ParameterRejected, Settings)
from rnea_ros.control.status import core_status
from rnea_ros.control.trajectory import Trajectory
from rnea_ros.control.trajectory_efforts import trajectory_efforts
from rnea_ros.control.wrenches import ContactOutput, MeasuredWrenches, ReactionOutput
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import InputError


class Feedforward:
    """Control state and torques for one model (see the module docstring)."""

    def __init__(self, model: RobotModel, settings: Settings):
        check_model(model, settings)
        self.model = model
        self.settings = settings
        self.joint_names = actuated_joints(model)
        floating = model.floating_base
        self.q_offset, self.v_offset = (7, 6) if floating else (0, 0)
        self._joint_index = {name: k for k, name in enumerate(self.joint_names)}
        # Measured state, written in place by the inputs; desired state; used state.
        self.q = model.neutral_configuration()
        self.v = np.zeros(model.nv)
        self.q_desired = self.q.copy()
        self.v_desired = np.zeros(model.nv)
        self.a = np.zeros(model.nv)
        self._zeros = np.zeros(model.nv)
        self.tau = np.zeros(model.nv)
        self.joints = JointStateInput(self.joint_names, self.q[self.q_offset:],
                                      self.v[self.v_offset:])
        self.joints.lock(dict(zip(settings.locked_joints, settings.locked_positions)))
        self.joints.bound_by(model)  # a sample beyond the URDF limits' multiple is refused
        self.base = BaseStateInput(self.q[:7], self.v[:6]) if floating else None
        self.base_acceleration = np.zeros(6)
        self.base_acceleration_time = NEVER
        self._base_acceleration_clock = NEVER  # its message time (stamp or arrival)
        self.desired: Desired | None = None
        self.desired_ever = False
        # Views the cycle reads and writes through (no slicing per cycle).
        self._base_linear = self.base_acceleration[:3]
        self._base_angular = self.base_acceleration[3:]
        self._base_twist = self.v[:6]
        self._a_joints = self.a[self.v_offset:]
        self._q_desired_joints = self.q_desired[self.q_offset:]
        self._v_desired_joints = self.v_desired[self.v_offset:]
        self._used_q, self._used_v = self.q, self.v
        # Outputs (``bind_outputs`` may replace them with the arrays of outgoing messages).
        n = len(self.joint_names)
        self.position, self.velocity, self.effort = np.zeros(n), np.zeros(n), np.zeros(n)
        command = settings.command_joints or tuple(
            name for name in self.joint_names if name not in self.joints.locked)
        self.command_joints = tuple(command)
        self._command_index = np.array([self.v_offset + self._joint_index[name]
                                        for name in command], dtype=np.int64)
        self._command_joint = self._command_index - self.v_offset
        self.command = np.zeros(len(command))
        self.limiter = EffortLimiter(model.effort_limits, settings.effort_limit_scale)
        self.fault = FaultState()
        self.model_mismatch: str | None = None
        self.clipped_cycles = 0
        self.non_finite_outputs = 0
        # Wrenches: measured ones in (f_ext), contact and joint reaction ones out.
        self.measured = MeasuredWrenches(settings.wrench_topics, model.link_names)
        self.contacts: ContactOutput | None = None
        if settings.contacts and floating:
            try:
                self.contacts = ContactOutput(model, settings.contacts)
            except InputError as exc:
                raise ModelRejected(f'contacts: {exc}') from None
        self.reactions = (ReactionOutput(model) if settings.publish_joint_reaction_wrenches
                          else None)
        # Contact solution of trajectory points: its own solver on its own model copy (it runs
        # on the executor thread, beside the cycles).
        self._trajectory_contacts = (ContactSolver(model.copy(), settings.contacts)
                                     if self.contacts is not None else None)
        # Armature and friction per v entry (zeros where unset).
        try:
            self.actuation = Actuation.from_parameters(model, {
                **settings.actuation,
                'friction_velocity_threshold': settings.friction_velocity_threshold,
                'friction_model': settings.friction_model})
        except InputError as exc:
            raise ParameterRejected(str(exc)) from None
        self.armature_on = bool(np.any(self.actuation.armature))
        act = self.actuation
        self.friction_joints = () if not act.has_friction else tuple(
            joint.name for joint in model.joints if joint.nv == 1
            and (act.coulomb[joint.idx_v] or act.viscous[joint.idx_v] or act.offset[joint.idx_v]))
        self._v_friction = np.zeros(model.nv)
        self._v_friction_joints = self._v_friction[self.v_offset:]
        # External torques, wrenches and collisions from the measured efforts (a fixed base).
        self.observer = (ObserverOutput(model, settings, self.actuation, self.joint_names,
                                        self.joints.track_effort())
                         if settings.observer else None)
        self.observer_queue = (SampleQueue(settings.observer_queue, model.nq, model.nv, n)
                               if settings.observer else None)
        self.stop = StopReaction(model, self.actuation.armature) if settings.observer else None
        # The control law (control_law), its gains; g(q) when the robot adds it (the cycle's).
        self.law = ControlLaw(model, settings.control_law, self.joint_names, settings.gains,
                              self.v_offset)
        self._gravity = np.zeros(model.nv)
        # Compile (or load from the cache) every helper now, not in the first cycle.
        input_ages(self.joints.position_time, self.joints.velocity_time, self._command_joint)
        self._add_joint_terms(self._zeros, False)
        self._finish(settings.gravity_compensated_by_robot)
        self.limiter.clip(self._zeros.copy())

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
            self.law.use(settings.gains)
        if self.observer is not None:
            self.observer.use(settings)
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
        self.joints.update(names, position, velocity, effort, now, stamp)
        if self.observer is not None:
            self.observer_queue.push(stamp_seconds(stamp, now), self.q, self.v,
                                     self.joints.effort, self.joints.with_effort, now)
            if observe:
                self.observe_queued()

    def observe_queued(self) -> None:
        """Integrate every queued joint_states sample in stamp order (``observer_queue``)."""
        if self.observer_queue is not None:
            self.observer_queue.integrate(self.observer)

    def on_odometry(self, position, orientation, linear, angular, now: float,
                    stamp=None) -> None:
        """Take a nav_msgs/Odometry sample (see ``joint_input.BaseStateInput`` for frames)."""
        if self.base is None:
            return
        self.base.update(position, orientation, linear, angular, now, stamp)

    def on_base_acceleration(self, linear, angular, now: float,
                             stamp: float | None = None) -> None:
        """
        Take a geometry_msgs/Accel in the base frame (see ``base_spatial_acceleration``).

        Low-passed (first order, time constant ``base_acceleration_time_constant``) over the
        message times: ``stamp`` (s, the header stamp; None when unstamped: ``now``). The first
        message, one after the previous went stale (``acceleration_timeout``) or one whose time
        does not advance restarts the filter at its value; a time constant 0 takes each value.
        The filter breaks the loop a measured acceleration closes through the robot: the node's
        torques make it, and torques computed from it reproduce it (a gain of about 1).
        """
        values = accel_values(linear, angular)
        t = now if stamp is None else stamp
        settings = self.settings
        restart = now - self.base_acceleration_time > settings.acceleration_timeout
        low_pass(self.base_acceleration, values, -math.inf if restart else
                 t - self._base_acceleration_clock, settings.base_acceleration_time_constant)
        self._base_acceleration_clock = t
        self.base_acceleration_time = now

    def on_wrench(self, index: int, frame: str, values, now: float) -> None:
        """Take a geometry_msgs/WrenchStamped of ``wrench_topics[index]`` (raises ``Rejected``)."""
        self.measured.update(index, frame, values, now)

    def on_desired(self, trajectory: Trajectory, start: float, now: float) -> None:
        """
        Take a desired motion: ``start`` is the ROS time (s) of its time_from_start 0.

        The one-point motion taken last, given again (the node's ``DesiredDecoder`` gives a held
        reference's ``Trajectory`` again), only becomes fresh: what it scattered stays.
        """
        held = self.desired
        if held is not None and held.constant and held.trajectory is trajectory:
            held.start, held.received = start, now
            return
        desired = Desired(trajectory, self._joint_index, start, now)
        if desired.constant:  # the same accelerations at any time: scatter them once
            desired.sampler.sample(0.0, desired.q, desired.v, desired.a)
            desired.a_full = np.zeros(self.model.nv)
            desired.scatter(desired.a, desired.a_full[self.v_offset:])
        self.desired = desired
        self.desired_ever = True

    def take_state_from(self, other: Feedforward) -> None:
        """Continue from another model's inputs (a new robot_description with the same joints)."""
        self.joints.copy_state_from(other.joints)
        if self.base is not None and other.base is not None:
            self.base.copy_state_from(other.base)
        self.base_acceleration[:] = other.base_acceleration
        self.base_acceleration_time = other.base_acceleration_time
        self._base_acceleration_clock = other._base_acceleration_clock
        self.measured.take_state_from(other.measured)
        if self.contacts is not None and other.contacts is not None:
            self.contacts.take_state_from(other.contacts)
        if other.desired is not None:
            try:
                self.on_desired(other.desired.trajectory, other.desired.start,
                                other.desired.received)
            except Rejected:
                pass
        self.desired_ever = other.desired_ever
        self.joints.lock(self.joints.locked)  # the new model's locks over the old values
        self.clipped_cycles = other.clipped_cycles
        self.non_finite_outputs = other.non_finite_outputs
        self.fault = other.fault
        if self.observer is not None and other.observer is not None:
            other.observe_queued()  # none is lost at a change of model
            self.observer.take_state_from(other.observer)
            self.observer_queue.pushed = other.observer_queue.pushed
            self.observer_queue.overflowed = other.observer_queue.overflowed
            self.stop.take_state_from(other.stop)

    # ------------------------------------------------------------------ the cycle
    def input_fault(self, now: float, settings: Settings | None = None) -> str | None:
        """Return the fault code that holds for the inputs at steady time ``now`` (None: fine)."""
        settings = self.settings if settings is None else settings
        if self.model_mismatch is not None:
            return MODEL_MISMATCH
        timeout = settings.input_timeout
        # Per joint, against its own publisher's period (joint_input's module docstring).
        freshness = self.joints.fault(now, self._command_joint, timeout,
                                      settings.max_input_timeout,
                                      settings.torque_terms != 'gravity'
                                      and settings.state_source == 'measured')
        if freshness == NEVER_RECEIVED:
            return JOINT_STATES_MISSING
        if freshness == STALE:
            return JOINT_STATES_STALE
        if freshness == VELOCITY_STALE:
            return VELOCITY_MISSING
        if self.base is not None and now - self.base.time > timeout:
            return ODOMETRY_STALE
        return None

    def cycle(self, now: float, ros_time: float) -> bool:
        """
        Run one control cycle; True if the outputs are to be published.

        One control cycle; True if ``position``/``velocity``/``effort``/``command`` are to
        be published (always finite and clipped), False if nothing is (fault_output 'none').
        The settings snapshot is read once: the whole cycle runs with the same one.
        """
        settings = self.settings
        code = self.input_fault(now, settings)
        if code is None and self.observer is not None and self.observer.reacting:
            code = COLLISION
        if code is None:
            code = self._compute(now, ros_time, settings)
            if code is None:
                clipped = (self._finish(settings.gravity_compensated_by_robot)
                           if self._wrenches_finite() else -1)
                if clipped >= 0:
                    if clipped:
                        self.clipped_cycles += 1
                    self.fault.update(None, now)
                    return True
                code = NON_FINITE_OUTPUT
        # A fault: the fault output at the measured state (finite by construction).
        self.fault.update(code, now)
        if code == NON_FINITE_OUTPUT:
            self.non_finite_outputs += 1
        self._used_q, self._used_v = self.q, self.v
        if self.contacts is not None:
            self.contacts.zero()
        if self.reactions is not None:
            self.reactions.zero()
        mode = settings.collision_reaction if code == COLLISION else settings.fault_output
        held = self.fault.code != JOINT_STATES_MISSING  # a position to hold
        # The damped rest of a feedback law, except for the stop reaction: its own damping
        # (2 M / T) brakes harder than the law's Kd, under every law.
        resting = self.law.feedback and mode != 'stop'
        if resting:  # v unknown when the inputs are stale
            held = rest_torques(self.law, self.q, None if code in (
                JOINT_STATES_STALE, VELOCITY_MISSING) else self.v, self.tau, held)
        else:
            if mode == 'stop':  # g(q) - D v, then the hold (or hold_gravity if that fails)
                mode = self.stop.output(self.observer.latches, self.q, self.v, self.tau,
                                        settings.collision_stop_time)
            if not fault_torques(mode, self.tau, self._hold_gravity):
                return False
        with_gravity = held if resting else held and mode in ('hold_gravity', 'stop')
        if self._finish(with_gravity and settings.gravity_compensated_by_robot) > 0:
            self.clipped_cycles += 1
        return True

    def _finish(self, gravity_out: bool) -> int:
        """
        Clip tau and write the outputs; -1 (nothing written) if tau is not finite.

        ``gravity_out`` (``gravity_compensated_by_robot``, a tau with gravity): the total is
        clipped and g(q) taken out of what is written (the robot adds it).
        """
        limiter = self.limiter
        clip, clipped = limiter.scale > 0, 0
        if gravity_out:
            clipped = int(limiter.clip(self.tau)) if clip else 0
            if leave_gravity_out(self.model, self._used_q, self._zeros, self.tau,
                                 self._gravity):
                clip = False
        written = finish_outputs(self.tau, limiter.lower, limiter.upper, clip,
                                 self._command_index, self._used_q, self._used_v, self.q_offset,
                                 self.v_offset, self.position, self.velocity, self.effort,
                                 self.command)
        return written if written < 0 else max(written, clipped)

    def _wrenches_finite(self) -> bool:
        """Check that the contact and joint reaction wrenches to publish are finite."""
        return ((self.contacts is None or all_finite(self.contacts.wrenches.reshape(-1)))
                and (self.reactions is None or all_finite(self.reactions.wrenches.reshape(-1))))

    def _hold_gravity(self) -> np.ndarray | None:
        """
        Return the torques that hold the last measured pose at rest; None (zero) without one.

        A fixed base: g(q). A floating base with contacts: the contact solution at rest (the
        legs carry the weight; g(q) alone would be the torques of legs hanging from a held
        body, and a standing robot would sag), g(q) if that solution cannot be had.
        """
        if self.fault.code == JOINT_STATES_MISSING:  # no position to hold: not g(0)
            return None
        if self.contacts is not None:
            try:
                return self.contacts.solver.solve(self.q, self._zeros, self._zeros).tau
            except InputError:
                pass
        return self.model.gravity_torques(self.q)

    def _compute(self, now: float, ros_time: float, settings: Settings) -> str | None:
        """Compute tau at the used state into ``self.tau`` (NON_FINITE_OUTPUT if it cannot)."""
        terms = settings.torque_terms
        from_desired = settings.state_source == 'desired' and not self.law.feedback
        q, v, a = self.q, self.v, self.a
        desired = self.desired
        if desired is not None and not desired.active(now, ros_time,
                                                      settings.acceleration_timeout):
            desired = None
        if from_desired:
            q, v = self.q_desired, self.v_desired
            q[:] = self.q
            v[:] = self.v
        sampled = False
        if terms == 'full' or from_desired:
            if desired is None:
                a.fill(0.0)
            elif desired.a_full is not None and not from_desired:
                a[:] = desired.a_full  # constant: scattered once on receipt
            else:
                a.fill(0.0)
                desired.sampler.sample(ros_time - desired.start, desired.q, desired.v,
                                       desired.a)
                sampled = True
                desired.scatter(desired.a, self._a_joints)
                if from_desired:
                    if desired.has_positions:
                        desired.scatter(desired.q, self._q_desired_joints)
                    if desired.has_velocities:
                        desired.scatter(desired.v, self._v_desired_joints)
            if self.base is not None and (now - self.base_acceleration_time
                                          <= settings.acceleration_timeout):
                base_spatial_acceleration(self._base_linear, self._base_angular,
                                          self._base_twist, a)
        self._used_q, self._used_v = q, v
        if self.law.feedback:  # the desired motion's errors, or the damped rest without one
            if desired is None or not desired.has_positions:
                return None if rest_torques(self.law, q, v, self.tau) else NON_FINITE_OUTPUT
            if not (sampled or desired.constant):
                desired.sampler.sample(ros_time - desired.start, desired.q, desired.v,
                                       desired.a)
                sampled = True
            self.law.targets(desired, q, v)
            self.law.correct_acceleration(a)
        if terms == 'gravity':
            v = a = self._zeros
        elif terms == 'gravity_coriolis':
            a = self._zeros
        # Measured wrenches apply in every torque_terms mode (a load, not a motion term).
        f_ext = self.measured.f_ext(now, settings.input_timeout)
        try:
            # Into the preallocated tau; on failure the fault output overwrites it.
            if self.contacts is not None:
                self.contacts.solve(q, v, a, f_ext, self.tau)
            elif f_ext is None:
                self.model.rnea(q, v, a, out=self.tau)  # the fast path
            else:
                self.model.rnea(q, v, a, f_ext=f_ext, out=self.tau)
            if self.reactions is not None:
                self.reactions.compute(q, v, a, f_ext if self.contacts is None
                                       else self.contacts.f_ext(f_ext))
        except InputError:
            return NON_FINITE_OUTPUT
        friction = settings.friction_compensation and bool(self.friction_joints)
        if friction:  # at the desired velocity where the desired motion gives one
            self._v_friction[:] = self.v
            if desired is not None and desired.has_velocities:
                if not (sampled or desired.constant):
                    desired.sampler.sample(ros_time - desired.start, desired.q, desired.v,
                                           desired.a)
                desired.scatter(desired.v, self._v_friction_joints)
        if friction or self.armature_on:
            self._add_joint_terms(a, friction)
        self.law.add_feedback(self.tau)
        return None

    def _add_joint_terms(self, a: np.ndarray, friction: bool) -> None:
        """Add armature * a to tau (and the friction at ``_v_friction`` if ``friction``)."""
        model = self.actuation
        add_joint_terms(self.tau, a, self._v_friction, model.coulomb, model.viscous,
                        model.offset, model.armature, model.velocity_threshold, friction)

    # ------------------------------------------------------------------ trajectories
    def trajectory_efforts(self, trajectory: Trajectory,
                           measured_q: np.ndarray | None = None) -> np.ndarray:
        """Efforts (N, n) at the points of ``trajectory`` (``trajectory_efforts.efforts``)."""
        return trajectory_efforts(self, trajectory, measured_q)

    # ------------------------------------------------------------------ diagnostics
    def status(self, now: float, ros_time: float) -> tuple[int, str, dict[str, str]]:
        """(level, message, key -> value) describing the inputs and the fault state."""
        return core_status(self, now, ros_time)


__all__ = ['ERROR', 'Feedforward']
