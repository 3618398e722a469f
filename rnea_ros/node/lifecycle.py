"""
The rnea node's lifecycle transitions: what each creates, gates and releases.

``ManagedOutputs`` is the part of ``RneaNode`` (``rnea_ros.node.node``) that the lifecycle
transitions run, kept apart so that the node module holds the parameters, the model and the
diagnostics. ``configure`` creates the publishers, subscriptions and threads and loads the model
from the ``robot_description`` parameter (or subscribes to its topic); ``activate`` starts
publishing; ``deactivate`` stops it: once it returns, nothing at all is published (a cycle's
publishing holds the publish lock, which deactivation takes: ``cycles.Cycles``), while the
threads keep merging the inputs; ``cleanup``, ``shutdown`` and ``on_error`` stop the threads and
release the model, the publishers and the subscriptions. The mixin uses the node's callbacks and
state (``cycles``, ``inputs``, ``settings``, ...), set up by ``RneaNode.__init__``.
"""
from __future__ import annotations

from functools import partial
import time

from rclpy.lifecycle import TransitionCallbackReturn
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.node import interfaces as io
from rnea_ros.node.messages import create_publisher, message_type, qos_profile
from rnea_ros.node.observer_messages import ObserverPublishers
from rnea_ros.node.take_loop import TakeLoop
from rnea_ros.timing import realtime

SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE


