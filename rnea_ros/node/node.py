"""
The ``rnea`` node: feed-forward joint torques from a URDF at the controller rate.

Run: ``ros2 run rnea_ros rnea_node --ros-args --params-file config/rnea.yaml`` (or
``python -m rnea_ros.node ...``; ``rnea_ros.node.main`` starts it). This module only wires ROS to
``feedforward``, which holds the logic: it declares the parameters (``rnea_ros.node.parameters``),
converts messages, and publishes preallocated messages.

A managed (lifecycle) node, like a ros2_control controller: ``configure`` creates the publishers,
subscriptions and threads and loads the model from ``robot_description`` (or subscribes to its
topic); ``activate`` starts publishing; ``deactivate`` stops it (the threads keep merging the
inputs, so a re-activated node answers with fresh state, but nothing at all is published while
inactive); ``cleanup`` and ``shutdown`` stop the threads and release the model and the
publishers. With ``autostart`` (default) ``main`` configures and activates the node by itself.
/diagnostics is published in every state. The topics and the service, with their types and
QoS, are declared in ``interfaces`` (the node creates them from there; docs/node/interfaces.md
shows the generated table); they are relative: remap them.

Frames for a floating base (REP-105): odometry pose = base link in the (gravity-aligned) odom
frame; odometry twist and base_acceleration in the base link frame (``child_frame_id``); the base
acceleration is the classical one of the base origin, gravity excluded.

Threads. The control inputs (joint_states, desired_accelerations, the ``wrench_topics``, and
odometry and base_acceleration for a floating base) are served by a thread of their own
(``TakeLoop``): it waits on those subscriptions only and merges each message as it arrives,
without going through the executor, whose per-message overhead is hundreds of µs of Python
holding the GIL.
With ``cycle_trigger`` joint_states (default) that thread also answers each joint_states message
at once (compute, publish joint_torques, feedforward_effort, then the wrenches), and when none
came for 1.5 periods it runs cycles at ``rate`` from its own clock (``realtime.ArrivalClock``),
which publish the fault output once the inputs are stale; with ``rate`` 0, only when no cycle ran
for ``input_timeout``. With ``cycle_trigger`` clock a control thread
(``realtime.PeriodicThread``) sleeps to absolute steady-clock deadlines and runs one cycle per
deadline from the latest inputs; a deadline woken more than one period late for is skipped and
counted as a missed cycle (``realtime`` has the definitions). Both threads ask for SCHED_FIFO at
``thread_priority`` and a 1 µs timer slack, and run without them when not permitted (said once in
the log and in the diagnostics). The executor thread handles the rest: planned_trajectory,
robot_description, parameters, diagnostics. One lock (``cycles.Cycles``, the data path the
threads share) guards the control state, so a cycle never sees a half-merged message or a
half-installed model. Watchdogs use the steady clock, never ROS
time, so ``use_sim_time`` clock jumps cannot stall or trip them.
"""
from __future__ import annotations

import time
import traceback

from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.lifecycle import LifecycleNode

from rnea_ros.control import gain_check
from rnea_ros.control import payload as node_payload
from rnea_ros.control import trajectory as trajectory_module
from rnea_ros.control.core import ControlCore
from rnea_ros.control.declaration import LIVE, PAYLOAD
from rnea_ros.control.safety import ERROR, OK, WARN
from rnea_ros.control.settings import actuated_joints, ModelRejected, ParameterRejected
from rnea_ros.node import interfaces as io
from rnea_ros.node.collision_handling import CollisionHandling
from rnea_ros.node.cycles import Cycles
from rnea_ros.node.inputs import NodeInputs
from rnea_ros.node.lifecycle import ManagedOutputs
from rnea_ros.node.messages import (create_publisher, diagnostic_array, message_type,
                                    OutputMessages)
from rnea_ros.node.model_loading import build_core, DescriptionWorker, parse_description
from rnea_ros.node.observer_messages import ObserverMessages
from rnea_ros.node.parameters import (actuation_parameter_names, before_set, check_parameters,
                                      check_topic_names, declare_parameters, declare_unset_again,
                                      undeclare_parameters)
from rnea_ros.node.take_loop import TakeLoop
from rnea_ros.timing import realtime

