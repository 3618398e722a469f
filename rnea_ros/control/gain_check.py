"""
The node's check of its feedback gains against the loop they close (``loop_margin``), ROS-free.

Under ``pd_feedforward`` and ``computed_torque`` the node's torque is the robot's only one, and
the robot applies it one tick after the joint_states sample it answers. ``verdict`` runs
``loop_margin.loop_margin`` on the model the node has (its URDF, the payload, the actuation's
``armature.<joint>``) with the node's gains, at the control period ``1 / rate`` (rate 0: the
node answers each joint_states message and has no period of its own: ``DEFAULT_PERIOD``, 1
kHz), ``command_delay`` in whole periods rounded up (0: one tick of delay), and ``prediction``
(``model``: the law acts on the predicted state, the loop is the undelayed one). ``refusal``
is the one line a refused set gets (``gain_check: refuse``, the default: the configure fails,
a live set is refused);
``gain_check: error`` accepts the set and ``report`` makes the node's diagnostics ERROR, for a
user who knows the robot's reflected inertia is larger than the model's. ``report`` puts the
margin in the diagnostics either way, after the loop watch's finding (``loop_watch``) if any.
"""
from __future__ import annotations

from collections.abc import Iterable

from rnea_ros.control.loop_margin import (DEFAULT_PERIOD, delay_ticks, GAIN_MARGIN, gains_of,
                                          LAWS, loop_margin, LoopMargin)
from rnea_ros.control.safety import ERROR

# The parameters whose change is checked (besides kp.<joint>, kd.<joint>).
CHECKED = ('control_law', 'gain_check', 'rate', 'prediction', 'command_delay')
DELAY_TICKS = 1  # the node answers within the tick; the robot applies it from its next one


def verdict(model, settings, armature=None, q=None) -> LoopMargin | None:
    """Return the verdict on ``settings``' gains for ``model`` (None under ``feedforward``)."""
    if settings.control_law not in LAWS:
        return None
    kp, kd = gains_of(model, settings.gains)
    period = 1.0 / settings.rate if settings.rate > 0.0 else DEFAULT_PERIOD
    delay = (delay_ticks(settings.command_delay, period) if settings.command_delay > 0.0
             else DELAY_TICKS)
    return loop_margin(model, kp, kd, period, delay=delay,
                       prediction=settings.prediction == 'model', law=settings.control_law,
                       armature=armature, q=q)


def refusal(margin: LoopMargin | None, settings) -> str | None:
    """Return the line that refuses the set, or None when it is held or only reported."""
    if margin is None or margin.held or settings.gain_check != 'refuse':
        return None
    return f'{margin.message()}; gain_check: error accepts it as an ERROR'


def concerns(names: Iterable[str]) -> bool:
    """Whether a set of parameters ``names`` changes what the check judges."""
    return any(name in CHECKED or name.startswith(('kp.', 'kd.')) for name in names)


def report(margin: LoopMargin | None, level: int, message: str,
           values: dict) -> tuple[int, str]:
    """Add the margin to the diagnostics ``values``; ERROR for a set accepted unheld."""
    if margin is None:
        return level, message
    values['loop margin'] = (f'{"held" if margin.held else "NOT HELD"} with gains '
                             f'x{1 + GAIN_MARGIN:g}: {margin.describe()}')
    if margin.held:
        return level, message
    if values.get('loop watch', 'holding') != 'holding':  # what the loop does, said first
        return ERROR, f'{message}; {margin.message()}'
    return ERROR, f'{margin.message()}; {message}'
