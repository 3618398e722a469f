"""
The node's parameters on ROS: declared from ``declaration``, checked, read into ``Settings``.

Every ``ParameterDescriptor`` is built from the declaration: its description (with the unit),
``additional_constraints`` (what the parameter takes, the text of every message about it), and
read-only unless the parameter is live. Values are checked by ``declaration.check``, the same
rule with the same message at start and on a live set: the descriptors are dynamically typed,
so that rclpy lets an integer through for a number (``rate: 1000``, ``-p rate:=1000``, ``ros2
param set /rnea input_timeout 1``) and the check turns it into the number it means.

The node is created with ``automatically_declare_parameters_from_overrides``: the values given
for it (parameter files, ``-p``) are then parameters of the node, which the public rclpy API
reads. Each declared parameter takes the given value over; a given ``armature.<joint>`` or
``friction.<joint>.*`` that names no joint of the model is an error; other given names are
another node's business (a shared ``/**`` file) and are undeclared again.
"""
from __future__ import annotations

from dataclasses import replace

from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
import rclpy.exceptions
from rclpy.expand_topic_name import expand_topic_name
from rclpy.parameter import Parameter as RosParameter
from rclpy.validate_full_topic_name import validate_full_topic_name

from rnea_ros.control.declaration import (ACTUATION, BY_NAME, COLLISION, COLLISION_PROFILE,
                                          CONTACT, GAINS, NODE_ONLY, PARAMETERS, WRENCH_POINT)
from rnea_ros.control.payload import removal
from rnea_ros.control.settings import check_profiles, Settings
from rnea_ros.control.wrenches import contact_from_parameters
from rnea_ros.params.parameter import (check, descriptor_fields, DOUBLE, DOUBLE_ARRAY,
                                       Parameter)

# Declared by rclpy itself, or for the QoS overrides of publishers and subscriptions.
ROS_OWN = ('use_sim_time', 'start_type_description_service')
ROS_OWN_PREFIXES = ('qos_overrides.',)
ACTUATION_PREFIXES = ACTUATION.prefixes
COLLISION_PREFIX, = COLLISION.prefixes
# The families declared per joint of each model: the actuation model (read-only), the thresholds,
# the gains of the control law; with the thresholds of the profiles, what a model's settings
# hold (``model_loading.build_core``).
PER_JOINT = (ACTUATION, COLLISION, GAINS)
PER_MODEL = PER_JOINT + (COLLISION_PROFILE,)
PER_JOINT_PREFIXES = tuple(prefix for family in PER_JOINT for prefix in family.prefixes)
WRENCH_POINT_PREFIX, = WRENCH_POINT.prefixes
FAMILY_PREFIXES = PER_JOINT_PREFIXES + CONTACT.prefixes + WRENCH_POINT.prefixes


def declared(name: str) -> Parameter | None:
    """Return the declaration of the parameter ``name`` (of a live family too), or None."""
    for family in (COLLISION, GAINS):  # checked on a live set (the others are read-only)
        found = family.split(name, {})
        if found is not None:
            return replace(found[0], name=name)
    return BY_NAME.get(name)


def descriptor(parameter: Parameter, subject: str = '', read_only: bool | None = None
               ) -> ParameterDescriptor:
    """
    Return the ``ParameterDescriptor`` of a declared parameter (of a family: ``subject``).

    ``read_only``: for rclpy; None: unless the parameter is live.
    """
    return ParameterDescriptor(**descriptor_fields(parameter, subject, read_only))


def declare_parameters(node) -> Settings:
    """
    Declare every parameter on ``node`` and return their checked values.

    Also declares ``contact.<link>.*`` for each contact link, and records in
    ``node.given_actuation`` the actuation parameters given for the node (checked against
    each model's joints) and in ``node.actuation_declared`` those declared for models so far.
    A value that does not fit its parameter raises ValueError with one
    line naming the parameter, the value and what is expected.
    """
    given = set(_names(node))
    values = {parameter.name: _declare(node, parameter.name, parameter, parameter.default,
                                       lambda value, p=parameter: check(p, value))
              for parameter in PARAMETERS}
    values['contacts'] = _read_contacts(node, values['contacts'] or ())
    wrench_points = _read_wrench_points(node, values['wrench_estimation_links'] or (), given)
    for name in given:
        if name not in BY_NAME and not name.startswith(FAMILY_PREFIXES + ROS_OWN_PREFIXES) \
                and name not in ROS_OWN:
            node.undeclare_parameter(name)  # another node's parameter in a shared file
    node.given_actuation = frozenset(name for name in given
                                     if name.startswith(PER_JOINT_PREFIXES))
    node.actuation_declared = set()  # actuation parameters declared for models so far
    node.actuation_declaring = False
    settings = {name: () if value is None else value for name, value in values.items()
                if name not in NODE_ONLY}
    return Settings(**settings, wrench_points=wrench_points).validate()


def _names(node) -> list[str]:
    return list(node.list_parameters([], 0).names)


