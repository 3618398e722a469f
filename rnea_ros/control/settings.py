"""
The node's settings (its parameters, ROS-free) and the checks a model must pass to be driven.

``Settings`` holds the values of the parameters of ``declaration``; ``check_model`` refuses, with
the reason, a model the node cannot use (``model_loading`` builds it from a robot_description).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rnea_ros.control.declaration import BY_NAME, NODE_ONLY, PARAMETERS
from rnea_ros.control.parameter import check
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import RneaError


def _default(name: str):
    """Return the declared default of a parameter, as ``Settings`` holds it (arrays: tuples)."""
    default = BY_NAME[name].default
    return () if default is None else tuple(default) if isinstance(default, list) else default


@dataclass
class Settings:
    """
    The node's parameters, checked: one field per parameter of ``declaration.PARAMETERS``.

    Defaults, types and bounds come from the declaration (``validate`` checks each value with
    ``declaration.check``, the rule the node applies at start and on a live set); this class
    adds the checks that relate parameters to each other. Unset arrays are empty tuples.
    """

    rate: float = _default('rate')
    cycle_trigger: str = _default('cycle_trigger')
    floating_base: bool = _default('floating_base')
    gravity: tuple[float, float, float] = _default('gravity')
    command_joints: tuple[str, ...] = _default('command_joints')
    state_source: str = _default('state_source')
    input_timeout: float = _default('input_timeout')
    max_input_timeout: float = _default('max_input_timeout')
    acceleration_timeout: float = _default('acceleration_timeout')
    base_acceleration_time_constant: float = _default('base_acceleration_time_constant')
    fault_output: str = _default('fault_output')
    effort_limit_scale: float = _default('effort_limit_scale')
    torque_terms: str = _default('torque_terms')
    control_law: str = _default('control_law')
    gravity_compensated_by_robot: bool = _default('gravity_compensated_by_robot')
    inertia_check: str = _default('inertia_check')
    thread_priority: int = _default('thread_priority')
    contacts: tuple = ()  # contacts.Contact records, from the contacts parameter
    wrench_topics: tuple[str, ...] = _default('wrench_topics')
    publish_joint_reaction_wrenches: bool = _default('publish_joint_reaction_wrenches')
    locked_joints: tuple[str, ...] = _default('locked_joints')
    locked_positions: tuple[float, ...] = _default('locked_positions')
    friction_compensation: bool = _default('friction_compensation')
    friction_velocity_threshold: float = _default('friction_velocity_threshold')
    friction_model: str = _default('friction_model')
    max_trajectory_points: int = _default('max_trajectory_points')
    observer: bool = _default('observer')
    observer_gain: float = _default('observer_gain')
    observer_queue: int = _default('observer_queue')
    measured_effort: str = _default('measured_effort')
    wrench_estimation_links: tuple[str, ...] = _default('wrench_estimation_links')
    collision_reaction: str = _default('collision_reaction')
    collision_stop_time: float = _default('collision_stop_time')
    collision_debounce: float = _default('collision_debounce')
    collision_auto_reset: float = _default('collision_auto_reset')
    collision_profiles: tuple[str, ...] = _default('collision_profiles')
    collision_profile: str = _default('collision_profile')
    collision_thresholds: dict = field(default_factory=dict)  # joint -> collision_threshold
    # profile -> {joint -> collision_threshold.<profile>.<joint>} (the ones set)
    collision_profile_thresholds: dict = field(default_factory=dict)
    wrench_points: dict = field(default_factory=dict)  # link -> wrench_point.<link>
    joint_model: dict = field(default_factory=dict)  # armature.<joint>, friction.<joint>.<term>
    gains: dict = field(default_factory=dict)  # kp.<joint>, kd.<joint> -> value
    extra: dict = field(default_factory=dict)

    def validate(self) -> Settings:
        """Raise ValueError naming the first parameter with an unusable value."""
        for parameter in PARAMETERS:
            if parameter.name in NODE_ONLY or parameter.name == 'contacts':
                continue
            value = check(parameter, getattr(self, parameter.name))
            setattr(self, parameter.name, () if value is None else value)
        if len(set(self.command_joints)) != len(self.command_joints):
            raise ValueError("parameter 'command_joints' repeats a joint")
        if len(self.locked_positions) != len(self.locked_joints):
            raise ValueError(f"parameter 'locked_positions' has {len(self.locked_positions)} "
                             f'values for {len(self.locked_joints)} locked_joints: expected one '
                             f'position per joint')
        if len(set(self.locked_joints)) != len(self.locked_joints):
            raise ValueError("parameter 'locked_joints' repeats a joint")
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
        if self.observer and self.floating_base:
            raise ValueError("parameter 'observer' is true but floating_base is true: the "
                             'momentum observer needs a fixed base')
        if self.control_law != 'feedforward' and self.floating_base:
            raise ValueError(f"parameter 'control_law' is {self.control_law!r} but floating_base "
                             'is true: the feedback laws drive a fixed-base arm')
        if self.control_law != 'feedforward' and self.state_source != 'measured':
            raise ValueError(f"parameter 'control_law' is {self.control_law!r} but state_source "
                             f'is {self.state_source!r}: feedback needs the measured state')
        if self.gravity_compensated_by_robot and self.floating_base:
            raise ValueError("parameter 'gravity_compensated_by_robot' is true but floating_base "
                             'is true: a robot that compensates gravity is a fixed-base arm')
        links = self.wrench_estimation_links
        if len(set(links)) != len(links) or not all(links):
            raise ValueError(f"parameter 'wrench_estimation_links' is {list(links)}: expected "
                             f'distinct link names')
        check_profiles(self.collision_profiles, self.collision_profile)
        return self


def check_profiles(profiles: tuple[str, ...], profile: str) -> None:
    """Raise ValueError unless ``profiles`` are distinct names and ``profile`` one of them."""
    if len(set(profiles)) != len(profiles) or not all(
            name and '.' not in name for name in profiles):
        raise ValueError(f"parameter 'collision_profiles' is {list(profiles)}: expected "
                         f'distinct non-empty names without a dot')
    if profile and profile not in profiles:
        raise ValueError(f"parameter 'collision_profile' is {profile!r}: expected '' or one of "
                         f'collision_profiles {list(profiles)}')


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
    if model.multi_dof_joints:
        joint = model.multi_dof_joints[0]
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
    unknown = [link for link in settings.wrench_estimation_links if link not in links]
    if unknown:
        raise ParameterRejected(f"parameter 'wrench_estimation_links': {unknown} are not links "
                                f'of the model; links: {list(model.link_names)}')
    names = set(model.joint_names)
    missing = [name for name in settings.command_joints if name not in names]
    if missing:
        raise ParameterRejected(f"parameter 'command_joints': {missing} are not independent "
                                f'joints of the model (mimic and fixed joints cannot be '
                                f'commanded); joints: {list(actuated_joints(model))}')


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
