"""The ``rnea`` node: feed-forward joint torques from a URDF at the controller rate.

Run: ``ros2 run rnea_ros rnea_node --ros-args --params-file config/rnea.yaml`` (or
``python -m rnea_ros.node ...``). This module only wires ROS to ``rnea_ros.feedforward``, which
holds the logic: it declares the parameters, converts messages, and publishes preallocated
messages. Topics are relative (remap them):

subscriptions
  ``robot_description``      std_msgs/String, reliable + transient local, depth 1; only when the
                             ``robot_description`` parameter is empty
  ``joint_states``           sensor_msgs/JointState, best effort (connects to reliable and best
                             effort publishers), depth 1
  ``desired_accelerations``  trajectory_msgs/JointTrajectory, best effort, depth 1
  ``joint_trajectory``       trajectory_msgs/JointTrajectory, reliable, depth 10
  ``odometry``               nav_msgs/Odometry, best effort, depth 1 (``floating_base`` only)
  ``base_acceleration``      geometry_msgs/AccelStamped, best effort, depth 1 (idem)
publications (reliable, depth 1 unless said)
  ``joint_torques``          sensor_msgs/JointState: the state used and effort = torque
  ``feedforward_effort``     std_msgs/Float64MultiArray in ``command_joints`` order
  ``joint_trajectory_with_effort``  trajectory_msgs/JointTrajectory, depth 10
  ``/diagnostics``           diagnostic_msgs/DiagnosticArray, 1 Hz

Frames for a floating base (REP-105): odometry pose = base link in the (gravity-aligned) odom
frame; odometry twist and base_acceleration in the base link frame (``child_frame_id``); the base
acceleration is the classical one of the base origin, gravity excluded.

Timing: with ``rate`` > 0 a steady-clock timer computes from the latest inputs; with ``rate`` 0
each joint_states message is answered at once, and a steady-clock watchdog publishes the fault
output when joint_states stop. Watchdogs use the steady clock, never ROS time, so ``use_sim_time``
clock jumps cannot stall or trip them.
"""
from __future__ import annotations

import array
import sys
import time

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import AccelStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import (
    FloatingPointRange, ParameterDescriptor, ParameterType, SetParametersResult)
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String
from trajectory_msgs.msg import JointTrajectory

from rnea_ros import trajectory as trajectory_module
from rnea_ros.diagnostics import CycleStats, GcMonitor, Rejections
from rnea_ros.feedforward import Feedforward, ModelRejected, Settings, load_model
from rnea_ros.joint_input import Rejected
from rnea_ros.safety import (
    ERROR, FAULT_OUTPUTS, OK, STATE_SOURCES, TORQUE_TERMS, check_choice)
from rnea_ros.trajectory import Trajectory

NODE_NAME = 'rnea'
STATUS_NAME = 'rnea: feed-forward torques'

SENSOR_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                        reliability=ReliabilityPolicy.BEST_EFFORT,
                        durability=DurabilityPolicy.VOLATILE)
COMMAND_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)
TRAJECTORY_QOS = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                            reliability=ReliabilityPolicy.RELIABLE,
                            durability=DurabilityPolicy.VOLATILE)
DESCRIPTION_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                             reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)

# Parameters changed live are applied between two cycles; the others need a restart.
LIVE_PARAMETERS = ('state_source', 'input_timeout', 'acceleration_timeout', 'fault_output',
                   'effort_limit_scale', 'torque_terms')


def _range(low: float, high: float) -> list[FloatingPointRange]:
    return [FloatingPointRange(from_value=low, to_value=high, step=0.0)]


def _choices(choices) -> str:
    return 'one of: ' + ', '.join(choices)


