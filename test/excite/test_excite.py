"""
``rnea_excite`` end to end on a small 3-DoF arm (``arm.py``), and its bad inputs.

One design (3 harmonics of 0.2 Hz, two periods, the tip kept above z = 0.3 m) is made once by
the command the docs show; the tests read its files back: the trajectory is re-evaluated from
the Fourier coefficients of the report by the series written out here (not the tool's
matrices), on a grid 50 times finer than the tool's own check, against the URDF limits times
the safety factor; its torques by ``RobotModel.rnea_batch``.
"""
from __future__ import annotations

import csv
from dataclasses import fields
import json
from pathlib import Path
import re
import subprocess
import sys

from harness.excite_arm import write_arm
import numpy as np
import pytest
import yaml

from rnea_ros import RobotModel
from rnea_ros.excite import design, limits, run
from rnea_ros.excite.cli import ExciteOptions, main
from rnea_ros.excite.fourier import FourierBasis

ROOT = Path(__file__).resolve().parents[2]
SCALE = 0.8  # the default --limits-scale
ACCELERATION = 5.0  # the default --acceleration-limit
# The commands docs/excite.md shows, run here in a folder holding the arm as robot.urdf.
DESIGN = ('.venv/bin/rnea_excite --urdf robot.urdf --output excitation/ --harmonics 3 '
          '--base-frequency 0.2 --duration 10 --keep-above tip:0.3')
HELD = ('.venv/bin/rnea_excite --urdf robot.urdf --output two_joints/ --joints shoulder,elbow '
        '--rest yaw=0.5 --harmonics 2 --base-frequency 0.5 --duration 4')
TOLERANCE = 1e-12  # relative: rounding only (the tool keeps a margin for between its samples)


def run_command(command: str, folder: Path) -> subprocess.CompletedProcess:
    """Run a documented ``rnea_excite`` command in ``folder`` with this interpreter's script."""
    argv = command.split()
    script = str(Path(sys.executable).with_name(Path(argv[0]).name))
    write_arm(folder).rename(folder / 'robot.urdf')
    return subprocess.run([script] + argv[1:], cwd=folder, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope='module')
def designed(tmp_path_factory):
    folder = tmp_path_factory.mktemp('excite')
    done = run_command(DESIGN, folder)
    assert done.returncode == 0, done.stderr
    output = folder / 'excitation'
    return {'folder': folder, 'output': output, 'stdout': done.stdout, 'stderr': done.stderr,
            'report': json.loads((output / 'excitation.json').read_text()),
            'model': RobotModel.from_urdf_file(folder / 'robot.urdf')}


def series(report: dict, times: np.ndarray):
    """(q, v, a) of the report's coefficients: the module docstring of ``fourier``, by hand."""
    trajectory = report['trajectory']
    f, joints = trajectory['base_frequency'], trajectory['moving']
    q = np.tile([trajectory['rest'][j] for j in report['limits']], (times.size, 1))
    v, a = np.zeros_like(q), np.zeros_like(q)
    names = list(report['limits'])
    for joint in joints:
        k = names.index(joint)
        coefficients = report['coefficients'][joint]
        for harmonic, (ca, cb) in enumerate(zip(coefficients['a'], coefficients['b']), start=1):
            w = 2 * np.pi * f * harmonic
            s, c = np.sin(w * times), np.cos(w * times)
            q[:, k] += ca / w * s - cb / w * (c - 1.0)
            v[:, k] += ca * c + cb * s
            a[:, k] += w * (-ca * s + cb * c)
    return q, v, a


def test_the_limits_hold_on_a_dense_grid(designed):
    report, model = designed['report'], designed['model']
    period = report['trajectory']['period']
    times = np.linspace(0.0, period, 50 * 20 * 120 + 1)  # 50 x the tool's dense grid
    q, v, a = series(report, times)
    for k, joint in enumerate(model.joints):
        middle, half = 0.5 * (joint.lower + joint.upper), 0.5 * (joint.upper - joint.lower)
        assert np.all(np.abs(q[:, k] - middle) <= half * SCALE * (1 + TOLERANCE)), joint.name
        assert np.all(np.abs(v[:, k]) <= joint.velocity_limit * SCALE * (1 + TOLERANCE))
        assert np.all(np.abs(a[:, k]) <= ACCELERATION * (1 + TOLERANCE))
    tau = model.rnea_batch(q, v, a)
    assert np.all(np.abs(tau) <= model.effort_limits * SCALE * (1 + TOLERANCE))
    heights = np.array([model.link_placement(qk, 'tip')[1][2] for qk in q[::10]])
    assert heights.min() >= 0.3
    # The limits are used: the optimiser pushed the motion to them (here the plane binds).
    used = max(max(row['used'].values()) for row in report['limits'].values())
    assert used > 0.95 and report['planes'][0]['margin'] < 1e-3


