"""
``rnea_identify`` on a log whose arm rests on an end stop and whose gripper is held still.

The log: test/harness/bagdata.py's realistic panda log (friction, noise, sensor offsets), the
gripper held at 0.02 m; for 0.4 s of the training part panda_joint2 sits at its lower limit. Two
bags of the same motion: one with the effort of the free motion there, one with an end stop's
30 N m added to joint 2 for those samples. The rows at the limit are left out of the fit, so
both bags give the same identified model, byte for byte; the report counts the samples. The
still gripper's friction and armature are not identified: the warning says they are kept at
zero, and actuation.yaml holds zero.
"""
from __future__ import annotations

import json

from harness.bagdata import at_a_stop, PANDA, realistic_bag, realistic_log
import numpy as np
import pytest
import yaml

from rnea_ros import RobotModel
from rnea_ros.identify.cli import main
from rnea_ros.recording.plausibility import AT_LIMIT

STOP = slice(500, 600)  # samples (250 Hz) at joint 2's lower limit
STOP_TORQUE = 30.0  # N m, the end stop's, on joint 2
FINGER = 'panda_finger_joint1'


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp('stop')
    model = RobotModel.from_urdf_file(PANDA)
    log = realistic_log(model, duration=8.0, rate=250.0, seed=11, holes=None,
                        hold={FINGER: 0.02})
    free, stopped = at_a_stop(log, model, 'panda_joint2', STOP, STOP_TORQUE, 0.5 * AT_LIMIT)
    out = {}
    for name, data in (('free', free), ('stopped', stopped)):
        bag = realistic_bag(folder / name, data)
        out[name] = folder / f'{name}_id'
        assert main([str(bag), '--urdf', str(PANDA), '--output', str(out[name]),
                     '--no-plots']) == 0
    return out


def test_rows_at_a_joint_limit_are_left_out_of_the_fit_and_counted(runs):
    free, stopped = runs['free'], runs['stopped']
    for name in ('actuation.yaml', 'identified.urdf'):
        assert (free / name).read_text() == (stopped / name).read_text(), name
    data = json.loads((stopped / 'identification.json').read_text())
    assert data['samples']['at_limit'] == STOP.stop - STOP.start
    assert f'{STOP.stop - STOP.start} with a joint at a position or effort limit' in \
        (stopped / 'identification.md').read_text()
    assert any(w.endswith('which the model does not hold') and w.startswith(
        f'{STOP.stop - STOP.start} samples') for w in
        [w.split(': ', 1)[1] for w in data['warnings']])


def test_a_still_joints_terms_are_zero_as_the_warning_says(runs):
    data = json.loads((runs['free'] / 'identification.json').read_text())
    [still] = [w for w in data['warnings'] if 'kept at zero' in w]
    assert f'{FINGER} (0.0 %)' in still
    params = yaml.safe_load((runs['free'] / 'actuation.yaml').read_text())['/**'][
        'ros__parameters']
    assert params['friction'][FINGER] == {'coulomb': 0.0, 'viscous': 0.0, 'offset': 0.0}
    assert params['armature'][FINGER] == 0.0
    assert np.isfinite([params['armature'][f'panda_joint{k}'] for k in range(1, 8)]).all()
