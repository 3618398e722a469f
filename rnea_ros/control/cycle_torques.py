"""
The torques of one cycle: the inverse dynamics, the control law, the rest and the reactions.

``CycleTorques.compute`` writes into ``tau`` (allocated once) the torque of a cycle whose inputs
are fresh: the inverse dynamics at the state used and the desired acceleration (contacts and
measured wrenches included), the feedback law's terms or its damped rest, the armature and the
friction (``friction_compensation``). ``fault_output`` writes what a fault publishes instead: a
feedback law's damped rest, the ``stop`` reaction, or the ``fault_output`` / reaction mode.

**The state acted on** (``acted_on``): the one place where the laws, the damped rest and the
stop reaction read the (q, v) they act on: the state predicted at the application of the
command (``prediction: model``, ``cycle_prediction``) when the cycle has one, else the measured
state (``CycleState.q``, ``v``). Under stale joint_states a feedback law's fault output brakes
the predicted motion within ``prediction_horizon`` (``braking.Brake``); past it (or
without prediction) the velocity is unknown and the rest is g(q) alone, at the last predicted
pose (or the last measured one). When joint_states return after a stall that interrupted a
followed desired motion, until one is followed again, the rest is not the law's damped rest
g(q) - D v, which holds no pose: the stop's brake and hold (``after_stall``, a
``StopReaction``) about the first state known again.

Joint terms (``rnea_ros.dynamics.actuation``, parameters ``armature.<joint>`` and
``friction.<joint>.*``): the armature torque (armature x the acceleration used) is part of the
dynamics whenever set; the friction torque is added to the published torques only with
``friction_compensation``, at the desired velocity of the joints the followed desired motion
gives a velocity for (a multi-point trajectory always does, a single point when it carries
velocities), at the measured velocity for the others. Neither is added to the fault output.
ROS-free.
"""
from __future__ import annotations

import numpy as np

from rnea_ros.control.braking import Brake
from rnea_ros.control.collision_reaction import StopReaction
from rnea_ros.control.control_law import ControlLaw, rest_torques
from rnea_ros.control.cycle_kernels import add_joint_terms
from rnea_ros.control.cycle_state import CycleState
from rnea_ros.control.desired import Desired
from rnea_ros.control.joint_input import base_spatial_acceleration
from rnea_ros.control.safety import (all_finite, fault_torques, JOINT_STATES_MISSING,
                                     JOINT_STATES_STALE, NON_FINITE_OUTPUT, VELOCITY_MISSING)
from rnea_ros.control.settings import ModelRejected, ParameterRejected, Settings
from rnea_ros.control.wrenches import ContactOutput, ReactionOutput
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.errors import InputError

__all__ = ['CycleTorques']


