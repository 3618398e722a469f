"""
Test data: a UR5 log of six sines whose torques come from the URDF itself (the exact model).

``sine_log`` simulates what a UR5's logger records while each joint follows one sine:

- motion: q_j = CENTER_j + AMPLITUDE sin(2 pi f_j t + phase_j), f_j spread over
  ``FREQUENCIES`` (0.21-0.5 Hz), phases from the seed; sampled every 1/``rate`` s;
- effort: the URDF's RNEA torque (the *exact* model: identification has nothing inertial to
  correct) + Coulomb friction ``COULOMB`` tanh(v / 0.01) + viscous ``VISCOUS`` v + white noise
  ``NOISE`` (N m);
- logging: 1 % of the samples dropped at random, one 30 ms hole, every stamp off the true
  sampling instant by normal noise of 50 us (``STAMP_ERROR``), positions quantised by an
  18-bit encoder (2 pi / 2^18 rad), the robot's velocity with white noise 2e-3 rad/s.

Every effect can be switched off (``effects``) to find which one biases an estimate.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness import bagdata
from harness.oracle import robot_path
import numpy as np

UR5 = robot_path('ur5')
RATE = 500.0
CENTER = np.array([0.0, -1.3, 1.3, -1.5, -1.57, 0.0])
AMPLITUDE = 0.6
FREQUENCIES = np.linspace(0.21, 0.5, 6)
COULOMB = np.array([4.0, 6.0, 3.0, 1.0, 1.0, 0.8])
VISCOUS = np.array([2.0, 1.5, 1.0, 0.4, 0.3, 0.3])
THRESHOLD = 0.01  # rad/s, of the friction's tanh
NOISE = np.array([0.5, 0.8, 0.5, 0.1, 0.1, 0.05])
DROPPED = 0.01
HOLE = 0.030  # s
STAMP_ERROR = 50e-6  # s
QUANTUM = 2 * np.pi / 2 ** 18
VELOCITY_NOISE = 2e-3
EFFECTS = ('noise', 'dropped', 'hole', 'stamps', 'quantum', 'velocity_noise')


@dataclass(frozen=True)
class SineLog:
    """The logged samples (``times_ns`` header stamps, q, v, effort) and the truth behind."""

    names: tuple[str, ...]
    times_ns: np.ndarray
    q: np.ndarray
    v: np.ndarray
    effort: np.ndarray
    q_true: np.ndarray
    v_true: np.ndarray
    a_true: np.ndarray
    settings: dict = field(default_factory=dict)


def sine_log(model, duration: float = 30.0, seed: int = 0, *, rate: float = RATE,
             effects: tuple[str, ...] = EFFECTS, coulomb: np.ndarray = COULOMB,
             true_model=None) -> SineLog:
    """
    Simulate the log of the module docstring (``model``: the UR5 ``RobotModel``).

    ``effects``: which of ``EFFECTS`` to apply (the others are off: exact stamps, no noise);
    ``true_model``: the robot whose torques are logged (default ``model``, the exact URDF).
    """
    true_model = model if true_model is None else true_model
    rng = np.random.default_rng(seed)
    ticks = int(round(duration * rate)) + 1
    instants = np.arange(ticks) / rate
    phase = rng.uniform(0, 2 * np.pi, 6)
    angle = 2 * np.pi * FREQUENCIES * instants[:, None] + phase
    omega = 2 * np.pi * FREQUENCIES
    q_true = CENTER + AMPLITUDE * np.sin(angle)
    v_true = AMPLITUDE * omega * np.cos(angle)
    a_true = -AMPLITUDE * omega ** 2 * np.sin(angle)
    tau = true_model.rnea_batch(q_true, v_true, a_true) + coulomb * np.tanh(v_true / THRESHOLD) \
        + VISCOUS * v_true
    noise = rng.standard_normal(tau.shape) * NOISE
    effort = tau + (noise if 'noise' in effects else 0.0)
    q = np.round(q_true / QUANTUM) * QUANTUM if 'quantum' in effects else q_true.copy()
    v = v_true + (VELOCITY_NOISE * rng.standard_normal(v_true.shape)
                  if 'velocity_noise' in effects else 0.0)
    error = STAMP_ERROR * rng.standard_normal(ticks)
    stamps = instants + (error if 'stamps' in effects else 0.0)
    keep = np.ones(ticks, dtype=bool)
    drop = rng.random(ticks) < DROPPED
    if 'dropped' in effects:
        keep &= ~drop
    start = rng.uniform(0.3, 0.6) * duration
    if 'hole' in effects:
        keep &= ~((instants >= start) & (instants < start + HOLE))
    keep[[0, -1]] = True
    times_ns = bagdata.BAG_START + np.round(stamps[keep] * 1e9).astype(np.int64)
    settings = {'duration': duration, 'seed': seed, 'rate': rate, 'effects': list(effects)}
    return SineLog(tuple(model.joint_names), times_ns, q[keep], v[keep], effort[keep],
                   q_true[keep], v_true[keep], a_true[keep], settings)


def sine_bag(path: Path, log: SineLog) -> Path:
    """Write ``log`` as a /joint_states bag (``bagdata.joint_states_bag``)."""
    return bagdata.joint_states_bag(path, log.times_ns, log.names, log.q, log.v, log.effort)
