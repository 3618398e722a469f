"""The observer-in-the-loop cases: the pushed link, the push, the calibration time."""
from __future__ import annotations

import numpy as np

LINK = 'panda_hand'
ARM = [f'panda_joint{k}' for k in range(1, 8)]
FORCE = np.array([12.0, -16.0, 0.0])  # N, in the flange frame: 20 N
CALIBRATION = 1.0  # s of sim time of collision-free residual
