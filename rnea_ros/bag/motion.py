"""
What the robot did during a bag, per joint: how fast it moved and how often.

summary.json gives per joint ``speed_rms`` (RMS of the velocity used, rad/s or m/s) and
``moving_share`` (the share of the analysed samples whose speed exceeds ``MOVING_SPEED``). A
residual depends on the motion (friction acts on a moving joint, a still one holds only
gravity), so ``rnea_fleet`` compares the residuals of bags only where these numbers say the
motions are alike (``rnea_ros.fleet.comparable``).

``MOVING_SPEED`` = 3 x the actuation model's smooth-sign threshold (``DEFAULT_VELOCITY_THRESHOLD``,
0.01 rad/s): 0.03 rad/s (m/s), where the Coulomb friction is complete (tanh(3) = 0.995) and
three times above the velocity noise band of a joint at rest.
"""
from __future__ import annotations

import numpy as np

from rnea_ros.dynamics.actuation import DEFAULT_VELOCITY_THRESHOLD

MOVING_SPEED = 3.0 * DEFAULT_VELOCITY_THRESHOLD  # rad/s (m/s for prismatic joints)


def joint_motion(velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """
    Return per column of ``velocity`` (N, J) its RMS and the share of |v| > ``MOVING_SPEED``.

    Non-finite values are left out; a column without a finite value gives NaN for both.
    """
    finite = np.isfinite(velocity)
    count = finite.sum(axis=0)
    values = np.where(finite, velocity, 0.0)
    with np.errstate(invalid='ignore', divide='ignore'):
        speed_rms = np.where(count > 0, np.sqrt((values ** 2).sum(axis=0) / count), np.nan)
        moving = (np.abs(values) > MOVING_SPEED).sum(axis=0)
        moving_share = np.where(count > 0, moving / np.maximum(count, 1), np.nan)
    return speed_rms, moving_share


def add_motion(summary: dict, velocity: np.ndarray) -> dict:
    """Add ``speed_rms`` and ``moving_share`` to each of ``summary['joints']`` (columns)."""
    speed_rms, moving_share = joint_motion(velocity)
    for entry, speed, share in zip(summary['joints'], speed_rms.tolist(),
                                   moving_share.tolist()):
        entry['speed_rms'] = speed if np.isfinite(speed) else None
        entry['moving_share'] = share if np.isfinite(share) else None
    return summary