def test_the_trajectory_starts_and_ends_at_rest_and_repeats_each_period(designed):
    message = yaml.safe_load((designed['output'] / 'trajectory.yaml').read_text())
    points = message['points']
    rest = list(designed['report']['trajectory']['rest'].values())
    assert rest == [0.0, 0.0, 0.0]  # inside the scaled limits: the URDF zero
    for point in (points[0], points[-1]):
        np.testing.assert_allclose(point['positions'], rest, atol=1e-12)
        np.testing.assert_allclose(point['velocities'], 0.0, atol=1e-12)
        np.testing.assert_allclose(point['accelerations'], 0.0, atol=1e-12)
    assert points[-1]['time_from_start'] == {'sec': 10, 'nanosec': 0}
    assert len(points) == 101
    with open(designed['output'] / 'trajectory.csv') as handle:
        rows = np.array([[float(x) for x in row] for row in list(csv.reader(handle))[1:]])
    half = rows.shape[0] // 2  # two periods of 50 intervals: row k and k + 50 repeat
    np.testing.assert_allclose(rows[:half, 1:], rows[half:-1, 1:], atol=1e-9)
    np.testing.assert_allclose(rows[:, 0], np.linspace(0, 10, 101), atol=1e-12)


def test_the_points_are_the_designed_series_and_the_csv_torques_the_model(designed):
    message = yaml.safe_load((designed['output'] / 'trajectory.yaml').read_text())
    times = np.array([p['time_from_start']['sec'] + 1e-9 * p['time_from_start']['nanosec']
                      for p in message['points']])
    q, v, a = series(designed['report'], times)
    for name, values in (('positions', q), ('velocities', v), ('accelerations', a)):
        np.testing.assert_allclose([p[name] for p in message['points']], values, atol=1e-9)
    with open(designed['output'] / 'trajectory.csv') as handle:
        table = list(csv.reader(handle))
    header = table[0]
    assert header[:2] == ['time', 'yaw.position'] and header[-1] == 'elbow.effort'
    effort = np.array([[float(x) for x in row[-3:]] for row in table[1:]])
    np.testing.assert_allclose(effort, designed['model'].rnea_batch(q, v, a), rtol=1e-6,
                               atol=1e-6)


def test_the_yaml_round_trips_into_a_joint_trajectory_message(designed):
    from rclpy.serialization import deserialize_message, serialize_message
    from trajectory_msgs.msg import JointTrajectory

    def fill(message, fields: dict):
        for name, value in fields.items():
            if isinstance(value, dict):
                fill(getattr(message, name), value)
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                kind = type(message).SLOT_TYPES[list(type(message).get_fields_and_field_types())
                                                .index(name)].value_type
                items = []
                for entry in value:
                    item = __import__(kind.namespaces[0] + '.msg', fromlist=[kind.name])
                    items.append(fill(getattr(item, kind.name)(), entry))
                setattr(message, name, items)
            else:
                setattr(message, name, value)  # an unknown field raises AttributeError
        return message

    fields = yaml.safe_load((designed['output'] / 'trajectory.yaml').read_text())
    message = deserialize_message(serialize_message(fill(JointTrajectory(), fields)),
                                  JointTrajectory)
    assert list(message.joint_names) == ['yaw', 'shoulder', 'elbow']
    assert len(message.points) == len(fields['points'])
    for point, entry in zip(message.points, fields['points']):
        np.testing.assert_array_equal(point.positions, entry['positions'])
        np.testing.assert_array_equal(point.accelerations, entry['accelerations'])
        assert (point.time_from_start.sec, point.time_from_start.nanosec) == \
            (entry['time_from_start']['sec'], entry['time_from_start']['nanosec'])


