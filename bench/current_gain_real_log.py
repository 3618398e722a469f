"""
``rnea_identify --effort current`` on the Kinova Gen3 logs: fitted gains against the driver's.

The shared Kinova logs (``kinova_gen3/data/*.csv``) carry per joint the motor current
(``Cur{n}``, A), the driver's torque from it (``TorqueCur{n}``: the current times its nominal
constant, 9.13 N m/A on joints 1-4 and 5.852 on 5-7) and the joint torque sensors
(``TorqueSm{n}``). Each log is converted by ``rnea_convert`` (the mapping of docs/logs.md)
with the effort from ``TorqueCur`` (the current in the driver's units: a fitted gain is then a
correction of its constant, and gain 1, what an undetermined gain keeps, is the driver's) and
from ``TorqueSm``. Trained on the second log, validated on the first (as
``bench/convert_real_logs.py``; ``--train-first``: the other way round):

1. ``--effort current`` without an anchor (none exists in these logs: no segment with a
   payload of known mass): the tool's answer;
2. ``--effort current --anchor-prior W`` (the URDF's rigid bodies fix the scale);
3. the driver's nominal constants: ``rnea_identify`` with ``--effort torque``.

Judged against the torque sensors on the validation log, which no fit has seen: per joint the
RMS of sensor torque minus (a) the identified URDF's rigid-body torque and (b) the link torque
the current gives, gain x current - bias - friction - armature x a (actuation.yaml),
for the fitted gains and for the nominal constants. Prints Markdown tables::

    python bench/current_gain_real_log.py [--logs DIR] [--prior W ...]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path
import sys
import tempfile

import numpy as np
from real_log_windows import LOGS, MAPPING, URDF

from rnea_ros import RobotModel
from rnea_ros.convert.cli import main as rnea_convert
from rnea_ros.identify import samples
from rnea_ros.identify.cli import main as rnea_identify
from rnea_ros.params.actuation_file import read_actuation

EFFORTS = {'current': 'TorqueCur{n}', 'sensor': 'TorqueSm{n}'}


def convert(log: Path, bag: Path, effort: str) -> Path:
    """Write ``log`` as ``bag`` with the effort from the columns ``effort``."""
    mapping = list(MAPPING)
    mapping[mapping.index('--effort') + 1] = effort
    with contextlib.redirect_stdout(io.StringIO()):
        code = rnea_convert([str(log), '--output', str(bag), *mapping])
    if code:
        raise SystemExit(f'rnea_convert exited with {code}')
    return bag


def identify(argv: list[str]) -> tuple[int, str]:
    """Run ``rnea_identify``; return (exit status, its stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = rnea_identify(argv)
    return code, err.getvalue()


def judge(folder: Path, sensor_bag: Path, effort_bag: Path, urdf_xml: str) -> dict:
    """RMS per joint of the sensor minus the identified model's and the current's torques."""
    model = RobotModel.from_urdf_file(folder / 'identified.urdf')
    joints = read_actuation(folder / 'actuation.yaml', model)
    sensor = samples.load(sensor_bag, model, urdf_xml)
    effort = samples.load(effort_bag, model, urdf_xml)
    rigid = model.rnea_batch(sensor.q, sensor.v, sensor.a)
    # --offset sensor-bias: the offsets are the effort's bias (effort_bias), taken out here.
    link = joints.corrected_effort(effort.effort) - joints.friction_torques_batch(effort.v) \
        - joints.armature_torques(effort.a)
    return {'model': np.sqrt(np.mean((sensor.effort - rigid) ** 2, axis=0)),
            'current': np.sqrt(np.mean((sensor.effort - link) ** 2, axis=0))}


def _verdict(joint: dict) -> str:
    """'fitted / gain 1 RMS: verdict' of one joint of identification.json's effort_gain."""
    rms = joint['validation_rms']
    said = ' / '.join('–' if x is None else f'{x:.3g}'
                      for x in (rms['fitted_gain'], rms['gain_1']))
    reason = joint['reason'] or ''
    return f"{said}: {'yes' if joint['determined'] else reason.split(':')[0].split()[-1]}"


def row(name: str, values) -> str:
    return f'| {name} | ' + ' | '.join(f'{x:.3g}' for x in values) + ' |'


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0].strip())
    parser.add_argument('--logs', type=Path, default=LOGS, help='the kinova_gen3 folder')
    parser.add_argument('--prior', type=float, nargs='+', default=[0.05, 0.2],
                        help='--anchor-prior values to try (default: %(default)s)')
    parser.add_argument('--train-first', action='store_true',
                        help='train on the first log, validate on the second')
    args = parser.parse_args(argv)
    urdf = args.logs / URDF
    urdf_xml = urdf.read_text()
    logs = sorted((args.logs / 'data').glob('*.csv'))[:2]
    training, validation = logs if args.train_first else logs[::-1]
    print(f'Training {training.stem}, validation {validation.stem}.\n')
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        bags = {(log.stem, kind): convert(log, folder / f'{log.stem}_{kind}', column)
                for log in (training, validation) for kind, column in EFFORTS.items()}
        common = ['--urdf', str(urdf), '--no-plots', '--offset', 'sensor-bias']

        def bag(kind, log=training):
            return str(bags[(log.stem, kind)])
        code, err = identify([bag('current'), *common, '--output', str(folder / 'none'),
                              '--effort', 'current'])
        print(f'No anchor: exit {code}: {err.strip()}\n')
        runs = {}
        code, err = identify([bag('current'), *common, '--output', str(folder / 'nominal'),
                              '--validate', bag('current', validation)])
        assert code == 0, err
        runs['nominal constants'] = (folder / 'nominal', 'current')
        gains = {}
        for prior in args.prior:
            out = folder / f'prior_{prior:g}'
            code, err = identify([bag('current'), *common, '--output', str(out), '--validate',
                                  bag('current', validation), '--effort', 'current',
                                  '--anchor-prior', f'{prior:g}'])
            if code:
                print(f'--anchor-prior {prior:g}: exit {code}: {err.strip()}\n')
                continue
            runs[f'fitted, --anchor-prior {prior:g}'] = (out, 'current')
            data = json.loads((out / 'identification.json').read_text())['effort_gain']
            gains[prior] = data['joints']
        names = [f'joint_{k}' for k in range(1, 8)]
        header = '| | ' + ' | '.join(names) + ' |\n|---|' + '---|' * len(names)
        print("Gains, of the driver's constants (9.13 N m/A on joints 1-4, 5.852 on 5-7) "
              '(least squares ± std; * not determined: 1 written):\n\n' + header)
        for prior, joints in gains.items():
            print(f'| --anchor-prior {prior:g} | ' + ' | '.join(
                f"{joints[n]['least_squares']:.3g} ± {joints[n]['std']:.2g}"
                + ('' if joints[n]['determined'] else ' *') for n in names) + ' |')
        print("\nThe tool's check: the identified model's validation RMS in the effort's units "
              '[N m] with the fitted gain / with gain 1; the verdict (yes: the fitted gain is '
              'written; anchor or validation: not determined by it, gain 1 written):\n\n'
              + header)
        for prior, joints in gains.items():
            print(f'| --anchor-prior {prior:g} | '
                  + ' | '.join(_verdict(joints[n]) for n in names) + ' |')
        print('\nValidation log, RMS of the torque sensor minus [N m]:\n\n' + header)
        for name, (out, kind) in runs.items():
            judged = judge(out, bags[(validation.stem, 'sensor')],
                           bags[(validation.stem, kind)], urdf_xml)
            print(row(f'{name}: identified URDF', judged['model']))
            print(row(f'{name}: link torque from current', judged['current']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
