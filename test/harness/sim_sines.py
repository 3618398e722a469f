"""
The simulated UR5 following the six sines of ``sine_log``, stepped in lockstep in this process.

``follow_sines`` runs a ``rnea_ros.sim.plant.Plant`` (the caller's, with its reality gap)
under a PD (``KP``, ``KD``) with the true model's feed-forward (its true URDF, the gap's
armature and viscous friction), one plant step per sample, and returns what a logger records:
encoder positions, measured velocities and the torque sensor's readings. The phases of the
sines are the first draws of ``rng``.
"""
from __future__ import annotations

from harness import sine_log
import numpy as np

from rnea_ros import RobotModel
from rnea_ros.sim.plant import pd_effort

KP, KD = 200.0, 20.0


def follow_sines(plant, duration: float, rate: float, rng):
    """Return (q, v, effort) (n, 6) of ``duration`` s at ``rate`` Hz (module docstring)."""
    true = RobotModel.from_urdf_string(plant.true_urdf)
    terms = [plant.gap.joint_terms(joint) for joint in plant.joint_names]
    armature = np.array([t['armature'] for t in terms])
    viscous = np.array([t['viscous'] for t in terms])
    phase = rng.uniform(0, 2 * np.pi, 6)
    omega = 2 * np.pi * sine_log.FREQUENCIES

    def reference(t):
        angle = omega * t + phase
        return (sine_log.CENTER + sine_log.AMPLITUDE * np.sin(angle),
                sine_log.AMPLITUDE * omega * np.cos(angle),
                -sine_log.AMPLITUDE * omega ** 2 * np.sin(angle))
    q0, v0, _ = reference(0.0)
    plant.reset(q0, v0)
    n = int(duration * rate)
    q, v, effort = (np.empty((n, 6)) for _ in range(3))
    for k in range(n):
        qd, vd, ad = reference(k / rate)
        q[k], v[k] = plant.measured_position(), plant.measured_velocity()
        feedforward = true.rnea(qd, vd, ad) + armature * ad + viscous * vd
        plant.step(pd_effort(KP, KD, qd, vd, plant.q(), plant.v(), feedforward))
        effort[k] = plant.measured_effort()
    return q, v, effort
