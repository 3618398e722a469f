"""
``rnea_identify`` on a simulated recording that says it is unfit: a loud warning naming it.

A lockstep recording of the panda (``sim_identification.record``: in this process, one physics
step per 1 ms step, 5 s of the Fourier excitation, away from the joint limits) carries the
metadata ``rnea_sim --record`` writes (``rnea_ros.recording.fitness``): identified, it raises
no word about the recording. The same bag given the metadata of a real-time run on a shared
machine (20262 of 48000 steps late, the worst by 1.026 s; panda_joint2 1.793 rad against its
limit 1.763) is identified with a warning, on the terminal and in identification.json, that
names the bag, the late steps and the joint.
"""
from __future__ import annotations

import json
import shutil

from harness import sim_identification
from harness.oracle import robot_path
import pytest
import yaml

from rnea_ros.identify.cli import main as rnea_identify
from rnea_ros.recording import fitness

LATE = {'clock': 'realtime', 'steps': 48000, 'late_steps': 20262, 'late_share': 0.422125,
        'max_lateness': 1.026, 'limit_contacts': {'panda_joint2': {'steps': 812,
                                                                   'beyond': 0.03}},
        'saturation': {}}


@pytest.fixture(scope='module')
def recordings(tmp_path_factory):
    folder = tmp_path_factory.mktemp('unfit')
    fit = sim_identification.record(folder / 'lockstep', 5.0, sim_identification.TRAINING_SEED,
                                    substeps=1)
    late = folder / 'late'
    shutil.copytree(fit, late)
    metadata = late / 'metadata.yaml'
    info = yaml.safe_load(metadata.read_text())
    info['rosbag2_bagfile_information']['custom_data'] = {fitness.KEY: json.dumps(LATE)}
    metadata.write_text(yaml.safe_dump(info))
    return folder, fit, late


def identify(capsys, bag, output):
    code = rnea_identify([str(bag), '--urdf', str(robot_path('panda')), '--output', str(output),
                          '--no-plots', '--offset', 'sensor-bias', '--effort-delay', '0.0005'])
    err = capsys.readouterr().err
    warnings = json.loads((output / 'identification.json').read_text())['warnings']
    return code, err, warnings


def test_a_lockstep_recording_passes_without_a_word(recordings, capsys):
    folder, fit, _ = recordings
    report = fitness.parse(yaml.safe_load((fit / 'metadata.yaml').read_text())[
        'rosbag2_bagfile_information']['custom_data'])
    assert report['clock'] == 'lockstep' and fitness.problems(report) == []
    code, err, warnings = identify(capsys, fit, folder / 'out_fit')
    assert code == 0
    assert 'UNFIT' not in err and not any('UNFIT' in w for w in warnings)


def test_a_late_recording_that_hit_a_limit_is_named_in_a_warning(recordings, capsys):
    folder, _, late = recordings
    code, err, warnings = identify(capsys, late, folder / 'out_late')
    assert code == 0
    expected = (f'{late}: UNFIT RECORDING: the simulated run says 20262 of 48000 steps late '
                '(42.2 %, more than 1 %; the worst by 1026 ms); panda_joint2 hit its joint limit '
                '(up to 0.03 beyond it, 812 steps) (its metadata.yaml, custom_data rnea_sim)')
    assert f'rnea_identify: warning: {expected}' in err
    assert [w for w in warnings if 'UNFIT' in w][0].startswith(expected)
