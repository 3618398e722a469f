"""
The docs' way to read ``fleet.parquet`` runs as shown, with pyarrow alone (no pandas).

The ``python`` block of docs/fleet.md is run in a folder holding ``fleet_rnea/`` written by
``rnea_fleet``'s own writer from a fleet with one drifting joint.
"""
from __future__ import annotations

from pathlib import Path
import re
import subprocess
import sys

from rnea_ros.fleet import drift, run
from rnea_ros.fleet.task import JointStats, Outcome

ROOT = Path(__file__).resolve().parents[2]
DAY = 86_400 * 10**9
# Run before the snippet: pandas cannot be imported, whether installed or not.
NO_PANDAS = """
import sys


class NoPandas:
    def find_spec(self, name, *args):
        if name.split('.')[0] == 'pandas':
            raise ImportError('pandas is not to be used')


sys.meta_path.insert(0, NoPandas())
"""


def documented_snippet() -> str:
    """Return the one ``python`` block of docs/fleet.md, its list indentation removed."""
    (block,) = re.findall(r'```python\n(.*?)```', (ROOT / 'docs' / 'fleet.md').read_text(),
                          re.S)
    return '\n'.join(line[2:] for line in block.splitlines()) + '\n'


def outcomes() -> list[Outcome]:
    """Return 6 bags of one robot, joint j2's residual growing from 0.5 to 1.5 N·m."""
    result = []
    for k in range(6):
        residuals = (0.3 + 0.001 * k, 0.5 + 0.2 * k)
        joints = tuple(JointStats(name, 'N·m', 5.0, 9.0, r, 2 * r, 0.5, 1.0)
                       for name, r in zip(('j1', 'j2'), residuals))
        result.append(Outcome(f'run_{k}', f'/fleet/run_{k}', 'arm', 'ok', model='m',
                              start_ns=k * DAY, duration=1.0, samples=500, joints=joints))
    return result


def test_the_documented_snippet_reads_the_fleet_table_without_pandas(tmp_path):
    run.write_outputs(tmp_path / 'fleet_rnea', outcomes(), drift.Thresholds(), {})
    guard = NO_PANDAS
    done = subprocess.run([sys.executable, '-c', guard + documented_snippet()], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        '12 rows: bag, path, robot, model, joint, unit ...',
        'arm j2 run_0 0.500', 'arm j2 run_1 0.700', 'arm j2 run_2 0.900',
        'arm j2 run_3 1.100', 'arm j2 run_4 1.300', 'arm j2 run_5 1.500',
        'worst: arm j2 1.500', 'worst: arm j1 0.305']


def test_the_documented_shell_command_prints_the_first_row(tmp_path):
    run.write_outputs(tmp_path / 'fleet_rnea', outcomes(), drift.Thresholds(), {})
    text = ' '.join((ROOT / 'docs' / 'fleet.md').read_text().split())
    (code,) = re.findall(r'`\.venv/bin/python -c "(.*?)"`', text)
    done = subprocess.run([sys.executable, '-c', code.replace('; ', ';\n')], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("{'bag': 'run_0', 'path': '/fleet/run_0', 'robot': 'arm'")