NODE_NAME = 'rnea'
STATUS_SUFFIX = ': feed-forward torques'  # after the node's fully qualified name


class RneaNode(ManagedOutputs, LifecycleNode):
    """
    Publishes inverse-dynamics torques; see the module docstring for the interface.

    ``__init__`` declares and checks the parameters (ValueError naming a bad one) and starts
    the diagnostics; the lifecycle transitions do the rest. ``destroy_node()`` releases all.
    """

    def __init__(self, **kwargs):
        # The given parameter values become parameters (read through rclpy's public API).
        super().__init__(NODE_NAME, automatically_declare_parameters_from_overrides=True,
                         **kwargs)
        self.settings = declare_parameters(self)
        self.payload = node_payload.from_parameters(lambda n: self.get_parameter(n).value)
        self._bare_model = None  # the installed model without the payload
        self._pending_payload: tuple | None = None  # (payload, core) of a set being made
        self._pending_margin: tuple | None = None  # (the verdict on the gains of a set,)
        self.autostart = self.get_parameter('autostart').value
        self.refuse_duplicate_name = self.get_parameter('refuse_duplicate_name').value
        self._namesakes_said = False
        check_topic_names(self, self.settings)
        self.status_name = self.get_fully_qualified_name() + STATUS_SUFFIX
        # The control state the threads share (the core, the output messages) and its cycles.
        self.cycles = Cycles(self.settings.rate, self.ros_time,
                             lambda: self.get_clock().now().to_msg())
        self._configured = False
        self._description_error: str | None = None
        self._robot_name = ''
        self.failure: BaseException | None = None
        self._steady_clock = Clock(clock_type=ClockType.STEADY_TIME)
        self._take_loop: TakeLoop | None = None
        self._control: realtime.PeriodicThread | None = None
        self.clock_cycles = 0  # cycles the ArrivalClock ran (no joint_states for 1.5 periods)
        self._entities: list = []  # publishers and subscriptions of the configured node
        self._reaction_pubs: dict[str, object] = {}
        self._scheduling = 'not started'
        self._worker: DescriptionWorker | None = None  # robot_description from the topic
        self._parsed: tuple | None = None  # the worker's latest result, for the executor
        trajectory_module.warm_up()
        self._description_from_topic = not self.get_parameter('robot_description').value
        self._diagnostics_pub = create_publisher(self, io.DIAGNOSTICS)
        self.create_timer(1.0, self._publish_diagnostics, clock=self._steady_clock)
        self.add_pre_set_parameters_callback(before_set)
        self.add_on_set_parameters_callback(self._check_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)
        self.collisions = CollisionHandling(self)
        self.inputs = NodeInputs(self, self.cycles)  # the subscriptions' callbacks
        self.create_service(message_type(io.RESET_COLLISION), io.RESET_COLLISION.name,
                            self._reset_collision)

    def _thread_failed(self, exc: BaseException) -> None:
        """Log why a node thread died and stop the node (silence must not look like health)."""
        self.failure = exc
        self.get_logger().fatal('node thread failed, shutting down: ' + ''.join(
            traceback.format_exception(type(exc), exc, exc.__traceback__)))
        self.context.try_shutdown()

    def namesakes(self) -> int:
        """Count the other nodes of the graph (as discovered so far) with this node's name."""
        me = (self.get_name(), self.get_namespace())
        return self.get_node_names_and_namespaces().count(me) - 1  # the graph lists this one

    # ------------------------------------------------------------------ parameters
    def _wrench_publisher(self, family: io.Interface, name: str):
        """
        Create the publisher of one topic of a family (``contact_wrenches/<link>``, ...).

        The link or joint ``name`` replaces the family name's ``<...>`` (checked by
        ``check_topic_names``).
        """
        publisher = create_publisher(self, family, family.name.split('<')[0] + name)
        self._entities.append(publisher)
        return publisher

    def _check_parameters(self, parameters) -> SetParametersResult:
        """
        Refuse a live value that does not fit; build the model of a new payload.

        The payload parameters of a set are merged with the current ones and checked as one
        payload; the model carrying it (and its ``ControlCore``) is built here, off the control
        path, and installed by ``_apply_parameters`` once the set is accepted.
        """
        result = check_parameters(parameters, self.actuation_declaring,
                                  self.settings.collision_profiles)
        core, self._pending_margin = self.cycles.core, None
        if result.successful and core is not None and gain_check.concerns(
                p.name for p in parameters):
            settings = self.settings.updated({p.name: p.value for p in parameters},
                                             core.joint_names)
            margin = gain_check.verdict(core.model, settings, core.torques.actuation.armature,
                                        core.state.q.copy())
            refused = gain_check.refusal(margin, settings)
            if refused:
                return SetParametersResult(successful=False, reason=refused)
            self._pending_margin = (margin,)
        changes = {p.name: p.value for p in parameters if p.name in PAYLOAD}
        if not result.successful or not changes:
            return result
        try:
            payload = node_payload.merged(self.payload, changes)
            core = None
            if self.cycles.core is not None and self._bare_model is not None:
                core = build_core(self, node_payload.model_with(self._bare_model, payload),
                                  self.settings)
        except (ValueError, ModelRejected) as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        self._pending_payload = (payload, core)
        return result

    def _apply_parameters(self, parameters) -> None:
        """
        Swap in the settings snapshot a live set makes, between two cycles (the post-set callback).

        The new snapshot (``Settings.updated``) is built here, off the lock (the executor alone
        changes the core and ``settings``), then handed to the core under the lock
        (``ControlCore.use``): a cycle runs wholly with the old one or wholly with the new one,
        never with half of an atomic set.
        """
        if self._pending_payload is not None and any(p.name in PAYLOAD for p in parameters):
            (self.payload, core), self._pending_payload = self._pending_payload, None
            if core is not None and self.cycles.core is not None:
                self._install(core)
            self.get_logger().info(f'payload: {node_payload.describe(self.payload)}')
        core = self.cycles.core
        settings = self.settings.updated({p.name: p.value for p in parameters
                                          if p.name not in PAYLOAD},
                                         () if core is None else core.joint_names)
        with self.cycles.lock:  # between two cycles
            self.settings = settings
            if core is not None:
                core.use(settings)
        if core is not None and self._pending_margin is not None:
            (core.loop_margin,), self._pending_margin = self._pending_margin, None
        for parameter in parameters:
            if parameter.name in LIVE and parameter.name not in PAYLOAD:
                self.get_logger().info(f'{parameter.name} = {parameter.value!r}')
        declare_unset_again(self, parameters)  # outside the lock: it calls back here

    # ------------------------------------------------------------------ robot model
    def _start_description_worker(self) -> None:
        """Receive and parse robot_description in a process of its own (``model_loading``)."""
        self._description_ready = self.create_guard_condition(self._on_parsed)
        self._worker = DescriptionWorker(self.resolve_topic_name(io.ROBOT_DESCRIPTION.name),
                                         self.get_name(), self.get_namespace(), self.settings,
                                         self._on_worker_result)

    def _stop_description_worker(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self.destroy_guard_condition(self._description_ready)
        self._worker, self._parsed = None, None

    def _on_worker_result(self, model, reason: str, notes: list[str]) -> None:
        """From the description worker's thread: hand the result to the executor."""
        self._parsed = (model, reason, notes)
        self._description_ready.trigger()

    def _on_parsed(self) -> None:
        parsed, self._parsed = self._parsed, None
        if parsed is not None and self._configured:
            model, reason, notes = parsed
            if model is not None and self.cycles.core is None:  # no cycles yet: warm up here
                model = model.copy()
            self._install_description(model, reason, notes, 'topic')

    def _load_description(self, xml: str, source: str) -> None:
        self._install_description(*parse_description(xml, self.settings), source)

    def _install_description(self, model, reason: str, notes: list[str], source: str) -> None:
        logger = self.get_logger()
        for note in notes:
            logger.warning(f'robot_description ({source}): {note}')
        # The actuation parameters this model declares go again unless it is installed.
        declared = ([] if model is None else
                    [name for name in actuation_parameter_names(
                        actuated_joints(model), self.settings.collision_profiles)
                     if not self.has_parameter(name)])
        try:  # built outside the lock (parsed in the worker for the topic): cycles go on
            if model is None:
                raise ModelRejected(reason)
            bare, model = model, node_payload.model_with(model, self.payload)
            core = build_core(self, model, self.settings)
        except ModelRejected as exc:
            undeclare_parameters(self, declared)
            if source == 'parameter' and isinstance(exc, ParameterRejected):
                raise ValueError(str(exc)) from None  # a bad parameter: exit 2 at start
            self._description_error = str(exc)
            with self.cycles.lock:
                self.inputs.rejections.record('robot_description', 'invalid', str(exc),
                                              time.monotonic())
            kept = 'keeping the current model' if self.cycles.core else 'no model yet'
            logger.error(f'robot_description ({source}) rejected, {kept}: {exc}')
            return
        old = self.cycles.core
        if old is not None:
            added = sorted(set(core.joint_names) - set(old.joint_names))
            removed = sorted(set(old.joint_names) - set(core.joint_names))
            if added or removed:
                undeclare_parameters(self, declared)
                old.model_mismatch = (f'new robot_description joints differ: added {added}, '
                                      f'removed {removed}')
                logger.error(f'{old.model_mismatch}; keeping the running model and publishing '
                             f'the fault output ({self.settings.fault_output}) until restart')
                return
        self._description_error = None
        self._bare_model = bare
        self._install(core)
        logger.info(f'model {core.model.name!r} from the {source}: {len(core.joint_names)} '
                    f'joints, nq={core.model.nq}, nv={core.model.nv}, commanding '
                    f'{len(core.command_joints)} joints')

    def _install(self, core: ControlCore) -> None:
        """
        Preallocate the output messages for ``core``, then switch to it (between cycles).

        The one place a new model takes effect, a robot_description's or one carrying a new
        payload (``core.model``): what else holds the model is switched here, under the lock.
        """
        messages = OutputMessages(core)
        publications = [(self._torque_pub, messages.torques),
                        (self._command_pub, messages.command)]
        publications += zip(self._contact_pubs, messages.contacts)
        reactions = core.torques.reactions
        if reactions is not None:
            for joint in reactions.joints:
                if joint not in self._reaction_pubs:
                    self._reaction_pubs[joint] = self._wrench_publisher(
                        io.JOINT_REACTION_WRENCHES, joint)
            publications += zip((self._reaction_pubs[j] for j in reactions.joints),
                                messages.reactions)
        observer = (None if core.observer is None else
                    ObserverMessages(core.observer, self._observer_pubs))
        self._robot_name = core.model.name
        self.settings = core.settings  # with the per-joint families of its model
        self.cycles.install(core, messages, publications, observer)

    # ------------------------------------------------------------------ control cycle
    def ros_time(self) -> float:
        """Return the node's ROS time in seconds (``/clock`` with ``use_sim_time``)."""
        return self.get_clock().now().nanoseconds * 1e-9

    def publish_trajectory(self, msg) -> None:
        """Publish a relayed trajectory on ``joint_trajectory_with_effort``."""
        self._trajectory_pub.publish(msg)

    def _fallback(self) -> None:
        """Run the clock's cycle when no joint_states came for 1.5 periods (inputs thread)."""
        if self.inputs.arrival_clock.due(time.monotonic_ns()):
            self.clock_cycles += 1
            self.cycles.run()

    def _watchdog(self) -> None:
        """Run a cycle when none ran for input_timeout (rate 0: it sees the stale input)."""
        now = time.monotonic()
        if now - self.cycles.last_cycle > self.settings.input_timeout:
            self.cycles.run()
        else:
            self.cycles.collect_garbage(now)

    def _reset_collision(self, request, response):
        """Clear a collision (``~/reset_collision``, std_srvs/Trigger)."""
        with self.cycles.lock:
            core = self.cycles.core
            observer = None if core is None else core.observer
            active = observer is not None and observer.reset()
        response.success = observer is not None
        response.message = ('no observer (observer: false, or no model yet)' if observer is None
                            else 'collision cleared' if active else 'no collision to clear')
        if active:
            self.get_logger().info('collision cleared by ~/reset_collision')
        return response

    # ------------------------------------------------------------------ diagnostics
    def _publish_diagnostics(self) -> None:
        now = time.monotonic()
        self.cycles.collect_if_idle(now)  # no cycles (no model yet)
        core = self.cycles.core
        lifecycle = self.lifecycle_state()
        if not self._configured:
            level, message, values = WARN, f'{lifecycle}: no model, publishing nothing', {}
        elif core is None:
            level = ERROR
            message = ('model invalid: ' + self._description_error if self._description_error
                       else 'waiting for robot_description')
            values = {}
            if self._description_from_topic and not self._description_error:
                self.get_logger().info('waiting for robot_description on topic '
                                       f'{self.resolve_topic_name("robot_description")}')
        else:
            level, message, values = core.status(now, self.ros_time())
            level, message = gain_check.report(core.loop_margin, level, message, values)
            if self._description_error:
                values['last robot_description rejected'] = self._description_error
                if level == OK:
                    level, message = 1, 'last robot_description rejected; model kept'
                elif level == 1:  # e.g. fault cycles since the last report: say both
                    message = f'last robot_description rejected; model kept; {message}'
        if self._configured and not self.cycles.active:
            level, message = max(level, WARN), f'{lifecycle}: publishing nothing; {message}'
        namesakes = self.namesakes()
        if namesakes:  # two nodes of one name interleave their feedforward_effort
            values['other nodes with this name'] = str(namesakes)
            level, message = ERROR, f'{namesakes} other node(s) named like this one; {message}'
            if not self._namesakes_said:
                self.get_logger().warning(
                    f'{namesakes} other node(s) named {self.get_fully_qualified_name()} run '
                    f'beside this one: their outputs interleave (give each a name or namespace '
                    f'of its own; refuse_duplicate_name: true refuses to start)')
            self._namesakes_said = True
        values['lifecycle'] = lifecycle
        values['state'] = ('no_model' if core is None else core.fault.code or 'ok')
        summary = self.cycles.stats.summary(now)
        values['rate [Hz]'] = f'{summary["rate"]:.1f}'
        for key in ('p50', 'p99', 'max'):
            if key in summary:
                values[f'compute time {key} [us]'] = f'{summary[key]:.1f}'
        values['cycles'] = str(self.cycles.stats.cycles)
        deadlines = (self._control.deadlines if self._control is not None
                     else self.inputs.arrival_clock)
        if deadlines is not None:  # deadlines skipped (see rnea_ros.timing.realtime)
            values['missed cycles'] = str(deadlines.missed)
            values['missed cycles, longest run'] = str(deadlines.longest_missed_run)
            values['max lateness [us]'] = f'{deadlines.max_lateness_ns / 1e3:.0f}'
        elif self.settings.rate == 0:
            values['missed cycles'] = '0 (rate 0: one cycle per joint_states message)'
        if self.inputs.arrival_clock is not None:
            values['cycles by the clock (no joint_states for 1.5 periods)'] = str(
                self.clock_cycles)
        values['scheduling'] = self._scheduling
        values['payload'] = node_payload.describe(self.payload)
        values['dds threads'] = realtime.middleware_threads()  # config/fastdds_realtime.xml
        with self.cycles.lock:
            rejections = sorted(self.inputs.rejections.counts.items())
            gaps = self.inputs.input_gaps
            gaps = gaps.longest_at(now), gaps.since_report(now)
        values['joint_states longest gap [ms]'] = f'{gaps[0] * 1e3:.1f}'
        values['joint_states longest gap since last report [ms]'] = f'{gaps[1] * 1e3:.1f}'
        for (topic, reason), count in rejections:
            values[f'rejected {topic} ({reason})'] = str(count)
        gc_monitor = self.cycles.gc_monitor
        values['gc collections'] = str(gc_monitor.collections)
        values['gc max pause [us]'] = f'{gc_monitor.max_pause * 1e6:.0f}'
        self._diagnostics_pub.publish(diagnostic_array(
            level, self.status_name, message, self._robot_name, values,
            self.get_clock().now().to_msg()))

    def destroy_node(self) -> None:
        cycles = getattr(self, 'cycles', None)  # absent if __init__ failed early
        if cycles is not None:
            self._release()
            cycles.gc_monitor.close()
        super().destroy_node()
