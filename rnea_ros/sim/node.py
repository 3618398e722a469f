"""
``SimNode``: the simulated robot on ROS 2, with the interfaces of a ros2_control robot.

Topics (relative; remap them):

| topic | dir | type |
|---|---|---|
| ``joint_states`` | out | sensor_msgs/JointState: encoder position, velocity, effort (gap) |
| ``desired_accelerations`` | out | trajectory_msgs/JointTrajectory: one point, the reference |
| ``odometry`` | out | nav_msgs/Odometry (floating base): pose in ``odom``, twist in base |
| ``base_acceleration`` | out | geometry_msgs/AccelStamped (floating base), base frame |
| ``truth/joint_torques`` | out | sensor_msgs/JointState: exact state, applied actuator torque |
| ``truth/external_wrench`` | out | geometry_msgs/WrenchStamped per pushed link, link frame |
| ``truth/contact_wrenches/<link>`` | out | geometry_msgs/WrenchStamped per contact sphere link |
| ``/diagnostics`` | out | diagnostic_msgs/DiagnosticArray, 1 Hz: the counters |
| ``joint_trajectory`` | in | trajectory_msgs/JointTrajectory to track (points' effort: FF) |
| ``effort_commands`` | in | std_msgs/Float64MultiArray in ``joints`` order (``controller``) |
| ``joint_torques`` | in | sensor_msgs/JointState: the node's answer (lockstep pacing) |
| ``apply_wrench`` | in | geometry_msgs/WrenchStamped: push ``frame_id`` (a link), link frame |

Every message of one step carries the stamp ``start + k / rate`` (ROS time at start plus the
sim time). The state published for step k is the state the step starts from; the truth topics
describe the step just taken. See ``controller`` for the PD, feed-forward and stale commands,
``main`` for the clocks.
"""
from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import AccelStamped, WrenchStamped
from nav_msgs.msg import Odometry
import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.sim.controller import CommandError, JointController
from rnea_ros.sim.inbox import MSGTYPE, TrajectoryInbox
from rnea_ros.sim.messages import nanoseconds, stamp_of, wrench_msg
from rnea_ros.sim.parameters import declare_settings
from rnea_ros.sim.polled import PolledInputs
from rnea_ros.sim.record import msgtype_of, Recorder
from rnea_ros.sim.trajectory import TrajectoryError
from rnea_ros.timing import GcMonitor, set_fifo_priority, set_timer_slack, StepSchedule

if TYPE_CHECKING:  # the plant comes from plant_factory: MuJoCo loads once the settings passed
    from rnea_ros.sim.plant import Plant

# Reliable like joint_state_broadcaster's: best-effort and reliable subscribers both connect.
RELIABLE = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
TRAJECTORY_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
# Inputs the stepping thread takes at each step: what came since the last step (a few).
POLLED = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


