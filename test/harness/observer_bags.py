"""The observer's bags of rnea_bag's tests: a panda moving with or without a push, run."""
from __future__ import annotations

import json

from harness.bagdata import BAG_START, PANDA, panda_bag, sample_times, trajectory
import numpy as np

from rnea_ros import RobotModel
from rnea_ros.bag.cli import main


NOISE = 0.05  # N m
PUSH = (1.0, 1.3, 5.0)  # start [s], end [s], torque on panda_joint2 [N m]


def recording(directory, seed: int, push: bool, noise: float = NOISE):
    model = RobotModel.from_urdf_file(PANDA)
    times = sample_times(2000, jitter=0.2, seed=seed)
    t = (times - BAG_START) * 1e-9
    q, v, a = trajectory(t), trajectory(t, 1), trajectory(t, 2)
    effort = model.rnea_batch(q, v, a) + np.random.default_rng(seed).normal(
        0.0, noise, (t.size, model.nv))
    if push:
        effort[(t >= PUSH[0]) & (t < PUSH[1]), 1] -= PUSH[2]
    bag = panda_bag(directory / 'bag', times, desired=True, effort=effort)
    return model, bag, t, q, v, effort


def run(capsys, bag, out, *extra):
    code = main([str(bag), '--output', str(out), '--no-plots', '--urdf', str(PANDA),
                 '--format', 'csv', *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads((out / 'summary.json').read_text())
