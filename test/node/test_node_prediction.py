"""
``prediction`` and ``command_delay`` on the node, over real DDS: set live, checked by the gains.

Same harness as ``test_node_control_law`` (the real node as a subprocess, one domain per test).
On the panda at rate 0 (1 ms) with Kp 5 / Kd 0.5 on every joint (rnea_ros.control.loop_margin):
kd.panda_joint7 at 3 is held one tick late but not two, at 4 not one tick late, and with
prediction (the undelayed loop) both are. A live set of ``prediction`` or ``command_delay`` is
checked as a gain's is: refused with the same line, or accepted with the margin in the
diagnostics; with prediction on, the diagnostics report the prediction.
"""
from __future__ import annotations

from harness.node_calls import set_live
from harness.node_streams import has_level, OK, random_arm_state, status, Streams
import pytest

pytestmark = pytest.mark.timeout(120)


def test_prediction_and_command_delay_set_live_are_checked_with_the_gains(ros, panda):
    model, xml = panda
    names = model.joint_names
    ros.start_node({'robot_description': xml, 'rate': 0.0, 'control_law': 'pd_feedforward',
                    **{f'kd.{n}': 0.5 for n in names}, **{f'kp.{n}': 5.0 for n in names}})
    streams = Streams(ros, names, *random_arm_state(model, 5)[:2])
    streams.diagnostic(has_level(OK, 'loop margin', 'held with gains x1.25'), timeout=90.0)
    assert set_live(ros, 'kd.panda_joint7', 3.0).successful  # held one tick late
    refused = set_live(ros, 'command_delay', 0.002)  # two ticks: not
    assert not refused.successful
    assert refused.reason.startswith('kd.panda_joint7 = 3 is more than the loop can hold on '
                                     'panda_joint7'), refused.reason
    assert '(pd_feedforward 2 ticks late at 1 ms' in refused.reason, refused.reason
    refused = set_live(ros, 'kd.panda_joint7', 4.0)
    assert not refused.successful and '1 tick late' in refused.reason, refused.reason
    assert set_live(ros, 'prediction', 'model').successful
    assert set_live(ros, 'kd.panda_joint7', 4.0).successful  # the undelayed loop holds it
    assert set_live(ros, 'command_delay', 0.002).successful
    report = streams.diagnostic(has_level(OK, 'prediction', 'model, 2 ms ahead of the sample'),
                                timeout=30.0)
    values = status(report)[2]
    assert values['loop margin'].startswith('held with gains x1.25: pd_feedforward with '
                                            'prediction (undelayed) at 1 ms'), values
    assert 'one-step prediction error v [rad/s] (last, RMS, max)' in values, values
    refused = set_live(ros, 'prediction', 'none')  # kd.panda_joint7 4, two ticks late: not held
    assert not refused.successful
    assert refused.reason.startswith('kd.panda_joint7 = 4 is more than the loop can hold'), \
        refused.reason


def test_the_stall_payload_estimate_is_fitted_at_each_report(ros, panda):
    """
    The node fits ``stall_payload_estimate`` at its reports and says what it has, or why not.

    The streams repeat one stamp: no pair of samples has a time between them, none is recorded.
    """
    model, xml = panda
    names = model.joint_names
    ros.start_node({'robot_description': xml, 'rate': 0.0, 'control_law': 'pd_feedforward',
                    'prediction': 'model', 'stall_payload_estimate': 'panda_hand',
                    **{f'kd.{n}': 0.5 for n in names}, **{f'kp.{n}': 5.0 for n in names}})
    streams = Streams(ros, names, *random_arm_state(model, 5)[:2])
    report = streams.diagnostic(has_level(OK, 'stall payload estimate', "on 'panda_hand'"),
                                timeout=90.0)
    assert status(report)[2]['stall payload estimate'] == (
        "none on 'panda_hand': 0 finite samples in the window (at least 100)")
