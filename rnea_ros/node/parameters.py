"""
The node's parameters: names, defaults, ParameterDescriptors (ranges, read-only).

Part of the node (``rnea_ros.node.node`` declares them); the ROS-free ``settings.Settings`` holds
their values. ``config/rnea.yaml`` and the README list the same parameters for users.
"""
from __future__ import annotations

from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                ParameterType, SetParametersResult)
import rclpy.exceptions
from rclpy.expand_topic_name import expand_topic_name
from rclpy.parameter import Parameter
from rclpy.validate_full_topic_name import validate_full_topic_name

from rnea_ros.dynamics.joint_model import FRICTION_MODELS
from rnea_ros.node.safety import check_choice, FAULT_OUTPUTS, STATE_SOURCES, TORQUE_TERMS
from rnea_ros.node.settings import CYCLE_TRIGGERS, Settings
from rnea_ros.node.wrenches import CONTACT_FIELDS, contact_from_parameters, contact_parameter

# Parameters changed live are applied between two cycles; the others need a restart.
LIVE_PARAMETERS = ('state_source', 'input_timeout', 'max_input_timeout', 'acceleration_timeout',
                   'fault_output', 'effort_limit_scale', 'torque_terms', 'friction_compensation')


def _range(low: float, high: float) -> list[FloatingPointRange]:
    return [FloatingPointRange(from_value=low, to_value=high, step=0.0)]


def _choices(choices) -> str:
    return 'one of: ' + ', '.join(choices)


