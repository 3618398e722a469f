"""
The demos' motion and robot: a smooth sinusoidal motion inside a model's limits, Franka's panda.

``sinusoidal_trajectory`` moves each 1-DoF joint as q(t) = c + A sin(w t + phi) inside its URDF
position and velocity limits, with v and a the analytic derivatives; a free-flyer base bobs
vertically. ``PANDA_URDF`` is the panda of ``example-robot-data`` (a test dependency). The library
demo, the node demo, the closed loop and the tests share them.
"""
from __future__ import annotations

import argparse
from pathlib import Path
import sysconfig

import numpy as np

from rnea_ros.dynamics.model import RobotModel

__all__ = ['PANDA_URDF', 'robot_urdf', 'sinusoidal_trajectory']

PANDA_URDF = Path(sysconfig.get_paths()['purelib']) / (
    'cmeel.prefix/share/example-robot-data/robots/panda_description/urdf/panda.urdf')

# Motion of joints without position limits, and caps for joints with wide limits.
DEFAULT_AMPLITUDE = {'prismatic': 0.05}  # m; every other 1-DoF joint: rad
REVOLUTE_AMPLITUDE = 0.5  # rad
BASE_BOB_AMPLITUDE = 0.05  # m, vertical motion of a free-flyer base
BASE_FREQUENCY = 0.5  # Hz, of joint 0; later joints a little faster so they do not move in step
VELOCITY_LIMIT_SHARE = 0.8  # peak speed as a share of the URDF velocity limit


def sinusoidal_trajectory(model: RobotModel, times: np.ndarray, start_at_rest: bool = False):
    """
    Q (N, nq), V (N, nv), A (N, nv) of a smooth motion inside the joint limits.

    1-DoF joints: q = c + amp sin(w t + phi), v = amp w cos(...), a = -amp w^2 sin(...), with c
    the middle of the URDF limits, amp a quarter of their range (capped, and reduced so the peak
    speed stays below the velocity limit). 7-DoF joints (free-flyer, URDF floating): identity
    orientation, vertical position z = amp sin(w t); with a constant orientation the
    root-frame velocity and acceleration are the world ones. Other joints stay at zero.
    ``start_at_rest``: every phase is -pi/2, so at t = 0 each joint is at rest at c - amp (a
    robot standing there can follow the motion from its start without a jump in velocity).
    """
    n = times.size
    Q = np.tile(model.neutral_configuration(), (n, 1))
    V = np.zeros((n, model.nv))
    A = np.zeros((n, model.nv))
    for number, joint in enumerate(model.joints):
        omega = 2.0 * np.pi * BASE_FREQUENCY * (1.0 + 0.15 * number)
        phase = -0.5 * np.pi if start_at_rest else 0.7 * number
        if joint.nq == 1 and joint.nv == 1:
            cap = DEFAULT_AMPLITUDE.get(joint.kind, REVOLUTE_AMPLITUDE)
            if np.isfinite(joint.lower) and np.isfinite(joint.upper):
                center = 0.5 * (joint.lower + joint.upper)
                amplitude = min(cap, 0.25 * (joint.upper - joint.lower))
            else:
                center, amplitude = 0.0, cap
            if np.isfinite(joint.velocity_limit) and joint.velocity_limit > 0.0:
                amplitude = min(amplitude, VELOCITY_LIMIT_SHARE * joint.velocity_limit / omega)
            amplitude = max(amplitude, 0.0)
            q_index, v_index = joint.idx_q, joint.idx_v
        elif joint.nq == 7:
            center, amplitude = 0.0, BASE_BOB_AMPLITUDE
            phase = -0.5 * np.pi if start_at_rest else 0.0
            q_index, v_index = joint.idx_q + 2, joint.idx_v + 2
        else:
            continue
        angle = omega * times + phase
        Q[:, q_index] = center + amplitude * np.sin(angle)
        V[:, v_index] = amplitude * omega * np.cos(angle)
        A[:, v_index] = -amplitude * omega ** 2 * np.sin(angle)
    return Q, V, A


def robot_urdf(parser: argparse.ArgumentParser, urdf: Path | None) -> Path:
    """Return ``urdf``, or the panda when it is None (``parser.error`` when that is missing)."""
    if urdf is None:
        if not PANDA_URDF.is_file():
            parser.error('example-robot-data is not installed (it is a test dependency), so '
                         'the default panda URDF is missing: pass --urdf FILE, or run '
                         'scripts/demo.sh, which installs it into .venv')
        urdf = PANDA_URDF
    return urdf
