"""
The simulated controller's trajectory sampler and the node's agree, written apart on purpose.

``rnea_ros.sim.trajectory`` (scipy's ``BPoly.from_derivatives`` interpolants, as
joint_trajectory_controller's splines) stands for the robot's controller; the node samples the
same points with its own allocation-free quintic (``rnea_ros.control.trajectory``). Sharing one
sampler would hide a bug common to both; here the two independent ones are checked against each
other for each set of fields a point may carry (positions; with velocities; with accelerations),
inside the points and past the last.
"""
from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.control.trajectory import Trajectory, TrajectorySampler
from rnea_ros.sim.trajectory import build_trajectory, Reference

NAMES = ['a', 'b', 'c']
TIMES = np.array([0.0, 0.3, 0.7, 1.2, 2.0])
TOLERANCE = 1e-9  # relative to the values' scale (|q| <= 1, |v| <= 1, |a| <= 2)


@pytest.mark.parametrize('fields', ['p', 'pv', 'pva'])
def test_the_sims_and_the_nodes_samples_agree(fields):
    rng = np.random.default_rng(11)
    positions = rng.uniform(-1.0, 1.0, (TIMES.size, 3))
    velocities = rng.uniform(-1.0, 1.0, (TIMES.size, 3)) if 'v' in fields else None
    accelerations = rng.uniform(-2.0, 2.0, (TIMES.size, 3)) if 'a' in fields else None
    rest = np.zeros(3)
    sim = build_trajectory(NAMES, TIMES, positions, velocities, accelerations, None,
                           joint_index={name: k for k, name in enumerate(NAMES)},
                           lower=np.full(3, -2.0), upper=np.full(3, 2.0), start=0.0,
                           held=Reference(rest, rest.copy(), rest.copy(), rest.copy()))
    node = TrajectorySampler(Trajectory.from_points(NAMES, [
        (t, positions[k], [] if velocities is None else velocities[k],
         [] if accelerations is None else accelerations[k]) for k, t in enumerate(TIMES)]))
    reference = Reference(*(np.zeros(3) for _ in range(4)))
    q, v, a = (np.zeros(3) for _ in range(3))
    # Inside the segments (not on a point: the linear and cubic accelerations jump there).
    for t in np.concatenate([np.arange(0.0123, 2.0, 0.005), [2.5, 3.0]]):
        sim.sample(t, reference)
        node.sample(t, q, v, a)
        np.testing.assert_allclose(reference.position, q, rtol=0.0, atol=TOLERANCE, err_msg=t)
        np.testing.assert_allclose(reference.velocity, v, rtol=0.0, atol=TOLERANCE, err_msg=t)
        np.testing.assert_allclose(reference.acceleration, a, rtol=0.0, atol=TOLERANCE,
                                   err_msg=t)
    np.testing.assert_allclose(q, positions[-1], rtol=0.0, atol=TOLERANCE)  # held at rest
    np.testing.assert_array_equal(v, 0.0)