def test_the_simulated_robot_and_the_node_play_the_yaml_as_designed(designed):
    """Their quintic interpolation through the points gives back the series (0.1 s apart)."""
    from rnea_ros.control.trajectory import Trajectory, TrajectorySampler
    from rnea_ros.sim.trajectory import build_trajectory, Reference
    fields = yaml.safe_load((designed['output'] / 'trajectory.yaml').read_text())
    names, points = fields['joint_names'], fields['points']
    times = np.array([p['time_from_start']['sec'] + 1e-9 * p['time_from_start']['nanosec']
                      for p in points])
    positions, velocities, accelerations = (np.array([p[key] for p in points]) for key in
                                            ('positions', 'velocities', 'accelerations'))
    model = designed['model']
    lower, upper = (np.array([getattr(j, side) for j in model.joints])
                    for side in ('lower', 'upper'))
    rest = np.zeros(model.nv)
    sim = build_trajectory(names, times, positions, velocities, accelerations, None,
                           joint_index={name: k for k, name in enumerate(names)}, lower=lower,
                           upper=upper, start=0.0,
                           held=Reference(rest, rest.copy(), rest.copy(), rest.copy()))
    node = TrajectorySampler(Trajectory.from_points(names, [
        (t, p['positions'], p['velocities'], p['accelerations']) for t, p in zip(times, points)]))
    fine = np.linspace(0.0, times[-1], 1601)
    q, v, a = series(designed['report'], fine)
    reference = Reference(*(np.zeros(model.nv) for _ in range(4)))
    node_q, node_v, node_a = (np.zeros(model.nv) for _ in range(3))
    for k, t in enumerate(fine):
        sim.sample(t, reference)
        node.sample(t, node_q, node_v, node_a)
        for played in ((reference.position, reference.velocity, reference.acceleration),
                       (node_q, node_v, node_a)):
            np.testing.assert_allclose(played[0], q[k], atol=1e-6)
            np.testing.assert_allclose(played[1], v[k], atol=1e-5)
            np.testing.assert_allclose(played[2], a[k], atol=1e-3)


def test_the_optimised_design_is_better_conditioned_than_random_sines(designed):
    report, model = designed['report'], designed['model']
    conditioning = report['conditioning']
    assert conditioning['condition_number'] < 0.5 * conditioning['random_condition_number']
    # Random sines of other seeds, each scaled to the same limits, all do worse.
    moving = limits.moving_joints(model, None)
    lim = limits.joint_limits(model, moving, None, SCALE, ACCELERATION)
    problem = design.problem(model, lim, FourierBasis(3, 0.2), [])
    for seed in (1, 2, 3):
        x = design.random_coefficients(problem, seed)
        assert design.conditioning(problem, x)[0] > conditioning['condition_number']
    assert len(report['base_parameters']) == problem.base.size == 25
    assert f'condition number {conditioning["condition_number"]:.4g}' in designed['stdout']


def test_the_report_names_the_limits_and_the_base_parameters(designed):
    report = designed['report']
    assert report['limits']['shoulder']['upper'] == pytest.approx(1.8 * SCALE)
    assert report['limits']['elbow']['effort'] == pytest.approx(30 * SCALE)
    assert report['limits']['yaw']['acceleration'] == ACCELERATION
    assert report['planes'][0]['link'] == 'tip' and report['planes'][0]['margin'] >= -1e-9
    names = {item['name'] for item in report['base_parameters']}
    assert {'friction.elbow.coulomb', 'armature.shoulder', 'fore.mc_x'} <= names
    text = (designed['output'] / 'excitation.md').read_text()
    assert 'Condition number of the weighted base regressor' in text
    assert '| shoulder | 0 | -1.44 | 1.44 | 1.6 | 5 | 48 |' in text
    assert sorted(report['outputs']) == sorted(p.name for p in designed['output'].iterdir())
    assert 'plotly' in (designed['output'] / 'trajectory.html').read_text()[:10_000_000]


def test_held_joints_stay_at_rest_and_their_terms_are_not_claimed(tmp_path):
    done = run_command(HELD, tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / 'two_joints' / 'excitation.json').read_text())
    message = yaml.safe_load((tmp_path / 'two_joints' / 'trajectory.yaml').read_text())
    assert {p['positions'][0] for p in message['points']} == {0.5}
    assert report['trajectory']['moving'] == ['shoulder', 'elbow']
    names = {item['name'] for item in report['base_parameters']}
    assert not any(name.startswith(('friction.yaw.coulomb', 'armature.yaw')) for name in names)
    assert report['conditioning']['condition_number'] < \
        report['conditioning']['random_condition_number']


def test_the_docs_show_the_commands_these_tests_run():
    text = (ROOT / 'docs' / 'excite.md').read_text()
    shown = set()
    for block in re.findall(r'```bash\n(.*?)```', text, re.S):
        shown |= {' '.join(line.split()) for line in block.replace('\\\n', ' ').splitlines()
                  if line.strip()}
    assert shown == {DESIGN, HELD}


