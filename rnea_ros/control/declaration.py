"""
The node's parameters, each declared once.

Each parameter has a name, type, default, unit, range or choices, whether it may be changed
live, and what it means. Everything else about a parameter is derived from ``PARAMETERS`` and
``FAMILIES`` (declared in ``families``, re-exported here): the ``ParameterDescriptor`` the node
declares (``parameters``), the fields of the immutable ``Settings`` snapshots its ROS-free core
reads (``settings``, generated from this module), the check of a value, with one message, at
start and on a live set (``parameter.check``), the list in ``rnea_node --help``,
``config/rnea.yaml`` and the parameter table of ``docs/node.md``. The last two are generated
by ``parameter_docs`` (``python -m rnea_ros.control.parameter_docs --yaml`` / ``--markdown``) and
a test fails when the checked-in files differ from what is generated. ROS-free: imports no
rclpy.
"""
from __future__ import annotations

from rnea_ros.control.control_law import CONTROL_LAWS
# The per-link and per-joint families, declared beside the parameters (read from here).
from rnea_ros.control.families import (ACTUATION, COLLISION, COLLISION_PROFILE,  # noqa: F401
                                       CONTACT, FAMILIES, GAINS, WRENCH_POINT)
from rnea_ros.control.joint_input import MAX_NAMES
from rnea_ros.dynamics.actuation import DEFAULT_VELOCITY_THRESHOLD, FRICTION_MODELS
from rnea_ros.dynamics.payload import MAX_MASS_RATIO, MAX_RADIUS
from rnea_ros.observer.collision import DEFAULT_MIN_DURATION
from rnea_ros.observer.momentum import MAX_GAIN, MIN_GAIN
from rnea_ros.params.parameter import (BOOL, DOUBLE, DOUBLE_ARRAY, INTEGER, Parameter, STRING,
                                       STRING_ARRAY)

FAULT_OUTPUTS = ('zero', 'hold_gravity', 'none')
TORQUE_TERMS = ('full', 'gravity', 'gravity_coriolis')
STATE_SOURCES = ('measured', 'desired')
INERTIA_CHECKS = ('error', 'warn')
GAIN_CHECKS = ('refuse', 'error')
# What starts a cycle when rate > 0: a joint_states arrival (the clock only when none comes
# within 1.5 periods), or the clock alone (see rnea_ros.timing.realtime).
CYCLE_TRIGGERS = ('joint_states', 'clock')
# Largest magnitude [m/s^2] of `gravity`: ~36 times the Sun's surface gravity (274 m/s^2).
MAX_GRAVITY = 1e4
# Largest `payload.mass` [kg] before a model is loaded; with one, MAX_MASS_RATIO times its own.
MAX_PAYLOAD_MASS = 1e4


