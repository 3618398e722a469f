"""
The rnea node's lifecycle transitions: what each creates, gates and releases.

``Lifecycle`` holds the steps that the transitions of ``RneaNode`` (``rnea_ros.node.node``, whose
``on_*`` callbacks delegate here) run, and the threads and subscriptions of a configured node.
``configure`` creates the publishers (``outputs.NodeOutputs``), the subscriptions and threads,
and loads the model from the ``robot_description`` parameter or starts receiving its topic
(``model_install.ModelInstaller``); ``activate`` starts publishing; ``deactivate`` stops it:
once it returns, nothing at all is published (a cycle's publishing holds the publish lock, which
deactivation takes: ``cycles.Cycles``), while the threads keep merging the inputs; ``release``
(cleanup, shutdown, error) stops the threads and releases the model, the publishers and the
subscriptions. The inputs thread (``TakeLoop``) serves the control inputs' subscriptions; with
``cycle_trigger: joint_states`` its idle step runs the arrival clock's cycles, at rate 0 the
input-timeout watchdog's; with ``cycle_trigger: clock`` a ``realtime.PeriodicThread`` runs the
cycles.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
import time

from rclpy.lifecycle import TransitionCallbackReturn
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.node import interfaces as io
from rnea_ros.node.cycles import Cycles
from rnea_ros.node.inputs import NodeInputs
from rnea_ros.node.messages import message_type, qos_profile
from rnea_ros.node.model_install import ModelInstaller
from rnea_ros.node.outputs import NodeOutputs
from rnea_ros.node.take_loop import TakeLoop
from rnea_ros.timing import realtime

__all__ = ['FAILURE', 'Lifecycle', 'SUCCESS']

SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE


class Lifecycle:
    """
    The transitions' steps and what a configured node runs (module docstring).

    ``node`` gives its settings, parameters and logger (public members) and makes the
    subscriptions; ``on_failure`` is called from a thread that died.
    """

    def __init__(self, node, cycles: Cycles, inputs: NodeInputs, outputs: NodeOutputs,
                 model: ModelInstaller, on_failure: Callable[[BaseException], None]):
        self._node, self._cycles, self._inputs = node, cycles, inputs
        self._outputs, self._model, self._on_failure = outputs, model, on_failure
        self.configured = False
        self.exit_code = 1  # of a failed configure: 2 for a parameter that does not fit
        self.take_loop: TakeLoop | None = None
        self.control: realtime.PeriodicThread | None = None
        self.clock_cycles = 0  # cycles the ArrivalClock ran (no joint_states for 1.5 periods)
        self.scheduling = 'not started'
        self._subscriptions: list = []

    @property
    def deadlines(self):
        """Return the deadlines of the cycles by the clock (``realtime``), or None."""
        return self.control.deadlines if self.control is not None else self._inputs.arrival_clock

    def configure(self) -> TransitionCallbackReturn:
        """Create the publishers, subscriptions and threads; load the model."""
        node = self._node
        try:
            self._outputs.create(node.settings)
            self._subscribe()
            if not node.get_parameter('robot_description').value:  # by a process of its own
                self._model.start_worker()
            self._start_threads()
        except Exception as exc:  # noqa: B902 - rclpy would turn it into a silent ERROR
            node.get_logger().error(f'configure failed: {exc}')
            self.release()
            return FAILURE
        self.configured = True
        description = node.get_parameter('robot_description').value
        if description:
            try:
                self._model.load(description, 'parameter')
            except ValueError as exc:  # a parameter that does not fit the model: exit 2
                node.get_logger().error(f'configure failed: {exc}')
                self.exit_code = 2
                self.release()
                return FAILURE
        return SUCCESS

    def activate(self) -> TransitionCallbackReturn:
        self._cycles.activate()
        self._node.get_logger().info('active: publishing')
        return SUCCESS

    def deactivate(self) -> TransitionCallbackReturn:
        self._cycles.deactivate()
        self._node.get_logger().info('inactive: publishing nothing')
        return SUCCESS

    def release(self) -> TransitionCallbackReturn:
        """Stop publishing and the threads, destroy the publishers and subscriptions."""
        self._cycles.deactivate()
        for thread in (self.control, self.take_loop):
            if thread is not None:
                thread.stop()
        self.control = self.take_loop = self._inputs.arrival_clock = None
        for subscription in self._subscriptions:
            self._node.destroy_subscription(subscription)
        self._subscriptions = []
        self._outputs.release()
        self._model.release()
        self._cycles.clear()
        self.configured = False
        self.scheduling = 'not started'
        return SUCCESS

    def _subscribe(self) -> None:
        """Create the inputs thread and the subscriptions (the control inputs on that thread)."""
        node, settings, callbacks = self._node, self._node.settings, self._inputs
        # The control inputs on a thread of their own (joint_states last: at rate 0 it runs
        # the cycle, which then sees a desired message that came with it); the rest on the
        # executor.
        self.take_loop = self._threads(settings)
        # desired_accelerations serialized: its size is checked before decoding (trajectories).
        inputs = [(io.DESIRED_ACCELERATIONS, io.DESIRED_ACCELERATIONS.name, callbacks.on_desired)]
        inputs += [(io.WRENCHES, topic, partial(callbacks.on_wrench, index, topic))
                   for index, topic in enumerate(settings.wrench_topics)]
        if settings.floating_base:
            inputs += [(io.ODOMETRY, io.ODOMETRY.name, callbacks.on_odometry),
                       (io.BASE_ACCELERATION, io.BASE_ACCELERATION.name,
                        callbacks.on_base_acceleration)]
        self._subscriptions += [self.take_loop.add(message_type(interface), topic,
                                                   qos_profile(interface.qos), callback,
                                                   raw=message_type(interface) is JointTrajectory)
                                for interface, topic, callback in inputs]
        # joint_states: with the observer, the samples that came while the thread was busy are
        # kept (observer_queue deep) for it to integrate; the batch's newest is answered.
        qos = qos_profile(io.JOINT_STATES.qos,
                          settings.observer_queue if settings.observer else None)
        self._subscriptions.append(self.take_loop.add(
            message_type(io.JOINT_STATES), io.JOINT_STATES.name, qos, callbacks.on_joint_states,
            batch_end=callbacks.on_joint_states_batch if settings.observer else None))
        self._subscriptions.append(node.create_subscription(
            message_type(io.PLANNED_TRAJECTORY), io.PLANNED_TRAJECTORY.name,
            callbacks.on_trajectory, qos_profile(io.PLANNED_TRAJECTORY.qos), raw=True))

    def _threads(self, settings) -> TakeLoop:
        """Return the inputs thread; make the control thread (``cycle_trigger`` clock)."""
        rate, priority = settings.rate, settings.thread_priority
        answer_each = rate == 0 or settings.cycle_trigger == 'joint_states'
        self.control = clock = None
        if rate == 0:  # answer each message; after input_timeout without, the fault
            take_loop = TakeLoop(self._node, name='rnea_inputs', priority=priority,
                                 idle=self._watchdog,
                                 idle_timeout=lambda: self._node.settings.input_timeout / 2,
                                 on_failure=self._on_failure)
        elif answer_each:  # each message; the clock's cycles when none comes
            clock = realtime.ArrivalClock(round(1e9 / rate), time.monotonic_ns())
            take_loop = TakeLoop(self._node, name='rnea_inputs', priority=priority,
                                 idle=self._fallback,
                                 idle_timeout=lambda: clock.wait_s(time.monotonic_ns()),
                                 on_failure=self._on_failure)
        else:
            take_loop = TakeLoop(self._node, name='rnea_inputs', priority=priority,
                                 on_failure=self._on_failure)
            self.control = realtime.PeriodicThread(rate, self._cycles.run, 'rnea_control',
                                                   priority, self._on_failure)
        self._inputs.configure(answer_each, clock)
        return take_loop

    def _start_threads(self) -> None:
        """Start the inputs thread and, with ``rate`` > 0, the control thread."""
        threads = [self.take_loop] + ([self.control] if self.control else [])
        for thread in threads:
            thread.start()
        problems = sorted({p for thread in threads for p in thread.setup_problems})
        priority = self._node.settings.thread_priority
        if problems:
            self.scheduling = 'normal: ' + '; '.join(problems)
            self._node.get_logger().warning('real-time set-up incomplete: ' + '; '.join(problems))
        else:
            self.scheduling = f'SCHED_FIFO {priority}' if priority else 'normal'

    def _fallback(self) -> None:
        """Run the clock's cycle when no joint_states came for 1.5 periods (inputs thread)."""
        if self._inputs.arrival_clock.due(time.monotonic_ns()):
            self.clock_cycles += 1
            self._cycles.run()

    def _watchdog(self) -> None:
        """Run a cycle when none ran for input_timeout (rate 0: it sees the stale input)."""
        now = time.monotonic()
        if now - self._cycles.last_cycle > self._node.settings.input_timeout:
            self._cycles.run()
        else:
            self._cycles.collect_garbage(now)
