"""
Drift as docs/fleet.md shows it, on a simulated fleet whose truth is known.

The fleet of ``sim_fleet`` (three simulated pandas, four lockstep recordings each with their
desired accelerations; ``arm_b``'s ``panda_joint2`` Coulomb friction 0.5 -> 2.0 N m in its last
two bags; each robot's identified model in the manifest) through the docs' command
``rnea_fleet --manifest fleet.yaml --output fleet_rnea`` (with ``--no-plots``: the per-bag
figures change no number): that joint is drifting, every other joint of every robot stable.
"""
from __future__ import annotations

import json
import subprocess

from harness import sim_fleet
import pytest

HEADLINE = '1 joint drifting, 23 judged stable'


@pytest.fixture(scope='module')
def sim_fleet_run(tmp_path_factory):
    root = tmp_path_factory.mktemp('sim_fleet')
    sim_fleet.make_fleet(root)
    result = subprocess.run(['rnea_fleet', '--manifest', 'fleet.yaml', '--output', 'fleet_rnea',
                             '--no-plots'], cwd=root, capture_output=True, text=True,
                            timeout=600)
    return result, root / 'fleet_rnea'


def test_the_worn_joint_is_drifting_and_no_other(sim_fleet_run):
    result, output = sim_fleet_run
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f'rnea_fleet: drift: {HEADLINE} ('), result.stdout
    flagged = [line for line in result.stderr.splitlines() if 'residual RMS' in line]
    assert len(flagged) == 1 and flagged[0].startswith(
        f'rnea_fleet: drift: {sim_fleet.WORN} / {sim_fleet.WORN_JOINT}: residual RMS'), \
        result.stderr
    drift = json.loads((output / 'fleet.json').read_text())['drift']
    assert drift['bags_not_judged'] == []
    verdicts = {(j['robot'], j['joint']): j for j in drift['joints']}
    worn = verdicts.pop((sim_fleet.WORN, sim_fleet.WORN_JOINT))
    assert worn['verdict'] == 'drifting' and worn['bags'] == sim_fleet.BAGS
    # The friction's 1.5 N m more, at the joint's speeds: the residual RMS about triples.
    assert worn['ratio'] > 2.0, worn
    assert {j['verdict'] for j in verdicts.values()} == {'stable'} and len(verdicts) == 23


def test_the_fleet_estimates_the_accelerations_by_default(sim_fleet_run):
    """The bags carry desired accelerations: the settings say they were not used."""
    _, output = sim_fleet_run
    assert 'estimate_accelerations: True' in (output / 'fleet.md').read_text()