PARAMETERS = {  # name: (default or type, descriptor keywords)
    'robot_description': ('', dict(
        type=ParameterType.PARAMETER_STRING, read_only=True,
        description='URDF text of the robot. Empty: wait for it on the robot_description topic '
                    '(transient local), where later descriptions replace the model live.')),
    'rate': (500.0, dict(
        type=ParameterType.PARAMETER_DOUBLE, read_only=True, floating_point_range=_range(0, 1e4),
        description='Publishing rate [Hz] of a steady-clock timer computing from the latest '
                    'inputs. 0: answer each joint_states message at once.')),
    'floating_base': (False, dict(
        type=ParameterType.PARAMETER_BOOL, read_only=True,
        description='Add a free-flyer joint above the URDF root link; its state comes from '
                    'odometry (and base_acceleration).')),
    'gravity': ([0.0, 0.0, -9.81], dict(
        type=ParameterType.PARAMETER_DOUBLE_ARRAY, read_only=True,
        description='Gravity [m/s^2] in the world (odometry) frame.')),
    'command_joints': (Parameter.Type.STRING_ARRAY, dict(
        type=ParameterType.PARAMETER_STRING_ARRAY, read_only=True,
        description='Joints of feedforward_effort, in this order (the joints of the effort '
                    'controller). Unset: every independent one-DoF joint in model order.')),
    'state_source': ('measured', dict(
        type=ParameterType.PARAMETER_STRING, additional_constraints=_choices(STATE_SOURCES),
        description='measured: q, v from joint_states. desired: q, v from the desired motion '
                    'where it gives them (computed-torque feed-forward), measured elsewhere.')),
    'input_timeout': (0.1, dict(
        type=ParameterType.PARAMETER_DOUBLE, floating_point_range=_range(1e-4, 60.0),
        description='Age [s, steady clock] beyond which joint_states (of a commanded joint) '
                    'or odometry are stale: fault_output is published.')),
    'acceleration_timeout': (0.1, dict(
        type=ParameterType.PARAMETER_DOUBLE, floating_point_range=_range(1e-4, 60.0),
        description='Age [s] beyond which a single-point desired_accelerations message (or the '
                    'end of a multi-point one) no longer applies: zero desired acceleration. '
                    'Also the timeout of base_acceleration.')),
    'fault_output': ('zero', dict(
        type=ParameterType.PARAMETER_STRING, additional_constraints=_choices(FAULT_OUTPUTS),
        description='Published while inputs are missing or stale: zero (zero effort), '
                    'hold_gravity (gravity torques at the last measured positions), none '
                    '(nothing: the controller keeps its last command).')),
    'effort_limit_scale': (1.0, dict(
        type=ParameterType.PARAMETER_DOUBLE, floating_point_range=_range(0.0, 100.0),
        description='Clip efforts to the URDF <limit effort> times this; 0 disables.')),
    'torque_terms': ('full', dict(
        type=ParameterType.PARAMETER_STRING, additional_constraints=_choices(TORQUE_TERMS),
        description='full: M(q)a + C(q,v)v + g(q). gravity: g(q) (gravity compensation). '
                    'gravity_coriolis: g(q) + C(q,v)v.')),
    'inertia_check': ('error', dict(
        type=ParameterType.PARAMETER_STRING, read_only=True,
        additional_constraints=_choices(('error', 'warn')),
        description='error: refuse a URDF whose link inertias are not physically consistent. '
                    'warn: accept it with a warning (some published URDFs need it).')),
}


