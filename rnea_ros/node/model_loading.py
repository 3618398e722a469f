"""
From a robot_description to a ready ``ControlCore``, away from the control path.

Parsing and checking a URDF holds the GIL: a 20 MB description (long comments, meshes inlined)
took 100-200 ms, during which the control thread could not run a cycle. Merely receiving it holds
the GIL too: rclpy's take of a 20 MB message (serialized or not) is one C call of ~50 ms. So a
description from the topic never enters the node's process: ``DescriptionWorker`` is a process
of its own (``forkserver`` context: no fork of a process with DDS threads) with its own rclpy
node (``<node>_description``, same namespace), subscribed to the node's resolved
``robot_description`` topic; it parses and checks each description, builds the ``RobotModel``
(packing the tree into the kernels' arrays: 40 ms for talos_reduced; at a lower CPU priority
than the node, ``WORKER_NICENESS``) and sends it back through a
pipe, pickled as its tree and packed arrays (tens of kB; unpickling is a few array copies, 1
ms). A thread of the node waits on that pipe (without the GIL) and wakes the executor through
a guard condition, which declares the model's actuation parameters (``armature.<joint>``,
``friction.<joint>.*``), builds the ``ControlCore`` and installs it under the lock. The first
model is rebuilt in the node (``RobotModel.copy``), which warms the kernels up there before any
cycle; a description given as the parameter is parsed in the node at start.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
import multiprocessing
import os
import threading
import warnings

from rnea_ros.control import gain_check
from rnea_ros.control.core import ControlCore
from rnea_ros.control.observer_outputs import check_profile_names
from rnea_ros.control.settings import (actuated_joints, check_model, FrozenMap, ModelRejected,
                                       ParameterRejected, Settings)
from rnea_ros.description.urdf import parse_urdf
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import RneaError
from rnea_ros.node.parameters import actuation_parameters, PER_MODEL

PARENT_CHECK = 0.5  # s: how often the worker looks whether the node is still there
# Niceness added to the worker (its threads inherit it): on a busy machine a description being
# parsed yields the CPU to the node's control thread, which must not miss its deadlines.
WORKER_NICENESS = 10
_WARM_UP_URDF = ('<robot name="warm_up"><link name="base"/><link name="arm"><inertial>'
                 '<mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>'
                 '</inertial></link><joint name="j" type="revolute"><parent link="base"/>'
                 '<child link="arm"/><axis xyz="0 0 1"/><limit effort="1" velocity="1" '
                 'lower="-1" upper="1"/></joint></robot>')


def parse_description(xml: str, settings: Settings) -> tuple[RobotModel | None, str, list[str]]:
    """Build a model from URDF text: (model, '', warnings), or (None, why not, warnings)."""
    if not xml.strip():
        return None, 'robot_description is empty', []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            model = RobotModel(parse_urdf(xml, floating_base=settings.floating_base,
                                          inertia_check=settings.inertia_check),
                               settings.gravity)
        except (RneaError, ValueError) as exc:
            return None, f'invalid URDF: {exc}', [str(w.message) for w in caught]
    return model, '', [str(w.message) for w in caught]


def load_model(xml: str, settings: Settings) -> RobotModel:
    """Build and check a model for the node, here; raises ``ModelRejected`` with the reason."""
    model, reason, _ = parse_description(xml, settings)
    if model is None:
        raise ModelRejected(reason)
    check_model(model, settings)
    return model


def build_core(node, model: RobotModel, settings: Settings) -> ControlCore:
    """
    Build the ``ControlCore`` of ``model``, its actuation parameters declared on ``node``.

    Its settings are ``settings`` with the per-joint families of this model's joints (those set);
    ``core.loop_margin`` the verdict on its feedback gains (``gain_check``). Raises
    ``ModelRejected`` (``ParameterRejected`` for a parameter that does not fit the model, gains
    its loop cannot hold under ``gain_check: refuse``) with the reason.
    """
    check_model(model, settings)
    joints = actuated_joints(model)
    try:
        values = actuation_parameters(node, joints)
    except ValueError as exc:
        raise ParameterRejected(str(exc)) from None
    check_profile_names(joints, settings.collision_profiles)
    settings = replace(settings, **{family.attribute: FrozenMap() for family in PER_MODEL})
    core = ControlCore(model, settings.updated(values, joints))
    core.loop_margin = gain_check.verdict(model, core.settings, core.torques.actuation.armature)
    refused = gain_check.refusal(core.loop_margin, core.settings)
    if refused:
        raise ParameterRejected(refused)
    if core.loop_margin is not None and not core.loop_margin.held:
        node.get_logger().error(core.loop_margin.message())
    return core


def _worker_main(topic: str, name: str, namespace: str, settings: Settings, node_pid: int,
                 connection) -> None:
    """Run in the worker process: parse every description on ``topic``, send the results."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions
    from std_msgs.msg import String

    from rnea_ros.node.interfaces import ROBOT_DESCRIPTION
    from rnea_ros.node.messages import message_type, qos_profile

    os.nice(WORKER_NICENESS)  # first: the DDS threads rclpy starts inherit it
    # Load the compiled kernels now, while the node starts, not when the first model comes.
    parse_description(_WARM_UP_URDF, settings)
    rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node(name, namespace=namespace)

    def on_description(msg: String) -> None:
        connection.send(parse_description(msg.data, settings))
    node.create_subscription(message_type(ROBOT_DESCRIPTION), topic, on_description,
                             qos_profile(ROBOT_DESCRIPTION.qos))
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        while _alive(node_pid):  # the node exited (even by SIGKILL): so do we
            executor.spin_once(timeout_sec=PARENT_CHECK)
    except (KeyboardInterrupt, ExternalShutdownException, BrokenPipeError, EOFError):
        pass
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class DescriptionWorker:
    """
    Run the robot_description subscriber and parser process, and a thread receiving its results.

    ``on_result(model, reason, warnings)`` is called on that thread.
    """

    def __init__(self, topic: str, node_name: str, namespace: str, settings: Settings,
                 on_result: Callable[[RobotModel | None, str, list[str]], None]):
        context = multiprocessing.get_context('forkserver')
        # Nothing preloaded: the server starts at once, the worker imports what it needs.
        context.set_forkserver_preload([])
        self._connection, self._child = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_worker_main, name='rnea_description', daemon=True,
            args=(topic, f'{node_name}_description', namespace, settings, os.getpid(),
                  self._child))
        self._on_result = on_result
        self._stopping = False
        self._started = threading.Event()
        # Started from the thread: starting the fork server takes a while; the node goes on.
        self._thread = threading.Thread(target=self._receive, name='rnea_description',
                                        daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        try:
            if not self._stopping:
                self._process.start()
        finally:
            self._started.set()
            self._child.close()
        while not self._stopping:
            try:
                result = self._connection.recv()  # waits without the GIL
            except (EOFError, OSError):
                return  # the worker is gone (node shutting down)
            if self._stopping:
                return
            self._on_result(*result)

    def close(self) -> None:
        self._stopping = True
        self._started.wait()
        if self._process.pid is not None:
            self._process.terminate()
            self._process.join(timeout=2.0)
        self._connection.close()