PARAMETERS: tuple[Parameter, ...] = (
    Parameter(
        'autostart', BOOL, True,
        'configure and activate at start; `false`: wait for `change_state`',
        'true: go through configure and activate at start (a managed lifecycle node that '
        'publishes at once). false: stay unconfigured until told over the lifecycle services '
        '(<node>/change_state), as a ros2_control controller.'),
    Parameter(
        'robot_description', STRING, '',
        'URDF text; empty: wait for the topic, logging once per second',
        'URDF text of the robot, usually set by the launch file from its `urdf` argument. '
        'Empty: the node waits for the robot_description topic (transient local, as '
        'robot_state_publisher publishes it), where a later description replaces the model '
        'live.',
        shown_default="`''`"),
    Parameter(
        'rate', DOUBLE, 500.0,
        "cycle rate: of the clock's cycles when joint_states stop (see `cycle_trigger`); `0`: "
        'answer each joint_states message, nothing else',
        'Cycle rate. With cycle_trigger joint_states: the rate of the cycles the clock runs '
        'while no joint_states come (the fault output keeps this rate); with clock: of a '
        'control thread that wakes at absolute steady-clock deadlines and publishes from the '
        'latest inputs (a deadline woken for more than one period late is skipped and counted '
        'as a missed cycle in the diagnostics). 0: answer each joint_states message at once '
        '(a watchdog then publishes the fault output if joint_states stop for input_timeout).',
        unit='Hz', low=0.0, high=1e4),
    Parameter(
        'cycle_trigger', STRING, 'joint_states',
        'what runs a cycle when `rate` > 0: `joint_states` or `clock`',
        'What runs a cycle when rate > 0. joint_states: each joint_states message, answered at '
        'once, so the answer lands in the tick it belongs to whatever the phase between the '
        "robot's clock and the node's; when none came for 1.5 periods the clock runs cycles at "
        'the rate until one comes. clock: the deadlines of a free-running clock at the rate, '
        'from the latest inputs (an answer one tick late or not, depending on the phase).',
        choices=CYCLE_TRIGGERS),
    Parameter(
        'floating_base', BOOL, False,
        'free-flyer joint above the URDF root, state from `odometry`',
        'true: a free-flyer joint above the URDF root link, its state from `odometry` (pose in '
        'the odom frame, twist in the base link frame, REP-105) and `base_acceleration`.'),
    Parameter(
        'gravity', DOUBLE_ARRAY, (0.0, 0.0, -9.81),
        'world-frame gravity, magnitude ≤ 10000',
        'Gravity in the world (odom) frame; its magnitude at most 10000 m/s^2 (about 36 times '
        "the Sun's surface gravity: a larger value is a typo, and 1e308 overflows the "
        'dynamics).',
        unit='m/s²', size=3, high=MAX_GRAVITY,
        expected='3 finite numbers of magnitude at most 10000 (world frame, m/s^2)'),
    Parameter(
        'command_joints', STRING_ARRAY, None,
        'joints and order of `feedforward_effort`',
        'Joints of the feedforward_effort array, in this order: the `joints` of the effort '
        'controller (forward_command_controller on effort) it is remapped to. Unset: every '
        'independent one-DoF joint in model order. A joint the model lacks stops the node at '
        'start (exit 2; a model from the topic is rejected).',
        example="['joint1', 'joint2']", shown_default='all 1-DoF joints', note='2'),
    Parameter(
        'state_source', STRING, 'measured',
        'q, v from joint_states; `desired`: from the desired motion',
        'measured: q, v from joint_states. desired: q, v from the desired motion where it gives '
        'them (computed-torque feed-forward), measured for the other joints.',
        choices=STATE_SOURCES, live=True),
    Parameter(
        'input_timeout', DOUBLE, 0.1,
        'steady-clock age after which joint_states/odometry are stale',
        'Steady-clock age beyond which joint_states of a commanded joint (or odometry) is '
        'stale: the node publishes the fault output and reports ERROR until fresh data '
        'arrives. Judged per joint: a joint whose own publisher is slower (a gripper at 5 Hz '
        'from another publisher) gets 3 of its observed message periods instead, up to '
        'max_input_timeout.',
        unit='s', low=1e-4, high=60.0, live=True, note='1'),
    Parameter(
        'max_input_timeout', DOUBLE, 1.0,
        "upper bound of a joint's own timeout",
        'Upper bound of the per-joint timeout: a publisher that stops trips the fault at most '
        'this long (or input_timeout, if larger) after its last message.',
        unit='s', low=1e-4, high=60.0, live=True, note='1'),
    Parameter(
        'acceleration_timeout', DOUBLE, 0.1,
        'age after which desired/base accelerations stop applying',
        'Age after which a single-point desired_accelerations message (or the end of a '
        'multi-point one, or base_acceleration) stops applying: zero desired acceleration, '
        'WARN.',
        unit='s', low=1e-4, high=60.0, live=True),
    Parameter(
        'base_acceleration_time_constant', DOUBLE, 0.005,
        'low-pass time constant of base_acceleration (0: none)',
        'Time constant of the first-order low-pass the base_acceleration input goes through '
        '(in its header stamps; arrival time when unstamped); 0 takes each message as it is. '
        'A measured base acceleration is an effect of the torques the node sends: fed back '
        'unfiltered, it closes a loop of gain about 1 through a robot standing on its contacts '
        '(see Frames for a floating base).',
        unit='s', low=0.0, high=1.0, live=True),
    Parameter(
        'fault_output', STRING, 'hold_gravity',
        'published under a fault: `hold_gravity`, `zero`, `none` (see Faults)',
        'Output while inputs are missing or stale: hold_gravity (gravity torques at the last '
        'measured positions: an arm held up by its feed-forward does not fall; with contacts, '
        'the contact solution at rest: the legs keep carrying the weight; zero while a '
        'commanded joint was never measured), zero (zero effort), none (publish nothing: the '
        'effort controller then holds its last command forever; only with its own command '
        'timeout).',
        choices=FAULT_OUTPUTS, live=True),
    Parameter(
        'effort_limit_scale', DOUBLE, 1.0,
        'clip to the URDF `<limit effort>` times this; `0` disables',
        'Clip every effort to the URDF <limit effort> times this scale; 0 disables clipping.',
        low=0.0, high=100.0, live=True),
    Parameter(
        'unstable_reaction', STRING, 'stop', 'when the loop oscillates: `stop` or `report` (see '
        'Loop health)', 'Under a feedback law, an oscillating joint (rnea_ros.control.loop_watch) '
        'is ERROR, named. stop: the stop of collision_reaction stop until <node>/reset_collision, '
        'then the pose held until a desired motion newer than the reset. report: the ERROR only.',
        choices=('stop', 'report'), live=True, note='7'),
    Parameter(
        'torque_terms', STRING, 'full',
        '`full`, `gravity` (g(q)), `gravity_coriolis` (g(q) + C(q,v)v)',
        'full: M(q) a + C(q, v) v + g(q). gravity: g(q) (gravity compensation). '
        'gravity_coriolis: g(q) + C(q, v) v.',
        choices=TORQUE_TERMS, live=True),
    Parameter(
        'control_law', STRING, CONTROL_LAWS[0],
        '`feedforward`, `pd_feedforward` or `computed_torque` (see Control laws)',
        "feedforward: ID(q, v, a_d), a term added to a controller's own feedback. "
        'pd_feedforward: ID(q, v, a_d) + Kp (q_d - q) + Kd (v_d - v), the whole torque. '
        'computed_torque: M(q) (a_d + Kp e + Kd e_dot) + C v + g. Kp, Kd: kp.<joint>, '
        'kd.<joint>; q_d, v_d, a_d: the desired_accelerations point or trajectory. With a '
        'feedback law, no desired motion and every fault publish the damped rest g(q) - D v '
        '(fault_output and collision_reaction then apply to feedforward only). Fixed base, '
        'state_source measured.',
        choices=CONTROL_LAWS, note='7'),
    Parameter(
        'gain_check', STRING, GAIN_CHECKS[0],
        '`refuse` gains the loop one tick late cannot hold, or accept them as an `error`',
        'Under a feedback law, at configure and at every set of a gain, the node checks the '
        'linearised loop its torque closes one tick late (rnea_ros.control.loop_margin: the '
        "model's M(q) with armature.<joint>, at the current configuration and a fixed set, "
        'the period 1 / rate, or 1 ms with rate 0) with the gains 25 % larger. refuse: a set '
        'it cannot hold fails the configure or the set, with one line naming the joint, the '
        'gain and the largest value that holds. error: the set is accepted and the '
        "diagnostics are ERROR (a robot whose reflected inertia is larger than the model's).",
        choices=GAIN_CHECKS, live=True, note='7'),
    Parameter(
        'gravity_compensated_by_robot', BOOL, False,
        'the robot adds g(q) itself: leave it out of the published torques',
        'true: the robot adds the gravity torques g(q) to every command itself (Franka FCI, '
        'UR direct torque): the published torques leave g(q) out (clipped to the effort limits '
        'with it), so hold_gravity publishes zero and the damped rest -D v; the observer and '
        'the diagnostics still count it.',
        note='7'),
    Parameter(
        'thread_priority', INTEGER, 50,
        "SCHED_FIFO priority of the node's threads (its executor's: 1); `0`: normal",
        "SCHED_FIFO priority (1..99) of the inputs and control threads (as ros2_control's "
        'thread_priority); 0: normal scheduling. Needs an rtprio limit '
        '(/etc/security/limits.conf) or CAP_SYS_NICE; without it the node runs normally and '
        'says so once in the log and in its diagnostics (`scheduling`).',
        low=0, high=99),
    Parameter(
        'inertia_check', STRING, 'error',
        '`warn` accepts physically inconsistent inertias',
        'error: refuse a URDF whose link inertias are not physically consistent. warn: accept '
        'it with a warning (some published URDFs need it).',
        choices=INERTIA_CHECKS),
    Parameter(
        'contacts', STRING_ARRAY, None,
        'contact links of a floating base',
        'Contact links of a floating-base robot (floating_base: true). Each cycle the node '
        'solves for the contact wrenches that balance the base (minimum-norm, inside the '
        'friction cones), publishes them on contact_wrenches/<link> (geometry_msgs/'
        "WrenchStamped, frame_id = the link, the ground's wrench on the link about its origin) "
        'and the torques computed with them. Names alone give point contacts at the link '
        "origins; a link's settings go under contact.<link>. Unset: no contacts.",
        example="['FL_FOOT', 'FR_FOOT', 'HL_FOOT', 'HR_FOOT']", shown_default='unset (none)'),
    Parameter(
        'wrench_topics', STRING_ARRAY, None,
        '`WrenchStamped` topics of measured `f_ext`',
        'Measured external wrenches (geometry_msgs/WrenchStamped, best effort, e.g. from '
        'force_torque_sensor_broadcaster): frame_id must be a link of the model; used as f_ext '
        '(fixed or floating base). One older than input_timeout is taken as zero (WARN).',
        example="['ft_sensor/wrench']", shown_default='unset (none)'),
    Parameter(
        'publish_joint_reaction_wrenches', BOOL, False,
        'publish `joint_reaction_wrenches/<joint>`',
        'Publish joint_reaction_wrenches/<joint>: the wrench each moving joint transmits from '
        'parent to child, in the child link frame (frame_id), about its origin.'),
    Parameter(
        'locked_joints', STRING_ARRAY, None,
        'URDF joints nobody publishes, held still',
        'URDF joints nobody publishes (e.g. a gripper absent from joint_states): held at '
        'locked_positions, at rest; not required fresh, never in feedforward_effort. A bad '
        'entry stops the node at start (exit 2).',
        example="['panda_finger_joint1']", shown_default='unset (none)', note='2'),
    Parameter(
        'locked_positions', DOUBLE_ARRAY, None,
        'their positions, one per joint, within limits',
        'Positions of locked_joints, one per joint, within its URDF limits.',
        unit='rad or m', example='[0.0]', shown_default='unset'),
    Parameter(
        'max_trajectory_points', INTEGER, 1000,
        'most points of a desired_accelerations or planned_trajectory message',
        'Most points a desired_accelerations or planned_trajectory message may have (and at most '
        f'{MAX_NAMES} joint names): a larger one is dropped before it is decoded (counted as '
        'too_large, warned at most once a second), so that one message cannot hold up the '
        'inputs.',
        low=1, high=1_000_000, note='4'),
    Parameter(
        'refuse_duplicate_name', BOOL, False,
        'refuse to start beside a node of the same full name',
        'At start the node looks for another node of its fully qualified name in the graph (two '
        'would interleave their feedforward_effort). false: warn, and report it in the '
        'diagnostics; true: refuse to start (exit 2).',
        note='5'),
    Parameter(
        'friction_velocity_threshold', DOUBLE, DEFAULT_VELOCITY_THRESHOLD,
        'velocity scale of the smooth sign of Coulomb friction',
        'Velocity scale of the smooth sign of Coulomb friction: coulomb * tanh(v / threshold).',
        unit='rad/s or m/s', low=1e-9, high=100.0),
    Parameter(
        'friction_model', STRING, FRICTION_MODELS[0],
        '`none`: no friction, the armature stays',
        'coulomb-viscous-offset: the friction of friction.<joint>.*; none: no friction (the '
        'armature stays). As rnea_identify writes it.',
        choices=FRICTION_MODELS),
    Parameter(
        'friction_compensation', BOOL, False,
        'add the friction to the published torques',
        'Add the friction of friction.<joint>.* to the published torques: at the desired '
        'velocity where the desired motion gives one (a multi-point trajectory; a single point '
        'with velocities), else at the measured velocity.',
        live=True, note='3'),
    # A payload on a link: checked together (rnea_ros.dynamics.payload.check_payload) and
    # applied to the model by the node (RobotModel.with_payload); set all four atomically.
    Parameter(
        'payload.link', STRING, '',
        "link carrying a payload; `''`: none, and the other three back to their defaults",
        "Link the payload is rigidly fixed to (a tool, a gripped part); '': no payload. Set "
        'the four payload.* parameters together (set_parameters_atomically): the node checks '
        'them as one payload and installs the model carrying it between two cycles. Setting '
        "it to '' removes the payload: payload.mass, payload.com and payload.inertia go back "
        'to their defaults in the same set.',
        shown_default="`''`", live=True, note='6'),
    Parameter(
        'payload.mass', DOUBLE, 0.0,
        f"payload mass, ≥ 0, at most {MAX_MASS_RATIO:g} × the robot's",
        f'Mass of the payload: at most {MAX_PAYLOAD_MASS:g} kg, and {MAX_MASS_RATIO:g} times '
        "the robot's (the moving bodies of its model).",
        unit='kg', low=0.0, high=MAX_PAYLOAD_MASS, live=True, note='6'),
    Parameter(
        'payload.com', DOUBLE_ARRAY, (0.0, 0.0, 0.0),
        f'payload centre of mass, link frame, within {MAX_RADIUS:g} m of its origin',
        'Centre of mass of the payload in the frame of payload.link: at most '
        f'{MAX_RADIUS:g} m from its origin.', unit='m', size=3,
        live=True, note='6', expected='3 finite numbers (m, link frame)'),
    Parameter(
        'payload.inertia', DOUBLE_ARRAY, (0.0,) * 6,
        'payload inertia `[ixx, ixy, ixz, iyy, iyz, izz]` about its centre of mass, link frame',
        'Rotational inertia of the payload about its centre of mass, in the frame of '
        'payload.link, as [ixx, ixy, ixz, iyy, iyz, izz] (a URDF <inertia>): positive '
        'semi-definite, within the triangle inequalities, and no principal moment above '
        f'payload.mass x ({MAX_RADIUS:g} m)^2.',
        unit='kg m²', size=6, live=True, note='6',
        expected='6 finite numbers ixx, ixy, ixz, iyy, iyz, izz (kg m^2)'),
)
# ---- external torques, wrenches and collisions from the measured effort (rnea_ros.observer)
COLLISION_REACTIONS = ('none', 'stop', 'hold_gravity', 'zero')
# Joint speed [rad/s or m/s] under which the arm is at rest (collision_reaction stop, auto reset).
REST_SPEED = 0.01
MAX_QUEUE = 100_000  # the observer_queue parameter's upper bound (samples)
MEASURED_EFFORTS = ('link_side', 'motor')
OBSERVER_PARAMETERS: tuple[Parameter, ...] = (
    Parameter(
        'observer', BOOL, False,
        'momentum observer on: `external_torques`, wrenches, `collision`',
        'true: a generalized-momentum observer (rnea_ros.observer.momentum) integrates each '
        'received joint_states sample (dt from its stamps; a repeated or slightly older stamp '
        'is not integrated, a clock step restarts it) and publishes external_torques '
        '(sensor_msgs/JointState, effort = the residual r), estimated_wrenches/<link> for the '
        'wrench_estimation_links and collision '
        '(std_msgs/Bool). joint_states must carry the measured effort. Fixed base only.'),
    Parameter(
        'observer_gain', DOUBLE, 50.0,
        'observer gain K: r follows the external torque with time constant 1/K',
        'Gain K of the momentum observer: each residual follows its external torque as a first '
        'order lag of time constant 1/K (50: 20 ms). Larger: faster detection, more noise.',
        unit='1/s', low=MIN_GAIN, high=MAX_GAIN, live=True),
    Parameter(
        'observer_queue', INTEGER, 256,
        'joint_states samples the observer queues between two drains (all are integrated)',
        'The observer integrates every received joint_states sample, in stamp order, whatever '
        'sample the torque answer uses: the joint_states subscription keeps this many messages '
        '(with observer: true) and the inputs thread queues each accepted one, then integrates '
        'the batch before it answers the newest. A batch larger than this loses its oldest '
        'samples (counted in the diagnostics: observer queue overflowed).',
        unit='samples', low=1, high=MAX_QUEUE),
    Parameter(
        'measured_effort', STRING, MEASURED_EFFORTS[0],
        'what joint_states effort is: `link_side` torque or `motor` torque',
        'link_side: the effort of joint_states is the torque on the link side (joint torque '
        'sensors): the observer uses it as it is. motor: the torque the motor gives (from its '
        'current): the observer subtracts the friction of friction.<joint>.* (the actuation '
        'model; its armature is part of the dynamics in both cases).',
        choices=MEASURED_EFFORTS),
    Parameter(
        'wrench_estimation_links', STRING_ARRAY, None,
        'links whose external wrench is estimated from the residual',
        'Links of the model (observer: true) whose external wrench is estimated from the '
        'residual (r = J^T F, damped least squares) and published on estimated_wrenches/<link> '
        '(geometry_msgs/WrenchStamped, in the link frame about its origin, frame_id = the '
        'link). A name that is no link of the model stops the node at start (exit 2).',
        example="['panda_hand']", shown_default='unset (none)', note='2'),
    Parameter(
        'collision_reaction', STRING, COLLISION_REACTIONS[0],
        'on a collision: `none`, or `stop` (recommended), `hold_gravity`, `zero` until reset',
        'none: collision follows the thresholds (true while a residual is beyond its '
        "joint's threshold for collision_debounce), the torques are published as usual. "
        'stop: on a collision the arm is brought to rest and held there (the published effort '
        'becomes g(q) - D qdot, then holds the pose where the arm came to rest; a trajectory '
        'controller fed by joint_trajectory_with_effort gets a trajectory that holds the '
        "measured position and no more of the planner's). hold_gravity / zero: the published "
        'effort switches to the gravity torques at the measured positions or to zero (as the '
        'fault_output of the same name; a moving arm coasts). Each latches collision true '
        'until a std_srvs/Trigger call of <node>/reset_collision (or collision_auto_reset).',
        choices=COLLISION_REACTIONS, live=True),
    Parameter(
        'collision_stop_time', DOUBLE, 0.1,
        'time constant T of `stop`: damping D = 2 M / T, hold stiffness M / T²',
        'Time constant T of the stop reaction, from the mass matrix M(q) at detection '
        '(armature included): damping D = 2 M / T while braking (every joint a first-order lag '
        'of T/2, coupling included), stiffness K = M / T^2 about the pose where every joint '
        'speed fell below '
        f'{REST_SPEED:g} (rad/s or m/s) once at rest (a critically damped hold). A change '
        'applies from the next collision.',
        unit='s', low=0.01, high=10.0, live=True),
    Parameter(
        'collision_debounce', DOUBLE, DEFAULT_MIN_DURATION,
        'how long a residual stays beyond its threshold before a collision is on',
        'A collision is on once a residual has stayed beyond its threshold this long; a '
        'shorter excursion (momentum-balance noise, a torque-sensor spike) is not one. 0: at '
        'the first sample beyond.',
        unit='s', low=0.0, high=1.0, live=True),
    Parameter(
        'collision_auto_reset', DOUBLE, 0.0,
        'clear a latched collision after this long at rest and under the thresholds; `0`: off',
        'A latched collision clears by itself once the arm has been at rest (every joint '
        f'speed below {REST_SPEED:g} rad/s or m/s) with every residual under its threshold '
        'for this long. 0 (default): only <node>/reset_collision clears it, a person decides '
        'that the cause is gone: a safety choice of the cell, not of the node.',
        unit='s', low=0.0, high=3600.0, live=True),
    Parameter(
        'collision_profiles', STRING_ARRAY, None,
        'names of threshold sets `collision_threshold.<profile>.<joint>`',
        'Names of the threshold sets besides the default one: for each, the node declares '
        'collision_threshold.<profile>.<joint> per one-DoF joint. A joint a profile leaves '
        'unset keeps its collision_threshold.<joint>.',
        example="['carrying', 'insertion']", shown_default='unset (none)'),
    Parameter(
        'collision_profile', STRING, '',
        "threshold set in use: `''` (collision_threshold.<joint>) or one of `collision_profiles`",
        "Threshold set in use: '' the default set (collision_threshold.<joint>), or a name of "
        'collision_profiles (e.g. a task expecting contact switches to a less sensitive set).',
        shown_default="`''`", live=True,
        expected="'' or one of collision_profiles"),
)
PARAMETERS += OBSERVER_PARAMETERS
BY_NAME = {parameter.name: parameter for parameter in PARAMETERS}
PAYLOAD = ('payload.link', 'payload.mass', 'payload.com', 'payload.inertia')
# Read by the node itself, not part of the Settings its core receives (the node gives the core
# the model carrying the payload).
NODE_ONLY = ('autostart', 'robot_description', 'refuse_duplicate_name') + PAYLOAD
LIVE = tuple(parameter.name for parameter in PARAMETERS if parameter.live)