def test_the_docs_state_the_bounds_of_the_numbers():
    text = ' '.join((ROOT / 'docs' / 'excite.md').read_text().split())
    limit = next(f for f in fields(ExciteOptions) if f.name == 'acceleration_limit') \
        .metadata['argparse']['type']
    bounds = (f'`--harmonics` 2 to {run.MAX_HARMONICS}; `--base-frequency` at least '
              f'{run.MIN_BASE_FREQUENCY:g} Hz, and times `--harmonics` (the highest harmonic) at '
              f'most {run.MAX_HIGHEST_FREQUENCY:g} Hz; `--duration` {run.DURATION[0]:g} to '
              f'{run.DURATION[1]:g} s, at least a period; `--point-interval` at least '
              f'{run.MIN_POINT_INTERVAL:g} s (one cycle of a 1 kHz controller), at most a quarter '
              'period of the highest harmonic, and at most '
              f'{run.MAX_POINTS} points in all; `--max-iterations` 1 to {run.MAX_ITERATIONS}; '
              f'`--seed` 0 to {run.MAX_SEED}; `--limits-scale` {run.LIMITS_SCALE[0]:g} to '
              f'{run.LIMITS_SCALE[1]:g}; `--acceleration-limit` {limit.low:g} to '
              f'{limit.high:g} (each stated in `--help`).')
    assert bounds in text


BAD = [
    ({'limits': {'elbow': '<limit lower="-2" upper="2" effort="30"/>'}}, [],
     "joint 'elbow' has no velocity limit in the URDF: add <limit velocity=\"...\"/>, or hold "
     'it still (leave it out of --joints)'),
    ({'limits': {'yaw': '<limit lower="-2" upper="2" velocity="2"/>'}}, [],
     "joint 'yaw' has no effort limit in the URDF: add <limit effort=\"...\"/>, or hold it "
     'still (leave it out of --joints)'),
    ({}, ['--rest', 'elbow=2.0'],
     "rest configuration: joint 'elbow' at 2 rad is outside its limits times --limits-scale "
     '0.8 ([-1.76, 1.76] rad)'),
    # 9.81 (3 (0.02 cos 1.2 + 0.2 sin 1.2) + 1.5 (0.01 cos 1.2 + 0.55 sin 1.2)) = 13.3 N m
    ({'limits': {'shoulder': '<limit lower="-1.8" upper="1.8" velocity="2" effort="5"/>'}},
     ['--rest', 'shoulder=1.2'],
     "rest configuration: gravity needs 13.3 N m at joint 'shoulder', more than its effort "
     'limit times --limits-scale 0.8 (4 N m)'),
    ({}, ['--keep-above', 'tip:1.5'],
     '--keep-above tip:1.5: the link origin is at z = 0.9 m in the rest configuration, below '
     'the plane: no trajectory starting there keeps it above'),
    ({}, ['--keep-above', 'hand:0.1'], "--keep-above hand:0.1: 'hand' is not a link of the URDF"),
    ({}, ['--keep-above', 'tip'], '--keep-above tip: expected LINK:Z, Z a finite height in '
     'metres'),
    ({}, ['--duration', '3', '--base-frequency', '0.2'],
     '--duration 3 s is shorter than one period of --base-frequency 0.2 Hz (5 s)'),
    ({}, ['--base-frequency', '0.5'],
     '--base-frequency 0.5: expected at least 0.001 Hz and, times --harmonics 5, at most 2 Hz '
     '(the highest harmonic)'),
    ({}, ['--duration', '3600', '--point-interval', '0.01'],
     '--duration 3600 s every --point-interval 0.01 s: more than 100000 points; lengthen the '
     'interval or shorten the duration'),
    ({}, ['--joints', 'yaw,wrist'],
     "--joints: ['wrist'] not joints of the URDF; joints: ['yaw', 'shoulder', 'elbow']"),
    ({}, ['--point-interval', '0.6'],  # within its bounds, beyond the highest harmonic's
     '--point-interval 0.6 s: expected an interval of at least 0.001 s (a 1 kHz controller '
     'cycle) and at most 0.5 s (a quarter period of the highest harmonic)'),
    ({}, ['--point-interval', '1', '--harmonics', '2', '--base-frequency', '0.5'],
     '--point-interval 1 s: expected an interval of at least 0.001 s (a 1 kHz controller cycle) '
     'and at most 0.25 s (a quarter period of the highest harmonic)'),
    ({}, ['--rest', 'elbow'], "--rest: expected JOINT=VALUE[,JOINT=VALUE...], got 'elbow'"),
]


