"""
The diagnostics summary of a ``core.ControlCore``: inputs, fault state, joint terms.

ROS-free, from the core's public fields: ``ControlCore.status`` calls ``core_status``; the node
adds the cycle timing and publishes the result as a ``diagnostic_msgs/DiagnosticStatus``. The loop
watch's finding (``loop_watch``: an oscillation, sustained clipping) is ERROR and comes first.
"""
from __future__ import annotations

from rnea_ros.control.cycle_kernels import oldest
from rnea_ros.control.joint_input import NEVER
from rnea_ros.control.safety import COLLISION, ERROR, MODEL_MISMATCH, OK, WARN


def oldest_of(core, times) -> float:
    """Return the oldest of ``times`` over the commanded joints of ``core``."""
    return oldest(times, core.state.command_joint)


def _age(now: float, time: float) -> str:
    return 'never' if time == NEVER else f'{now - time:.4f}'


def core_status(core, now: float, ros_time: float) -> tuple[int, str, dict[str, str]]:
    """Describe the inputs and the fault state: (level, message, key -> value)."""
    settings, state = core.settings, core.state
    values: dict[str, str] = {}
    level, messages = core.fault.level, [core.fault.text]
    if core.fault.code == MODEL_MISMATCH and core.model_mismatch:
        messages.append(core.model_mismatch)
    command_index = list(state.command_joint)
    values['joint_states age [s]'] = _age(now, oldest_of(core, state.joints.position_time))
    missing = state.joints.names_never_received(command_index)
    if missing:
        values['commanded joints never received'] = ', '.join(missing)
    timeouts = state.joints.timeouts(settings.input_timeout, settings.max_input_timeout)
    stale = state.joints.names_older_than(now, timeouts, command_index)
    if stale and not missing:
        values['commanded joints stale'] = ', '.join(stale)
    # Joints whose own publisher is slower than input_timeout allows: their timeout.
    slow = [f'{name} {timeouts[k]:.3g}' for k, name in enumerate(core.joint_names)
            if timeouts[k] > settings.input_timeout and name not in state.joints.locked]
    if slow:
        values['joint_states timeouts [s] (slow publishers)'] = ', '.join(slow)
    if state.joints.locked:
        values['locked joints'] = ', '.join(f'{name} {value:g}' for name, value
                                            in state.joints.locked.items())
    others = [k for k in range(len(core.joint_names)) if k not in set(command_index)]
    assumed = state.joints.names_never_received(others)
    if assumed:
        values['joints never received (assumed at 0)'] = ', '.join(assumed)
    values['joint velocity age [s]'] = _age(now, oldest_of(core, state.joints.velocity_time))
    if state.base is not None:
        values['odometry age [s]'] = _age(now, state.base.time)
        values['base_acceleration age [s]'] = _age(now, state.base_acceleration_time)
    level, messages = _desired_status(core, now, ros_time, values, level, messages)
    if state.measured.topics:
        values.update(state.measured.status(now))
        stale = state.measured.stale(now, settings.input_timeout)
        if stale:
            values['wrench topics stale (taken as zero)'] = ', '.join(stale)
            if level == OK:
                level = WARN
                messages = [f'measured wrenches older than input_timeout, taken as zero: '
                            f'{", ".join(stale)}']
    contacts = core.torques.contacts
    if contacts is not None:
        values.update(contacts.diagnostics())
        if level == OK and core.fault.code is None and not contacts.feasible:
            level = WARN
            messages = [f'contact solve {contacts.status}: the motion is not feasible '
                        f'within the friction cones (base residual '
                        f'{contacts.residual_norm:.3g})']
    if core.observer is not None:
        values.update(core.observer.status())
        values.update(core.observer_queue.status())
        alarm = core.observer.alarm()  # a clock step: ERROR even beside another fault's
        if alarm is not None and alarm[0] > level:
            level, messages = alarm[0], [alarm[1]]
        elif alarm is not None and alarm[0] == level == ERROR:
            messages.append(alarm[1])
    values.update(law_status(core))
    values.update(core.prediction.status())
    if core.prediction.held and core.fault.code is not None:
        messages.append('prediction_horizon passed: holding g(q) at the last predicted pose')
    values['clipped cycles'] = str(core.clipped_cycles)
    values['non-finite torques replaced'] = str(core.non_finite_outputs)
    values['fault cycles'] = str(core.fault.fault_cycles)
    # Every fault cycle since the last report, not only the state now.
    recent = core.fault.since_report()
    values['fault cycles since last report'] = str(sum(recent.values()))
    for code, count in core.fault.counts.items():
        if count:
            values[f'fault cycles ({code})'] = str(count)
    if recent and level == OK:
        level = WARN
        messages = ['fault output published in ' + ', '.join(
            f'{count} cycles ({code})' for code, count in recent.items())
            + ' since the last report']
    values.update(joint_terms_status(core))
    level, messages = _watch_status(core, values, level, messages)
    return level, '; '.join(messages), values


