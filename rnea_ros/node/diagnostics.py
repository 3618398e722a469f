"""
The node's /diagnostics: once a second, in every lifecycle state, one DiagnosticStatus.

The same report goes to the node's latched ``~/status``, so that a client that joins
(``rnea_ctl status``) gets the last one at once instead of waiting up to a second for the next.

``NodeDiagnostics`` publishes the core's own status (``ControlCore.status``, from
``control.status``: the inputs, the fault state, the laws, the joint terms; then the verdict on
the feedback gains, ``gain_check.report``) and adds what only the node knows: the lifecycle
state, a rejected robot_description, other nodes of its name, the cycles' timing and missed
deadlines, the threads' scheduling, the payload, the inputs' rejections and gaps, the garbage
collector. Its level is the worst of them; its message leads with the worst.
"""
from __future__ import annotations

import time

from rclpy.clock import Clock, ClockType

from rnea_ros.control import gain_check
from rnea_ros.control import payload as node_payload
from rnea_ros.control.safety import ERROR, OK, WARN
from rnea_ros.node import interfaces as io
from rnea_ros.node.cycles import Cycles
from rnea_ros.node.inputs import NodeInputs
from rnea_ros.node.lifecycle import Lifecycle
from rnea_ros.node.messages import create_publisher, diagnostic_array
from rnea_ros.node.model_install import ModelInstaller
from rnea_ros.node.outputs import NodeOutputs
from rnea_ros.timing import realtime

__all__ = ['NodeDiagnostics']


class NodeDiagnostics:
    """
    The diagnostics of ``node`` (module docstring), published from the executor.

    ``node`` gives its lifecycle state, settings, payload, namesakes, clock and logger (public
    members); the others are read through their public fields.
    """

    def __init__(self, node, cycles: Cycles, inputs: NodeInputs, lifecycle: Lifecycle,
                 model: ModelInstaller, outputs: NodeOutputs):
        self._node, self._cycles, self._inputs = node, cycles, inputs
        self._lifecycle, self._model, self._outputs = lifecycle, model, outputs
        self._namesakes_said = False
        self._publisher = create_publisher(node, io.DIAGNOSTICS)
        self._latched = create_publisher(node, io.STATUS)
        node.create_timer(1.0, self.publish, clock=Clock(clock_type=ClockType.STEADY_TIME))

    def publish(self) -> None:
        """Publish the node's status now."""
        now = time.monotonic()
        self._cycles.collect_if_idle(now)  # no cycles (no model yet)
        lifecycle = self._node.lifecycle_state()
        level, message, values = self._state(now, lifecycle)
        level, message = self._namesakes(level, message, values)
        core = self._cycles.core
        values['lifecycle'] = lifecycle
        values['state'] = ('no_model' if core is None else core.fault.code or 'ok')
        self._timing(values, now)
        values['payload'] = node_payload.describe(self._node.payload)
        values['dds threads'] = realtime.middleware_threads()  # config/fastdds_realtime.xml
        self._input_account(values, now)
        gc_monitor = self._cycles.gc_monitor
        values['gc collections'] = str(gc_monitor.collections)
        values['gc max pause [us]'] = f'{gc_monitor.max_pause * 1e6:.0f}'
        report = diagnostic_array(level, self._outputs.status_name, message,
                                  self._outputs.robot_name, values,
                                  self._node.get_clock().now().to_msg())
        self._publisher.publish(report)
        self._latched.publish(report)

    def _state(self, now: float, lifecycle: str) -> tuple[int, str, dict[str, str]]:
        """Return the level, message and values of the model and its core (``core.status``)."""
        core, error = self._cycles.core, self._model.error
        if not self._lifecycle.configured:
            return WARN, f'{lifecycle}: no model, publishing nothing', {}
        if core is None:
            if self._model.receiving and not error:
                topic = self._node.resolve_topic_name(io.ROBOT_DESCRIPTION.name)
                self._node.get_logger().info(f'waiting for robot_description on topic {topic}')
            message = 'model invalid: ' + error if error else 'waiting for robot_description'
            level, values = ERROR, {}
        else:
            self._estimate_payload(core)
            level, message, values = core.status(now, self._node.ros_time())
            level, message = gain_check.report(core.loop_margin, level, message, values)
            if error:
                values['last robot_description rejected'] = error
                if level == OK:
                    level, message = WARN, 'last robot_description rejected; model kept'
                elif level == WARN:  # e.g. fault cycles since the last report: say both
                    message = f'last robot_description rejected; model kept; {message}'
        if not self._cycles.active:
            level, message = max(level, WARN), f'{lifecycle}: publishing nothing; {message}'
        return level, message, values

    def _estimate_payload(self, core) -> None:
        """Fit ``stall_payload_estimate`` off the cycles' lock; install it under it."""
        with self._cycles.lock:
            samples = core.stall_samples()
        if samples is not None:
            fitted = core.estimate_payload(samples)
            with self._cycles.lock:
                core.install_stall_model(fitted)

    def _namesakes(self, level: int, message: str, values: dict[str, str]) -> tuple[int, str]:
        """Add the other nodes of this name (their feedforward_effort interleaves): ERROR."""
        namesakes = self._node.namesakes()
        if not namesakes:
            return level, message
        values['other nodes with this name'] = str(namesakes)
        if not self._namesakes_said:
            self._node.get_logger().warning(
                f'{namesakes} other node(s) named {self._node.get_fully_qualified_name()} run '
                f'beside this one: their outputs interleave (give each a name or namespace '
                f'of its own; refuse_duplicate_name: true refuses to start)')
        self._namesakes_said = True
        return ERROR, f'{namesakes} other node(s) named like this one; {message}'

    def _timing(self, values: dict[str, str], now: float) -> None:
        """Add the cycles' rate and compute times, the missed deadlines, the scheduling."""
        stats = self._cycles.stats
        summary = stats.summary(now)
        values['rate [Hz]'] = f'{summary["rate"]:.1f}'
        for key in ('p50', 'p99', 'max'):
            if key in summary:
                values[f'compute time {key} [us]'] = f'{summary[key]:.1f}'
        values['cycles'] = str(stats.cycles)
        deadlines = self._lifecycle.deadlines
        if deadlines is not None:  # deadlines skipped (see rnea_ros.timing.realtime)
            values['missed cycles'] = str(deadlines.missed)
            values['missed cycles, longest run'] = str(deadlines.longest_missed_run)
            values['max lateness [us]'] = f'{deadlines.max_lateness_ns / 1e3:.0f}'
        elif self._node.settings.rate == 0:
            values['missed cycles'] = '0 (rate 0: one cycle per joint_states message)'
        if self._inputs.arrival_clock is not None:
            values['cycles by the clock (no joint_states for 1.5 periods)'] = str(
                self._lifecycle.clock_cycles)
        values['scheduling'] = self._lifecycle.scheduling

    def _input_account(self, values: dict[str, str], now: float) -> None:
        """Add the joint_states gaps and the inputs refused, by topic and reason."""
        inputs = self._inputs
        with self._cycles.lock:
            rejections = sorted(inputs.rejections.counts.items())
            gaps = inputs.input_gaps.longest_at(now), inputs.input_gaps.since_report(now)
        values['joint_states longest gap [ms]'] = f'{gaps[0] * 1e3:.1f}'
        values['joint_states longest gap since last report [ms]'] = f'{gaps[1] * 1e3:.1f}'
        for (topic, reason), count in rejections:
            values[f'rejected {topic} ({reason})'] = str(count)