def _declare(node, name: str, parameter: Parameter, default, convert, subject: str = '',
             read_only: bool | None = None):
    """
    Declare ``name`` with the value given for it (or ``default``), converted and checked.

    A given value was declared from the overrides without a descriptor: it is read, checked,
    and declared again with the parameter's descriptor.
    """
    value = default
    if node.has_parameter(name):
        given = node.get_parameter(name).value
        node.undeclare_parameter(name)
        if given is not None:
            value = given
    value = convert(value)
    if isinstance(value, tuple):
        value = list(value)
    node.declare_parameter(name, value, descriptor(parameter, subject, read_only),
                           ignore_override=True)
    return tuple(value) if isinstance(value, list) else value


def _read_contacts(node, links: tuple[str, ...]) -> tuple:
    """
    Declare the parameters of each contact link and build the ``Contact`` records.

    ValueError names the parameter for an unusable value (``contact_from_parameters``).
    """
    contacts = []
    for link in links:
        values = {}
        for member in CONTACT.members:
            name = CONTACT.name(member, link)
            try:
                values[CONTACT.field(member)] = _declare(
                    node, name, member, member.default, lambda value: value, f'Contact {link!r}: ')
            except rclpy.exceptions.InvalidParameterException as exc:
                raise ValueError(f"parameter 'contacts': {link!r} cannot name "
                                 f'parameters ({exc})') from None
        contacts.append(contact_from_parameters(link, values))
    return tuple(contacts)


def _read_wrench_points(node, links: tuple[str, ...], given) -> dict:
    """
    Declare ``wrench_point.<link>`` for each wrench link; return the points set (link -> xyz).

    ValueError names a bad value, or a given ``wrench_point.<link>`` of no wrench link.
    """
    member, = WRENCH_POINT.members
    names = {WRENCH_POINT.name(member, link): link for link in links}
    unknown = sorted(name for name in given
                     if name.startswith(WRENCH_POINT_PREFIX) and name not in names)
    if unknown:
        raise ValueError(f'parameter {unknown[0]!r} names no link of wrench_estimation_links '
                         f'{list(links)}')
    points = {}
    for name, link in names.items():
        declaration = replace(member, name=name)
        try:
            value = _declare(node, name, member, None,
                             lambda value, d=declaration: check(d, value), f'Link {link!r}: ')
        except rclpy.exceptions.InvalidParameterException as exc:
            raise ValueError(f"parameter 'wrench_estimation_links': {link!r} cannot name "
                             f'parameters ({exc})') from None
        if value is not None:
            points[link] = value
    return points


def check_topic_names(node, settings: Settings) -> None:
    """Raise ValueError naming the parameter whose value makes an invalid topic name."""
    names = [('wrench_topics', topic, topic) for topic in settings.wrench_topics]
    names += [('contacts', contact.link, 'contact_wrenches/' + contact.link)
              for contact in settings.contacts]
    names += [('wrench_estimation_links', link, 'estimated_wrenches/' + link)
              for link in settings.wrench_estimation_links]
    for parameter, value, topic in names:
        try:
            validate_full_topic_name(expand_topic_name(topic, node.get_name(),
                                                       node.get_namespace()))
        except (ValueError, rclpy.exceptions.NameValidationException) as exc:
            reason = str(exc).splitlines()[0].split(', at ')[0]  # not rcl's source line
            raise ValueError(f'parameter {parameter!r}: {value!r} does not make a valid topic '
                             f'name {topic!r}: {reason}') from None


def actuation_parameter_names(joint_names, profiles=()) -> list[str]:
    """
    Return the per-joint parameters of each of ``joint_names``.

    ``armature.<joint>``, ``friction.<joint>.<term>``, ``collision_threshold.<joint>`` and,
    for each of ``profiles``, ``collision_threshold.<profile>.<joint>``.
    """
    return [name for _, _, _, name in _per_joint(joint_names, profiles)]


def _per_joint(joint_names, profiles) -> list[tuple]:
    """Return (joint, family, member, name) of every per-joint parameter of ``joint_names``."""
    rows = [(joint, family, member, family.name(member, joint)) for joint in joint_names
            for family in PER_JOINT for member in family.members]
    member, = COLLISION_PROFILE.members
    return rows + [(joint, COLLISION, member, COLLISION_PROFILE.name(member, joint,
                                                                     profile=profile))
                   for profile in profiles for joint in joint_names]


