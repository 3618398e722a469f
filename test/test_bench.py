"""The benchmark commands of docs/benchmarks.md run end to end (on tiny inputs: no timing)."""
from __future__ import annotations

from pathlib import Path
import sys

from harness.grouped import run_grouped
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]


def bench(script: str, *args: str) -> str:
    done = run_grouped([sys.executable, str(ROOT / 'bench' / script), *args], cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_bench_bag_runs_without_and_with_write_bag(tmp_path):
    out = bench('bench_bag.py', '--minutes', '0.05', '--pin-samples', '200',
                '--bag', str(tmp_path / 'bag'))
    assert '3000 joint_states messages' in out
    assert 'without --write-bag' in out and 'with --write-bag' in out
    assert 'pin.rnea loop, same 3 terms' in out


def test_bench_ctl_calls_both_nodes_with_both_clients():
    out = bench('bench_ctl.py', '--calls', '1', '--baseline', str(ROOT))
    for name in ("default (each client's own node)", 'Fast DDS defaults (3 s)'):
        for client in ('this', 'baseline'):
            for command in ('lifecycle get', 'param get', 'param set', 'status'):
                assert f'{name}, {client} ({ROOT}): rnea_ctl {command}: wall median ' in out
        assert f'{name}: rnea_ctl status, this / baseline: wall median ' in out
        assert f'{name}, this: probe medians [s]: ' in out
    assert 'rnea_ctl param get wall median, default / Fast DDS defaults (this): ' in out
    assert 'machine floor: ' in out


def test_bench_fleet_runs_one_and_two_workers_and_sizes(tmp_path):
    out = bench('bench_fleet.py', '--bags', '2', '--minutes', '0.05', '--repeat', '1',
                '--data', str(tmp_path / 'fleet'))
    assert out.count('rnea_fleet: 2 bags: 2 analysed, 0 reused (unchanged), 0 failed') == 2
    assert 'median of 1 runs: 1 worker' in out
    assert 'cores at this rate' in out


def test_bench_closed_loop_runs_every_row():
    # Every row printed, not its figures: the runs over DDS settle 0.5 s, not 4 (7 runs).
    out = bench('bench_closed_loop.py', '--robots', 'panda', '--duration', '0.5',
                '--settle', '0.5')
    for row in ('PD alone', 'PD + in-process rnea (URDF)', 'PD + true inverse dynamics (limit)',
                'path a, URDF', 'path b, URDF', 'path a, true model', 'path b, true model',
                'JTC PID alone (trajectory_effort, no point effort)',
                'pd_feedforward in-process one step late (effort, robot adds g, node too)',
                'node over DDS, effort, pd_feedforward',
                'node over DDS, effort, pd_feedforward, robot adds g',
                'node over DDS, trajectory_effort, path a',
                'pd_feedforward Kp 100 / Kd 10 in-process, no delay',
                'pd_feedforward Kp 100 / Kd 10 in-process one step late, prediction: model',
                'node over DDS, effort, pd_feedforward Kp 100 / Kd 10, prediction: model'):
        assert f'{row} |' in out, out
    assert out.count('load average') == 2
    assert out.count('machine floor: a bare 1 kHz') == 2, out  # beside the figures


def test_bench_stall_prints_both_runs_with_the_floor():
    # The rows, not their figures (the real-time one depends on the machine): settle 0.5 s.
    # --estimate: on the true model no estimate passes the gate; the rows say it was asked.
    out = bench('bench_stall.py', '--robots', 'panda', '--gaps', 'armature', '--settle', '0.5',
                '--estimate')
    assert '| panda | armature, payload estimated | lockstep, in-process | ' in out, out
    assert ('| panda | armature, payload estimated | real time, over DDS (500 joint_states '
            'withheld) | ') in out, out
    assert out.count('machine floor: a bare 1 kHz') == 2, out
    # No brake drifts less than the least any torques within the effort limits reach (to the
    # programme's 1 ms steps): the lockstep row's, deterministic.
    row = next(line for line in out.splitlines() if '| lockstep, in-process |' in line)
    speed, drift, least = (float(cell) for cell in row.split('|')[4:7])
    assert speed >= 1.5 and least * 0.99 <= drift <= least * 1.35, row


@pytest.mark.timeout(600)  # three closed-loop runs in lockstep: 2 min at load 8
def test_bench_collision_runs_the_documented_workflow_in_lockstep():
    # The bench's real-time verdict depends on the machine; in lockstep the workflow's own:
    # thresholds from rnea_bag --observer on one motion, a 20 N push on another.
    # The effort wiring: at rest within 1 s, watched 2 s (path a's 5 s would take longer).
    # The plant's true model: the identification (a minute of excitation) is not the subject.
    # Each run settles 0.5 s, not 4: calibration and push are on the motion after it.
    out = bench('bench_collision.py', '--robots', 'panda', '--clock', 'lockstep',
                '--wiring', 'effort', '--calibration', '3', '--quiet', '2', '--model', 'true',
                '--settle', '0.5')
    assert "panda: the plant's true model (its URDF, the gap's actuation terms)" in out, out
    assert 'panda: thresholds from 3 s [N m]: ' in out, out
    for reaction in ('none', 'stop'):
        assert f'  {reaction}: 2 s held out, false alarms 0; 20 N push: detection started ' \
            in out, out
    assert 'at rest' in out and out.count('load average') == 2
    assert '  panda: OK' in out, out


def test_bench_identify_sim_prints_the_truth_table():
    out = bench('bench_identify_sim.py', '--training', '3', '--validation', '1.5',
                '--tracking', '0.3', '--worst', '2')
    assert 'panda, gap default: 3 s training, 1.5 s validation, 0.3 s closed loop' in out
    for row in ('| URDF |', '| identified |', '| ÷ sensor noise (0.05) |',
                '| the identified model |', '| the true model |'):
        assert row in out, out
    rows = [line for line in out.splitlines() if line.startswith('| ') and ' ± ' in line
            and not line.startswith('| base parameter')]
    assert len(rows) == 2, out  # --worst 2 base parameters
    assert "| the plant's own parameters |" in out and 'not determined by the data' in out


REAL_LOGS = Path('/work/shared/real_logs/kinova_gen3')


@pytest.mark.skipif(not REAL_LOGS.is_dir(), reason='the shared real logs are not on this machine')
def test_real_log_windows_prints_a_row_per_log_and_window():
    out = bench('real_log_windows.py', '--seconds', '1.0', '--windows', 'auto', '0.1',
                '--stamp-error', '1.2e-4')
    rows = [line for line in out.splitlines() if line.startswith('| opti_traj')]
    assert [row.split(' | ')[1] for row in rows] == ['auto', '0.1', 'auto', '0.1']
    assert all(row.endswith('| regular clock |') for row in rows), rows


def test_real_log_windows_jitters_a_log_from_time_zero_into_one_rnea_convert_takes(tmp_path):
    """The Kinova logs start at Time 0: a negative jitter there was a time before 1970."""
    sys.path.insert(0, str(ROOT / 'bench'))
    from real_log_windows import convert, FIELDS, rewrite
    names = ['Time'] + [f'{field}{k}' for field in FIELDS for k in range(1, 8)]
    time = np.arange(300.0)  # ms
    table = np.column_stack([time] + [np.sin(1e-3 * time + k) for k in range(3 * 7)])
    log = tmp_path / 'log.csv'
    np.savetxt(log, table, delimiter=',', header=','.join(names), comments='')
    rng = np.random.default_rng(4)  # its first draw is -0.65: Time 0 jittered to -0.08 ms
    jittered = rewrite(log, tmp_path / 'jittered.csv', None, 1.2e-4, rng)
    times = np.genfromtxt(jittered, delimiter=',', names=True)['Time']
    assert times.min() == 0.0
    assert np.ptp(np.diff(times) - 1.0) > 0.1  # jittered: steps of 1 ms +- 0.1 ms and more
    assert convert(jittered, tmp_path / 'bag') == tmp_path / 'bag'


@pytest.mark.skipif(not REAL_LOGS.is_dir(), reason='the shared real logs are not on this machine')
def test_convert_real_logs_gives_the_helper_bags_outputs():
    out = bench('convert_real_logs.py')
    rows = [line for line in out.splitlines() if line.startswith('| opti_traj')]
    assert len(rows) == 2 * 3 + 2, out  # rnea_bag's 3 files per log, rnea_identify's 2
    assert all(row.endswith('| same |') for row in rows), out


def test_bench_observer_prints_the_ratio_per_robot():
    out = bench('bench_observer.py', '--repeats', '1', '--samples', '200', '--calls', '50')
    for robot in ('ur5', 'panda', 'kinova'):
        row = next(line for line in out.splitlines() if line.startswith(f'{robot} |'))
        assert len(row.split('|')) == 6, row


def test_bench_cycle_prints_each_part_beside_a_baseline_tree():
    # The tree itself as its baseline: every row and the ratios printed, not their values.
    out = bench('bench_cycle.py', '--seconds', '0.5', '--baseline', str(ROOT))
    for prediction in ('none', 'model'):
        for part in ('input', 'cycle', 'publish', 'total'):
            assert len(out.split(f'{prediction:10} {part:8} ')[1].split('\n')[0].split()) == 6
    assert 'ratio this/baseline (p50, p99)' in out
    assert out.count('machine floor: a bare 1 kHz') == 2


def test_bench_observer_node_compares_the_node_with_the_library():
    out = bench('bench_observer_node.py', '--duration', '1.5')
    assert 'node residual - library residual over every sample: max' in out
    assert '20 N flange push: first crossing after' in out


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


def test_bench_identify_sim_trains_on_a_trajectory_file(tmp_path):
    """--trajectory: the motion of a JointTrajectory YAML (as rnea_excite writes it)."""
    import yaml
    from harness.bagdata import fourier_excitation
    from harness.oracle import robot_path

    from rnea_ros import RobotModel
    from rnea_ros.excite.outputs import trajectory_message
    model = RobotModel.from_urdf_file(robot_path('panda'))
    lower = np.array([model.joint(n).lower for n in model.joint_names])
    upper = np.array([model.joint(n).upper for n in model.joint_names])
    times = np.arange(301) * 0.01
    q, v, a = fourier_excitation(lower, upper, times, base_frequency=0.5, seed=5)
    path = tmp_path / 'trajectory.yaml'
    path.write_text(yaml.safe_dump(trajectory_message(model.joint_names, times, q, v, a)))
    gap = tmp_path / 'no_dry_friction.yaml'
    gap.write_text('joints: {armature: 0.1, coulomb: 0.0, viscous: 0.2}\n'
                   'torque_sensor: {noise: 0.05}\n')
    out = bench('bench_identify_sim.py', '--trajectory', str(path), '--validation', '1.5',
                '--tracking', '0.3', '--worst', '2', '--gap', str(gap))
    assert f'panda, gap {gap}: {path} training, 1.5 s validation' in out, out
    assert '| identified |' in out, out


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


def test_bench_control_margin_prints_every_robot_and_law():
    out = bench('bench_control_margin.py', '--configurations', '1')
    assert 'delay 1 tick = 1 ms' in out
    for row in ('panda  pd_feedforward   sim PD', 'panda  pd_feedforward   wrist soft',
                'ur5    pd_feedforward   test', 'ur5    computed_torque  400/40'):
        assert row in out


def test_bench_control_margin_checks_the_users_gains_as_the_docs_show(tmp_path):
    # docs/node/control_laws.md (The gain check) shows the command; here on the package's panda,
    # Franka's example gains in a parameters file and 0.01 kg m^2 of armature per arm joint.
    command = ('python bench/bench_control_margin.py --urdf panda.urdf --params my_gains.yaml '
               '--actuation actuation.yaml --delay 1')
    assert f'\n{command}\n' in (ROOT / 'docs' / 'node' / 'control_laws.md').read_text()
    from harness.oracle import robot_path
    (tmp_path / 'panda.urdf').write_text(robot_path('panda').read_text())
    joints = [f'panda_joint{k}' for k in range(1, 8)]
    kp, kd = [600, 600, 600, 600, 250, 150, 50], [30, 30, 30, 30, 10, 10, 5]
    gains = ''.join(f'    kp.{j}: {p}.0\n    kd.{j}: {d}.0\n' for j, p, d in zip(joints, kp, kd))
    (tmp_path / 'my_gains.yaml').write_text(
        '/**:\n  ros__parameters:\n    control_law: pd_feedforward\n    rate: 1000.0\n' + gains)
    (tmp_path / 'actuation.yaml').write_text('/**:\n  ros__parameters:\n' + ''.join(
        f'    armature.{j}: 0.01\n' for j in joints))
    argv = [sys.executable, str(ROOT / 'bench' / 'bench_control_margin.py'),
            *command.split()[2:]]
    refused = run_grouped(argv, cwd=tmp_path)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stdout.startswith('kd.panda_joint3 = 30 is more than the loop can hold on '
                                     'panda_joint3: the largest kd.panda_joint3 it holds is ')
    held = run_grouped(argv + ['--prediction'], cwd=tmp_path)
    assert held.returncode == 0, held.stdout + held.stderr
    assert held.stdout.startswith('gains held: pd_feedforward with prediction (undelayed)')
    bad = run_grouped(argv + ['--kp', '1', '2'], cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr == ('bench_control_margin: --kp has 2 values: expected 1 or 8 (one per '
                          'one-DoF joint, in model order)\n')


def test_bench_forward_dynamics_prints_the_ratios_per_robot():
    out = bench('bench_forward_dynamics.py', '--repeats', '1', '--calls', '20')
    for robot in ('ur5', 'panda', 'solo12', 'talos_reduced'):
        row = next(line for line in out.splitlines() if line.startswith(f'{robot} '))
        cells = row.split('|')
        assert len(cells) == 4, row
        assert all(float(ratio) > 0 for ratio in (cells[1].split()[2], cells[2].split()[1])), row


def test_compare_outputs_masks_only_the_named_volatile_parts(tmp_path):
    """bench/compare_outputs.py's verdicts on two kept output folders (no tool runs)."""
    sys.path.insert(0, str(ROOT / 'bench'))
    import compare_outputs
    files = {'rnea_bag/torques.csv': ('1.0\n', '1.0\n'),
             'rnea_bag/report.html': ('<div id="836083f1-1d74-4e25-a32c-355da6a08e01">x',
                                      '<div id="02e8c41f-1aa0-48c3-8385-6dc159b8c888">x'),
             'rnea_excite/excitation.md': ('SLSQP, 2 iterations, 5.1 s: done',
                                           'SLSQP, 2 iterations, 6.1 s: done'),
             'rnea_identify/identification.json': ('{"a": 1, "timings": {"fit": 7.3}}',
                                                   '{"a": 2, "timings": {"fit": 6.4}}'),
             'rnea_bag/residual.csv': ('0.5\n', None)}
    for name, texts in files.items():
        for side, text in zip(('before', 'after'), texts):
            if text is not None:
                (tmp_path / side / name).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / side / name).write_text(text)
    done = run_grouped([sys.executable, str(ROOT / 'bench' / 'compare_outputs.py'), '--keep',
                        str(tmp_path), '--compare-only'], cwd=ROOT)
    rows = {line.split(' | ')[1]: line.split(' | ')[2] for line in done.stdout.splitlines()
            if line.startswith('| rnea_')}
    rows = {name: verdict.removesuffix(' |') for name, verdict in rows.items()}
    assert rows == {'torques.csv': 'same',
                    'report.html': "same but plotly's random element ids",
                    'excitation.md': "same but the optimiser's wall-clock time",
                    'identification.json': 'DIFFERENT', 'residual.csv': 'only in before'}, \
        done.stdout
    assert done.returncode == 1 and done.stdout.endswith('2 file(s) differ\n')
    assert compare_outputs.VOLATILE.keys() == {'report.html', 'identification.json',
                                               'excitation.json', 'excitation.md'}
