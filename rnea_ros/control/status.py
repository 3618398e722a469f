"""
The diagnostics summary of a ``Feedforward``: inputs, fault state, joint terms.

ROS-free: ``Feedforward.status`` calls ``core_status``; the node adds the cycle timing and
publishes the result as a ``diagnostic_msgs/DiagnosticStatus``. Keys are in the README.
"""
from __future__ import annotations

from rnea_ros.control.cycle_kernels import oldest
from rnea_ros.control.joint_input import NEVER
from rnea_ros.control.safety import ERROR, MODEL_MISMATCH, OK, WARN


def oldest_of(core, times) -> float:
    """Return the oldest of ``times`` over the commanded joints of ``core``."""
    return oldest(times, core._command_joint)


def _age(now: float, time: float) -> str:
    return 'never' if time == NEVER else f'{now - time:.4f}'


def core_status(core, now: float, ros_time: float) -> tuple[int, str, dict[str, str]]:
    """Describe the inputs and the fault state: (level, message, key -> value)."""
    settings = core.settings
    values: dict[str, str] = {}
    level, messages = core.fault.level, [core.fault.text]
    if core.fault.code == MODEL_MISMATCH and core.model_mismatch:
        messages.append(core.model_mismatch)
    command_index = list(core._command_joint)
    values['joint_states age [s]'] = _age(now, oldest_of(core, core.joints.position_time))
    missing = core.joints.names_never_received(command_index)
    if missing:
        values['commanded joints never received'] = ', '.join(missing)
    timeouts = core.joints.timeouts(settings.input_timeout, settings.max_input_timeout)
    stale = core.joints.names_older_than(now, timeouts, command_index)
    if stale and not missing:
        values['commanded joints stale'] = ', '.join(stale)
    # Joints whose own publisher is slower than input_timeout allows: their timeout.
    slow = [f'{name} {timeouts[k]:.3g}' for k, name in enumerate(core.joint_names)
            if timeouts[k] > settings.input_timeout and name not in core.joints.locked]
    if slow:
        values['joint_states timeouts [s] (slow publishers)'] = ', '.join(slow)
    if core.joints.locked:
        values['locked joints'] = ', '.join(f'{name} {value:g}' for name, value
                                            in core.joints.locked.items())
    others = [k for k in range(len(core.joint_names)) if k not in set(command_index)]
    assumed = core.joints.names_never_received(others)
    if assumed:
        values['joints never received (assumed at 0)'] = ', '.join(assumed)
    values['joint velocity age [s]'] = _age(now, oldest_of(core, core.joints.velocity_time))
    if core.base is not None:
        values['odometry age [s]'] = _age(now, core.base.time)
        values['base_acceleration age [s]'] = _age(now, core.base_acceleration_time)
    desired = core.desired
    if desired is None:
        values['desired motion'] = 'none received: zero desired acceleration'
    elif desired.active(now, ros_time, settings.acceleration_timeout):
        trajectory = desired.trajectory
        values['desired motion'] = (f'active: {trajectory.n_points} point(s), '
                                    f'{trajectory.interpolation}')
    else:
        values['desired motion'] = 'timed out: zero desired acceleration'
        if level == OK:
            level = WARN
            messages = ['desired accelerations timed out: ' + (
                'damped rest g(q) - D v' if core.law.feedback
                else 'gravity + velocity-product only')]
    values['desired age [s]'] = _age(now, desired.received if desired else NEVER)
    if core.measured.topics:
        values.update(core.measured.status(now))
        stale = core.measured.stale(now, settings.input_timeout)
        if stale:
            values['wrench topics stale (taken as zero)'] = ', '.join(stale)
            if level == OK:
                level = WARN
                messages = [f'measured wrenches older than input_timeout, taken as zero: '
                            f'{", ".join(stale)}']
    if core.contacts is not None:
        values.update(core.contacts.diagnostics())
        if level == OK and core.fault.code is None and not core.contacts.feasible:
            level = WARN
            messages = [f'contact solve {core.contacts.status}: the motion is not feasible '
                        f'within the friction cones (base residual '
                        f'{core.contacts.residual_norm:.3g})']
    if core.observer is not None:
        values.update(core.observer.status())
        values.update(core.observer_queue.status())
        alarm = core.observer.alarm()  # a clock step: ERROR even beside another fault's
        if alarm is not None and alarm[0] > level:
            level, messages = alarm[0], [alarm[1]]
        elif alarm is not None and alarm[0] == level == ERROR:
            messages.append(alarm[1])
    values.update(law_status(core))
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
    values['armature'] = (', '.join(f'{joint.name} {core.actuation.armature[joint.idx_v]:g}'
                                    for joint in core.model.joints if joint.nv == 1
                                    and core.actuation.armature[joint.idx_v])
                          or 'none')
    if not core.friction_joints:
        values['friction compensation'] = 'off (no friction parameters)'
    elif settings.friction_compensation:
        values['friction compensation'] = 'on: ' + ', '.join(core.friction_joints)
    else:
        values['friction compensation'] = ('off (friction_compensation false; friction '
                                           'set for ' + ', '.join(core.friction_joints)
                                           + ')')
    return level, '; '.join(messages), values


def law_status(core) -> dict[str, str]:
    """Return the keys of the control law and of gravity (control_law, kp/kd, the robot's g)."""
    law = core.law
    gains = ', '.join(f'{name} {kp:g}/{kd:g}' for name, (kp, kd) in law.gains().items())
    values = {'control law': law.law + (f' (kp/kd: {gains or "none set"})' if law.feedback
                                        else '')}
    if law.feedback:
        values['damped rest'] = 'yes' if law.resting else 'no'
    values['gravity'] = ('compensated by the robot: left out of the published torques'
                         if core.settings.gravity_compensated_by_robot
                         else 'in the published torques')
    return values
