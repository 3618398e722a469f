"""
The node with ``prediction: model`` drives the simulated robot over real DDS, in lockstep.

``rnea_sim`` with ``command_interface: effort`` (the command is the whole torque), the default
reality gap, the node's ``pd_feedforward`` at Kp 100 / Kd 10 on every joint of the ur5 with
``prediction: model``. In lockstep the sim applies each answer at the step it answers (no
delay), so the node predicts one period ahead of a command that applies at once; the same
computed in-process (``inprocess_law``, ``late_steps=0``, the same parameters) is the reference:
the wiring end to end (parameters, stamps, commands recorded, the predicted state acted on) gives
the same tracking, within 1.2 x, and the node's diagnostics report the one-step prediction error.
"""
from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray
from harness.inprocess_law import run_law_in_process
from harness.loop_harness import run_loop, TRACKED_SETTLE
from harness.oracle import robot_path
import pytest

from rnea_ros import RobotModel

pytestmark = pytest.mark.timeout(300)

DURATION = 2.0  # s of trajectory (sim time)
WITHIN = 1.2
ERROR_KEY = 'one-step prediction error q [rad] (last, RMS, max)'


def test_the_node_predicts_over_dds_as_its_core_does_in_process(tmp_path):
    urdf = robot_path('ur5').read_text()
    model = RobotModel.from_urdf_string(urdf)
    gains = {f'kp.{name}': 100.0 for name in model.joint_names}
    gains.update({f'kd.{name}': 10.0 for name in model.joint_names})
    statuses: list = []

    def on_diagnostics(msg: DiagnosticArray) -> None:
        statuses.extend({kv.key: kv.value for kv in status.values}
                        for status in msg.status if ERROR_KEY in
                        {kv.key for kv in status.values})

    def listen(loop):
        loop.subscribe(DiagnosticArray, '/diagnostics', on_diagnostics)

    run = run_loop(tmp_path, urdf, 'effort', 'default', DURATION, during=listen,
                   node_params={'control_law': 'pd_feedforward', 'prediction': 'model',
                                **gains},
                   sim_params={'command_interface': 'effort'}, settle_time=TRACKED_SETTLE)
    assert run.exit_codes == {'sim': 0, 'node': 0}, run.logs
    local, _, _ = run_law_in_process(urdf, 'default', DURATION, 'pd_feedforward', gains,
                                     late_steps=0, params={'prediction': 'model'})
    print(f'RMS over DDS {run.tracking.rms:.3e} rad, in-process {local.rms:.3e} rad; '
          f'counters {run.counters}; last diagnostics {statuses[-1:]}')
    assert run.tracking.rms <= WITHIN * local.rms, (run.tracking, local)
    assert statuses, 'no diagnostics with the one-step prediction error'
    assert statuses[-1]['prediction'] == 'model, 1 ms ahead of the sample', statuses[-1]
