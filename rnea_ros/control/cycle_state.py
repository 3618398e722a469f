"""
What a control cycle starts from: every input merged into arrays allocated once.

``CycleState`` holds the measured state q, v (written in place by ``joint_input``'s inputs), the
base's odometry and filtered acceleration (floating base), the measured wrenches, the latest
desired motion (numbered, ``desired.Desired``) and the command layout, and merges each input
message into them (``on_*``; a refused one raises ``Rejected``). ``input_fault`` says whether
they are fresh enough to compute from. ``core.ControlCore`` runs the cycles on it. ROS-free.

State layout: q = [base pose (7, floating base only); joint positions], v = [base twist (6);
joint velocities], following ``RobotModel``. Only one-degree-of-freedom joints can come from
``sensor_msgs/JointState``, so a model with other multi-DoF joints (URDF ``floating``/``planar``)
is refused (``settings.check_model``). ``now`` is steady-clock seconds (watchdogs).
"""
from __future__ import annotations

import math

import numpy as np

from rnea_ros.control.desired import Desired
from rnea_ros.control.joint_input import (accel_values, BaseStateInput, JointStateInput,
                                          low_pass, NEVER, NEVER_RECEIVED, Rejected, STALE,
                                          VELOCITY_STALE)
from rnea_ros.control.safety import (JOINT_STATES_MISSING, JOINT_STATES_STALE, ODOMETRY_STALE,
                                     VELOCITY_MISSING)
from rnea_ros.control.settings import actuated_joints, Settings
from rnea_ros.control.trajectory import Trajectory
from rnea_ros.control.wrenches import MeasuredWrenches
from rnea_ros.dynamics.model import RobotModel

__all__ = ['CycleState']


class CycleState:
    """The inputs of one model's cycles, merged (module docstring)."""

    def __init__(self, model: RobotModel, settings: Settings):
        self.model = model
        self.joint_names = actuated_joints(model)
        floating = model.floating_base
        self.q_offset, self.v_offset = (7, 6) if floating else (0, 0)
        self.joint_index = {name: k for k, name in enumerate(self.joint_names)}
        # The measured state, written in place by the inputs.
        self.q = model.neutral_configuration()
        self.v = np.zeros(model.nv)
        self.joints = JointStateInput(self.joint_names, self.q[self.q_offset:],
                                      self.v[self.v_offset:])
        self.joints.lock(dict(zip(settings.locked_joints, settings.locked_positions)))
        self.joints.bound_by(model)  # a sample beyond the URDF limits' multiple is refused
        self.base = BaseStateInput(self.q[:7], self.v[:6]) if floating else None
        self.base_acceleration = np.zeros(6)  # low-passed, [linear; angular], base frame
        self.base_acceleration_time = NEVER  # steady time of the last message
        self._base_acceleration_clock = NEVER  # its message time (stamp or arrival)
        self.measured = MeasuredWrenches(settings.wrench_topics, model.link_names)
        self.desired: Desired | None = None  # the latest desired motion taken
        self.desired_taken = 0  # desired motions taken so far (each one's ``number``)
        # The command layout: joints, their index among joint_names and in v.
        self.command_joints = tuple(settings.command_joints or (
            name for name in self.joint_names if name not in self.joints.locked))
        self.command_joint = np.array([self.joint_index[name] for name in self.command_joints],
                                      dtype=np.int64)
        self.command_index = self.command_joint + self.v_offset

    # ------------------------------------------------------------------ inputs
    def on_joint_states(self, names, position, velocity, effort, now: float,
                        stamp=None) -> None:
        """Merge a sensor_msgs/JointState sample (raises ``Rejected``)."""
        self.joints.update(names, position, velocity, effort, now, stamp)

    def on_odometry(self, position, orientation, linear, angular, now: float,
                    stamp=None) -> None:
        """Take a nav_msgs/Odometry sample (see ``joint_input.BaseStateInput`` for frames)."""
        if self.base is not None:
            self.base.update(position, orientation, linear, angular, now, stamp)

    def on_base_acceleration(self, linear, angular, now: float, stamp: float | None,
                             settings: Settings) -> None:
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
        reference's ``Trajectory`` again), only becomes fresh: what it scattered stays. Either
        way it is a new message: numbered anew.
        """
        held = self.desired
        if held is not None and held.constant and held.trajectory is trajectory:
            held.start, held.received = start, now
        else:
            desired = Desired(trajectory, self.joint_index, start, now)
            if desired.constant:  # the same accelerations at any time: scatter them once
                desired.sampler.sample(0.0, desired.q, desired.v, desired.a)
                desired.a_full = np.zeros(self.model.nv)
                desired.scatter(desired.a, desired.a_full[self.v_offset:])
            self.desired = held = desired
        self.desired_taken += 1
        held.number = self.desired_taken

    def take_state_from(self, other: CycleState) -> None:
        """Continue from another model's inputs (a new robot_description with the same joints)."""
        self.joints.copy_state_from(other.joints)
        if self.base is not None and other.base is not None:
            self.base.copy_state_from(other.base)
        self.base_acceleration[:] = other.base_acceleration
        self.base_acceleration_time = other.base_acceleration_time
        self._base_acceleration_clock = other._base_acceleration_clock
        self.measured.take_state_from(other.measured)
        self.desired_taken = other.desired_taken
        if other.desired is not None:
            try:
                self.on_desired(other.desired.trajectory, other.desired.start,
                                other.desired.received)
            except Rejected:
                pass
            else:
                self.desired.number = self.desired_taken = other.desired.number
        self.joints.lock(self.joints.locked)  # the new model's locks over the old values

    # ------------------------------------------------------------------ freshness
    def input_fault(self, now: float, settings: Settings) -> str | None:
        """Return the fault code that holds for the inputs at steady time ``now`` (None: fine)."""
        timeout = settings.input_timeout
        # Per joint, against its own publisher's period (joint_input's module docstring).
        freshness = self.joints.fault(now, self.command_joint, timeout,
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
