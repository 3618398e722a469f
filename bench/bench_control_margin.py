"""
Stability margin of the node's feedback laws closed over a delayed loop (docs/benchmarks.md).

The loop of ``pd_feedforward`` / ``computed_torque`` runs through the robot: joint_states at
tick k, the node's answer applied from tick k + d (d = 1: the node answers within the tick, over
DDS, and the robot applies it at its next tick, as ``rnea_sim``'s lockstep does). With an exact
model the feed-forward cancels the dynamics and the error obeys, linearised at a configuration
q (M = M(q)):

- ``pd_feedforward``: M e'' = -Kp e(t - d T) - Kd e'(t - d T);
- ``computed_torque``: e'' = -Kp e(t - d T) - Kd e'(t - d T).

Discretised exactly over a tick T (a zero-order hold of the torque), the state holds the errors
and the d torques under way; the loop is stable when every eigenvalue of its matrix is inside the
unit circle. Printed per robot and law: the spectral radius at d = 1, the largest delay (ticks)
that stays stable, and the gain margin at d = 1 (the factor on Kp and Kd at which it loses
stability), the worst over ``--configurations`` random configurations within the joint limits.

    python bench/bench_control_margin.py [--rate 1000] [--configurations 50]
"""
from __future__ import annotations

import argparse
from pathlib import Path
import sys

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'test'))

from oracle import robot_path  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402

# The documented gains (docs/node.md, Control laws), per (robot, law, label): the simulated
# robot's former PD for the panda (100 N m/rad, 10 N m s/rad on every joint,
# rnea_ros.demos.closed_loop KP, KD), which a loop one tick late cannot hold on panda_joint7
# ((M^-1)_77 up to 202 1/(kg m^2)); the panda's with the distal joints softer; the ur5's of
# test/node/test_control_law.py; computed_torque at 20 rad/s, critically damped.
GAINS = {
    ('panda', 'pd_feedforward', 'sim PD'): ([100.0] * 8, [10.0] * 8),
    ('panda', 'pd_feedforward', 'wrist soft'): ([100.0, 100.0, 50.0, 100.0, 25.0, 25.0, 10.0,
                                                 50.0],
                                                [10.0, 10.0, 5.0, 10.0, 2.5, 2.5, 1.0, 5.0]),
    ('ur5', 'pd_feedforward', 'test'): ([400.0, 400.0, 200.0, 50.0, 50.0, 10.0],
                                        [40.0, 40.0, 20.0, 5.0, 5.0, 1.0]),
    ('panda', 'computed_torque', '400/40'): ([400.0] * 8, [40.0] * 8),
    ('ur5', 'computed_torque', '400/40'): ([400.0] * 6, [40.0] * 6),
}
MAX_DELAY = 50  # ticks: the search's end


def loop_matrix(inverse_mass: np.ndarray, kp: np.ndarray, kd: np.ndarray, period: float,
                delay: int) -> np.ndarray:
    """
    Return the matrix of the delayed loop, state [e, e', u_(k-d) ... u_(k-1)].

    ``inverse_mass``: M^-1 (pd_feedforward) or the identity (computed_torque); u: the
    acceleration the torque gives, held over a tick.
    """
    n = len(kp)
    size = 2 * n + delay * n
    matrix = np.zeros((size, size))
    eye = np.eye(n)
    matrix[:n, :n], matrix[:n, n:2 * n] = eye, period * eye
    matrix[n:2 * n, n:2 * n] = eye
    law = -inverse_mass @ np.hstack([np.diag(kp), np.diag(kd)])  # u from [e, e']
    if delay == 0:
        matrix[:n, :2 * n] += 0.5 * period ** 2 * law
        matrix[n:2 * n, :2 * n] += period * law
        return matrix
    oldest = slice(2 * n, 3 * n)  # u_(k-d): applied over this tick
    matrix[:n, oldest] = 0.5 * period ** 2 * eye
    matrix[n:2 * n, oldest] = period * eye
    for slot in range(delay - 1):  # the queue moves up by one
        matrix[2 * n + slot * n:3 * n + slot * n, 3 * n + slot * n:4 * n + slot * n] = eye
    matrix[size - n:, :2 * n] = law  # u_k, from the state measured now
    return matrix


def radius(matrix: np.ndarray) -> float:
    return float(np.max(np.abs(np.linalg.eigvals(matrix))))


def margins(inverse_mass, kp, kd, period) -> tuple[float, int, float]:
    """(spectral radius at d = 1, largest stable delay, gain margin at d = 1)."""
    rho = radius(loop_matrix(inverse_mass, kp, kd, period, 1))
    delay = 0
    while delay < MAX_DELAY and radius(loop_matrix(inverse_mass, kp, kd, period,
                                                   delay + 1)) < 1.0:
        delay += 1
    low, high = 0.0, 1.0
    while radius(loop_matrix(inverse_mass, high * kp, high * kd, period, 1)) < 1.0:
        low, high = high, 2 * high
        if high > 1e4:
            return rho, delay, np.inf
    for _ in range(40):
        middle = 0.5 * (low + high)
        if radius(loop_matrix(inverse_mass, middle * kp, middle * kd, period, 1)) < 1.0:
            low = middle
        else:
            high = middle
    return rho, delay, low


def worst_margins(period: float, configurations: int) -> dict:
    """
    Return (robot, law, gains label) -> the worst (radius at d = 1, stable delay, gain margin).

    Over the zero configuration and ``configurations`` random ones (seed 0) within the joint
    limits, per entry of ``GAINS`` in its order.
    """
    rng = np.random.default_rng(0)
    table = {}
    for (robot, law, label), (kp, kd) in GAINS.items():
        model = RobotModel.from_urdf_file(robot_path(robot))
        lower = np.array([max(j.lower, -np.pi) for j in model.joints])
        upper = np.array([min(j.upper, np.pi) for j in model.joints])
        poses = [np.zeros(model.nq)] + [rng.uniform(lower, upper)
                                        for _ in range(configurations)]
        worst = (0.0, MAX_DELAY, np.inf)
        for q in poses:
            inverse_mass = (np.linalg.inv(model.mass_matrix(q)) if law == 'pd_feedforward'
                            else np.eye(model.nv))
            rho, delay, gain = margins(inverse_mass, np.array(kp), np.array(kd), period)
            worst = (max(worst[0], rho), min(worst[1], delay), min(worst[2], gain))
            if law == 'computed_torque':
                break  # M cancels: the same at every configuration
        table[robot, law, label] = worst
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--rate', type=float, default=1000.0, help='loop rate [Hz]')
    parser.add_argument('--configurations', type=int, default=50,
                        help='random configurations per robot (and the zero one)')
    args = parser.parse_args(argv)
    period = 1.0 / args.rate
    print(f'rate {args.rate:g} Hz, delay 1 tick = {period * 1e3:g} ms; worst over '
          f'{args.configurations + 1} configurations')
    print(f'{"robot":<6} {"law":<16} {"gains":<11} {"radius at d=1":>14} '
          f'{"max stable delay":>17} {"gain margin at d=1":>19}')
    for (robot, law, label), worst in worst_margins(period, args.configurations).items():
        print(f'{robot:<6} {law:<16} {label:<11} {worst[0]:>14.4f} {worst[1]:>12d} tick '
              f'{worst[2]:>18.2f}x')
    return 0


if __name__ == '__main__':
    sys.exit(main())