class RneaNode(Node):
    """Publishes inverse-dynamics torques; see the module docstring for the interface."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        for name, (default, descriptor) in PARAMETERS.items():
            self.declare_parameter(name, default, ParameterDescriptor(**descriptor))
        self.settings = self._read_settings()
        self._core: Feedforward | None = None
        self._description_error: str | None = None
        self._robot_name = ''
        self.stats = CycleStats(self.settings.rate)
        self.rejections = Rejections()
        self.gc_monitor = GcMonitor()
        self._last_cycle = time.monotonic()
        self._steady_clock = Clock(clock_type=ClockType.STEADY_TIME)
        trajectory_module.warm_up()

        self._command_pub = self.create_publisher(Float64MultiArray, 'feedforward_effort',
                                                  COMMAND_QOS)
        self._torque_pub = self.create_publisher(JointState, 'joint_torques', COMMAND_QOS)
        self._trajectory_pub = self.create_publisher(JointTrajectory,
                                                     'joint_trajectory_with_effort',
                                                     TRAJECTORY_QOS)
        self._diagnostics_pub = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.create_subscription(JointState, 'joint_states', self._on_joint_states, SENSOR_QOS)
        self.create_subscription(JointTrajectory, 'desired_accelerations', self._on_desired,
                                 SENSOR_QOS)
        self.create_subscription(JointTrajectory, 'joint_trajectory', self._on_trajectory,
                                 TRAJECTORY_QOS)
        if self.settings.floating_base:
            self.create_subscription(Odometry, 'odometry', self._on_odometry, SENSOR_QOS)
            self.create_subscription(AccelStamped, 'base_acceleration',
                                     self._on_base_acceleration, SENSOR_QOS)

        description = self.get_parameter('robot_description').value
        self._description_from_topic = not description
        if description:
            self._load_description(description, 'parameter')
        else:
            self.create_subscription(String, 'robot_description', self._on_description,
                                     DESCRIPTION_QOS)
        rate = self.settings.rate
        if rate > 0:
            self.create_timer(1.0 / rate, self._cycle, clock=self._steady_clock)
        else:  # answer each message; a watchdog covers joint_states that stop coming
            self.create_timer(self.settings.input_timeout / 2, self._watchdog,
                              clock=self._steady_clock)
        self.create_timer(1.0, self._publish_diagnostics, clock=self._steady_clock)
        self.add_on_set_parameters_callback(self._check_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

    # ------------------------------------------------------------------ parameters
    def _read_settings(self) -> Settings:
        values = {}
        for name in PARAMETERS:
            if name == 'robot_description':
                continue
            try:
                values[name] = self.get_parameter(name).value
            except rclpy.exceptions.ParameterUninitializedException:
                values[name] = ()
        values['gravity'] = tuple(values['gravity'])
        values['command_joints'] = tuple(values['command_joints'] or ())
        return Settings(**values).validate()

    def _check_parameters(self, parameters) -> SetParametersResult:
        choices = {'state_source': STATE_SOURCES, 'fault_output': FAULT_OUTPUTS,
                   'torque_terms': TORQUE_TERMS}
        for parameter in parameters:
            if parameter.name in choices:
                try:
                    check_choice(parameter.name, parameter.value, choices[parameter.name])
                except ValueError as exc:
                    return SetParametersResult(successful=False, reason=str(exc))
        return SetParametersResult(successful=True)

    def _apply_parameters(self, parameters) -> None:
        for parameter in parameters:
            if parameter.name in LIVE_PARAMETERS:
                setattr(self.settings, parameter.name, parameter.value)
                self.get_logger().info(f'{parameter.name} = {parameter.value!r}')
        if self._core is not None:
            self._core.limiter.scale = self.settings.effort_limit_scale

    # ------------------------------------------------------------------ robot model
    def _on_description(self, msg: String) -> None:
        self._load_description(msg.data, 'topic')

    def _load_description(self, xml: str, source: str) -> None:
        logger = self.get_logger()
        try:
            core = Feedforward(load_model(xml, self.settings), self.settings)
        except ModelRejected as exc:
            self._description_error = str(exc)
            self.rejections.record('robot_description', 'invalid', str(exc), time.monotonic())
            kept = 'keeping the current model' if self._core else 'no model yet'
            logger.error(f'robot_description ({source}) rejected, {kept}: {exc}')
            return
        old = self._core
        if old is not None:
            added = sorted(set(core.joint_names) - set(old.joint_names))
            removed = sorted(set(old.joint_names) - set(core.joint_names))
            if added or removed:
                old.model_mismatch = (f'new robot_description joints differ: added {added}, '
                                      f'removed {removed}')
                logger.error(f'{old.model_mismatch}; keeping the running model and publishing '
                             f'the fault output ({self.settings.fault_output}) until restart')
                return
            core.take_state_from(old)
        self._description_error = None
        self._install(core)
        logger.info(f'model {core.model.name!r} from the {source}: {len(core.joint_names)} '
                    f'joints, nq={core.model.nq}, nv={core.model.nv}, commanding '
                    f'{len(core.command_joints)} joints')

    def _install(self, core: Feedforward) -> None:
        """Preallocate the output messages for ``core``, then switch to it (between cycles)."""
        def zeros(size: int) -> array.array:
            return array.array('d', bytes(8 * size))

        torques = JointState()
        torques.name = list(core.joint_names)
        n = len(core.joint_names)
        torques.position, torques.velocity, torques.effort = zeros(n), zeros(n), zeros(n)
        # Assignment may copy: write through views of the arrays the message holds.
        self._position_out = np.frombuffer(torques.position, dtype=np.float64)
        self._velocity_out = np.frombuffer(torques.velocity, dtype=np.float64)
        self._effort_out = np.frombuffer(torques.effort, dtype=np.float64)
        command = Float64MultiArray()
        command.layout.dim = [MultiArrayDimension(label='joints', size=len(core.command_joints),
                                                  stride=len(core.command_joints))]
        command.data = zeros(len(core.command_joints))
        self._command_out = np.frombuffer(command.data, dtype=np.float64)
        self._torque_msg, self._command_msg = torques, command
        self._robot_name = core.model.name
        self._core = core
        # The model and messages live as long as the node: out of the collector's sight (no
        # full collection here: a model can arrive between two cycles).
        self.gc_monitor.freeze(collect=False)

    # ------------------------------------------------------------------ inputs
    def _reject(self, topic: str, exc: Rejected, now: float) -> None:
        warning = self.rejections.record(topic, exc.reason, str(exc), now)
        if warning:
            self.get_logger().warning(warning)

    def _on_joint_states(self, msg: JointState) -> None:
        core = self._core
        if core is None:
            return
        now = time.monotonic()
        try:
            core.on_joint_states(msg.name, msg.position, msg.velocity, msg.effort, now,
                                 msg.header.stamp)
        except Rejected as exc:
            self._reject('joint_states', exc, now)
            return
        if self.settings.rate == 0:
            self._cycle()

    def _on_desired(self, msg: JointTrajectory) -> None:
        core = self._core
        if core is None:
            return
        now = time.monotonic()
        try:
            trajectory = _trajectory(msg)
            start = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
            if start == 0:  # joint_trajectory_controller's convention: start on receipt
                start = self._ros_time()
            core.on_desired(trajectory, start, now)
        except Rejected as exc:
            self._reject('desired_accelerations', exc, now)

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        core = self._core
        if core is None:
            self.get_logger().warning('joint_trajectory dropped: no robot model yet')
            return
        try:
            efforts = core.trajectory_efforts(_trajectory(msg))
        except Rejected as exc:
            self._reject('joint_trajectory', exc, time.monotonic())
            return
        for point, effort in zip(msg.points, efforts):
            point.effort = array.array('d', effort.tobytes())
        self._trajectory_pub.publish(msg)

    def _on_odometry(self, msg: Odometry) -> None:
        core = self._core
        if core is None:
            return
        now = time.monotonic()
        pose, twist = msg.pose.pose, msg.twist.twist
        p, o, lin, ang = pose.position, pose.orientation, twist.linear, twist.angular
        try:
            core.on_odometry((p.x, p.y, p.z), (o.x, o.y, o.z, o.w), (lin.x, lin.y, lin.z),
                             (ang.x, ang.y, ang.z), now, msg.header.stamp)
        except Rejected as exc:
            self._reject('odometry', exc, now)

    def _on_base_acceleration(self, msg: AccelStamped) -> None:
        core = self._core
        if core is None:
            return
        now = time.monotonic()
        lin, ang = msg.accel.linear, msg.accel.angular
        try:
            core.on_base_acceleration((lin.x, lin.y, lin.z), (ang.x, ang.y, ang.z), now)
        except Rejected as exc:
            self._reject('base_acceleration', exc, now)

    # ------------------------------------------------------------------ control cycle
    def _ros_time(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _cycle(self) -> None:
        core = self._core
        if core is None:
            return
        now = time.monotonic()
        self._last_cycle = now
        self.stats.start(now)
        ros_time = self._ros_time() if core.desired is not None else 0.0
        if core.cycle(now, ros_time):
            self._position_out[:] = core.position
            self._velocity_out[:] = core.velocity
            self._effort_out[:] = core.effort
            self._command_out[:] = core.command
            stamp = core.joints.stamp
            if stamp is None:
                stamp = self.get_clock().now().to_msg()
            self._torque_msg.header.stamp = stamp
            self._command_pub.publish(self._command_msg)
            self._torque_pub.publish(self._torque_msg)
        self.stats.finish(time.monotonic() - now)

    def _watchdog(self) -> None:
        """rate 0: no joint_states for input_timeout -> run a cycle (it sees the stale input)."""
        if time.monotonic() - self._last_cycle > self.settings.input_timeout:
            self._cycle()

    # ------------------------------------------------------------------ diagnostics
    def _publish_diagnostics(self) -> None:
        self.gc_monitor.collect()  # between two cycles, measured (see GcMonitor)
        now = time.monotonic()
        core = self._core
        if core is None:
            level = ERROR
            message = ('model invalid: ' + self._description_error if self._description_error
                       else 'waiting for robot_description')
            values = {}
            if self._description_from_topic and not self._description_error:
                self.get_logger().info('waiting for robot_description on topic '
                                       f'{self.resolve_topic_name("robot_description")}')
        else:
            level, message, values = core.status(now, self._ros_time())
            if self._description_error:
                values['last robot_description rejected'] = self._description_error
                if level == OK:
                    level, message = 1, 'last robot_description rejected; model kept'
        values['state'] = ('no_model' if core is None else core.fault.code or 'ok')
        summary = self.stats.summary(now)
        values['rate [Hz]'] = f'{summary["rate"]:.1f}'
        for key in ('p50', 'p99', 'max'):
            if key in summary:
                values[f'compute time {key} [us]'] = f'{summary[key]:.1f}'
        values['cycles'] = str(self.stats.cycles)
        values['missed cycles'] = str(self.stats.missed)
        for (topic, reason), count in sorted(self.rejections.counts.items()):
            values[f'rejected {topic} ({reason})'] = str(count)
        values['gc collections'] = str(self.gc_monitor.collections)
        values['gc max pause [us]'] = f'{self.gc_monitor.max_pause * 1e6:.0f}'
        status = DiagnosticStatus(level=bytes([level]), name=STATUS_NAME, message=message,
                                  hardware_id=self._robot_name,
                                  values=[KeyValue(key=k, value=v) for k, v in values.items()])
        diagnostics = DiagnosticArray(status=[status])
        diagnostics.header.stamp = self.get_clock().now().to_msg()
        self._diagnostics_pub.publish(diagnostics)

    def destroy_node(self) -> None:
        monitor = getattr(self, 'gc_monitor', None)  # absent if __init__ failed early
        if monitor is not None:
            monitor.close()
        super().destroy_node()


def _trajectory(msg: JointTrajectory) -> Trajectory:
    return Trajectory.from_points(msg.joint_names, [
        (p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec, p.positions, p.velocities,
         p.accelerations) for p in msg.points])


def make_executor() -> SingleThreadedExecutor:
    """The executor of the node (and of the benchmark's echo node, for a fair comparison).

    rclpy's experimental EventsExecutor was tried: it did not fire the steady-clock timers
    and ignored SIGINT here (Kilted wheels), so the SingleThreadedExecutor it is.
    """
    return SingleThreadedExecutor()


def main(args=None) -> int:
    rclpy.init(args=args)
    try:
        node = RneaNode()
    except ValueError as exc:  # a parameter with an unusable value
        print(f'rnea_node: {exc}', file=sys.stderr)
        rclpy.try_shutdown()
        return 2
    executor = make_executor()
    executor.add_node(node)
    node.gc_monitor.freeze()  # start-up is over: collect once, then keep gc off the cycles
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
