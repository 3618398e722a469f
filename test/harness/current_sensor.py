"""
A current-based effort sensor of the panda, for the tests of ``effort_gain.<joint>``.

Per joint the torque per unit of effort (``GAINS``, e.g. N m per A) and the bias of the torque
so measured (``BIAS``, N m); the sensor reports (torque + bias) / gain (``as_current``).
"""
from __future__ import annotations

import numpy as np

from rnea_ros import RobotModel

GAINS = {'panda_joint1': 12.5, 'panda_joint2': 0.8, 'panda_joint4': 1.3}
BIAS = {'panda_joint2': 0.7}
PARAMETERS = {**{f'effort_gain.{j}': g for j, g in GAINS.items()},
              **{f'effort_bias.{j}': b for j, b in BIAS.items()}}


def vector(model: RobotModel, values: dict, default: float) -> np.ndarray:
    """Return ``values`` (joint -> value) as a (nv,) array, ``default`` elsewhere."""
    out = np.full(model.nv, default)
    for joint, value in values.items():
        out[model.joint(joint).idx_v] = value
    return out


def as_current(model: RobotModel, torque: np.ndarray) -> np.ndarray:
    """Return the effort a current-based sensor reports: (torque + bias) / gain."""
    return (torque + vector(model, BIAS, 0.0)) / vector(model, GAINS, 1.0)