class CycleTorques:
    """One model's torque computation, its arrays preallocated (module docstring)."""

    def __init__(self, state: CycleState, settings: Settings):
        model = self.model = state.model
        self.state = state
        self.tau = np.zeros(model.nv)
        self.a = np.zeros(model.nv)  # the acceleration used
        self.zeros = np.zeros(model.nv)
        self.gravity = np.zeros(model.nv)  # g(q), taken out when the robot adds it
        # The desired state (``state_source: desired``) and the state a cycle used.
        self.q_desired, self.v_desired = state.q.copy(), np.zeros(model.nv)
        self.used_q, self.used_v = state.q, state.v
        # Views the cycle reads and writes through (no slicing per cycle).
        self._a_joints = self.a[state.v_offset:]
        self._q_desired_joints = self.q_desired[state.q_offset:]
        self._v_desired_joints = self.v_desired[state.v_offset:]
        self._base_linear = state.base_acceleration[:3]
        self._base_angular = state.base_acceleration[3:]
        self._base_twist = state.v[:6]
        # Wrenches out: the contact solution (floating base), the joint reactions.
        self.contacts: ContactOutput | None = None
        if settings.contacts and model.floating_base:
            try:
                self.contacts = ContactOutput(model, settings.contacts)
            except InputError as exc:
                raise ModelRejected(f'contacts: {exc}') from None
        self.reactions = (ReactionOutput(model) if settings.publish_joint_reaction_wrenches
                          else None)
        # Armature and friction per v entry (zeros where unset).
        try:
            self.actuation = Actuation.from_parameters(model, {
                **settings.actuation,
                'friction_velocity_threshold': settings.friction_velocity_threshold,
                'friction_model': settings.friction_model})
        except InputError as exc:
            raise ParameterRejected(str(exc)) from None
        act = self.actuation
        self.armature_on = bool(np.any(act.armature))
        self.friction_joints = () if not act.has_friction else tuple(
            joint.name for joint in model.joints if joint.nv == 1
            and (act.coulomb[joint.idx_v] or act.viscous[joint.idx_v] or act.offset[joint.idx_v]))
        self._v_friction = np.zeros(model.nv)
        self._v_friction_joints = self._v_friction[state.v_offset:]
        self.law = ControlLaw(model, settings.control_law, state.joint_names, settings.gains,
                              state.v_offset)
        self.brake = Brake(model, act.armature)  # the stop's and a stall's (braking.py)
        self.stop = StopReaction(model, self.brake)  # a collision's, the loop watch's
        # After a stall of joint_states, until a desired motion is followed: the stop's brake
        # and hold on the first known states (``compute``), a stall one latch.
        # The stall's brake: on the model with the payload estimated online, if one
        # (``stall_payload_estimate``, ``install_stall_model``), else on the model.
        self.stall_brake = Brake(model, act.armature)
        self.after_stall = StopReaction(model, self.stall_brake)
        self.stalls = 0  # stalls of joint_states under a feedback law
        self.stalled = False  # one since the last desired motion followed
        self.upper = np.full(model.nv, np.inf)  # the effort limits (the core binds its own)
        self.predicted = None  # the core's ``CyclePrediction`` (``acted_on``)
        self.add_joint_terms(self.zeros, False)  # compiled now, not in the first cycle

    def acted_on(self) -> tuple[np.ndarray, np.ndarray]:
        """Return the (q, v) the laws, the rest and the stop act on: predicted or measured."""
        predicted = self.predicted
        if predicted is not None and predicted.valid and not predicted.held:
            return predicted.q, predicted.v
        return self.state.q, self.state.v

    def compute(self, desired: Desired | None, now: float, settings: Settings) -> str | None:
        """
        Compute tau at the used state into ``tau`` (NON_FINITE_OUTPUT if it cannot).

        ``desired``: the desired motion the cycle follows, sampled (``Reference.follow``).
        """
        state, terms = self.state, settings.torque_terms
        from_desired = settings.state_source == 'desired' and not self.law.feedback
        q, v = self.acted_on()
        a = self.a
        if from_desired:
            q, v = self.q_desired, self.v_desired
            q[:] = state.q
            v[:] = state.v
        if terms == 'full' or from_desired:
            self._desired_acceleration(desired, from_desired)
            if state.base is not None and (now - state.base_acceleration_time
                                           <= settings.acceleration_timeout):
                base_spatial_acceleration(self._base_linear, self._base_angular,
                                          self._base_twist, a)
        self.used_q, self.used_v = q, v
        if self.law.feedback:  # the desired motion's errors, or the damped rest without one
            if desired is None or not desired.has_positions:
                if self.stalled and self.after_stall.latch != self.stalls:
                    self.after_stall.hold_at(self.stalls, q)  # the first known pose
                if self.stalled and self.after_stall.output(
                        self.stalls, q, v, self.tau, settings.collision_stop_time,
                        self.upper) == 'stop':  # the hold after a stall
                    self.law.resting = True
                    return None
                return None if rest_torques(self.law, q, v, self.tau) else NON_FINITE_OUTPUT
            self.stalled = False
            self.law.targets(desired, q, v)
            if self.predicted is not None:  # a one-point motion's targets at the application
                self.predicted.extrapolate(self.law, desired, q, v)
            self.law.correct_acceleration(a)
        if terms == 'gravity':
            v = a = self.zeros
        elif terms == 'gravity_coriolis':
            a = self.zeros
        if not self._inverse_dynamics(q, v, a, state.measured.f_ext(now, settings.input_timeout)):
            return NON_FINITE_OUTPUT
        friction = settings.friction_compensation and bool(self.friction_joints)
        if friction:  # at the desired velocity where the desired motion gives one
            self._v_friction[:] = state.v
            if desired is not None and desired.has_velocities:
                desired.scatter(desired.v, self._v_friction_joints)
        if friction or self.armature_on:
            self.add_joint_terms(a, friction)
        self.law.add_feedback(self.tau)
        return None

    def _desired_acceleration(self, desired: Desired | None, from_desired: bool) -> None:
        """Write the desired acceleration into ``a`` (and the desired state, ``from_desired``)."""
        a = self.a
        if desired is None:
            a.fill(0.0)
        elif desired.a_full is not None and not from_desired:
            a[:] = desired.a_full  # constant: scattered once on receipt
        else:
            a.fill(0.0)
            desired.scatter(desired.a, self._a_joints)
            if from_desired:
                if desired.has_positions:
                    desired.scatter(desired.q, self._q_desired_joints)
                if desired.has_velocities:
                    desired.scatter(desired.v, self._v_desired_joints)

    def _inverse_dynamics(self, q, v, a, f_ext) -> bool:
        """Write ID(q, v, a) into tau (contacts, f_ext, reactions); False if it failed."""
        try:  # into the preallocated tau; on failure the fault output overwrites it
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
            return False
        return True

    def add_joint_terms(self, a: np.ndarray, friction: bool) -> None:
        """Add armature * a to tau (and the friction at ``_v_friction`` if ``friction``)."""
        model = self.actuation
        add_joint_terms(self.tau, a, self._v_friction, model.coulomb, model.viscous,
                        model.offset, model.armature, model.velocity_threshold, friction)

    def fault_output(self, code: str, mode: str, latch: int, settings: Settings,
                     upper: np.ndarray) -> bool | None:
        """
        Write a fault cycle's torque into tau; None: nothing to publish (``fault_output: none``).

        Otherwise True if it holds g(q) (which ``gravity_compensated_by_robot`` then takes out).
        ``mode``: the ``fault_output``, or the ``collision_reaction`` of a collision (``latch``:
        the observer's latch count; ``upper``: the effort limits). A feedback law's damped rest,
        except for the stop reaction: its brake (``braking.Brake``, time constant T) brakes
        harder than the law's Kd, under every law; so does a stall of joint_states carried
        through on the prediction.
        """
        q, v = self.acted_on()
        predicted = self.predicted is not None and self.predicted.valid
        if predicted and self.predicted.held:  # past the horizon: the last predicted pose
            q, v = self.predicted.q, self.predicted.v
        self.used_q, self.used_v = (q, v) if predicted else (self.state.q, self.state.v)
        if self.contacts is not None:
            self.contacts.zero()
        if self.reactions is not None:
            self.reactions.zero()
        held = code != JOINT_STATES_MISSING  # a position to hold
        if self.law.feedback and mode != 'stop':  # v unknown when the inputs are stale
            if code == JOINT_STATES_STALE and not (self.stalled or self.law.resting):
                self.stalls, self.stalled = self.stalls + 1, True  # a motion's: held after it
            carried = predicted and not self.predicted.held
            if carried and code == JOINT_STATES_STALE and self.stall_brake.torques(
                    q, v, settings.collision_stop_time, upper, self.tau):  # a stall carried
                self.predicted.stall_model()  # the estimated payload's, if any
                self.law.resting = True
                return True
            unknown = not carried and code in (JOINT_STATES_STALE, VELOCITY_MISSING)
            return rest_torques(self.law, q, None if unknown else v, self.tau, held)
        if mode == 'stop':  # the brake, then the hold (or hold_gravity if that fails)
            mode = self.stop.output(latch, q, v, self.tau, settings.collision_stop_time, upper)
        if not fault_torques(mode, self.tau, lambda: self.hold_gravity(held)):
            return None
        return held and mode in ('hold_gravity', 'stop')

    def hold_gravity(self, held: bool) -> np.ndarray | None:
        """
        Return the torques that hold the last measured pose at rest; None (zero) without one.

        A fixed base: g(q). A floating base with contacts: the contact solution at rest (the
        legs carry the weight; g(q) alone would be the torques of legs hanging from a held
        body, and a standing robot would sag), g(q) if that solution cannot be had.
        """
        if not held:  # no position to hold: not g(0)
            return None
        q = self.state.q
        if self.contacts is not None:
            try:
                return self.contacts.solver.solve(q, self.zeros, self.zeros).tau
            except InputError:
                pass
        return self.model.gravity_torques(q)

    def wrenches_finite(self) -> bool:
        """Check that the contact and joint reaction wrenches to publish are finite."""
        return ((self.contacts is None or all_finite(self.contacts.wrenches.reshape(-1)))
                and (self.reactions is None or all_finite(self.reactions.wrenches.reshape(-1))))

    def take_state_from(self, other: CycleTorques) -> None:
        """Go on from another model's torques (a new model with the same joints)."""
        if self.contacts is not None and other.contacts is not None:
            self.contacts.take_state_from(other.contacts)
        if self.stop is not None and other.stop is not None:
            self.stop.take_state_from(other.stop)
        self.after_stall.take_state_from(other.after_stall)
        self.stalls, self.stalled = other.stalls, other.stalled
