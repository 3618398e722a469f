"""
The Kinova Gen3 logs through ``rnea_convert``: the outputs of the bags of the tests' helper.

Each log (``kinova_gen3/data/*.csv`` of the shared real logs) is converted by ``rnea_convert``
with the mapping docs/logs.md shows, and written as the bag the benchmarks used to write of the
same arrays (``test/harness/bagdata.joint_states_bag``: rosbags' own serializer, sqlite3). Both
bags go through ``rnea_bag`` (torques, decomposition and residual files compared byte for byte) and
``rnea_identify`` (trained on the second log, validated on the first: ``actuation.yaml`` and
``identified.urdf`` compared byte for byte). Prints a row per comparison; exits 1 when one
differs::

    python bench/convert_real_logs.py [--logs DIR]
"""
from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path
import sys
import tempfile

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'test'))

from harness import bagdata  # noqa: E402
import numpy as np  # noqa: E402, I100
from real_log_windows import convert, FIELDS, JOINTS, LOGS, URDF  # noqa: E402

from rnea_ros.bag.cli import main as rnea_bag  # noqa: E402
from rnea_ros.identify.cli import main as rnea_identify  # noqa: E402

BAG_FILES = ('torques.csv', 'decomposition.csv', 'residual.csv')
IDENTIFY_FILES = ('actuation.yaml', 'identified.urdf')


def helper_bag(log: Path, bag: Path) -> Path:
    """Write ``log`` as the benchmarks did: stamps = Time [ms] as ns, the helper's writer."""
    data = np.genfromtxt(log, delimiter=',', names=True)
    arrays = [np.column_stack([data[f'{field}{k}'] for k in range(1, 8)]) for field in FIELDS]
    stamps = np.round(data['Time'] * 1e-3 * 1e9).astype(np.int64)
    return bagdata.joint_states_bag(bag, stamps, JOINTS, *arrays)


def quietly(tool, argv: list[str]) -> None:
    """Run a tool's main; exit with its message when it fails."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = tool(argv)
    if code:
        raise SystemExit(f'{argv[0]}: exit {code}: {err.getvalue()}')


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0].strip())
    parser.add_argument('--logs', type=Path, default=LOGS, help='the kinova_gen3 folder')
    args = parser.parse_args(argv)
    urdf = str(args.logs / URDF)
    logs = sorted((args.logs / 'data').glob('*.csv'))
    differ = 0
    print('| log | tool | file | rnea_convert bag vs helper bag |')
    print('|---|---|---|---|')
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        bags = {}
        for log in logs:
            with contextlib.redirect_stdout(io.StringIO()):
                bags[log.stem] = (convert(log, folder / f'converted_{log.stem}'),
                                  helper_bag(log, folder / f'helper_{log.stem}'))
            for kind, bag in zip(('converted', 'helper'), bags[log.stem]):
                quietly(rnea_bag, [str(bag), '--urdf', urdf, '--output',
                                   str(folder / f'{kind}_{log.stem}_rnea'), '--no-plots',
                                   '--format', 'csv'])
            for name in BAG_FILES:
                same = (folder / f'converted_{log.stem}_rnea' / name).read_bytes() == \
                    (folder / f'helper_{log.stem}_rnea' / name).read_bytes()
                differ += not same
                print(f'| {log.stem} | rnea_bag | {name} | {"same" if same else "DIFFERENT"} |')
        if len(logs) >= 2:
            training, validation = logs[1].stem, logs[0].stem
            for k, kind in enumerate(('converted', 'helper')):
                quietly(rnea_identify, [str(bags[training][k]), '--urdf', urdf, '--validate',
                                        str(bags[validation][k]), '--no-plots', '--output',
                                        str(folder / f'{kind}_identified')])
            for name in IDENTIFY_FILES:
                same = (folder / 'converted_identified' / name).read_bytes() == \
                    (folder / 'helper_identified' / name).read_bytes()
                differ += not same
                print(f'| {training} (validation {validation}) | rnea_identify | {name} | '
                      f'{"same" if same else "DIFFERENT"} |')
    return 1 if differ else 0


if __name__ == '__main__':
    sys.exit(main())
