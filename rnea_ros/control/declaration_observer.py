"""
The node's observer and collision parameters, declared beside ``declaration`` (read from there).

External torques, wrenches and collisions from the measured effort (``rnea_ros.observer``) and the
reactions to them: ``declaration`` appends ``OBSERVER_PARAMETERS`` to its single ``PARAMETERS``
list and re-exports the constants here, so every other module reads them from ``declaration``.
ROS-free: imports no rclpy.
"""
from __future__ import annotations

from rnea_ros.observer.collision import DEFAULT_MIN_DURATION
from rnea_ros.observer.momentum import MAX_GAIN, MIN_GAIN
from rnea_ros.params.parameter import BOOL, DOUBLE, INTEGER, Parameter, STRING, STRING_ARRAY

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
        'time constant T of the brake of `stop` and of a stall carried through',
        'Time constant T of the brake of the stop reaction and of a stall carried through on '
        'the prediction: the torque of the acceleration -2 v / T (the inverse dynamics at each '
        "cycle's state, armature included, scaled within the effort limits); the stop then "
        f'holds the pose where every joint speed fell below {REST_SPEED:g} (rad/s or m/s) '
        'with -2 v / T + (q_rest - q) / T^2 (critically damped). Applies from the next cycle.',
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
