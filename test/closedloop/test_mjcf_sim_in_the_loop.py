"""
The node on ``rnea_sim --mjcf``: the exported identified robot tracks as its URDF twin does.

The UR5 with armature, viscous and Coulomb friction per joint, written two ways: identified.xml
(``mjcf_out``, as ``rnea_identify --mjcf`` writes it) for ``rnea_sim --mjcf``, and the URDF with
a gap file carrying the same joint terms for ``rnea_sim --urdf``. The node is given the URDF
and the actuation model (identified.urdf + actuation.yaml: armature, friction compensated) and
drives each in lockstep on path b (``feedforward_effort`` -> ``effort_commands``), PD 100/10,
3 s of the demo motion: the two RMS tracking errors agree within 10 % (measured over 3 s:
2.410e-4 and 2.409e-4 rad; over 5 s 2.38e-4 and 2.34e-4 to 2.39e-4 in two runs; not bit for
bit: the two plants are, ``test/sim/test_mjcf_plant.py``, but each run's node and trajectory
arrive at a sim time of their own), both well within 1 mrad.
"""
from __future__ import annotations

from harness.loop_harness import run_loop, TRACKED_SETTLE
from harness.mjcf_twins import identified_xml, joint_terms, joint_terms_gap, UR5
import pytest

from rnea_ros import RobotModel

pytestmark = pytest.mark.timeout(600)

DURATION = 3.0  # s of trajectory (sim time)
SAME = 0.10  # the MJCF sim's RMS tracking error within 10 % of the URDF twin's (runs: 2 %)
TRACKS = 1e-3  # rad: each run's RMS tracking error at most this


def test_the_node_tracks_the_mjcf_sim_as_the_urdf_sim_of_the_same_robot(tmp_path):
    urdf = UR5.read_text()
    model = RobotModel.from_urdf_string(urdf)
    terms = joint_terms(model)
    xml = identified_xml(tmp_path)  # the same model and terms, as rnea_identify --mjcf writes
    gap = tmp_path / 'joint_terms.yaml'
    gap.write_text(joint_terms_gap(model, terms))
    node = {**terms.to_parameters(), 'friction_compensation': True}
    runs = {}
    for name, options in (('mjcf', {'gap': 'none', 'mjcf': xml}), ('urdf', {'gap': str(gap)})):
        folder = tmp_path / name
        folder.mkdir()
        runs[name] = run_loop(folder, urdf, 'effort', duration=DURATION, node_params=node,
                              settle_time=TRACKED_SETTLE, **options)
        assert runs[name].exit_codes == {'sim': 0, 'node': 0}, runs[name].logs
        assert runs[name].counters['missed answers'] < 200, runs[name].counters
    mjcf, twin = runs['mjcf'].tracking, runs['urdf'].tracking
    print(f'RMS tracking: MJCF sim {mjcf.rms:.3e} rad, URDF sim {twin.rms:.3e} rad')
    assert abs(mjcf.rms / twin.rms - 1.0) <= SAME, (mjcf, twin)
    assert max(mjcf.rms, twin.rms) < TRACKS, (mjcf, twin)