PARAMETERS = {  # name: (default or type, descriptor)
    'autostart': (True, ParameterDescriptor(
        type=ParameterType.PARAMETER_BOOL, read_only=True,
        description='Go through configure and activate by itself at start (a managed node '
                    'that publishes at once). false: stay unconfigured until told over the '
                    'lifecycle services (change_state), as a ros2_control controller.')),
    'robot_description': ('', ParameterDescriptor(
        type=ParameterType.PARAMETER_STRING, read_only=True,
        description='URDF text of the robot. Empty: wait for it on the robot_description topic '
                    '(transient local), where later descriptions replace the model live.')),
    'rate': (500.0, ParameterDescriptor(
        type=ParameterType.PARAMETER_DOUBLE, read_only=True, floating_point_range=_range(0, 1e4),
        description='Cycle rate [Hz]: with cycle_trigger joint_states, the rate of the '
                    'cycles the clock runs while no joint_states come (the fault output keeps '
                    'this rate); with clock, of a control thread that wakes at absolute '
                    'steady-clock deadlines. 0: answer each joint_states message at once, '
                    'the fault output only after input_timeout.')),
    'cycle_trigger': ('joint_states', ParameterDescriptor(
        type=ParameterType.PARAMETER_STRING, read_only=True,
        additional_constraints=_choices(CYCLE_TRIGGERS),
        description='What runs a cycle when rate > 0. joint_states: each joint_states message, '
                    'answered at once; when none came for 1.5 periods the clock runs cycles '
                    'at the rate until one comes. clock: the deadlines of a free-running clock '
                    'at the rate, from the latest inputs.')),
    'floating_base': (False, ParameterDescriptor(
        type=ParameterType.PARAMETER_BOOL, read_only=True,
        description='Add a free-flyer joint above the URDF root link; its state comes from '
                    'odometry (and base_acceleration).')),
    'gravity': ([0.0, 0.0, -9.81], ParameterDescriptor(
        type=ParameterType.PARAMETER_DOUBLE_ARRAY, read_only=True,
        description='Gravity [m/s^2] in the world (odometry) frame.')),
    'command_joints': (Parameter.Type.STRING_ARRAY, ParameterDescriptor(
        type=ParameterType.PARAMETER_STRING_ARRAY, read_only=True,
        description='Joints of feedforward_effort, in this order (the joints of the effort '
                    'controller). Unset: every independent one-DoF joint in model order.')),
    'state_source': ('measured', ParameterDescriptor(
        type=ParameterType.PARAMETER_STRING, additional_constraints=_choices(STATE_SOURCES),
        description='measured: q, v from joint_states. desired: q, v from the desired motion '
                    'where it gives them (computed-torque feed-forward), measured elsewhere.')),
    'input_timeout': (0.1, ParameterDescriptor(
        type=ParameterType.PARAMETER_DOUBLE, floating_point_range=_range(1e-4, 60.0),
        description='Age [s, steady clock] beyond which joint_states (of a commanded joint) '
                    'or odometry are stale: fault_output is published.')),
    'max_input_timeout': (1.0, ParameterDescriptor(
        type=ParameterType.PARAMETER_DOUBLE, floating_point_range=_range(1e-4, 60.0),
        description='Upper bound [s] of the per-joint timeout: a joint whose own publisher is '
                    'slow (a gripper at a few Hz) is stale after 3 of its observed message '
                    'periods, but never later than this after its last message (and never '
                    'earlier than input_timeout).')),
    'acceleration_timeout': (0.1, ParameterDescriptor(
        type=ParameterType.PARAMETER_DOUBLE, floating_point_range=_range(1e-4, 60.0),
        description='Age [s] beyond which a single-point desired_accelerations message (or the '
                    'end of a multi-point one) no longer applies: zero desired acceleration. '
                    'Also the timeout of base_acceleration.')),
    'fault_output': ('hold_gravity', ParameterDescriptor(
        type=ParameterType.PARAMETER_STRING, additional_constraints=_choices(FAULT_OUTPUTS),
        description='Published while inputs are missing or stale: hold_gravity (gravity '
                    'torques at the last measured positions: an arm held up by the '
                    'feed-forward does not fall), zero (zero effort), none (nothing: the '
                    'controller keeps its last command).')),
    'effort_limit_scale': (1.0, ParameterDescriptor(
        type=ParameterType.PARAMETER_DOUBLE, floating_point_range=_range(0.0, 100.0),
        description='Clip efforts to the URDF <limit effort> times this; 0 disables.')),
    'torque_terms': ('full', ParameterDescriptor(
        type=ParameterType.PARAMETER_STRING, additional_constraints=_choices(TORQUE_TERMS),
        description='full: M(q)a + C(q,v)v + g(q). gravity: g(q) (gravity compensation). '
                    'gravity_coriolis: g(q) + C(q,v)v.')),
    'thread_priority': (50, ParameterDescriptor(
        type=ParameterType.PARAMETER_INTEGER, read_only=True,
        integer_range=[IntegerRange(from_value=0, to_value=99, step=1)],
        description='SCHED_FIFO priority of the inputs and control threads (as '
                    "ros2_control's thread_priority). 0: normal scheduling. Needs an rtprio "
                    'limit or CAP_SYS_NICE; without, the threads run normally (logged once).')),
    'inertia_check': ('error', ParameterDescriptor(
        type=ParameterType.PARAMETER_STRING, read_only=True,
        additional_constraints=_choices(('error', 'warn')),
        description='error: refuse a URDF whose link inertias are not physically consistent. '
                    'warn: accept it with a warning (some published URDFs need it).')),
    'contacts': (Parameter.Type.STRING_ARRAY, ParameterDescriptor(
        type=ParameterType.PARAMETER_STRING_ARRAY, read_only=True,
        description='Contact links of a floating-base robot: each cycle the contact wrenches '
                    'that balance the base are solved for, published on '
                    'contact_wrenches/<link>, and the torques computed with them. Per link, '
                    'optional contact.<link>.{type, friction, position, normal, half_extents, '
                    'weight}; unset: a point contact with friction 0.7.')),
    'wrench_topics': (Parameter.Type.STRING_ARRAY, ParameterDescriptor(
        type=ParameterType.PARAMETER_STRING_ARRAY, read_only=True,
        description='geometry_msgs/WrenchStamped topics of measured external wrenches (frame_id '
                    'a model link; force-torque sensors, force plates), used as f_ext. Older '
                    'than input_timeout: taken as zero.')),
    'publish_joint_reaction_wrenches': (False, ParameterDescriptor(
        type=ParameterType.PARAMETER_BOOL, read_only=True,
        description='Publish joint_reaction_wrenches/<joint>: the wrench each moving joint '
                    'transmits from parent to child, in the child link frame.')),
    'locked_joints': (Parameter.Type.STRING_ARRAY, ParameterDescriptor(
        type=ParameterType.PARAMETER_STRING_ARRAY, read_only=True,
        description='URDF joints nobody publishes (e.g. a gripper absent from joint_states): '
                    'held at locked_positions at rest, not required fresh, never commanded.')),
    'locked_positions': (Parameter.Type.DOUBLE_ARRAY, ParameterDescriptor(
        type=ParameterType.PARAMETER_DOUBLE_ARRAY, read_only=True,
        description='Positions [rad or m] of locked_joints, one per joint, within its limits.')),
    'friction_compensation': (False, ParameterDescriptor(
        type=ParameterType.PARAMETER_BOOL,
        description='Add the friction of friction.<joint>.* to the published torques, at the '
                    'desired velocity where the desired motion gives one, else the measured.')),
    'friction_velocity_threshold': (0.01, ParameterDescriptor(
        type=ParameterType.PARAMETER_DOUBLE, read_only=True,
        floating_point_range=_range(1e-9, 100.0),
        description='Velocity scale [rad/s or m/s] of the smooth sign of Coulomb friction: '
                    'coulomb * tanh(v / threshold).')),
    'friction_model': ('coulomb-viscous-offset', ParameterDescriptor(
        type=ParameterType.PARAMETER_STRING, read_only=True,
        additional_constraints=_choices(FRICTION_MODELS),
        description='coulomb-viscous-offset: the friction of friction.<joint>.*; none: no '
                    'friction (the armature stays). As rnea_identify writes it.')),
}

