"""
Identification judged against the simulated robot: the truth table of docs/identify.md.

    .venv/bin/python bench/bench_identify_sim.py [--training 60] [--validation 25]
                                                 [--tracking 5] [--worst 8]
                                                 [--trajectory excite/trajectory.yaml]
                                                 [--gap default|FILE]

The panda (example-robot-data) with the default reality gap (or ``--gap``), recorded in
lockstep in this process on a Fourier-series excitation for ``--training`` s (or on the
JointTrajectory YAML of ``--trajectory``, e.g. ``rnea_excite``'s, for its length) and on another
Fourier series for ``--validation`` s (what ``rnea_sim --record`` keeps: joint_states with the
torque sensor's reading), identified by ``rnea_identify --validate`` from the URDF the node is
given, then compared with the plant (``test/harness/sim_identification.py`` says how): the
``--worst`` base parameters in standard deviations off the truth, how many miss it by more than 5 %
and 3 standard deviations, the validation RMS residual per joint against the sensor noise, and the
RMS tracking error of ``--tracking`` s of the closed-loop tests' demo trajectory with the URDF's,
the identified and the true model's feed-forward. Not a test: run it by hand (a tiny run is in the
suite; the shorter check in ``test/closedloop/test_identified_on_sim.py``).
"""
from __future__ import annotations

import argparse
from pathlib import Path
import sys
import tempfile

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'test'))

from harness.sim_identification import judge, table  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--training', type=float, default=60.0, help='s of training recording')
    parser.add_argument('--validation', type=float, default=25.0,
                        help='s of validation recording')
    parser.add_argument('--tracking', type=float, default=5.0,
                        help='s of the closed-loop demo trajectory')
    parser.add_argument('--worst', type=int, default=8, help='base parameters listed')
    parser.add_argument('--gap', default='default', help='reality gap: a shipped name or a '
                        'YAML file (rnea_ros/sim/gap.py)')
    parser.add_argument('--trajectory', type=Path, help='training motion: a JointTrajectory '
                        'YAML (rnea_excite) instead of a Fourier series')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        result = judge(Path(folder), args.training, args.validation, args.tracking,
                       gap=args.gap, trajectory=args.trajectory)
    training = f'{args.trajectory} training' if args.trajectory else \
        f'{args.training:g} s training'
    print(f'panda, gap {args.gap}: {training}, {args.validation:g} s validation, '
          f'{args.tracking:g} s closed loop\n')
    print(table(result, args.worst))
    return 0


if __name__ == '__main__':
    sys.exit(main())
