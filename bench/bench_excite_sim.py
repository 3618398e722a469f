"""
Identification on the simulated robot: ``rnea_excite``'s motion against ordinary sines.

    .venv/bin/python bench/bench_excite_sim.py [--robot panda | --urdf FILE] [--duration 60]
                                               [--harmonics 5] [--base-frequency 0.1]

The plant is ``rnea_ros.sim.Plant`` (MuJoCo) of the robot with the default reality gap (wrong
masses, a payload, friction, armature, encoder quantisation, torque noise), stepped in this
process at 1 kHz with ``SUBSTEPS`` physics steps each (lockstep: nothing waits for a clock;
the plant near a continuous robot, as ``test/harness/sim_identification.py`` records it), tracking
each trajectory with the sim's joint PD plus the URDF's feed-forward. Three recordings of
``--duration`` seconds:

1. the trajectory ``rnea_excite`` designs (its default limits; the arm joints move, the
   fingers are held);
2. ordinary sines: random coefficients of the same harmonics, scaled to the same limits
   (what a user without the tool records);
3. validation data: random sines of another seed, the same for both.

Each of 1 and 2 is identified (``rnea_identify``'s pipeline, ``--validate`` on 3, with what
the recording is: ``--effort-delay`` of half a timestep, the effort stamped k being the torque
held over the step from k - 1, which balances the motion of the step's middle) and the bench
prints, for both, the condition number of the weighted base regressor the fit reports and the
validation RMS residual per joint on the rows the fit uses (``validation_moving``: not where a
joint is nearly at rest, where the plant's stiction holds it with any torque within its dry
friction, the same for both fits and no friction curve's): the designed motion should give the
smaller of both; and how many base parameters each leaves not determined (an infinite standard
deviation: a held joint's terms, the bodies it holds rigidly together).
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'test'))

from harness.bagdata import joint_states_bag  # noqa: E402, I100, I202
from harness.oracle import robot_path  # noqa: E402
from harness.sim_identification import EFFORT_DELAY, SUBSTEPS  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402
from rnea_ros.demos.closed_loop import KD, KP  # noqa: E402
from rnea_ros.excite import design, limits  # noqa: E402
from rnea_ros.excite.fourier import FourierBasis  # noqa: E402
from rnea_ros.identify import pipeline  # noqa: E402
from rnea_ros.sim.gap import load_gap  # noqa: E402
from rnea_ros.sim.plant import pd_effort, Plant  # noqa: E402

ARM_JOINTS = {'panda': [f'panda_joint{k}' for k in range(1, 8)]}
RATE = 1000.0
START_NS = 1_700_000_000 * 10**9


def record(plant: Plant, model: RobotModel, problem, x: np.ndarray, duration: float,
           path: Path) -> Path:
    """Track the design ``x`` for ``duration`` s on the plant; write what its sensors read."""
    times = np.arange(int(duration * RATE)) / RATE
    q_d, v_d, a_d = problem.states(x, times)
    plant.reset(q=q_d[0])
    n = times.size
    position, velocity, effort = (np.empty((n, plant.nv)) for _ in range(3))
    for k in range(n):
        q, v = plant.q(), plant.v()
        feedforward = model.rnea(q_d[k], v_d[k], a_d[k])
        plant.step(pd_effort(KP, KD, q_d[k], v_d[k], q, v, feedforward))
        position[k], velocity[k] = plant.measured_position(), plant.measured_velocity()
        effort[k] = plant.measured_effort()
    stamps = START_NS + np.round((times + 1.0 / RATE) * 1e9).astype(np.int64)
    return joint_states_bag(path, stamps, list(plant.joint_names), position, velocity, effort)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robot', default='panda', help='an example-robot-data robot')
    parser.add_argument('--urdf', help='a URDF file instead of --robot')
    parser.add_argument('--duration', type=float, default=60.0)
    parser.add_argument('--harmonics', type=int, default=5)
    parser.add_argument('--base-frequency', type=float, default=0.1)
    parser.add_argument('--max-iterations', type=int, default=100)
    args = parser.parse_args()
    urdf = Path(args.urdf) if args.urdf else robot_path(args.robot)
    model = RobotModel.from_urdf_file(urdf)
    joints = list(model.joint_names) if args.urdf else \
        ARM_JOINTS.get(args.robot, list(model.joint_names))
    print(f'load average before: {os.getloadavg()[0]:.2f}')
    lim = limits.joint_limits(model, limits.moving_joints(model, ','.join(joints)), None,
                              0.8, 5.0)
    problem = design.problem(model, lim, FourierBasis(args.harmonics, args.base_frequency), [])
    begin = time.perf_counter()
    designed = design.optimise(problem, 0, args.max_iterations)
    print(f'design: {time.perf_counter() - begin:.1f} s, condition number '
          f'{designed.condition_number:.4g} (its random start: '
          f'{designed.random_condition_number:.4g})')
    motions = {'rnea_excite': designed.x, 'random sines': designed.random_x,
               'validation': design.random_coefficients(problem, 99)}
    plant = Plant(urdf.read_text(), gap=load_gap('default'), rate=RATE, substeps=SUBSTEPS)
    with tempfile.TemporaryDirectory() as folder:
        bags = {}
        for name, x in motions.items():
            begin = time.perf_counter()
            bags[name] = record(plant, model, problem, x, args.duration,
                                Path(folder) / name.replace(' ', '_'))
            print(f'{name}: {args.duration:g} s recorded in {time.perf_counter() - begin:.1f} s')
        rows = {}
        for name in ('rnea_excite', 'random sines'):
            result = pipeline.identify([str(bags[name])], str(urdf), holdout=0.0,
                                       validate=str(bags['validation']),
                                       reading={'effort_delay': EFFORT_DELAY})
            rows[name] = (result.fit.condition, result.rms['identified']['validation_moving'],
                          int(np.sum(~np.isfinite(result.fit.std))))
    names = list(model.joint_names)
    print(f'\n| motion ({args.duration:g} s) | condition number | validation RMS residual '
          f'per joint, rows the fit uses [N m] ({", ".join(names)}) | mean | base parameters '
          'not determined |')
    print('|---|---|---|---|---|')
    for name, (condition, rms, blind) in rows.items():
        rms = np.asarray(rms)
        print(f'| {name} | {condition:.4g} | {" ".join(f"{r:.3g}" for r in rms)} | '
              f'{np.nanmean(rms):.3g} | {blind} |')
    print(f'load average after: {os.getloadavg()[0]:.2f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