# armature.<joint> and friction.<joint>.<term>: declared for each one-DoF joint of a model when
# it loads (a joint_model.yaml from rnea_identify sets them; unset: 0).
JOINT_MODEL_PARAMETERS = {
    'armature': 'reflected rotor inertia [kg m^2 or kg]: tau += armature * a (always applied).',
    'coulomb': 'Coulomb friction [N m or N]: coulomb * tanh(v / friction_velocity_threshold).',
    'viscous': 'viscous friction [N m s/rad or N s/m]: viscous * v.',
    'offset': 'constant torque offset [N m or N].',
}

# contact.<link>.<field>: declared once `contacts` is read (dynamically typed: the node checks
# the values and names the parameter when one is unusable).
CONTACT_PARAMETERS = {
    'type': 'point (a 3-D force at `position`) or surface (a 6-D wrench of a rectangular sole '
            'whose normal is the link z axis).',
    'friction': 'Coulomb friction coefficient mu > 0 (default 0.7); linearised as the inscribed '
                '4-facet pyramid.',
    'position': 'Contact point or sole centre [m] in the link frame (default the origin).',
    'normal': 'Ground normal of a point contact, world frame (default [0, 0, 1]).',
    'half_extents': 'Half-sizes [X, Y] [m] of a sole along the link x and y axes (surface only, '
                    'required).',
    'weight': 'Weight > 0 of this contact in the solver cost (default 1).',
}


def contact_descriptor(link: str, field: str) -> ParameterDescriptor:
    """Return the descriptor of the parameter contact.<link>.<field>."""
    return ParameterDescriptor(read_only=True, dynamic_typing=True,
                               description=f'Contact {link!r}: {CONTACT_PARAMETERS[field]}')