# Each option beyond its own bounds: test/test_option_bounds.py; here the options together.
@pytest.mark.parametrize('urdf_changes, argv, line', BAD)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, urdf_changes, argv, line):
    urdf = write_arm(tmp_path, **urdf_changes)
    status = main(['--urdf', str(urdf), '--output', str(tmp_path / 'out')] + argv)
    assert (status, capsys.readouterr().err) == (2, f'rnea_excite: error: {line}\n')
    assert not (tmp_path / 'out').exists()


def test_a_joint_without_position_limits_is_assumed_rest_plus_minus_pi(tmp_path, capsys):
    urdf = write_arm(tmp_path, kinds={'yaw': 'continuous'},
                     limits={'yaw': '<limit velocity="2" effort="40"/>'})
    status = main(['--urdf', str(urdf), '--output', str(tmp_path / 'out'), '--harmonics', '2',
                   '--base-frequency', '0.5', '--duration', '2', '--no-plots',
                   '--rest', 'yaw=1'])
    assert status == 0
    line = ("rnea_excite: warning: joint 'yaw' has no position limits in the URDF: assumed "
            '[-2.14159, 4.14159] rad (rest +- pi)\n')
    assert capsys.readouterr().err == line
    report = json.loads((tmp_path / 'out' / 'excitation.json').read_text())
    assert report['limits']['yaw']['lower'] == pytest.approx(1 - np.pi * SCALE)
    assert report['warnings'] == [line.split('warning: ')[1].strip()]
    assert sorted(p.name for p in (tmp_path / 'out').iterdir()) == [
        'excitation.json', 'excitation.md', 'trajectory.csv', 'trajectory.yaml']


def test_an_output_directory_with_files_is_refused_before_any_work(tmp_path, capsys):
    urdf = write_arm(tmp_path)
    (tmp_path / 'out').mkdir()
    (tmp_path / 'out' / 'notes.txt').write_text('mine')
    status = main(['--urdf', str(urdf), '--output', str(tmp_path / 'out')])
    assert status == 2
    assert capsys.readouterr().err == (
        f"rnea_excite: error: output directory {str(tmp_path / 'out')!r} already holds files: "
        'pass --overwrite to replace the outputs of rnea_excite in it (other files are kept), '
        'or choose another --output\n')
    assert [p.name for p in (tmp_path / 'out').iterdir()] == ['notes.txt']


@pytest.mark.parametrize('command', [[sys.executable, '-m', 'rnea_ros.excite'],
                                     [str(Path(sys.executable).with_name('rnea_excite'))]])
def test_module_console_script_and_help(command):
    result = subprocess.run(command + ['--help'], capture_output=True, text=True, check=True)
    for option in ('--urdf', '--output', '--duration', '--harmonics', '--base-frequency',
                   '--joints', '--limits-scale', '--keep-above', '--rest',
                   '--acceleration-limit', '--point-interval', '--overwrite'):
        assert option in result.stdout


def test_a_duration_between_whole_periods_is_cut_to_them_with_a_warning(tmp_path, capsys):
    urdf = write_arm(tmp_path)
    status = main(['--urdf', str(urdf), '--output', str(tmp_path / 'out'), '--harmonics', '2',
                   '--base-frequency', '0.5', '--duration', '3', '--no-plots'])
    assert status == 0
    assert capsys.readouterr().err == ('rnea_excite: warning: --duration 3 s is not a whole '
                                       'number of periods: the trajectory lasts 2 s (whole '
                                       'periods of 2 s)\n')
    message = yaml.safe_load((tmp_path / 'out' / 'trajectory.yaml').read_text())
    assert message['points'][-1]['time_from_start'] == {'sec': 2, 'nanosec': 0}


def test_overwrite_replaces_a_planted_symlink_and_keeps_other_files(tmp_path, capsys):
    urdf = write_arm(tmp_path)
    victim = tmp_path / 'victim.txt'
    victim.write_text('untouched')
    out = tmp_path / 'out'
    out.mkdir()
    (out / 'trajectory.yaml').symlink_to(victim)
    (out / 'notes.txt').write_text('mine')
    status = main(['--urdf', str(urdf), '--output', str(out), '--overwrite', '--harmonics', '2',
                   '--base-frequency', '0.5', '--duration', '2', '--no-plots'])
    assert status == 0, capsys.readouterr().err
    assert victim.read_text() == 'untouched'
    assert not (out / 'trajectory.yaml').is_symlink()
    assert yaml.safe_load((out / 'trajectory.yaml').read_text())['joint_names'] == \
        ['yaw', 'shoulder', 'elbow']
    assert (out / 'notes.txt').read_text() == 'mine'
    assert not [p for p in out.iterdir() if p.name.startswith('.rnea_excite-staging-')]