class ManagedOutputs:
    """The lifecycle transitions of ``RneaNode`` (a mixin; see the module docstring)."""

    def on_configure(self, state) -> TransitionCallbackReturn:
        """Create the publishers, subscriptions and threads; load the model."""
        try:
            self._create_interfaces()
            self._start_threads()
        except Exception as exc:  # noqa: B902 - rclpy would turn it into a silent ERROR
            self.get_logger().error(f'configure failed: {exc}')
            self._release()
            return FAILURE
        self._configured = True
        description = self.get_parameter('robot_description').value
        if description:
            try:
                self._load_description(description, 'parameter')
            except ValueError as exc:  # a parameter that does not fit the model: exit 2
                self.get_logger().error(f'configure failed: {exc}')
                self.exit_code = 2
                self._release()
                return FAILURE
        return SUCCESS

    def on_activate(self, state) -> TransitionCallbackReturn:
        self.cycles.activate()
        self.get_logger().info('active: publishing')
        return SUCCESS

    def on_deactivate(self, state) -> TransitionCallbackReturn:
        self.cycles.deactivate()
        self.get_logger().info('inactive: publishing nothing')
        return SUCCESS

    def on_cleanup(self, state) -> TransitionCallbackReturn:
        self._release()
        return SUCCESS

    def on_shutdown(self, state) -> TransitionCallbackReturn:
        self._release()
        return SUCCESS

    def on_error(self, state) -> TransitionCallbackReturn:
        self._release()
        return SUCCESS

    def lifecycle_state(self) -> str:
        """Return the lifecycle state's label: unconfigured, inactive, active, finalized, ..."""
        return self._state_machine.current_state[1]

    def _release(self) -> None:
        """Stop publishing and the threads, destroy the publishers and subscriptions."""
        self.cycles.deactivate()
        for thread in (self._control, self._take_loop):
            if thread is not None:
                thread.stop()
        self._control = self._take_loop = self.inputs.arrival_clock = None
        for entity in self._entities:
            if hasattr(entity, 'publish'):
                self.destroy_publisher(entity)
            else:
                self.destroy_subscription(entity)
        self._entities = []
        self._stop_description_worker()
        self.cycles.clear()
        self._reaction_pubs, self._robot_name = {}, ''
        self._description_error = None
        self._configured = False
        self._scheduling = 'not started'

    def _create_interfaces(self) -> None:
        self._torque_pub = create_publisher(self, io.JOINT_TORQUES)
        self._command_pub = create_publisher(self, io.FEEDFORWARD_EFFORT)
        self._trajectory_pub = create_publisher(self, io.TRAJECTORY_WITH_EFFORT)
        # Wrench outputs: contact links are parameters, the joints come with each model.
        self._contact_pubs = [self._wrench_publisher(io.CONTACT_WRENCHES, contact.link)
                              for contact in self.settings.contacts]
        self._entities += [self._torque_pub, self._command_pub, self._trajectory_pub]
        self._observer_pubs = (ObserverPublishers(self, self.settings.wrench_estimation_links)
                               if self.settings.observer else None)
        # The control inputs on a thread of their own (joint_states last: at rate 0 it runs
        # the cycle, which then sees a desired message that came with it); the rest on the
        # executor.
        rate, priority = self.settings.rate, self.settings.thread_priority
        answer_each = rate == 0 or self.settings.cycle_trigger == 'joint_states'
        self._control = clock = None
        if rate == 0:  # answer each message; after input_timeout without, the fault
            self._take_loop = TakeLoop(self, name='rnea_inputs', priority=priority,
                                       idle=self._watchdog,
                                       idle_timeout=lambda: self.settings.input_timeout / 2,
                                       on_failure=self._thread_failed)
        elif answer_each:  # each message; the clock's cycles when none comes
            clock = realtime.ArrivalClock(round(1e9 / rate), time.monotonic_ns())
            self._take_loop = TakeLoop(self, name='rnea_inputs', priority=priority,
                                       idle=self._fallback,
                                       idle_timeout=lambda: clock.wait_s(time.monotonic_ns()),
                                       on_failure=self._thread_failed)
        else:
            self._take_loop = TakeLoop(self, name='rnea_inputs', priority=priority,
                                       on_failure=self._thread_failed)
            self._control = realtime.PeriodicThread(rate, self.cycles.run, 'rnea_control',
                                                    priority, self._thread_failed)
        callbacks = self.inputs
        callbacks.configure(answer_each, clock)
        # desired_accelerations serialized: its size is checked before decoding (trajectories).
        inputs = [(io.DESIRED_ACCELERATIONS, io.DESIRED_ACCELERATIONS.name, callbacks.on_desired)]
        inputs += [(io.WRENCHES, topic, partial(callbacks.on_wrench, index, topic))
                   for index, topic in enumerate(self.settings.wrench_topics)]
        if self.settings.floating_base:
            inputs += [(io.ODOMETRY, io.ODOMETRY.name, callbacks.on_odometry),
                       (io.BASE_ACCELERATION, io.BASE_ACCELERATION.name,
                        callbacks.on_base_acceleration)]
        self._entities += [self._take_loop.add(message_type(interface), topic,
                                               qos_profile(interface.qos), callback,
                                               raw=message_type(interface) is JointTrajectory)
                           for interface, topic, callback in inputs]
        # joint_states: with the observer, the samples that came while the thread was busy are
        # kept (observer_queue deep) for it to integrate; the batch's newest is answered.
        qos = qos_profile(io.JOINT_STATES.qos,
                          self.settings.observer_queue if self.settings.observer else None)
        self._entities.append(self._take_loop.add(
            message_type(io.JOINT_STATES), io.JOINT_STATES.name, qos, callbacks.on_joint_states,
            batch_end=callbacks.on_joint_states_batch if self.settings.observer else None))
        self._entities.append(self.create_subscription(
            message_type(io.PLANNED_TRAJECTORY), io.PLANNED_TRAJECTORY.name,
            callbacks.on_trajectory, qos_profile(io.PLANNED_TRAJECTORY.qos), raw=True))
        if self._description_from_topic:  # by a process of its own: see model_loading
            self._start_description_worker()

    def _start_threads(self) -> None:
        """Start the inputs thread and, with ``rate`` > 0, the control thread."""
        threads = [self._take_loop] + ([self._control] if self._control else [])
        for thread in threads:
            thread.start()
        problems = sorted({p for thread in threads for p in thread.setup_problems})
        priority = self.settings.thread_priority
        if problems:
            self._scheduling = 'normal: ' + '; '.join(problems)
            self.get_logger().warning('real-time set-up incomplete: ' + '; '.join(problems))
        else:
            self._scheduling = f'SCHED_FIFO {priority}' if priority else 'normal'
