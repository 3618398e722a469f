"""
The node's settings (its parameters, ROS-free) and the checks a model must pass to be driven.

``Settings`` mirrors the parameters that ``parameters`` declares; ``load_model`` builds a
``RobotModel`` from a robot_description and refuses, with the reason, one the node cannot use.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math

from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import RneaError
from rnea_ros.node.safety import check_choice, FAULT_OUTPUTS, STATE_SOURCES, TORQUE_TERMS


@dataclass
class Settings:
    """The node's parameters (see ``rnea_ros.node.node`` for their descriptions)."""

    rate: float = 500.0
    floating_base: bool = False
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    command_joints: tuple[str, ...] = ()
    state_source: str = 'measured'
    input_timeout: float = 0.1
    acceleration_timeout: float = 0.1
    fault_output: str = 'zero'
    effort_limit_scale: float = 1.0
    torque_terms: str = 'full'
    inertia_check: str = 'error'
    thread_priority: int = 50
    contacts: tuple = ()  # contacts.Contact records
    wrench_topics: tuple[str, ...] = ()
    publish_joint_reaction_wrenches: bool = False
    extra: dict = field(default_factory=dict)

    def validate(self) -> Settings:
        """Raise ValueError naming the first parameter with an unusable value."""
        check_choice('state_source', self.state_source, STATE_SOURCES)
        check_choice('fault_output', self.fault_output, FAULT_OUTPUTS)
        check_choice('torque_terms', self.torque_terms, TORQUE_TERMS)
        check_choice('inertia_check', self.inertia_check, ('error', 'warn'))
        for name in ('rate', 'input_timeout', 'acceleration_timeout', 'effort_limit_scale'):
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


def load_model(xml: str, settings: Settings) -> RobotModel:
    """Build and check a model for the node; raises ``ModelRejected`` with the reason."""
    if not xml.strip():
        raise ModelRejected('robot_description is empty')
    try:
        model = RobotModel.from_urdf_string(xml, floating_base=settings.floating_base,
                                            gravity=settings.gravity,
                                            inertia_check=settings.inertia_check)
    except (RneaError, ValueError) as exc:
        raise ModelRejected(f'invalid URDF: {exc}') from None
    check_model(model, settings)
    return model


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
    names = set(model.joint_names)
    missing = [name for name in settings.command_joints if name not in names]
    if missing:
        raise ModelRejected(f'command_joints {missing} are not independent joints of the model '
                            f'(mimic and fixed joints cannot be commanded); joints: '
                            f'{list(actuated_joints(model))}')


def actuated_joints(model: RobotModel) -> tuple[str, ...]:
    """Return the one-DoF independent joints in model order (all but the free-flyer root)."""
    return tuple(joint.name for joint in model.joints if joint.nv == 1)
