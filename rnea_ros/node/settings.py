"""
The node's settings (its parameters, ROS-free) and the checks a model must pass to be driven.

``Settings`` mirrors the parameters that ``parameters`` declares; ``check_model`` refuses, with
the reason, a model the node cannot use (``model_loading`` builds it from a robot_description).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math

from rnea_ros.dynamics.joint_model import FRICTION_MODELS
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import RneaError
from rnea_ros.node.safety import check_choice, FAULT_OUTPUTS, STATE_SOURCES, TORQUE_TERMS

# What starts a cycle when rate > 0: a joint_states arrival (the clock only when none comes
# within 1.5 periods), or the clock alone (see rnea_ros.node.realtime).
CYCLE_TRIGGERS = ('joint_states', 'clock')


@dataclass
class Settings:
    """The node's parameters (see ``rnea_ros.node.node`` for their descriptions)."""

    rate: float = 500.0
    cycle_trigger: str = 'joint_states'
    floating_base: bool = False
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    command_joints: tuple[str, ...] = ()
    state_source: str = 'measured'
    input_timeout: float = 0.1
    max_input_timeout: float = 1.0
    acceleration_timeout: float = 0.1
    fault_output: str = 'hold_gravity'
    effort_limit_scale: float = 1.0
    torque_terms: str = 'full'
    inertia_check: str = 'error'
    thread_priority: int = 50
    contacts: tuple = ()  # contacts.Contact records
    wrench_topics: tuple[str, ...] = ()
    publish_joint_reaction_wrenches: bool = False
    locked_joints: tuple[str, ...] = ()
    locked_positions: tuple[float, ...] = ()
    friction_compensation: bool = False
    friction_velocity_threshold: float = 0.01
    friction_model: str = 'coulomb-viscous-offset'
    joint_model: dict = field(default_factory=dict)  # armature.<joint>, friction.<joint>.<term>
    extra: dict = field(default_factory=dict)

    def validate(self) -> Settings:
        """Raise ValueError naming the first parameter with an unusable value."""
        check_choice('state_source', self.state_source, STATE_SOURCES)
        check_choice('cycle_trigger', self.cycle_trigger, CYCLE_TRIGGERS)
        check_choice('fault_output', self.fault_output, FAULT_OUTPUTS)
        check_choice('torque_terms', self.torque_terms, TORQUE_TERMS)
        check_choice('inertia_check', self.inertia_check, ('error', 'warn'))
        check_choice('friction_model', self.friction_model, FRICTION_MODELS)
        for name in ('rate', 'input_timeout', 'max_input_timeout', 'acceleration_timeout',
                     'effort_limit_scale'):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f'parameter {name!r} is {value}: expected a finite value >= 0')
        for name in ('input_timeout', 'acceleration_timeout'):
            if getattr(self, name) == 0:
                raise ValueError(f'parameter {name!r} must be > 0')
        if len(self.gravity) != 3 or not all(math.isfinite(g) for g in self.gravity):
            raise ValueError(f"parameter 'gravity' is {list(self.gravity)}: expected 3 finite "
                             f'numbers (world frame, m/s^2)')
        if not 0 <= self.thread_priority <= 99:
            raise ValueError(f"parameter 'thread_priority' is {self.thread_priority}: "
                             f'expected 0 (normal scheduling) to 99')
        if len(set(self.command_joints)) != len(self.command_joints):
            raise ValueError("parameter 'command_joints' repeats a joint")
        threshold = self.friction_velocity_threshold
        if not (math.isfinite(threshold) and threshold > 0):
            raise ValueError(f"parameter 'friction_velocity_threshold' is {threshold}: expected "
                             f'a finite value > 0 (rad/s or m/s)')
        if len(self.locked_positions) != len(self.locked_joints):
            raise ValueError(f"parameter 'locked_positions' has {len(self.locked_positions)} "
                             f'values for {len(self.locked_joints)} locked_joints: expected one '
                             f'position per joint')
        if len(set(self.locked_joints)) != len(self.locked_joints):
            raise ValueError("parameter 'locked_joints' repeats a joint")
        bad = [x for x in self.locked_positions if not math.isfinite(x)]
        if bad:
            raise ValueError(f"parameter 'locked_positions' holds {bad[0]}: expected finite "
                             f'positions (rad or m)')
        locked_commanded = sorted(set(self.locked_joints) & set(self.command_joints))
        if locked_commanded:
            raise ValueError(f"parameter 'command_joints' names locked joints "
                             f'{locked_commanded}: a locked joint is never commanded')
        links = [contact.link for contact in self.contacts]
        if len(set(links)) != len(links):
            raise ValueError(f"parameter 'contacts' repeats a link: {links}")
        if links and not self.floating_base:
            raise ValueError("parameter 'contacts' is set but floating_base is false: contact "
                             'wrenches balance a floating base (use wrench_topics for measured '
                             'wrenches on a fixed-base robot)')
        if len(set(self.wrench_topics)) != len(self.wrench_topics) or not all(
                self.wrench_topics):
            raise ValueError(f"parameter 'wrench_topics' is {list(self.wrench_topics)}: "
                             f'expected distinct non-empty topic names')
        return self