def _watch_status(core, values: dict[str, str], level: int,
                  messages: list[str]) -> tuple[int, list[str]]:
    """Add the loop watch's keys; an oscillation or sustained clipping is ERROR, said first."""
    watch = core.watch
    found, watch_values = watch.status(core.settings.unstable_reaction, core.settings.rate)
    values.update(watch_values)
    collision = core.fault.code == COLLISION
    shaking = watch.shaking() if collision and found is None else None
    if shaking is not None:  # the collision's stop came before the watch found it
        found = (f'loop oscillating: {shaking} reversing its velocity error every few cycles '
                 'when the collision was detected')
    if found is None:
        return level, messages
    crossings = 0 if core.observer is None else core.observer.unstable_crossings
    if crossings and found.startswith('loop'):  # an oscillation's (not clipping's)
        found += (f' (observer: {crossings} threshold crossings taken for the oscillation, '
                  'not collisions)')
    rest = [text for text in messages if text != 'ok']
    if collision and rest:  # the observer reads an oscillation as a push
        rest[0] = f'{rest[0]} (while the loop oscillated: likely the oscillation, not a contact)'
    return ERROR, [found] + rest


def joint_terms_status(core) -> dict[str, str]:
    """Return the keys of the joint terms: the armature per joint, the friction compensation."""
    armature, friction_joints = core.torques.actuation.armature, core.torques.friction_joints
    values = {'armature': ', '.join(f'{joint.name} {armature[joint.idx_v]:g}'
                                    for joint in core.model.joints if joint.nv == 1
                                    and armature[joint.idx_v]) or 'none'}
    if not friction_joints:
        values['friction compensation'] = 'off (no friction parameters)'
    elif core.settings.friction_compensation:
        values['friction compensation'] = 'on: ' + ', '.join(friction_joints)
    else:
        values['friction compensation'] = ('off (friction_compensation false; friction '
                                           'set for ' + ', '.join(friction_joints) + ')')
    return values


def _desired_status(core, now: float, ros_time: float, values: dict[str, str], level: int,
                    messages: list[str]) -> tuple[int, list[str]]:
    """Add the desired motion's keys to ``values``; return the level and messages after it."""
    desired, reference = core.state.desired, core.reference
    feedback = core.torques.law.feedback
    if desired is None:
        values['desired motion'] = 'none received: zero desired acceleration'
    elif not desired.active(now, ros_time, core.settings.acceleration_timeout):
        values['desired motion'] = 'timed out: zero desired acceleration'
        if level == OK:
            level = WARN
            messages = ['desired accelerations timed out: ' + (
                'damped rest g(q) - D v' if feedback else 'gravity + velocity-product only')]
    elif feedback and reference.held_back:
        values['desired motion'] = ('held back: taken before the last rest or ROS clock step '
                                    'back; damped rest until a newer one')
        if level == OK:
            level = WARN
            messages = ['desired motion taken before the last rest or ROS clock step back: '
                        'damped rest g(q) - D v until a newer one arrives']
    else:
        trajectory = desired.trajectory
        values['desired motion'] = (f'active: {trajectory.n_points} point(s), '
                                    f'{trajectory.interpolation}')
    values['desired age [s]'] = _age(now, desired.received if desired else NEVER)
    if reference.clock_steps:
        values['ROS clock steps back under a trajectory'] = str(reference.clock_steps)
        values['last ROS clock step back'] = reference.last_clock_step
    return level, messages


def law_status(core) -> dict[str, str]:
    """Return the keys of the control law and of gravity (control_law, kp/kd, the robot's g)."""
    law = core.torques.law
    gains = ', '.join(f'{name} {kp:g}/{kd:g}' for name, (kp, kd) in law.gains().items())
    values = {'control law': law.law + (f' (kp/kd: {gains or "none set"})' if law.feedback
                                        else '')}
    if law.feedback:
        values['damped rest'] = 'yes' if law.resting else 'no'
    values['gravity'] = ('compensated by the robot: left out of the published torques'
                         if core.settings.gravity_compensated_by_robot
                         else 'in the published torques')
    return values
