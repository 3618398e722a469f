"""``rnea_ros.recording.fitness``: what a simulated run writes about itself, and what it means."""
from __future__ import annotations

import json

import numpy as np

from rnea_ros.recording import fitness
from rnea_ros.recording.fitness import LATE_SHARE, LIMIT_MARGIN, RunFitness

JOINTS = ['j1', 'j2']


def run(steps: int) -> RunFitness:
    """Two joints in [-1, 1], effort limits 10: j2 beyond its upper limit and saturated."""
    log = RunFitness(JOINTS, [-1.0, -1.0], [1.0, 1.0], [10.0, 10.0])
    for k in range(steps):
        position = np.array([0.5, 1.0 + 0.01 * k])  # j2 at its limit, then 0.01 per step past
        asked = np.array([3.0, 12.0 if k % 2 else 9.0])
        log.step(position, asked, np.clip(asked, -10.0, 10.0))
    return log


def test_limit_contacts_and_saturation_are_counted_per_joint():
    report = fitness.parse(run(5).entry('realtime', late_steps=1, max_lateness_ns=2_500_000))
    assert report == {'clock': 'realtime', 'steps': 5, 'late_steps': 1, 'late_share': 0.2,
                      'max_lateness': 0.0025,
                      'limit_contacts': {'j2': {'steps': 4, 'beyond': report['limit_contacts'][
                          'j2']['beyond']}},
                      'saturation': {'j2': {'steps': 2}}}
    assert abs(report['limit_contacts']['j2']['beyond'] - 0.04) < 1e-12


def test_the_entry_is_one_json_string_as_rosbag2s_custom_data_holds():
    entry = run(3).entry('lockstep')
    assert list(entry) == [fitness.KEY] and isinstance(entry[fitness.KEY], str)
    assert json.loads(entry[fitness.KEY])['clock'] == 'lockstep'
    assert fitness.parse({fitness.KEY: 'not json'}) is None
    assert fitness.parse({'other': '1'}) is None and fitness.parse(None) is None


def test_a_clean_lockstep_run_is_fit_and_says_nothing():
    """At its effort limit, or resting on its joint limit (sunk within the margin): clean."""
    log = RunFitness(JOINTS, [-1.0, -1.0], [1.0, 1.0], [10.0, 10.0])
    for _ in range(100):
        log.step(np.array([0.0, 1.0 + 0.9 * LIMIT_MARGIN]), np.array([1.0, -10.0]),
                 np.array([1.0, -10.0]))
    report = fitness.parse(log.entry('lockstep'))
    assert fitness.problems(report) == [] and fitness.unfit_for_identification(report) == []


def test_late_steps_beyond_the_documented_share_or_a_limit_make_it_unfit():
    clean = RunFitness(JOINTS, [-1.0, -1.0], [1.0, 1.0], [10.0, 10.0])
    for _ in range(1000):
        clean.step(np.zeros(2), np.zeros(2), np.zeros(2))
    within = fitness.parse(clean.entry('realtime', late_steps=int(LATE_SHARE * 1000)))
    assert fitness.unfit_for_identification(within) == []
    assert fitness.problems(within) == ['10 of 1000 steps late (1 %, the worst by 0 ms)']
    beyond = fitness.parse(clean.entry('realtime', late_steps=int(LATE_SHARE * 1000) + 1,
                                       max_lateness_ns=1_026_000_000))
    assert fitness.unfit_for_identification(beyond) == [
        '11 of 1000 steps late (1.1 %, more than 1 %; the worst by 1026 ms)']
    hit = fitness.parse(run(5).entry('lockstep'))
    assert fitness.unfit_for_identification(hit) == [
        'j2 hit its joint limit (up to 0.04 beyond it, 4 steps)']