def actuation_parameters(node, joint_names) -> dict[str, object]:
    """
    Declare the per-joint parameters of ``joint_names`` and return the ones set.

    ``armature.<joint>`` and ``friction.<joint>.<term>`` for each of ``joint_names`` (the
    model's one-DoF joints), their values checked by ``Actuation.from_parameters``, and
    ``collision_threshold.<joint>``, checked here (ValueError naming it). Unset ones are
    declared unset (0 in the dynamics; a joint not watched); one declared for an earlier model
    stays as it is. The node undeclares those of a model it does not keep
    (``undeclare_parameters``). A value given for the node (``--params-file actuation.yaml``)
    that names no joint of the model is an error: ``ValueError`` naming it, as a typo must not
    silently drop a term.
    """
    done = node.actuation_declared
    values = {}
    profiles = node.settings.collision_profiles
    for joint, family, member, name in _per_joint(joint_names, profiles):
        # A threshold or a gain is checked here (the actuation model's terms by Actuation).
        convert = ((lambda value, name=name: check(declared(name), value))
                   if family is not ACTUATION else (lambda value: value))
        if name in done:
            value = node.get_parameter(name).value
        else:
            node.actuation_declaring = True  # let check_parameters pass it
            try:
                value = _declare(node, name, member, member.default if family is GAINS
                                 else None, convert, f'Joint {joint!r}: ',
                                 read_only=False if family is ACTUATION else None)
            except rclpy.exceptions.InvalidParameterException as exc:
                raise ValueError(f'joint {joint!r} cannot name the parameter {name!r}: '
                                 f'{exc}') from None
            finally:
                node.actuation_declaring = False
            done.add(name)
        if value is not None:
            values[name] = value
    unknown = sorted(node.given_actuation
                     - set(actuation_parameter_names(joint_names, profiles)))
    if unknown:
        raise ValueError(f'parameter {unknown[0]!r} names no one-DoF joint of the model '
                         f'(armature.<joint>, friction.<joint>.coulomb|viscous|offset, '
                         f'effort_bias.<joint>, effort_gain.<joint>, collision_threshold.<joint>, '
                         f'collision_threshold.<profile>.<joint> for a profile of '
                         f'collision_profiles {list(profiles)}, kp.<joint>, kd.<joint>); '
                         f'joints: {list(joint_names)}')
    return values


def undeclare_parameters(node, names) -> None:
    """
    Undeclare the actuation parameters ``names`` (those of a model the node did not keep).

    A value given at start (``--params-file``) is kept: it applies again when a later model
    declares the parameter. The actuation parameters are declared writable for rclpy, so
    that its public ``undeclare_parameter`` may remove them, and read-only for users:
    ``check_parameters`` refuses every live change to them.
    """
    declared = node.actuation_declared
    for name in names:
        if name in declared and name not in node.given_actuation:
            node.undeclare_parameter(name)
            declared.discard(name)


def as_declared(parameters: list[RosParameter]) -> list[RosParameter]:
    """
    Turn integers given for numbers into numbers (the pre-set callback of a live set).

    So that ``ros2 param set /rnea input_timeout 1`` stores the double 1.0, as a parameters
    file's ``input_timeout: 1`` does at start; anything else is left for ``check_parameters``.
    """
    converted = []
    for parameter in parameters:
        declaration = declared(parameter.name)
        value = parameter.value
        if declaration is not None and declaration.kind in (DOUBLE, DOUBLE_ARRAY):
            try:
                value = check(declaration, value)
            except ValueError:
                pass
            else:
                value = list(value) if isinstance(value, tuple) else value
                parameter = RosParameter(parameter.name, value=value)
        converted.append(parameter)
    return converted


def before_set(parameters: list[RosParameter]) -> list[RosParameter]:
    """
    Return the parameters a live set sets (the pre-set callback).

    ``as_declared``'s, and with ``payload.link`` set to '' the other payload parameters at
    their defaults (``payload.removal``): a removed payload leaves no field behind, in the
    node and in what ``ros2 param get`` shows.
    """
    parameters = as_declared(parameters)
    reset = removal({parameter.name: parameter.value for parameter in parameters})
    return [parameter for parameter in parameters if parameter.name not in reset] + [
        RosParameter(name, value=list(value)) if isinstance(value, tuple)
        else RosParameter(name, value=value) for name, value in reset.items()]


def declare_unset_again(node, parameters: list[RosParameter]) -> None:
    """
    Declare again, unset, each collision threshold a live set has unset (the post-set callback).

    rclpy undeclares a parameter set without a value (``ros2 param delete``, type NOT_SET),
    after which no set can find it: the joint would stay unwatched until a restart. Declared
    again, unset, the joint is not watched until a threshold is set for it.
    """
    for parameter in parameters:
        name = parameter.name
        if (parameter.type_ == RosParameter.Type.NOT_SET and name.startswith(COLLISION_PREFIX)
                and name in node.actuation_declared and not node.has_parameter(name)):
            joint = name[len(COLLISION_PREFIX):]
            node.declare_parameter(name, None, descriptor(declared(name), f'Joint {joint!r}: '),
                                   ignore_override=True)


def check_parameters(parameters, declaring_actuation: bool = False,
                     profiles: tuple[str, ...] = ()) -> SetParametersResult:
    """
    Refuse a live value that does not fit its parameter, with the message of the start.

    Every change to an actuation parameter is refused, except its declaration for a model
    (``declaring_actuation``); ``collision_profile`` must be '' or one of ``profiles``.
    """
    for parameter in parameters:
        declaration = declared(parameter.name)
        if declaration is None:
            if parameter.name.startswith(ACTUATION_PREFIXES) and not declaring_actuation:
                return SetParametersResult(successful=False, reason=(
                    f'parameter {parameter.name!r} is read-only: the actuation model is set at '
                    'start (a parameters file)'))
            continue
        try:
            check(declaration, parameter.value)
            if parameter.name == 'collision_profile':
                check_profiles(profiles, parameter.value)
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
    return SetParametersResult(successful=True)