# Not in ``Settings``: read by the node itself.
NODE_PARAMETERS = ('robot_description', 'autostart')
_INTEGER_TO_DOUBLE = {ParameterType.PARAMETER_INTEGER: ParameterType.PARAMETER_DOUBLE,
                      ParameterType.PARAMETER_INTEGER_ARRAY: ParameterType.PARAMETER_DOUBLE_ARRAY}


def declare_parameters(node) -> Settings:
    """
    Declare every parameter on ``node`` and return their checked values.

    Also declares ``contact.<link>.*`` for each contact link. Integers given where a double is
    declared (``-p rate:=500``, ``rate: 1000`` in YAML) are taken as doubles. An unusable value
    raises ValueError with one line naming the parameter, the value and what is expected.
    """
    for name, (default, descriptor) in PARAMETERS.items():
        _coerce_integer_override(node, name, descriptor.type)
        try:
            node.declare_parameter(name, default, descriptor)
        except (rclpy.exceptions.InvalidParameterTypeException,
                rclpy.exceptions.InvalidParameterValueException):
            value = node._parameter_overrides[name].value
            raise ValueError(f'parameter {name!r} is {_shown(value)}: expected '
                             f'{expectation(descriptor)}') from None
    return _read_settings(node)


def _coerce_integer_override(node, name: str, declared: int) -> None:
    """
    Turn an integer override of a double (array) parameter into a double (array).

    rclpy takes the override's type from its text (``500`` is an integer) and refuses it for a
    double parameter; users type rates and gains as integers. Overrides are read by
    ``declare_parameter`` from ``Node._parameter_overrides`` (no public setter exists).
    """
    override = node._parameter_overrides.get(name)
    if override is None or _INTEGER_TO_DOUBLE.get(override.type_.value) != declared:
        return
    value = override.value
    value = [float(v) for v in value] if isinstance(value, (list, tuple)) else float(value)
    node._parameter_overrides[name] = Parameter(name, Parameter.Type(declared), value)


def _shown(value) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)) or hasattr(value, 'tolist'):
        return '[' + ', '.join(_shown(v) for v in list(value)) + ']'
    return repr(value)


_TYPE_WORDS = {
    ParameterType.PARAMETER_BOOL: 'true or false',
    ParameterType.PARAMETER_INTEGER: 'an integer',
    ParameterType.PARAMETER_DOUBLE: 'a number',
    ParameterType.PARAMETER_STRING: 'a string',
    ParameterType.PARAMETER_DOUBLE_ARRAY: 'a list of numbers',
    ParameterType.PARAMETER_STRING_ARRAY: 'a list of strings',
}


def expectation(descriptor: ParameterDescriptor) -> str:
    """Say in words what a parameter with this descriptor takes."""
    if descriptor.additional_constraints:
        return descriptor.additional_constraints
    words = _TYPE_WORDS[descriptor.type]
    for bounds in [*descriptor.floating_point_range, *descriptor.integer_range]:
        words += f' from {bounds.from_value:g} to {bounds.to_value:g}'
    return words


def _read_settings(node) -> Settings:
    values = {}
    for name in PARAMETERS:
        if name in NODE_PARAMETERS:
            continue
        try:
            values[name] = node.get_parameter(name).value
        except rclpy.exceptions.ParameterUninitializedException:
            values[name] = ()
    values['gravity'] = tuple(values['gravity'])
    values['command_joints'] = tuple(values['command_joints'] or ())
    values['wrench_topics'] = tuple(values['wrench_topics'] or ())
    values['contacts'] = _read_contacts(node, tuple(values['contacts'] or ()))
    values['locked_joints'] = tuple(values['locked_joints'] or ())
    values['locked_positions'] = tuple(float(x) for x in values['locked_positions'] or ())
    return Settings(**values).validate()


