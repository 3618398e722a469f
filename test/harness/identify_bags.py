"""The synthetic UR5 bags of rnea_identify's tests (test/identify/test_identify.py says how)."""
from __future__ import annotations

from pathlib import Path

from harness import bagdata
from harness.oracle import robot_path
import numpy as np

from rnea_ros import RobotModel
from rnea_ros.identify.cli import main
from rnea_ros.identify.inertial_layout import inertia_matrix


UR5 = robot_path('ur5')
RATE = 500.0
DURATION = 10.0
COULOMB = np.array([3.0, 4.0, 2.0, 0.8, 0.6, 0.5])
VISCOUS = np.array([2.0, 1.5, 1.0, 0.4, 0.3, 0.3])
OFFSET = np.array([0.3, -0.5, 0.2, 0.1, -0.1, 0.05])
ARMATURE = np.array([0.4, 0.5, 0.3, 0.1, 0.1, 0.08])
NOISE = np.array([0.2, 0.3, 0.2, 0.05, 0.05, 0.05])
CHANGED_BODIES = (2, 3, 4, 5)


def true_parameters(model: RobotModel, seed: int = 3) -> np.ndarray:
    """(nb, 10) the URDF's parameters with ``CHANGED_BODIES`` changed, physically."""
    rng = np.random.default_rng(seed)
    phi = model.inertial_parameters().copy()
    for i in CHANGED_BODIES:
        mass = phi[i, 0]
        com = phi[i, 1:4] / mass
        inertia_com = inertia_matrix(phi[i, 4:]) - mass * (com @ com * np.eye(3)
                                                           - np.outer(com, com))
        mass = mass * rng.choice([0.8, 1.2])
        com = com + rng.uniform(-0.03, 0.03, 3)
        inertia = inertia_com * rng.uniform(0.7, 1.4) + mass * (com @ com * np.eye(3)
                                                                - np.outer(com, com))
        phi[i] = [mass, *(mass * com), inertia[0, 0], inertia[0, 1], inertia[1, 1],
                  inertia[0, 2], inertia[1, 2], inertia[2, 2]]
    return phi


def synthetic_bag(path: Path, model: RobotModel, *, seed: int = 1, moving=None,
                  nan_effort: int = 0, duration: float = DURATION,
                  unpublished: int | None = None, late: int = 0, stuck: float = 0.0) -> Path:
    """
    Write the generator's bag (module docstring); ``moving``: joints that move (all).

    ``unpublished``: a joint held at 0 that the messages leave out; ``late``: each message
    carries the effort of the state ``late`` samples before (the first ones that of the first);
    ``stuck``: where a joint is nearly at rest (|v| < 0.05) its effort is off by a uniform
    draw within +-stuck times its Coulomb friction, as stiction holds it with any torque.
    """
    truth = model.with_inertial_parameters(true_parameters(model))
    times = bagdata.sample_times(int(RATE * duration), rate=RATE, jitter=0.05, seed=seed)
    t = (times - bagdata.BAG_START) * 1e-9
    lower = np.array([j.lower for j in model.joints])
    upper = np.array([j.upper for j in model.joints])
    q, v, a = bagdata.fourier_excitation(lower, upper, t, seed=seed)
    if moving is not None:
        still = [k for k in range(model.nv) if k not in moving]
        q[:, still], v[:, still], a[:, still] = 0.5, 0.0, 0.0
    if unpublished is not None:
        q[:, unpublished], v[:, unpublished], a[:, unpublished] = 0.0, 0.0, 0.0
    tau = truth.rnea_batch(q, v, a) + COULOMB * np.tanh(v / 0.01) + VISCOUS * v + OFFSET \
        + ARMATURE * a
    tau += np.random.default_rng(seed + 100).standard_normal(tau.shape) * NOISE
    if stuck:
        held = np.random.default_rng(seed + 200).uniform(-stuck, stuck, tau.shape) * COULOMB
        tau += np.where(np.abs(v) < 0.05, held, 0.0)
    if nan_effort:
        # Inside the samples kept whatever the differentiation window (a tenth in from the ends).
        tenth = tau.shape[0] // 10
        tau[np.linspace(tenth, tau.shape[0] - tenth, nan_effort).astype(int), 2] = np.nan
    if late:
        tau = np.concatenate([np.repeat(tau[:1], late, axis=0), tau[:-late]])
    kept = [k for k in range(model.nv) if k != unpublished]
    q, v, tau = (np.ascontiguousarray(x[:, kept]) for x in (q, v, tau))
    return bagdata.joint_states_bag(path, times, [model.joint_names[k] for k in kept], q, v,
                                    tau)


def identify(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err
