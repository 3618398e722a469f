"""The sinusoidal motion of the panda's seven arm joints that the simulated-plant tests track."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

# The PD gains the plant tracks it with: stiffer ones make the light wrist chatter at its
# effort limit.
KP, KD = 100.0, 10.0


def sinusoid(centre: np.ndarray, amplitude: float,
             omega: float) -> Callable[[float], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """
    Return desired(t) -> (q, v, a): joint j < 7 at centre + amplitude sin(omega t + j).

    For a fixed-base arm (q and v of one size): v and a are the exact derivatives; the other
    coordinates stay at ``centre``, at rest.
    """
    phases = np.arange(7)

    def desired(t: float):
        q, v, a = centre.copy(), np.zeros(centre.size), np.zeros(centre.size)
        q[:7] += amplitude * np.sin(omega * t + phases)
        v[:7] = amplitude * omega * np.cos(omega * t + phases)
        a[:7] = -amplitude * omega ** 2 * np.sin(omega * t + phases)
        return q, v, a
    return desired
