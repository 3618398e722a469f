"""The benchmark commands of docs/benchmarks.md run end to end (on tiny inputs: no timing)."""
from __future__ import annotations

from pathlib import Path
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.timeout(300)


def bench(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / 'bench' / script), *args],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_bench_bag_runs_without_and_with_write_bag(tmp_path):
    out = bench('bench_bag.py', '--minutes', '0.05', '--pin-samples', '200',
                '--bag', str(tmp_path / 'bag'))
    assert '3000 joint_states messages' in out
    assert 'without --write-bag' in out and 'with --write-bag' in out
    assert 'pin.rnea loop, same 3 terms' in out


def test_bench_fleet_runs_one_and_two_workers_and_sizes(tmp_path):
    out = bench('bench_fleet.py', '--bags', '2', '--minutes', '0.05', '--repeat', '1',
                '--data', str(tmp_path / 'fleet'))
    assert out.count('rnea_fleet: 2 bags: 2 analysed, 0 reused (unchanged), 0 failed') == 2
    assert 'median of 1 runs: 1 worker' in out
    assert 'cores at this rate' in out


def test_bench_closed_loop_runs_every_row():
    out = bench('bench_closed_loop.py', '--robots', 'panda', '--duration', '0.5')
    for row in ('PD alone', 'PD + in-process rnea (URDF)', 'PD + true inverse dynamics (limit)',
                'path a, URDF', 'path b, URDF', 'path a, true model', 'path b, true model'):
        assert f'{row} |' in out, out
    assert out.count('load average') == 2


def test_bench_observer_prints_the_ratio_per_robot():
    out = bench('bench_observer.py', '--repeats', '1', '--samples', '200', '--calls', '50')
    for robot in ('ur5', 'panda', 'kinova'):
        row = next(line for line in out.splitlines() if line.startswith(f'{robot} |'))
        assert len(row.split('|')) == 6, row


def test_bench_excite_runs_and_compares_with_random_sines():
    out = bench('bench_excite.py', '--harmonics', '2', '--max-iterations', '2', '--seeds', '2')
    assert 'panda: 7 moving joints, 2 harmonics' in out
    assert 'rnea_excite wall clock (fresh process)' in out
    assert 'random sines within the same limits (2 seeds): median' in out
    assert out.count('load average') == 2


def test_bench_excite_sim_identifies_from_both_motions():
    out = bench('bench_excite_sim.py', '--duration', '4', '--harmonics', '2',
                '--base-frequency', '0.5', '--max-iterations', '2')
    for row in ('| rnea_excite |', '| random sines |'):
        assert row in out, out
    assert 'validation: 4 s recorded' in out
    assert out.count('load average') == 2


def test_bench_thresholds_counts_events_per_model_and_rule_on_generated_logs():
    out = bench('bench_thresholds.py', '--synthetic', '1.5')
    assert '1500 and 1500 samples; observer gain 50/s' in out
    rows = [line.split(' | ') for line in out.splitlines() if line.count(' | ') == 3]
    assert len(rows) == 1 + 3 * 4, out  # the header, 3 models x 4 rules
    for model, rule, forward, backward in rows[1:]:
        for cell in (forward, backward):
            assert cell == '0' or cell.split(' (')[1].endswith('ms)'), (model, rule, cell)
    # The generated logs have no collision: the default rule detects none either way.
    defaults = [row for row in rows if row[1] == '+ 2 sigma, 10 ms over (default)']
    assert len(defaults) == 3 and all(row[2:] == ['0', '0'] for row in defaults), out
