"""
False collision detections of threshold rules on data they were not calibrated on.

For two logs A and B of one robot (joint positions, velocities and link-side torques at 1 kHz):
each log in turn is the training log. ``rnea_identify`` identifies the arm on it (validated on
the other), the momentum observer (gain 50/s) runs over both logs with the URDF or the
identified model (measured effort ``link_side``, and ``motor`` with the identified actuation
model), the thresholds are calibrated on the training log by each rule, and the detector
counts the events on the other log. Prints one table row per model and rule: events (and their
longest duration) per direction.

    python bench/bench_thresholds.py --logs ../shared/real_logs/kinova_gen3 --urdf URDF
    python bench/bench_thresholds.py --synthetic 1.5   # generated logs (a test runs this)

``--logs DIR``: two CSV files ``DIR/data/opti_traj_testing{1,2}.csv`` (columns Time [ms],
Position1..n [rad], Velocity1..n [rad/s], TorqueSm1..n [N m]: the dynamapp Kinova Gen3 logs).
``--synthetic S``: two logs of S seconds of different Fourier motions of the test suite's Kinova
URDF, torques from the URDF with 5 % more mass on every link, viscous friction and sensor noise.
"""
from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path
import sys
import tempfile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'test'))

from harness import bagdata  # noqa: E402
from harness.oracle import robot_path  # noqa: E402
import numpy as np  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402
from rnea_ros.identify.cli import main as identify  # noqa: E402
from rnea_ros.observer import calibrate_thresholds, detect_events, MomentumObserver  # noqa
from rnea_ros.params.actuation_file import read_actuation  # noqa: E402

FILES = ('opti_traj_testing1.csv', 'opti_traj_testing2.csv')
GAIN = 50.0
# rule: (label, spread, min_duration [s]); the last is calibrate_thresholds' and the detector's
# default, the first is margin * max |r| + floor alone, reported at the first sample over.
RULES = (('1.5 max + 0.2', 0.0, 0.0), ('+ 10 ms over', 0.0, 0.01),
         ('+ 2 sigma', 2.0, 0.0), ('+ 2 sigma, 10 ms over (default)', 2.0, 0.01))


def read_log(path: Path, n: int):
    """Stamps (N,), q, v, tau (N, n) of a dynamapp CSV file (Time in ms)."""
    data = np.genfromtxt(path, delimiter=',', names=True)
    columns = lambda key: np.column_stack([data[f'{key}{i}'] for i in range(1, n + 1)])  # noqa
    return data['Time'] * 1e-3, columns('Position'), columns('Velocity'), columns('TorqueSm')


def synthetic_logs(seconds: float):
    """Two generated logs (module docstring) of the test suite's Kinova URDF."""
    urdf = robot_path('kinova')
    model = RobotModel.from_urdf_file(urdf)
    heavier = model.with_inertial_parameters(model.inertial_parameters() * 1.05)
    lower, upper = np.full(model.nv, -1.5), np.full(model.nv, 1.5)
    t = np.arange(int(seconds * 1000)) * 1e-3
    logs = []
    for seed in (0, 1):
        q, v, a = bagdata.fourier_excitation(lower, upper, t, seed=seed)
        tau = heavier.rnea_batch(q, v, a) + 0.3 * v
        tau += np.random.default_rng(seed).normal(0.0, 0.05, tau.shape)
        logs.append((t, q, v, tau))
    return urdf, model.joint_names, logs


def bag(path: Path, names, log) -> Path:
    t, q, v, tau = log
    return bagdata.joint_states_bag(path, bagdata.BAG_START + np.round(t * 1e9).astype(np.int64),
                                    names, q, v, tau)


def residuals(model, actuation, measured_effort, log):
    observer = MomentumObserver(model, GAIN, measured_effort=measured_effort,
                                actuation=actuation)
    t, q, v, tau = log
    return observer.run(t, q, v, tau)


def event_table(urdf, names, logs) -> dict:
    """
    Return (model label, rule label) -> [(events, longest [s]) on log 2, the same on log 1].

    Each log in turn trains: ``rnea_identify`` on it (validated on the other), the thresholds
    calibrated on it by each rule, the events counted on the other log.
    """
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        bags = [bag(tmp / f'log{k + 1}', names, log) for k, log in enumerate(logs)]
        for train in (0, 1):
            test = 1 - train
            out = tmp / f'identified{train + 1}'
            with contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                code = identify([str(bags[train]), '--urdf', str(urdf), '--output', str(out),
                                 '--validate', str(bags[test]), '--no-plots'])
            assert code == 0, f'rnea_identify exited with {code}'
            urdf_model = RobotModel.from_urdf_file(urdf)
            identified = RobotModel.from_urdf_file(out / 'identified.urdf')
            actuation = read_actuation(out / 'actuation.yaml', identified)
            for label, model, act, effort in (
                    ('URDF, link_side', urdf_model, None, 'link_side'),
                    ('identified, link_side', identified, None, 'link_side'),
                    ('identified + actuation model, motor', identified, actuation, 'motor')):
                r_train = residuals(model, act, effort, logs[train])
                r_test = residuals(model, act, effort, logs[test])
                for rule, spread, duration in RULES:
                    thresholds = calibrate_thresholds(r_train, spread=spread)
                    events = detect_events(logs[test][0], r_test, thresholds, names, duration)
                    longest = max((e['end'] - e['start'] if e['end'] is not None
                                   else logs[test][0][-1] - e['start'] for e in events),
                                  default=0.0)
                    rows.setdefault((label, rule), []).append((len(events), longest))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument('--logs', type=Path)
    source.add_argument('--synthetic', type=float, metavar='SECONDS')
    parser.add_argument('--urdf', type=Path, help='the robot (with --logs)')
    args = parser.parse_args(argv)
    if args.logs:
        urdf = args.urdf
        names = RobotModel.from_urdf_file(urdf).joint_names
        logs = [read_log(args.logs / 'data' / name, len(names)) for name in FILES]
    else:
        urdf, names, logs = synthetic_logs(args.synthetic)
    rows = event_table(urdf, names, logs)
    print(f'{len(logs[0][0])} and {len(logs[1][0])} samples; observer gain {GAIN:g}/s')
    print('model | rule | events on log 2 (calibrated on 1, longest) | on log 1 (calibrated on 2)')
    for (label, rule), cells in rows.items():
        text = ' | '.join(f'{n} ({1e3 * longest:.0f} ms)' if n else '0' for n, longest in cells)
        print(f'{label} | {rule} | {text}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
