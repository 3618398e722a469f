"""
The node's settings (its parameters, ROS-free) and the checks a model must pass to be driven.

``Settings`` is an immutable snapshot of the node's parameters, its fields generated from
``declaration`` into ``settings_fields`` (``python -m rnea_ros.control.parameter_docs
--settings``): one field per declared parameter (but the node's own, ``NODE_ONLY``), with its
declared default, and one read-only mapping per family (``Family.attribute``: ``gains``,
``collision_thresholds``...). No field is written by hand: a parameter declared is a field.
``validate`` checks every value (``parameter.check``) and how they relate; ``updated`` builds
the snapshot a live set makes (the values already checked by the node's set callback). The
consumers read the snapshot they were given (``ControlCore.use``), so that a set is swapped in
whole, between two cycles. ``check_model`` refuses, with the reason, a model the node cannot use
(``model_loading`` builds it from a robot_description).

Taken from generate_parameter_library (ros2_control): its ``Params`` struct is plain data
generated from the one declaration (a field per parameter, its default, a map per joint for a
``__map_`` family) and its ``ParamListener`` validates a set and builds a new ``Params`` that
the controller takes once per update (``is_old`` / ``get_params``) instead of reacting to each
parameter. Here the snapshot is frozen (a consumer cannot change what another reads) and the
node hands it over under the control lock.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from rnea_ros.control.declaration import BY_NAME, FAMILIES, NODE_ONLY, PARAMETERS
from rnea_ros.control.settings_fields import SettingsFields
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import RneaError
from rnea_ros.params.parameter import check


class FrozenMap(Mapping):
    """A read-only mapping (of a family's values); nested dicts become FrozenMaps too."""

    __slots__ = ('_items',)

    def __init__(self, items=()):
        self._items = {key: FrozenMap(value) if isinstance(value, Mapping) else
                       tuple(value) if isinstance(value, list) else value
                       for key, value in dict(items).items()}

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f'FrozenMap({self._items!r})'

    def __reduce__(self):
        return FrozenMap, (self._items,)

    def thawed(self) -> dict:
        """Return a plain dict of the items (nested ones too), to build a changed copy from."""
        return {key: value.thawed() if isinstance(value, FrozenMap) else value
                for key, value in self._items.items()}


# The snapshot's fields: the declared parameters the core reads, then one mapping per family.
FIELDS = tuple(parameter.name for parameter in PARAMETERS if parameter.name not in NODE_ONLY)
MAPPINGS = tuple(family.attribute for family in FAMILIES if family.attribute)


class _Snapshot:
    """What every ``Settings`` does; its fields are generated from the declaration."""

    def __post_init__(self):
        for name in MAPPINGS:  # a dict given (tests, the node's readers) is frozen
            value = getattr(self, name)
            if not isinstance(value, FrozenMap):
                object.__setattr__(self, name, FrozenMap(value))
        for name in FIELDS:
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))

    def updated(self, changes: Mapping, joints=()) -> Settings:
        """
        Return the snapshot with ``changes`` (parameter name -> checked value) applied.

        A declared parameter's field takes its value; a family member's value goes into its
        family's mapping (None: unset, removed). ``joints``: the model's one-DoF joints, which
        tell a threshold ``collision_threshold.<profile>.<joint>`` from a joint named with a dot;
        a name that is neither (another model's joint, a parameter the core does not read) is
        left out.
        """
        values, families = {}, {}
        known = {'joint': tuple(joints), 'profile': self.collision_profiles,
                 'link': self.wrench_estimation_links}
        for name, value in changes.items():
            if name in BY_NAME:
                if name in FIELDS:
                    value = check(BY_NAME[name], value)
                    values[name] = () if value is None else value
                continue
            for family in FAMILIES:
                found = family.split(name, known) if family.attribute else None
                if found is None:
                    continue
                items = families.setdefault(family.attribute,
                                            getattr(self, family.attribute).thawed())
                keys = (name,) if len(family.members) > 1 else found[1]
                for key in keys[:-1]:
                    items = items.setdefault(key, {})
                if value is None:
                    items.pop(keys[-1], None)
                else:
                    items[keys[-1]] = tuple(value) if isinstance(value, list) else value
                break
        return replace(self, **values, **families)

    def validate(self) -> Settings:
        """Return the snapshot with its values checked; ValueError names the first unusable."""
        self = replace(self, **{name: _checked(self, name) for name in FIELDS
                                if name != 'contacts'})
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
        if self.prediction != 'none' and self.control_law == 'feedforward':
            raise ValueError(f"parameter 'prediction' is {self.prediction!r} but control_law is "
                             "'feedforward': the node predicts with its own torques, the "
                             "robot's only ones under a feedback law")
        if self.gravity_compensated_by_robot and self.floating_base:
            raise ValueError("parameter 'gravity_compensated_by_robot' is true but floating_base "
                             'is true: a robot that compensates gravity is a fixed-base arm')
        links = self.wrench_estimation_links
        if len(set(links)) != len(links) or not all(links):
            raise ValueError(f"parameter 'wrench_estimation_links' is {list(links)}: expected "
                             f'distinct link names')
        check_profiles(self.collision_profiles, self.collision_profile)
        return self


def _checked(settings, name: str):
    value = check(BY_NAME[name], getattr(settings, name))
    return () if value is None else value


@dataclass(frozen=True)
class Settings(_Snapshot, SettingsFields):
    """
    The node's parameters, an immutable snapshot: a field per parameter of ``declaration``.

    Its fields are ``SettingsFields``, generated from the declaration (module docstring):
    ``dataclasses.replace`` or ``updated`` make a changed copy. Unset arrays are empty tuples;
    ``contacts`` holds ``rnea_ros.contacts.Contact`` records; each family's values are a
    read-only mapping.
    """


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