def _read_contacts(node, links: tuple[str, ...]) -> tuple:
    """
    Declare the parameters of each contact link and build the ``Contact`` records.

    Declare contact.<link>.<field> for each link of ``contacts``, then build the
    ``Contact`` records (ValueError naming the parameter for an unusable value).
    """
    contacts = []
    for link in links:
        values = {}
        for field in CONTACT_FIELDS:
            name = contact_parameter(link, field)
            try:
                parameter = node.declare_parameter(
                    name, None, contact_descriptor(link, field))
            except rclpy.exceptions.InvalidParameterException as exc:
                raise ValueError(f"parameter 'contacts': {link!r} cannot name "
                                 f'parameters ({exc})') from None
            values[field] = parameter.value
        contacts.append(contact_from_parameters(link, values))
    return tuple(contacts)


def check_topic_names(node, settings: Settings) -> None:
    """Raise ValueError naming the parameter whose value makes an invalid topic name."""
    names = [('wrench_topics', topic, topic) for topic in settings.wrench_topics]
    names += [('contacts', contact.link, 'contact_wrenches/' + contact.link)
              for contact in settings.contacts]
    for parameter, value, topic in names:
        try:
            validate_full_topic_name(expand_topic_name(topic, node.get_name(),
                                                       node.get_namespace()))
        except (ValueError, rclpy.exceptions.NameValidationException) as exc:
            reason = str(exc).splitlines()[0].split(', at ')[0]  # not rcl's source line
            raise ValueError(f'parameter {parameter!r}: {value!r} does not make a valid topic '
                             f'name {topic!r}: {reason}') from None


def joint_model_parameters(node, joint_names) -> dict[str, object]:
    """
    Declare the joint-model parameters of ``joint_names`` and return the ones set.

    ``armature.<joint>`` and ``friction.<joint>.<term>`` for each of ``joint_names`` (the
    model's one-DoF joints; once per name over the node's life).

    A parameter given for the node (``--params-file joint_model.yaml``) that names no joint of
    the model is an error: ``ValueError`` naming it, as a typo must not silently drop a term.
    """
    values = {}
    for joint in joint_names:
        for term, text in JOINT_MODEL_PARAMETERS.items():
            name = f'armature.{joint}' if term == 'armature' else f'friction.{joint}.{term}'
            if not node.has_parameter(name):
                try:
                    node.declare_parameter(name, None, ParameterDescriptor(
                        read_only=True, dynamic_typing=True,
                        description=f'Joint {joint!r}: {text}'))
                except rclpy.exceptions.InvalidParameterException as exc:
                    raise ValueError(f'joint {joint!r} cannot name the parameter {name!r}: '
                                     f'{exc}') from None
            value = node.get_parameter(name).value
            if value is not None:
                values[name] = value
    known = {f'armature.{joint}' for joint in joint_names} | {
        f'friction.{joint}.{term}' for joint in joint_names for term in JOINT_MODEL_PARAMETERS
        if term != 'armature'}
    overrides = getattr(node, '_parameter_overrides', {})  # rclpy keeps no public accessor
    unknown = sorted(name for name in overrides
                     if name.startswith(('armature.', 'friction.')) and name not in known)
    if unknown:
        raise ValueError(f'parameter {unknown[0]!r} names no one-DoF joint of the model '
                         f'(armature.<joint>, friction.<joint>.coulomb|viscous|offset); '
                         f'joints: {list(joint_names)}')
    return values


def check_parameters(parameters) -> SetParametersResult:
    """Refuse a live change to a choice parameter that names no choice."""
    choices = {'state_source': STATE_SOURCES, 'fault_output': FAULT_OUTPUTS,
               'torque_terms': TORQUE_TERMS}
    for parameter in parameters:
        if parameter.name in choices:
            try:
                check_choice(parameter.name, parameter.value, choices[parameter.name])
            except ValueError as exc:
                return SetParametersResult(successful=False, reason=str(exc))
    return SetParametersResult(successful=True)
