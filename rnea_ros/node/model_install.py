"""
The node's robot model: robot_description in, checked, built into a core, installed.

``ModelInstaller`` takes a robot_description from the parameter (``load``, at configure) or
from its topic (``start_worker``: parsed in a process of its own, ``model_loading``, the result
handed to the executor through a guard condition), builds the ``ControlCore`` of the model with
the node's payload (outside the lock: cycles go on) and installs it between two cycles
(``install``: the one place a new model takes effect, a robot_description's or one carrying a
new payload). A rejected description keeps the running model, is logged and counted, and its
reason stays in ``error`` for the diagnostics; a new description whose joints differ from the
running model's is refused (the fault output until restart). It declares a model's actuation
parameters on the node, and undeclares them if the model is not installed.
"""
from __future__ import annotations

from collections.abc import Callable
import time

from rnea_ros.control import payload as node_payload
from rnea_ros.control.core import ControlCore
from rnea_ros.control.settings import actuated_joints, ModelRejected, ParameterRejected
from rnea_ros.node import interfaces as io
from rnea_ros.node.cycles import Cycles
from rnea_ros.node.model_loading import build_core, DescriptionWorker, parse_description
from rnea_ros.node.outputs import NodeOutputs
from rnea_ros.node.parameters import actuation_parameter_names, undeclare_parameters

__all__ = ['ModelInstaller']


class ModelInstaller:
    """
    The robot model of ``node`` (module docstring).

    ``node`` gives its parameters, payload and settings (public members); ``rejections``
    counts a rejected description (``inputs.NodeInputs.rejections``); ``use_settings`` takes the
    settings of an installed core (with its model's per-joint families).
    """

    def __init__(self, node, cycles: Cycles, outputs: NodeOutputs, rejections,
                 use_settings: Callable):
        self._node, self._cycles, self._outputs = node, cycles, outputs
        self._rejections, self._use_settings = rejections, use_settings
        self.error: str | None = None  # why the last robot_description was rejected
        self.bare_model = None  # the installed model without the payload
        self._worker: DescriptionWorker | None = None  # robot_description from the topic
        self._parsed: tuple | None = None  # the worker's latest result, for the executor
        self._ready = None  # the guard condition that hands it over

    def start_worker(self) -> None:
        """Receive and parse robot_description in a process of its own (``model_loading``)."""
        node = self._node
        self._ready = node.create_guard_condition(self._on_parsed)
        self._worker = DescriptionWorker(node.resolve_topic_name(io.ROBOT_DESCRIPTION.name),
                                         node.get_name(), node.get_namespace(), node.settings,
                                         self._on_worker_result)

    @property
    def receiving(self) -> bool:
        """Tell whether robot_description comes from its topic (a worker receives it)."""
        return self._worker is not None

    def release(self) -> None:
        """Stop the worker; forget the last rejection (cleanup)."""
        if self._worker is not None:
            self._worker.close()
            self._node.destroy_guard_condition(self._ready)
        self._worker, self._parsed, self._ready = None, None, None
        self.error = None

    def _on_worker_result(self, model, reason: str, notes: list[str]) -> None:
        """From the description worker's thread: hand the result to the executor."""
        self._parsed = (model, reason, notes)
        self._ready.trigger()

    def _on_parsed(self) -> None:
        parsed, self._parsed = self._parsed, None
        if parsed is not None and self._worker is not None:
            model, reason, notes = parsed
            if model is not None and self._cycles.core is None:  # no cycles yet: warm up here
                model = model.copy()
            self._install_description(model, reason, notes, 'topic')

    def load(self, xml: str, source: str) -> None:
        """Parse and install ``xml`` (ValueError: a parameter that does not fit the model)."""
        self._install_description(*parse_description(xml, self._node.settings), source)

    def _install_description(self, model, reason: str, notes: list[str], source: str) -> None:
        node = self._node
        logger = node.get_logger()
        for note in notes:
            logger.warning(f'robot_description ({source}): {note}')
        # The actuation parameters this model declares go again unless it is installed.
        declared = ([] if model is None else
                    [name for name in actuation_parameter_names(
                        actuated_joints(model), node.settings.collision_profiles)
                     if not node.has_parameter(name)])
        try:  # built outside the lock (parsed in the worker for the topic): cycles go on
            if model is None:
                raise ModelRejected(reason)
            bare, model = model, node_payload.model_with(model, node.payload)
            core = build_core(node, model, node.settings)
        except ModelRejected as exc:
            undeclare_parameters(node, declared)
            if source == 'parameter' and isinstance(exc, ParameterRejected):
                raise ValueError(str(exc)) from None  # a bad parameter: exit 2 at start
            self._reject(str(exc), source)
            return
        old = self._cycles.core
        if old is not None:
            added = sorted(set(core.joint_names) - set(old.joint_names))
            removed = sorted(set(old.joint_names) - set(core.joint_names))
            if added or removed:
                undeclare_parameters(node, declared)
                old.model_mismatch = (f'new robot_description joints differ: added {added}, '
                                      f'removed {removed}')
                logger.error(f'{old.model_mismatch}; keeping the running model and publishing '
                             f'the fault output ({node.settings.fault_output}) until restart')
                return
        self.error = None
        self.bare_model = bare
        self.install(core)
        logger.info(f'model {core.model.name!r} from the {source}: {len(core.joint_names)} '
                    f'joints, nq={core.model.nq}, nv={core.model.nv}, commanding '
                    f'{len(core.command_joints)} joints')

    def _reject(self, reason: str, source: str) -> None:
        self.error = reason
        with self._cycles.lock:
            self._rejections.record('robot_description', 'invalid', reason, time.monotonic())
        kept = 'keeping the current model' if self._cycles.core else 'no model yet'
        self._node.get_logger().error(f'robot_description ({source}) rejected, {kept}: {reason}')

    def with_payload(self, payload) -> ControlCore | None:
        """
        Return the core of the installed model carrying ``payload``, or None without a model.

        Raises ``ModelRejected`` (or ValueError for a payload that is not one).
        """
        if self._cycles.core is None or self.bare_model is None:
            return None
        return build_core(self._node, node_payload.model_with(self.bare_model, payload),
                          self._node.settings)

    def install(self, core: ControlCore) -> None:
        """Preallocate the output messages for ``core``, then switch to it (between cycles)."""
        messages, publications, observer = self._outputs.messages_of(core)
        self._use_settings(core.settings)  # with the per-joint families of its model
        self._cycles.install(core, messages, publications, observer)
