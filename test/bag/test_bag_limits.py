"""
``rnea_bag`` on a log whose arm rests on an end stop: counted, and out of the residual's numbers.

test/harness/bagdata.py's realistic panda log with panda_joint2 at its lower limit for 0.4 s, twice
(``at_a_stop``): with the effort of the free motion there, and with an end stop's 30 N m added.
The samples at the limit are counted in summary.json and a warning; the summary's residual
statistics (what rnea_fleet's drift baselines are made of) leave them out, so both bags give the
same numbers; residual.csv keeps every sample.
"""
from __future__ import annotations

import json

from harness.bagdata import at_a_stop, PANDA, realistic_bag, realistic_log
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.bag.cli import main
from rnea_ros.bag.report import read_table
from rnea_ros.recording.plausibility import AT_LIMIT

STOP = slice(500, 600)
STOP_TORQUE = 30.0  # N m


@pytest.fixture(scope='module')
def summaries(tmp_path_factory):
    folder = tmp_path_factory.mktemp('stop')
    model = RobotModel.from_urdf_file(PANDA)
    log = realistic_log(model, duration=4.0, rate=250.0, seed=12, holes=None)
    out = {}
    logs = at_a_stop(log, model, 'panda_joint2', STOP, STOP_TORQUE, 0.5 * AT_LIMIT)
    for name, data in zip(('free', 'stopped'), logs):
        bag = realistic_bag(folder / name, data)
        result = folder / f'{name}_rnea'
        assert main([str(bag), '--urdf', str(PANDA), '--output', str(result), '--no-plots',
                     '--format', 'csv']) == 0
        out[name] = result
    return out


def test_samples_at_a_limit_are_counted_and_left_out_of_the_residual_statistics(summaries):
    free, stopped = (json.loads((summaries[name] / 'summary.json').read_text())
                     for name in ('free', 'stopped'))
    count = STOP.stop - STOP.start
    assert stopped['plausibility']['at_limit'] == stopped['plausibility']['flagged'] == count
    assert (f"{count} samples at a joint's position limit (within {AT_LIMIT:g} of its range) "
            'and 0 at its effort limit') in ' '.join(stopped['warnings'])
    for a, b in zip(free['joints'], stopped['joints']):
        assert (a['joint'], a['rms_residual'], a['peak_residual']) == \
            (b['joint'], b['rms_residual'], b['peak_residual'])
    # residual.csv keeps them: the end stop's torque is there.
    difference = read_table(summaries['stopped'] / 'residual.csv')['residual/panda_joint2'] \
        - read_table(summaries['free'] / 'residual.csv')['residual/panda_joint2']
    assert np.count_nonzero(np.abs(difference - STOP_TORQUE) < 1e-9) == count
    assert np.count_nonzero(np.abs(difference) > 1e-9) == count