class ModelRejected(RneaError):
    """A robot_description the node cannot use; the message says why."""


class ParameterRejected(ModelRejected):
    """
    A parameter that does not fit the model; the message names the parameter.

    E.g. it names a joint the model lacks, or a position outside the joint's limits. With the
    model from the parameter the node stops at start (exit 2); a model from the topic is
    rejected like an invalid one.
    """


def check_model(model: RobotModel, settings: Settings) -> None:
    """Check that the model fits the node: 1-DoF joints (and a free-flyer root), command joints."""
    for k, joint in enumerate(model.joints):
        if joint.nv == 1 or (k == 0 and joint.kind == 'free-flyer'):
            continue
        raise ModelRejected(f'joint {joint.name!r} is {joint.kind} ({joint.nv} DoF): the node '
                            f'reads joints from sensor_msgs/JointState, one value per joint'
                            + ('; for a floating robot use floating_base: true and a URDF '
                               'without a floating joint' if joint.kind == 'floating' else ''))
    links = set(model.link_names)
    unknown = [contact.link for contact in settings.contacts if contact.link not in links]
    if unknown:
        raise ModelRejected(f'contacts {unknown} are not links of the model; links: '
                            f'{list(model.link_names)}')
    check_locked_joints(model, settings)
    names = set(model.joint_names)
    missing = [name for name in settings.command_joints if name not in names]
    if missing:
        raise ModelRejected(f'command_joints {missing} are not independent joints of the model '
                            f'(mimic and fixed joints cannot be commanded); joints: '
                            f'{list(actuated_joints(model))}')


def check_locked_joints(model: RobotModel, settings: Settings) -> None:
    """Check that ``locked_joints`` name one-DoF joints of the model, inside their limits."""
    joints = {joint.name: joint for joint in model.joints if joint.nv == 1}
    unknown = [name for name in settings.locked_joints if name not in joints]
    if unknown:
        raise ParameterRejected(f"parameter 'locked_joints': {unknown} are not independent "
                                f'one-DoF joints of the model; joints: {list(joints)}')
    for name, value in zip(settings.locked_joints, settings.locked_positions):
        joint = joints[name]
        if not joint.lower <= value <= joint.upper:
            raise ParameterRejected(f"parameter 'locked_positions': {value} for joint "
                                    f'{name!r} is outside its limits [{joint.lower}, '
                                    f'{joint.upper}]')


def actuated_joints(model: RobotModel) -> tuple[str, ...]:
    """Return the one-DoF independent joints in model order (all but the free-flyer root)."""
    return tuple(joint.name for joint in model.joints if joint.nv == 1)
