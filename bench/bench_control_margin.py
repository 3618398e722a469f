"""
Stability margin of the node's feedback laws closed over a delayed loop (docs/benchmarks.md).

The loop of ``pd_feedforward`` / ``computed_torque`` runs through the robot: joint_states at
tick k, the node's answer applied from tick k + d (d = 1: the node answers within the tick, over
DDS, and the robot applies it at its next tick, as ``rnea_sim``'s lockstep does). The model of
the loop is the library's (``rnea_ros.control.loop_margin``, which the node's ``gain_check``
runs too): with an exact model the feed-forward cancels the dynamics and the error obeys,
linearised at a configuration q (M = M(q), armature on its diagonal),

- ``pd_feedforward``: M e'' = -Kp e(t - d T) - Kd e'(t - d T);
- ``computed_torque``: e'' = -Kp e(t - d T) - Kd e'(t - d T).

Your gains, before a real arm sees them (``--urdf``): the node's verdict on them, the one line
the node would refuse them with or ``held: ...``; exit status 0 held, 1 not held, 2 bad input.
The gains, the law, the rate and the armature come from a node parameters file (``--params``:
``kp.<joint>``, ``kd.<joint>``, ``control_law``, ``rate``, ``armature.<joint>``), an actuation
file (``--actuation``, as rnea_identify writes it) or the options; the delay in ticks
(``--delay``) or seconds (``--delay-seconds``, rounded up to ticks); ``--prediction``: the law
acts on the state predicted at application (the undelayed loop).

    python bench/bench_control_margin.py --urdf panda.urdf --params my_gains.yaml --delay 1

Without ``--urdf``, the table of docs/benchmarks.md: per robot and law of ``GAINS``, the
spectral radius at d = 1, the largest delay (ticks) that stays stable, and the gain margin at
d = 1 (the factor on Kp and Kd at which it loses stability), the worst over
``--configurations`` random configurations within the joint limits.

    python bench/bench_control_margin.py [--rate 1000] [--configurations 50]
"""
from __future__ import annotations

import argparse
from pathlib import Path
import sys

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'test'))

from harness.oracle import robot_path  # noqa: E402, I100

from rnea_ros import RobotModel  # noqa: E402
from rnea_ros.control.loop_margin import (delay_ticks, gains_of, LAWS,  # noqa: E402
                                          loop_margin, loop_matrix)
from rnea_ros.dynamics.actuation import Actuation  # noqa: E402
from rnea_ros.errors import RneaError  # noqa: E402
from rnea_ros.params import params_file  # noqa: E402
from rnea_ros.params.actuation_file import read_actuation  # noqa: E402

# The documented gains (docs/node/control_laws.md), per (robot, law, label): the simulated
# robot's former PD for the panda (100 N m/rad, 10 N m s/rad on every joint,
# rnea_ros.demos.closed_loop KP, KD), which a loop one tick late cannot hold on panda_joint7
# ((M^-1)_77 up to 202 1/(kg m^2)); the panda's with the distal joints softer; the ur5's of
# test/control/test_control_law.py; computed_torque at 20 rad/s, critically damped.
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


def check(args: argparse.Namespace) -> int:
    """Print the verdict on the user's gains (``--urdf``); 0 held, 1 not held, 2 bad input."""
    try:
        model = RobotModel.from_urdf_file(args.urdf)
        params = params_file.read(args.params, 'the gains') if args.params else {}
        armature = Actuation.from_parameters(model, {
            key: value for key, value in params.items() if key.startswith('armature.')
        }).armature
        if args.actuation:
            armature = read_actuation(args.actuation, model).armature
        kp, kd = gains_of(model, params)
        joints = [joint for joint in model.joints if joint.nv == 1]
        for name, given, gains in (('--kp', args.kp, kp), ('--kd', args.kd, kd)):
            if given is None:
                continue
            if len(given) not in (1, len(joints)):
                raise ValueError(f'{name} has {len(given)} values: expected 1 or '
                                 f'{len(joints)} (one per one-DoF joint, in model order)')
            for joint, value in zip(joints, given * len(joints) if len(given) == 1
                                    else given):
                gains[joint.idx_v] = value
        law = args.law or params.get('control_law', 'pd_feedforward')
        rate = args.rate or float(params.get('rate') or 0.0) or 1000.0
        period = 1.0 / rate
        delay = (delay_ticks(args.delay_seconds, period) if args.delay_seconds is not None
                 else args.delay)
        margin = loop_margin(model, kp, kd, period, delay=delay, prediction=args.prediction,
                             law=law, armature=armature)
    except (RneaError, ValueError, OSError) as exc:
        print(f'bench_control_margin: {exc}', file=sys.stderr)
        return 2
    print(margin.message())
    return 0 if margin.held else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--rate', type=float, default=None,
                        help="loop rate [Hz] (default: the parameters file's rate, else 1000)")
    parser.add_argument('--configurations', type=int, default=50,
                        help='the table: random configurations per robot (and the zero one)')
    parser.add_argument('--urdf', help="check your gains on this robot (the node's verdict)")
    parser.add_argument('--params', help='a node parameters file: kp.<joint>, kd.<joint>, '
                        'control_law, rate, armature.<joint>')
    parser.add_argument('--actuation', help='an actuation file (armature.<joint>, as '
                        'rnea_identify writes it)')
    parser.add_argument('--kp', type=float, nargs='+', help='Kp per one-DoF joint in model '
                        'order, or one for all')
    parser.add_argument('--kd', type=float, nargs='+', help='Kd, as --kp')
    parser.add_argument('--law', choices=LAWS, help="default: the parameters file's "
                        'control_law, else pd_feedforward')
    parser.add_argument('--delay', type=int, default=1, help='ticks from a joint_states '
                        'sample to the application of its answer (default 1)')
    parser.add_argument('--delay-seconds', type=float, help='the delay in seconds instead '
                        '(rounded up to ticks)')
    parser.add_argument('--prediction', action='store_true', help='the law acts on the '
                        'state predicted at application (the undelayed loop)')
    args = parser.parse_args(argv)
    if args.urdf:
        return check(args)
    period = 1.0 / (args.rate or 1000.0)
    print(f'rate {1 / period:g} Hz, delay 1 tick = {period * 1e3:g} ms; worst over '
          f'{args.configurations + 1} configurations')
    print(f'{"robot":<6} {"law":<16} {"gains":<11} {"radius at d=1":>14} '
          f'{"max stable delay":>17} {"gain margin at d=1":>19}')
    for (robot, law, label), worst in worst_margins(period, args.configurations).items():
        print(f'{robot:<6} {law:<16} {label:<11} {worst[0]:>14.4f} {worst[1]:>12d} tick '
              f'{worst[2]:>18.2f}x')
    return 0


if __name__ == '__main__':
    sys.exit(main())