class SimNode(Node):
    """The simulated robot (see the module docstring); ``run`` steps it until ``stop``."""

    def __init__(self, plant_factory, overrides: dict | None = None, **kwargs):
        """
        Declare and check the parameters, then build the plant with ``plant_factory(settings)``.

        Raises ``ValueError`` (a parameter) or ``RneaError`` (URDF, gap) with one line.
        """
        super().__init__('rnea_sim', **kwargs)
        self.settings = settings = declare_settings(self, overrides or {})
        self.plant: Plant = plant_factory(settings)
        plant = self.plant
        names = plant.joint_names
        unknown = [j for j in settings.joints if j not in names]
        if unknown:
            raise ValueError(f"parameter 'joints' names {unknown[0]!r}: expected actuated joints "
                             f'of the URDF: {", ".join(names)}')
        lower = np.array([plant.nominal.joint(n).lower for n in names])
        upper = np.array([plant.nominal.joint(n).upper for n in names])
        initial = self._initial_positions(lower, upper)
        self.controller = JointController.from_settings(
            settings, names, lower, upper, initial,
            plant.gravity_torques if settings.gravity_compensated_by_robot else None)
        q = plant.nominal.neutral_configuration()
        q[plant.actuated_q] = initial
        if plant.floating_base:
            q[:7] = settings.initial_base_pose
        plant.reset(q)
        self.dt = 1.0 / settings.rate
        self.lock = threading.Lock()
        self.counters = {'steps': 0, 'late steps': 0, 'missed answers': 0,
                         'joint_states dropped (gap)': 0,
                         'joint_states withheld (gap outage)': 0}
        self.rejected: dict[str, int] = {}
        self.warned: dict[str, float] = {}  # rejected key -> monotonic time of its last warning
        # Tracking error (reference - true position, actuated joints): [sum of mean squares,
        # steps, max |error|] since start and since the last diagnostics report.
        self.tracking = ([0.0, 0, 0.0], [0.0, 0, 0.0])
        from rnea_ros.recording.fitness import RunFitness  # its package loads numba
        self.fitness = RunFitness.of_plant(plant)  # limit contacts, saturation: for --record
        self.answer_stamp = -1
        self.answer_effort: np.ndarray | None = None
        self.command_joints = settings.joints or names
        self.wrenches: dict[str, tuple[np.ndarray, float]] = {}
        self.recorder: Recorder | None = None  # rnea_sim's --record, once the node is built
        self.rng = np.random.default_rng(plant.gap.seed + 3)
        self.sim_time = 0.0
        self.schedule = StepSchedule(round(1e9 * self.dt), 0)  # run() starts its own
        self.gc_monitor = GcMonitor()
        self.scheduling = 'normal'
        self.start_ns = self.get_clock().now().nanoseconds
        self._make_interfaces()

    def _initial_positions(self, lower, upper) -> np.ndarray:
        names = self.plant.joint_names
        given = self.settings.initial_positions
        if not given:
            return np.clip(0.0, lower, upper)
        if len(given) != len(names):
            raise ValueError(f"parameter 'initial_positions' has {len(given)} values: expected "
                             f'{len(names)} ({", ".join(names)})')
        initial = np.array(given)
        outside = np.flatnonzero((initial < lower) | (initial > upper))
        if outside.size:
            k = outside[0]
            raise ValueError(f"parameter 'initial_positions' puts {names[k]} at {initial[k]:g}: "
                             f'expected a position within [{lower[k]:g}, {upper[k]:g}]')
        return initial

    # ------------------------------------------------------------------ interfaces
    def _make_interfaces(self) -> None:
        plant = self.plant
        self.pub_states = self.create_publisher(JointState, 'joint_states', RELIABLE)
        self.pub_desired = self.create_publisher(JointTrajectory, 'desired_accelerations',
                                                 RELIABLE)
        self.pub_truth = self.create_publisher(JointState, 'truth/joint_torques', RELIABLE)
        self.pub_external = self.create_publisher(WrenchStamped, 'truth/external_wrench',
                                                  TRAJECTORY_QOS)
        self.pub_contacts = {link: self.create_publisher(
            WrenchStamped, f'truth/contact_wrenches/{link}', RELIABLE)
            for link in plant.gap.contact_spheres}
        self.pub_diagnostics = self.create_publisher(DiagnosticArray, '/diagnostics', RELIABLE)
        if plant.floating_base:
            self.pub_odometry = self.create_publisher(Odometry, 'odometry', RELIABLE)
            self.pub_base_acc = self.create_publisher(AccelStamped, 'base_acceleration',
                                                      RELIABLE)
        # Serialized: decoded off the executor (``inbox``), which serves the effort commands.
        self.inbox = TrajectoryInbox(self._on_trajectory, self._refuse_trajectory)
        self.create_subscription(JointTrajectory, 'joint_trajectory', self._on_trajectory_data,
                                 TRAJECTORY_QOS, raw=True)
        # The robot's command inputs, taken by the stepping thread (``polled``).
        self.polled = PolledInputs(self.context, self.get_namespace(), (
            (Float64MultiArray, 'effort_commands', self._on_command),
            (JointState, 'joint_torques', self._on_answer)), POLLED)
        self.create_subscription(WrenchStamped, 'apply_wrench', self._on_wrench, TRAJECTORY_QOS)
        self.create_timer(1.0, self._publish_diagnostics)
        names = list(plant.joint_names)
        self.msg_states = JointState(name=names)
        self.msg_truth = JointState(name=names)
        self.msg_desired = JointTrajectory(joint_names=names)
        self.msg_desired.points = [JointTrajectoryPoint()]
        root = plant.base_link
        self.msg_odometry = Odometry()
        self.msg_odometry.header.frame_id = 'odom'
        self.msg_odometry.child_frame_id = root
        self.msg_base_acc = AccelStamped()
        self.msg_base_acc.header.frame_id = root

    def reject(self, topic: str, reason: str, message: str) -> None:
        """Count a dropped input and say why (at most once a second per topic and reason)."""
        key = f'rejected {topic} ({reason})'
        self.rejected[key] = self.rejected.get(key, 0) + 1
        now = time.monotonic()
        if now - self.warned.get(key, -math.inf) >= 1.0:  # one reason never hides another
            self.warned[key] = now
            self.get_logger().warning(f'{topic} dropped: {message}')

    def _on_trajectory_data(self, data: bytes) -> None:
        if self.recorder is not None:
            self.recorder.add_serialized('joint_trajectory', MSGTYPE, data,
                                         self.start_ns + round(self.sim_time * 1e9))
        self.inbox.put(data)

    def _refuse_trajectory(self, text: str) -> None:
        self.reject('joint_trajectory', 'malformed', text)

    def _on_trajectory(self, msg) -> None:
        """Track ``msg`` (a decoded JointTrajectory, from the inbox's thread) or say why not."""
        points = msg.points
        times = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
                          for p in points])

        def field(name):
            rows = [getattr(p, name) for p in points]
            if not rows or all(len(r) == 0 for r in rows):
                return None
            if any(len(r) != len(msg.joint_names) for r in rows):
                return np.full((len(rows), 0), np.nan)  # reported as a length mismatch
            return np.array([np.asarray(r, dtype=float) for r in rows])
        stamp = nanoseconds(msg.header.stamp)
        with self.lock:
            start = self.sim_time if stamp == 0 else (stamp - self.start_ns) * 1e-9
            try:
                self.controller.set_trajectory(
                    list(msg.joint_names), times, field('positions'), field('velocities'),
                    field('accelerations'), field('effort'), start=start,
                    arrival=self.sim_time)
            except TrajectoryError as error:
                self.reject('joint_trajectory', error.reason, str(error))
                return
        self.get_logger().info(f'joint_trajectory accepted: {times.size} point'
                               f'{"s" * (times.size != 1)} over {times[-1]:g} s, joints '
                               f'{", ".join(msg.joint_names)}')

    def _on_command(self, msg: Float64MultiArray) -> None:
        with self.lock:
            try:
                self.controller.set_command(np.asarray(msg.data, dtype=float), self.sim_time)
            except CommandError as error:
                self.reject('effort_commands', error.reason, str(error))

    def _on_answer(self, msg: JointState) -> None:
        index = {name: k for k, name in enumerate(msg.name)}
        try:
            effort = np.array([msg.effort[index[name]] for name in self.command_joints])
        except (KeyError, IndexError):
            effort = None  # it paces the clock; it cannot be the command
        with self.lock:
            self.answer_stamp = nanoseconds(msg.header.stamp)
            self.answer_effort = effort

    def _on_wrench(self, msg: WrenchStamped) -> None:
        self._record_in('apply_wrench', msg)
        w = msg.wrench
        wrench = np.array([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z])
        link = msg.header.frame_id
        if link not in self.plant.nominal.link_names:
            self.reject('apply_wrench', 'unknown_link', f'frame_id {link!r} is no link')
        elif not np.all(np.isfinite(wrench)):
            self.reject('apply_wrench', 'non_finite', 'a value is not finite')
        else:
            with self.lock:
                self.wrenches[link] = (wrench, self.sim_time)

    def _record_in(self, topic: str, msg) -> None:
        if self.recorder is not None:
            # Logged at the step being taken: the same time base as the sim's own stamps.
            self.recorder.add(topic, msg, self.start_ns + round(self.sim_time * 1e9))

    def _record_polled(self, topic: str, msg_type: type, data: bytes) -> None:
        """Record a polled input as it was received (``PolledInputs.take``'s ``keep``)."""
        self.recorder.add_serialized(topic, msgtype_of(msg_type), data,
                                     self.start_ns + round(self.sim_time * 1e9))

    def _take_polled(self) -> None:
        """Take the polled inputs; recorded from the bytes received, decoded once."""
        self.polled.take(None if self.recorder is None else self._record_polled)

    # ------------------------------------------------------------------ stepping
    def run(self, stop: threading.Event) -> None:
        """
        Step until ``stop`` is set or ``duration`` has passed (clock per the settings).

        The calling thread steps. With the realtime clock it runs under SCHED_FIFO at
        ``thread_priority`` when the process may (as a ros2_control loop does). The heap is
        frozen out of the garbage collector first; the young generations are collected once
        per second of steps, right after a step (a full collection would stop every thread for
        tens of ms: a stall of as many steps).
        """
        plant, settings = self.plant, self.settings
        lockstep = settings.clock == 'lockstep'
        self.get_logger().info(
            f'{len(plant.joint_names)} actuated joints, {settings.rate:g} Hz, physics step '
            f'{1e3 * plant.model.opt.timestep:g} ms ({plant.substeps} per timestep), clock '
            f'{settings.clock}, gap {"none (MJCF)" if plant.true_urdf is None else settings.gap}'
            f', command interface {settings.command_interface}'
            + (', gravity compensated by the robot' if settings.gravity_compensated_by_robot
               else ''))
        jitter = plant.gap.jitter
        dt_ns = round(1e9 * self.dt)
        if not lockstep:
            slack = set_timer_slack()
            fifo = set_fifo_priority(settings.thread_priority)
            for problem in (slack, fifo):
                if problem:
                    self.get_logger().warning(f'{problem}: the steps may start later')
            if settings.thread_priority and not fifo:
                self.scheduling = f'SCHED_FIFO {settings.thread_priority}'
        self.gc_monitor.freeze()
        collect_every = max(1, round(settings.rate))
        self.schedule = schedule = StepSchedule(dt_ns, time.monotonic_ns())
        k = 0
        while not stop.is_set():
            if settings.duration and k * self.dt >= settings.duration - 1e-12:
                break
            if not lockstep:  # the state of step k goes out at its deadline (+ the jitter)
                delay = abs(self.rng.normal(0.0, jitter)) if jitter > 0 else 0.0
                schedule.wait(k, round(delay * 1e9))
            stamp = self.start_ns + k * dt_ns
            self._take_polled()  # every command input received since the last step
            published = self._publish_state(stamp, k)
            if lockstep and published:
                self._await_answer(stamp)
            self._step(stamp + dt_ns)
            k += 1
            if k % collect_every == 0:
                self.gc_monitor.collect()

    def _await_answer(self, stamp: int) -> None:
        """
        Lockstep: wait for the node's joint_torques stamped ``stamp``.

        With something publishing effort_commands (path b), that answer's effort in ``joints``
        order is the command of this step: the same torques as the node's feedforward_effort,
        tied to the state by the stamp, where a message on another topic could arrive before
        or after it. A missed answer keeps the previous command.
        """
        wired = (self.controller.command_interface != 'trajectory_effort'  # takes none
                 and self.count_publishers('effort_commands') > 0)  # a graph query: ~10 us
        deadline = time.monotonic() + self.settings.lockstep_timeout
        while True:
            self._take_polled()
            if self.answer_stamp >= stamp:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0.0:
                self.counters['missed answers'] += 1
                return
            self.polled.wait(remaining)
        if wired and self.answer_effort is not None:
            with self.lock:
                try:
                    self.controller.set_command(self.answer_effort, self.sim_time)
                except CommandError as error:
                    self.reject('joint_torques', error.reason, str(error))

    def _publish_state(self, stamp: int, k: int) -> bool:
        """Publish the state of step k; False when the gap dropped its joint_states."""
        plant, gap = self.plant, self.plant.gap
        time_msg = stamp_of(stamp)
        with self.lock:
            self.sim_time = k * self.dt
            self.controller.sample(self.sim_time)
            reference = self.controller.reference
            point = self.msg_desired.points[0]
            point.positions = reference.position.tolist()
            point.velocities = reference.velocity.tolist()
            point.accelerations = reference.acceleration.tolist()
        self.msg_desired.header.stamp = time_msg
        self._publish('desired_accelerations', self.pub_desired, self.msg_desired, stamp)
        if plant.floating_base:
            self._publish_base(time_msg, stamp)
        # What the encoders read now: sent to the node, and what the robot's own PD uses.
        self.measured = plant.measured_position(), plant.measured_velocity()
        if gap.withheld(self.sim_time):  # the network down (truth/joint_torques goes on)
            self.counters['joint_states withheld (gap outage)'] += 1
            return False
        if gap.drop > 0 and self.rng.random() < gap.drop:
            self.counters['joint_states dropped (gap)'] += 1
            return False
        msg = self.msg_states
        msg.header.stamp = time_msg
        msg.position = self.measured[0].tolist()
        msg.velocity = self.measured[1].tolist()
        msg.effort = plant.measured_effort().tolist()
        self._publish('joint_states', self.pub_states, msg, stamp)
        return True

    def _publish_base(self, time_msg: Time, stamp: int) -> None:
        plant = self.plant
        q, v = plant.q(), plant.v()
        odometry = self.msg_odometry
        odometry.header.stamp = time_msg
        pose = odometry.pose.pose
        pose.position.x, pose.position.y, pose.position.z = q[:3].tolist()
        o = pose.orientation
        o.x, o.y, o.z, o.w = q[3:7].tolist()
        twist = odometry.twist.twist
        twist.linear.x, twist.linear.y, twist.linear.z = v[:3].tolist()
        twist.angular.x, twist.angular.y, twist.angular.z = v[3:6].tolist()
        self._publish('odometry', self.pub_odometry, odometry, stamp)
        acc = plant.base_acceleration()
        msg = self.msg_base_acc
        msg.header.stamp = time_msg
        a = msg.accel
        a.linear.x, a.linear.y, a.linear.z = acc[:3].tolist()
        a.angular.x, a.angular.y, a.angular.z = acc[3:].tolist()
        self._publish('base_acceleration', self.pub_base_acc, msg, stamp)

    def _step(self, stamp: int) -> None:
        """Apply the controller's effort at the measured state for one step; publish the truth."""
        plant = self.plant
        q, v = self.measured
        with self.lock:
            effort = self.controller.effort(self.sim_time, q, v)
            timeout = self.settings.wrench_timeout
            for link, (wrench, since) in list(self.wrenches.items()):
                if self.sim_time - since > timeout:
                    del self.wrenches[link]
            pushes = {link: wrench for link, (wrench, _) in self.wrenches.items()}
        plant.clear_wrench()
        for link, wrench in pushes.items():
            plant.apply_wrench(link, wrench)
        q_exact, v_exact = plant.q(), plant.v()
        error = self.controller.reference.position - q_exact[plant.actuated_q]
        for window in self.tracking:  # since start, since the last report
            window[0] += float(error @ error) / error.size
            window[1] += 1
            window[2] = max(window[2], float(np.max(np.abs(error))))
        plant.step(effort)  # finite: checked inputs only, and Plant.step refuses NaN
        self.fitness.step(plant.q()[plant.actuated_q], effort, plant.applied_effort)
        self.counters['steps'] += 1
        time_msg = stamp_of(stamp)
        truth = self.msg_truth
        truth.header.stamp = time_msg
        rows = plant.actuated_v
        truth.position = q_exact[plant.actuated_q].tolist()
        truth.velocity = v_exact[rows].tolist()
        truth.effort = plant.applied_effort.tolist()
        self._publish('truth/joint_torques', self.pub_truth, truth, stamp)
        for link, wrench in pushes.items():
            self._publish('truth/external_wrench', self.pub_external,
                          wrench_msg(link, wrench, time_msg), stamp)
        if self.pub_contacts:
            contacts = plant.contact_wrenches()
            for link, publisher in self.pub_contacts.items():
                self._publish(f'truth/contact_wrenches/{link}', publisher,
                              wrench_msg(link, contacts.get(link, np.zeros(6)), time_msg),
                              stamp)

    def _publish(self, topic: str, publisher, msg, stamp: int) -> None:
        if self.recorder is None:
            publisher.publish(msg)
            return
        # Serialized once: the bytes published are the bytes recorded (rclpy would serialize
        # the message again to publish it, ~15 us each of the step's three).
        data = serialize_message(msg)
        publisher.publish(data)
        self.recorder.add_serialized(topic, msgtype_of(type(msg)), data, stamp)

    def destroy_node(self) -> None:
        polled = getattr(self, 'polled', None)  # absent when the start-up failed
        if polled is not None:
            polled.destroy()
        super().destroy_node()

    # ------------------------------------------------------------------ diagnostics
    def status(self, window: bool = False) -> dict:
        """
        Return the counters and the tracking error.

        Counters: steps, late steps, missed answers, drops, stale ticks, rejected inputs per
        reason. Tracking error since start and, with ``window``, since the last call with
        ``window`` (which starts a new window).
        """
        with self.lock:
            values = dict(self.counters)
            values['late steps'] = self.schedule.late_steps  # realtime clock: a period late
            if self.settings.clock != 'lockstep':
                values['max step lateness [ms]'] = f'{self.schedule.max_lateness_ns * 1e-6:.3f}'
            values['stale effort command ticks'] = self.controller.stale_ticks
            values['scheduling'] = self.scheduling
            values['gc max pause [ms]'] = f'{self.gc_monitor.max_pause * 1e3:.3f}'
            values.update(self.rejected)
            for label, (squares, steps, largest) in zip(('', ' (last report)'), self.tracking):
                if label and not window:
                    continue
                rms = (squares / steps) ** 0.5 if steps else 0.0
                values[f'tracking error rms [rad]{label}'] = f'{rms:.3e}'
                values[f'tracking error max [rad]{label}'] = f'{largest:.3e}'
            if window:
                self.tracking[1][:] = [0.0, 0, 0.0]
        return values

    def fitness_entry(self) -> dict[str, str]:
        """Return the run's fitness as its recording's ``custom_data`` entry (late steps too)."""
        return self.fitness.entry(self.settings.clock, self.schedule.late_steps,
                                  self.schedule.max_lateness_ns)

    def _publish_diagnostics(self) -> None:
        values = self.status(window=True)
        level = DiagnosticStatus.OK
        if values['missed answers'] or values['late steps'] or self.rejected:
            level = DiagnosticStatus.WARN
        status = DiagnosticStatus(level=level, name=f'{self.get_fully_qualified_name()}: '
                                  'simulated robot', message=f'{values["steps"]} steps',
                                  hardware_id='mujoco')
        status.values = [KeyValue(key=key, value=str(value)) for key, value in values.items()]
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = self.get_clock().now().to_msg()
        self.pub_diagnostics.publish(msg)
