"""
The ``rnea`` node: feed-forward joint torques from a URDF at the controller rate.

Run: ``ros2 run rnea_ros rnea_node --ros-args --params-file config/rnea.yaml`` (or
``python -m rnea_ros.node ...``; ``rnea_ros.node.main`` starts it). This module only wires ROS to
``rnea_ros.control``, which holds the logic. ``RneaNode`` declares the parameters
(``rnea_ros.node.parameters``) and wires objects of one concern each: ``Cycles`` (the data path
the threads share), ``NodeInputs`` (the subscriptions' callbacks), ``NodeOutputs`` (the
publishers and preallocated messages), ``ModelInstaller`` (robot_description to an installed
core), ``Lifecycle`` (the transitions' steps and the threads; rclpy calls the node's ``on_*``
methods, which delegate to it), ``NodeDiagnostics`` and ``CollisionHandling``.

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

import traceback

from rcl_interfaces.msg import SetParametersResult
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn

from rnea_ros.control import gain_check
from rnea_ros.control import payload as node_payload
from rnea_ros.control import trajectory as trajectory_module
from rnea_ros.control.declaration import LIVE, PAYLOAD
from rnea_ros.control.settings import ModelRejected
from rnea_ros.node import interfaces as io
from rnea_ros.node.collision_handling import CollisionHandling
from rnea_ros.node.cycles import Cycles
from rnea_ros.node.diagnostics import NodeDiagnostics
from rnea_ros.node.inputs import NodeInputs
from rnea_ros.node.lifecycle import Lifecycle
from rnea_ros.node.messages import message_type
from rnea_ros.node.model_install import ModelInstaller
from rnea_ros.node.outputs import NodeOutputs
from rnea_ros.node.parameters import (before_set, check_parameters, check_topic_names,
                                      declare_parameters, declare_unset_again)

NODE_NAME = 'rnea'
STATUS_SUFFIX = ': feed-forward torques'  # after the node's fully qualified name


class RneaNode(LifecycleNode):
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
        self._pending_payload: tuple | None = None  # (payload, core) of a set being made
        self._pending_margin: tuple | None = None  # (the verdict on the gains of a set,)
        self.autostart = self.get_parameter('autostart').value
        self.refuse_duplicate_name = self.get_parameter('refuse_duplicate_name').value
        check_topic_names(self, self.settings)
        self.failure: BaseException | None = None
        trajectory_module.warm_up()
        # The control state the threads share (the core, the output messages) and its cycles.
        self.cycles = Cycles(self.settings.rate, self.ros_time,
                             lambda: self.get_clock().now().to_msg())
        self.outputs = NodeOutputs(self, self.get_fully_qualified_name() + STATUS_SUFFIX)
        self.collisions = CollisionHandling(self.get_logger(), self.outputs, self.cycles)
        self.inputs = NodeInputs(self, self.cycles, self.collisions, self.outputs)
        self.model = ModelInstaller(self, self.cycles, self.outputs, self.inputs.rejections,
                                    self._use_settings)
        self.lifecycle = Lifecycle(self, self.cycles, self.inputs, self.outputs, self.model,
                                   self._thread_failed)
        self.diagnostics = NodeDiagnostics(self, self.cycles, self.inputs, self.lifecycle,
                                           self.model, self.outputs)
        self.add_pre_set_parameters_callback(before_set)
        self.add_on_set_parameters_callback(self._check_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)
        self.create_service(message_type(io.RESET_COLLISION), io.RESET_COLLISION.name,
                            self.collisions.on_reset)

    # ------------------------------------------------------------------ lifecycle (rclpy's)
    def on_configure(self, state) -> TransitionCallbackReturn:
        """Create the publishers, subscriptions and threads; load the model."""
        return self.lifecycle.configure()

    def on_activate(self, state) -> TransitionCallbackReturn:
        return self.lifecycle.activate()

    def on_deactivate(self, state) -> TransitionCallbackReturn:
        return self.lifecycle.deactivate()

    def on_cleanup(self, state) -> TransitionCallbackReturn:
        return self.lifecycle.release()

    def on_shutdown(self, state) -> TransitionCallbackReturn:
        return self.lifecycle.release()

    def on_error(self, state) -> TransitionCallbackReturn:
        return self.lifecycle.release()

    def lifecycle_state(self) -> str:
        """Return the lifecycle state's label: unconfigured, inactive, active, finalized, ..."""
        return self._state_machine.current_state[1]

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

    def ros_time(self) -> float:
        """Return the node's ROS time in seconds (``/clock`` with ``use_sim_time``)."""
        return self.get_clock().now().nanoseconds * 1e-9

    def _use_settings(self, settings) -> None:
        """Take the settings of an installed core (with its model's per-joint families)."""
        self.settings = settings

    # ------------------------------------------------------------------ parameters
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
            core = self.model.with_payload(payload)
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
                self.model.install(core)
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

    def destroy_node(self) -> None:
        lifecycle = getattr(self, 'lifecycle', None)  # absent if __init__ failed early
        if lifecycle is not None:
            lifecycle.release()
            self.cycles.gc_monitor.close()
        super().destroy_node()
