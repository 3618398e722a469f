"""
A second independent oracle: MuJoCo's inverse dynamics of the gap-free plant equals RNEA.

MuJoCo reads the URDF with its own compiler, so agreement checks our URDF parsing (frames,
inertias, mimic couplings, the free-flyer convention) as much as our dynamics. Mimic joints are
independent dofs in MuJoCo (coupled by equality constraints, off here): q, v, a are mapped
through the coupling and the torques folded back with its transpose (virtual work).
"""
from __future__ import annotations

import warnings

from harness.oracle import robot_path, ROBOTS_DIR
import numpy as np
import pytest

from rnea_ros.sim.gap import Gap
from rnea_ros.sim.plant import Plant

ROBOTS = [  # (example-robot-data URDF, floating base): arms with mimic fingers, legged robots
    ('panda_description/urdf/panda.urdf', False),
    ('ur_description/urdf/ur5_robot.urdf', False),
    ('baxter_description/urdf/baxter.urdf', False),
    ('tiago_pro_description/robots/tiago_pro.urdf', False),
    ('double_pendulum_description/urdf/double_pendulum_continuous.urdf', False),
    ('solo_description/robots/solo12.urdf', True),
    ('go2_description/urdf/go2.urdf', True),
    ('talos_data/robots/talos_full_v2.urdf', True),
]


def _random_state(plant: Plant, rng: np.random.Generator):
    q = plant.nominal.neutral_configuration()
    for joint in plant.nominal.joints:
        if joint.nv == 1:
            q[joint.idx_q] = rng.uniform(max(joint.lower, -2.0), min(joint.upper, 2.0))
    if plant.floating_base:
        q[:3] = rng.standard_normal(3)
        quaternion = rng.standard_normal(4)
        q[3:7] = quaternion / np.linalg.norm(quaternion)
    return q, rng.standard_normal(plant.nv), rng.standard_normal(plant.nv)


@pytest.mark.parametrize('path, floating_base', ROBOTS, ids=[p.split('/')[0] for p, _ in ROBOTS])
def test_mj_inverse_equals_rnea(path, floating_base):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # published URDFs with odd inertias: not our point
        plant = Plant((ROBOTS_DIR / path).read_text(), floating_base=floating_base,
                      gap=Gap.none())
    rng = np.random.default_rng(17)
    for _ in range(5):
        q, v, a = _random_state(plant, rng)
        expected = plant.nominal.rnea(q, v, a)
        got = plant.inverse_dynamics(q, v, a)
        error = np.max(np.abs(got - expected)) / np.max(np.abs(expected))
        assert error < 1e-8, f'{path}: relative error {error:.2e}'


def test_panda_fingers_are_one_mimic_coupled_dof():
    plant = Plant(robot_path('panda').read_text())
    assert plant.model.nv == plant.nv + 1  # the mimic finger is a MuJoCo dof of its own
    assert plant.model.neq == 1 and 'panda_finger_joint2' not in plant.joint_names


def test_inverse_dynamics_adds_the_gap_armature_and_viscous_friction():
    plant = Plant(robot_path('ur5').read_text(), gap=Gap(joint_defaults={
        'armature': 0.3, 'viscous': 2.0, 'coulomb': 1.0}))
    q, v, a = _random_state(plant, np.random.default_rng(3))
    expected = plant.nominal.rnea(q, v, a) + 0.3 * a + 2.0 * v
    np.testing.assert_allclose(plant.inverse_dynamics(q, v, a), expected, rtol=1e-10,
                               atol=1e-10)
