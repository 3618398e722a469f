"""
``rnea_bag`` end to end on bags written here with rosbags from analytic panda/solo12 motions.

Torques are checked against ``RobotModel.rnea`` on the analytic q, v, a: exactly (1e-9) when the
bag carries the accelerations, and within the differentiator's error bound (see
``rnea_ros.recording.differentiate``) when they are estimated: |d tau| <= |M(q)| |d a|
(+ |dtau/dv| |d v| when velocities are estimated too), torque being affine in a.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import subprocess
import sys

from harness import bagdata
from harness.bagdata import BAG_START, PANDA, panda_bag, PANDA_JOINTS, sample_times, trajectory
from harness.oracle import robot_path
import numpy as np
import pytest
from rosbags.rosbag2 import Reader

from rnea_ros import RobotModel
from rnea_ros.bag.cli import main
from rnea_ros.bag.report import read_table
from rnea_ros.recording.differentiate import derivatives

N = 2000


@pytest.fixture(scope='module')
def panda() -> RobotModel:
    return RobotModel.from_urdf_file(PANDA)


def run(capsys, bag: Path, out: Path, *extra: str, urdf: Path | None = PANDA):
    argv = [str(bag), '--output', str(out), '--no-plots', *extra]
    if urdf is not None:
        argv += ['--urdf', str(urdf)]
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def read_csv(path: Path) -> tuple[list[str], np.ndarray]:
    header = path.read_text().split('\n', 1)[0].split(',')
    return header, np.loadtxt(path, delimiter=',', skiprows=1, ndmin=2)


def _rows(data: np.ndarray, times_ns: np.ndarray) -> np.ndarray:
    """Which of ``times_ns`` are rows of a torques.csv ``data`` (its time column)."""
    seconds = (times_ns - BAG_START) * 1e-9
    kept = np.isin(np.round(seconds, 9), np.round(data[:, 0], 9))
    assert kept.sum() == data.shape[0]
    return kept


def analytic_torques(model: RobotModel, times_ns: np.ndarray) -> np.ndarray:
    t = (times_ns - BAG_START) * 1e-9
    return model.rnea_batch(trajectory(t), trajectory(t, 1), trajectory(t, 2))


def acceleration_bound(model, times_ns, velocity_estimated=False) -> np.ndarray:
    """Per sample and joint, the bound on |tau - tau_analytic| of the estimated accelerations."""
    t = (times_ns - BAG_START) * 1e-9
    q, v, a = trajectory(t), trajectory(t, 1), trajectory(t, 2)
    diff = derivatives(times_ns, np.zeros((times_ns.size, 1)))
    fourth = bagdata.fourth_derivative_bound()
    da = diff.gain_second[:, None] * fourth
    bound = np.stack([np.abs(model.mass_matrix(q[k])) @ da[k] for k in range(t.size)])
    if velocity_estimated:
        dv = diff.gain_first[:, None] * fourth
        eps = 1e-6
        for k in range(model.nv):
            step = np.zeros(model.nv)
            step[k] = eps
            slope = (model.rnea_batch(q, v + step, a) - model.rnea_batch(q, v - step, a)) / (
                2 * eps)
            bound += np.abs(slope) * dv[:, k:k + 1]
    return bound * 1.001 + 1e-9


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_exact_with_desired_accelerations(tmp_path, capsys, panda, storage):
    times = sample_times(N, jitter=0.3)
    expected = analytic_torques(panda, times)
    effort = expected + np.linspace(-1, 1, 8)  # a known residual per joint
    bag = panda_bag(tmp_path / 'bag', times, storage=storage, desired=True, effort=effort)
    code, out, err = run(capsys, bag, tmp_path / 'out')
    assert code == 0, err
    header, data = read_csv(tmp_path / 'out' / 'torques.csv')
    assert header == ['time'] + list(panda.joint_names)
    np.testing.assert_allclose(data[:, 0], (times - BAG_START) * 1e-9, rtol=0, atol=1e-12)
    np.testing.assert_allclose(data[:, 1:], expected, rtol=0, atol=1e-9)
    residual = read_table(tmp_path / 'out' / 'residual.parquet')
    for k, name in enumerate(panda.joint_names):
        np.testing.assert_allclose(residual[f'residual/{name}'], np.linspace(-1, 1, 8)[k],
                                   atol=1e-9)
        np.testing.assert_allclose(residual[f'measured/{name}'], effort[:, k], atol=0)
    summary = json.loads((tmp_path / 'out' / 'summary.json').read_text())
    assert summary['run']['acceleration_source'].startswith('desired accelerations topic for '
                                                            '100 %')
    assert summary['joints'][0]['rms_residual'] == pytest.approx(1.0, abs=1e-9)


def test_decomposition_sums_to_the_total_and_matches_the_model(tmp_path, capsys, panda):
    times = sample_times(500, jitter=0.2)
    bag = panda_bag(tmp_path / 'bag', times, desired=True)
    code, _, err = run(capsys, bag, tmp_path / 'out', '--format', 'csv')
    assert code == 0, err
    _, torques = read_csv(tmp_path / 'out' / 'torques.csv')
    table = read_table(tmp_path / 'out' / 'decomposition.csv')
    t = (times - BAG_START) * 1e-9
    q, v, a = trajectory(t), trajectory(t, 1), trajectory(t, 2)
    for k, name in enumerate(panda.joint_names):
        terms = [table[f'{term}/{name}']
                 for term in ('inertial', 'velocity_product', 'gravity', 'external')]
        np.testing.assert_allclose(sum(terms), torques[:, k + 1], rtol=0, atol=1e-9)
        assert not np.any(terms[3])  # no contact solver yet: no external load
    for i in (0, 250, 499):
        gravity = [table[f'gravity/{name}'][i] for name in panda.joint_names]
        inertial = [table[f'inertial/{name}'][i] for name in panda.joint_names]
        coriolis = [table[f'velocity_product/{name}'][i] for name in panda.joint_names]
        np.testing.assert_allclose(gravity, panda.gravity_torques(q[i]), atol=1e-9)
        np.testing.assert_allclose(inertial, panda.mass_matrix(q[i]) @ a[i], atol=1e-9)
        np.testing.assert_allclose(coriolis, panda.velocity_product(q[i], v[i]), atol=1e-9)
    assert not (tmp_path / 'out' / 'residual.csv').exists()  # no measured effort


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_estimated_accelerations_within_the_error_bound(tmp_path, capsys, panda, storage):
    times = sample_times(N, jitter=0.3, gap=(1200, 0.08))
    bag = panda_bag(tmp_path / 'bag', times, storage=storage)
    # The bound of a given window (the differentiator's default, 0.05 s; noise-free positions
    # get the shortest candidate from --window auto).
    code, _, err = run(capsys, bag, tmp_path / 'out', '--accelerations-from', 'positions',
                       '--window', '0.05')
    assert code == 0, err
    _, data = read_csv(tmp_path / 'out' / 'torques.csv')
    # Within half a window (25 ms) of the ends and of the gap: left out.
    kept = _rows(data, times)
    assert abs(kept.sum() - (N - 4 * 25)) <= 4  # jittered stamps: +-1 sample at each end
    error = np.abs(data[:, 1:] - analytic_torques(panda, times[kept]))
    assert np.all(error <= acceleration_bound(panda, times)[kept])
    assert error.max() < 0.05  # N·m, and far smaller than the torques themselves
    summary = json.loads((tmp_path / 'out' / 'summary.json').read_text())
    assert summary['run']['differentiation']['segments'] == 2  # the gap split the fit
    assert summary['run']['differentiation']['edge_samples_left_out'] == N - kept.sum()
    assert summary['run']['acceleration_source'] == 'estimated from the positions'
    assert 'rms_residual' not in summary['joints'][0]


def test_velocities_estimated_when_absent(tmp_path, capsys, panda):
    times = sample_times(N, jitter=0.2)
    bag = panda_bag(tmp_path / 'bag', times, velocity=False)
    code, _, err = run(capsys, bag, tmp_path / 'out', '--window', '0.05')  # the bound's window
    assert code == 0, err
    _, data = read_csv(tmp_path / 'out' / 'torques.csv')
    kept = _rows(data, times)
    assert abs(kept.sum() - (N - 2 * 25)) <= 2
    error = np.abs(data[:, 1:] - analytic_torques(panda, times[kept]))
    assert np.all(error <= acceleration_bound(panda, times, velocity_estimated=True)[kept])
    summary = json.loads((tmp_path / 'out' / 'summary.json').read_text())
    assert summary['run']['velocity_measured'] == 0.0


def test_urdf_from_the_robot_description_topic(tmp_path, capsys, panda):
    times = sample_times(300)
    bag = panda_bag(tmp_path / 'bag', times, desired=True, description=PANDA.read_text())
    code, _, err = run(capsys, bag, tmp_path / 'out', urdf=None)
    assert code == 0, err
    _, data = read_csv(tmp_path / 'out' / 'torques.csv')
    np.testing.assert_allclose(data[:, 1:], analytic_torques(panda, times), atol=1e-9)
    summary = json.loads((tmp_path / 'out' / 'summary.json').read_text())
    assert summary['run']['urdf'] == 'topic /robot_description'


def test_write_bag_adds_joint_torques(tmp_path, capsys, panda):
    times = sample_times(400)
    bag = panda_bag(tmp_path / 'bag', times, storage='mcap', desired=True,
                    effort=np.zeros((400, 8)))
    code, _, err = run(capsys, bag, tmp_path / 'out', '--write-bag')
    assert code == 0, err
    _, torques = read_csv(tmp_path / 'out' / 'torques.csv')
    with Reader(tmp_path / 'out' / 'bag') as reader:
        assert sorted(reader.topics) == ['/desired_accelerations', '/joint_states',
                                         '/joint_torques']
        assert reader.topics['/joint_torques'].msgcount == 400
        assert reader.topics['/joint_states'].msgcount == 400
        assert (tmp_path / 'out' / 'bag').glob('*.mcap')  # same storage as the input
        conns = [c for c in reader.connections if c.topic == '/joint_torques']
        messages = [bagdata.STORE.deserialize_cdr(raw, c.msgtype)
                    for c, _, raw in reader.messages(conns)]
    assert list(messages[0].name) == list(panda.joint_names)
    effort = np.array([m.effort for m in messages])
    np.testing.assert_array_equal(effort, torques[:, 1:])
    stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in messages]
    assert stamps == times.tolist()


def test_time_window_and_joint_subset(tmp_path, capsys, panda):
    times = sample_times(N)
    bag = panda_bag(tmp_path / 'bag', times, desired=True)
    code, _, err = run(capsys, bag, tmp_path / 'out', '--start', '0.5', '--end', '1.25',
                       '--joints', 'panda_joint2,panda_joint4')
    assert code == 0, err
    header, data = read_csv(tmp_path / 'out' / 'torques.csv')
    assert header == ['time', 'panda_joint2', 'panda_joint4']
    assert data[0, 0] >= 0.5 and data[-1, 0] < 1.25 and data.shape[0] == 750
    inside = (times >= BAG_START + 500_000_000) & (times < BAG_START + 1_250_000_000)
    np.testing.assert_allclose(data[:, 1:], analytic_torques(panda, times[inside])[:, [1, 3]],
                               atol=1e-9)


def test_plots_and_summary(tmp_path, capsys):
    times = sample_times(600)
    bag = panda_bag(tmp_path / 'bag', times, effort=np.zeros((600, 8)))
    code = main([str(bag), '--urdf', str(PANDA), '--output', str(tmp_path / 'out')])
    assert code == 0, capsys.readouterr().err
    names = sorted(p.name for p in (tmp_path / 'out').glob('*.png'))
    assert names == ['decomposition_joints1.png', 'decomposition_joints2.png',
                     'effort_joints1.png', 'effort_joints2.png']
    for name in names:
        assert (tmp_path / 'out' / name).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    text = (tmp_path / 'out' / 'summary.md').read_text()
    assert '| `panda_joint4` | N·m |' in text and 'Worst time windows' in text
    summary = json.loads((tmp_path / 'out' / 'summary.json').read_text())
    assert [j['joint'] for j in summary['joints']] == PANDA_JOINTS
    assert summary['worst_windows'][0]['kind'] == 'rms_residual'


# ---------------------------------------------------------------- floating base


def solo_motion(t: np.ndarray, model: RobotModel):
    """Analytic free-flyer motion: q (N, 19), v (N, 18), a (N, 18), bound on |v''''| (18,)."""
    rng = np.random.default_rng(7)
    amplitude = rng.uniform(0.1, 0.4, 18)
    omega = rng.uniform(1.0, 3.0, 18)
    angle = omega * t[:, None]
    v = amplitude * np.cos(angle)
    a = -amplitude * omega * np.sin(angle)
    q = np.zeros((t.size, 19))
    q[:, :3] = [0.1, -0.2, 0.3] + 0.05 * np.sin(t[:, None] * [1.0, 1.5, 2.0])
    half = 0.5 * 0.3 * np.sin(t)  # rotation about a fixed unit axis
    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    q[:, 3:6] = np.sin(half)[:, None] * axis
    q[:, 6] = np.cos(half)
    q[:, 7:] = 0.3 * np.sin(angle[:, 6:] + 0.5)
    return q, v, a, amplitude * omega ** 4


def test_floating_base_from_odometry(tmp_path, capsys):
    path = robot_path('solo12')
    model = RobotModel.from_urdf_file(path, floating_base=True)
    times = sample_times(1500, jitter=0.2)
    t = (times - BAG_START) * 1e-9
    q, v, a, fourth = solo_motion(t, model)
    joints = list(model.joint_names[1:])
    states = [(ns, bagdata.joint_state(ns, joints, q[k, 7:], v[k, 6:]))
              for k, ns in enumerate(times.tolist())]
    desired = [(ns, bagdata.desired_acceleration(ns, joints, a[k, 6:]))
               for k, ns in enumerate(times.tolist())]
    odometry = [(ns, bagdata.odometry(ns, q[k, :3], q[k, 3:7], v[k, :3], v[k, 3:6]))
                for k, ns in enumerate(times.tolist())]
    bag = bagdata.write_bag(tmp_path / 'bag', {
        '/joint_states': (bagdata.JOINT_STATE, states),
        '/desired_accelerations': (bagdata.JOINT_TRAJECTORY, desired),
        '/odometry': (bagdata.ODOMETRY, odometry)})
    code, _, err = run(capsys, bag, tmp_path / 'out', '--floating-base', urdf=path)
    assert code == 0, err
    header, data = read_csv(tmp_path / 'out' / 'torques.csv')
    assert header[:8] == ['time', 'root_joint.fx', 'root_joint.fy', 'root_joint.fz',
                          'root_joint.tx', 'root_joint.ty', 'root_joint.tz', 'FL_HAA']
    expected = model.rnea_batch(q, v, a)
    # Only the base acceleration is estimated (first derivative of the odometry twist).
    gain = derivatives(times, np.zeros((times.size, 1))).gain_first
    bound = np.stack([np.abs(model.mass_matrix(q[k])[:, :6]) @ (gain[k] * fourth[:6])
                      for k in range(t.size)]) * 1.001 + 1e-9
    assert np.all(np.abs(data[:, 1:] - expected) <= bound)
    assert np.abs(data[:, 1:] - expected).max() < 1e-2


def test_floating_base_without_odometry_is_refused(tmp_path, capsys):
    times = sample_times(100)
    bag = panda_bag(tmp_path / 'bag', times)
    code, _, err = run(capsys, bag, tmp_path / 'out', '--floating-base')
    assert code == 2
    assert ('--floating-base needs the base state, but the bag has no nav_msgs/Odometry topic '
            "'odometry'") in err


# ---------------------------------------------------------------- bad input


def test_bag_without_joint_states(tmp_path, capsys):
    bag = bagdata.write_bag(tmp_path / 'bag', {
        '/chatter': (bagdata.STRING, [(BAG_START, bagdata.string('hi'))])})
    code, _, err = run(capsys, bag, tmp_path / 'out')
    assert code == 2
    assert ("joint_states topic 'joint_states' is not in the bag; the bag has no "
            'sensor_msgs/msg/JointState topic (all topics: /chatter (std_msgs/msg/String))'
            in err)


def test_unknown_joint_states_topic(tmp_path, capsys):
    bag = panda_bag(tmp_path / 'bag', sample_times(50))
    code, _, err = run(capsys, bag, tmp_path / 'out', '--joint-states', '/robot/joint_states')
    assert code == 2
    assert ("joint_states topic '/robot/joint_states' is not in the bag; "
            'sensor_msgs/msg/JointState topics in the bag: /joint_states') in err


def test_topic_of_the_wrong_type(tmp_path, capsys):
    bag = panda_bag(tmp_path / 'bag', sample_times(50), description='<robot/>')
    code, _, err = run(capsys, bag, tmp_path / 'out', '--joint-states', 'robot_description')
    assert code == 2
    assert ("topic '/robot_description' carries std_msgs/msg/String, expected "
            'sensor_msgs/msg/JointState') in err


def test_joints_missing_from_the_urdf_are_named(tmp_path, capsys):
    times = sample_times(200)
    names = PANDA_JOINTS + ['tool_spin', 'camera_pan']
    q = trajectory((times - BAG_START) * 1e-9)
    states = [(ns, bagdata.joint_state(ns, names, np.append(q[k], [0.0, 0.0])))
              for k, ns in enumerate(times.tolist())]
    bag = bagdata.write_bag(tmp_path / 'bag', {'/joint_states': (bagdata.JOINT_STATE, states)})
    code, _, err = run(capsys, bag, tmp_path / 'out')
    assert code == 2
    assert "joint_states names joints that are not in the URDF: ['camera_pan', 'tool_spin']" \
        in err
    code, _, err = run(capsys, bag, tmp_path / 'out2', '--ignore-extra-joints')
    assert code == 0
    assert "ignored joints that are not in the URDF: ['camera_pan', 'tool_spin']" in err


def test_urdf_joint_never_in_the_bag_is_named(tmp_path, capsys):
    times = sample_times(100)
    q = trajectory((times - BAG_START) * 1e-9)
    names = [n for n in PANDA_JOINTS if n != 'panda_joint3']
    states = [(ns, bagdata.joint_state(ns, names, np.delete(q[k], 2)))
              for k, ns in enumerate(times.tolist())]
    bag = bagdata.write_bag(tmp_path / 'bag', {'/joint_states': (bagdata.JOINT_STATE, states)})
    code, _, err = run(capsys, bag, tmp_path / 'out')
    assert code == 2
    assert "joint_states never gives a position for the URDF joints ['panda_joint3']" in err


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_corrupt_bag(tmp_path, capsys, storage):
    bag = panda_bag(tmp_path / 'bag', sample_times(200), storage=storage)
    for data in bag.glob('*.db3' if storage == 'sqlite3' else '*.mcap'):
        raw = data.read_bytes()
        data.write_bytes(raw[:100] + bytes(range(256)) * 8)
    code, _, err = run(capsys, bag, tmp_path / 'out')
    assert code == 2
    if storage == 'sqlite3':
        assert f"rnea_bag: error: cannot read bag '{bag}' (corrupt or not a rosbag2" in err
    else:  # the MCAP layout is checked before rosbags reads the file
        assert err == (f"rnea_bag: error: invalid MCAP file '{data}': no MCAP magic at its "
                       'start and end (not an MCAP file, or not completely written)\n')


def test_a_fifo_as_the_bag_or_in_it_is_refused_not_waited_on(tmp_path):
    """A FIFO blocks its reader forever: refused in one line (a child: today's code hung)."""
    fifo = tmp_path / 'stuck.mcap'
    os.mkfifo(fifo)
    bag = panda_bag(tmp_path / 'bag', sample_times(50))
    storage = next(bag.glob('*.db3'))
    storage.unlink()
    os.mkfifo(storage)
    for path, message in ((fifo, f"bag '{fifo}' is a FIFO"),
                          (bag, f"bag '{bag}': its file '{storage.name}' is a FIFO")):
        result = subprocess.run([sys.executable, '-m', 'rnea_ros.bag', str(path), '--urdf',
                                 str(PANDA), '--output', str(tmp_path / 'out')],
                                capture_output=True, text=True, timeout=300)
        assert (result.returncode, result.stderr) == (2, (
            f'rnea_bag: error: {message}: expected a regular file (a bag is read from regular '
            'files only)\n'))
    assert not (tmp_path / 'out').exists()


def test_corrupt_message(tmp_path, capsys):
    times = sample_times(20)
    good = bagdata.joint_state(int(times[0]), PANDA_JOINTS, np.zeros(8))
    states = [(int(ns), good) for ns in times] + [(int(times[-1]) + 1, good[:40])]
    bag = bagdata.write_bag(tmp_path / 'bag', {'/joint_states': (bagdata.JOINT_STATE, states)})
    code, _, err = run(capsys, bag, tmp_path / 'out')
    assert code == 2
    assert "corrupt sensor_msgs/msg/JointState message on '/joint_states' (40 bytes)" in err


def test_missing_bag_and_missing_urdf(tmp_path, capsys):
    code, _, err = run(capsys, tmp_path / 'nowhere', tmp_path / 'out')
    assert code == 2 and f"bag '{tmp_path / 'nowhere'}' does not exist" in err
    bag = panda_bag(tmp_path / 'bag', sample_times(50))
    code, _, err = run(capsys, bag, tmp_path / 'out', urdf=None)
    assert code == 2
    assert ("no --urdf given and the bag has no 'robot_description' topic (std_msgs/String)"
            in err)


def test_unknown_joint_selection_and_empty_window(tmp_path, capsys):
    bag = panda_bag(tmp_path / 'bag', sample_times(100))
    code, _, err = run(capsys, bag, tmp_path / 'out', '--joints', 'panda_joint1,elbow')
    assert code == 2 and "--joints: ['elbow'] are not independent joints of the model" in err
    code, _, err = run(capsys, bag, tmp_path / 'out', '--start', '50')
    assert code == 2 and 'no /joint_states messages in the bag in the time window' in err


def test_one_thread_gives_the_same_results_and_restores_numba(tmp_path, capsys):
    """--threads 1 (a fleet worker's setting) limits the kernels and changes no number."""
    import numba
    times = sample_times(3000, jitter=0.2)
    effort = np.random.default_rng(3).normal(0.0, 1.0, (times.size, 8))
    bag = panda_bag(tmp_path / 'bag', times, effort=effort)
    before = numba.get_num_threads()
    code, _, err = run(capsys, bag, tmp_path / 'all', '--format', 'csv')
    assert code == 0, err
    code, _, err = run(capsys, bag, tmp_path / 'one', '--format', 'csv', '--threads', '1')
    assert code == 0, err
    assert numba.get_num_threads() == before
    for name in ('torques.csv', 'decomposition.csv', 'residual.csv'):
        one, every = (read_table(tmp_path / d / name) for d in ('one', 'all'))
        assert one.keys() == every.keys()
        for column in one:
            np.testing.assert_allclose(one[column], every[column], rtol=0, atol=1e-12)
    with pytest.raises(SystemExit):  # the parser's bound: test/test_option_bounds.py
        run(capsys, bag, tmp_path / 'none', '--threads', '0')
    assert "argument --threads: '0': expected an integer from 1 to 1024" in \
        capsys.readouterr().err
    assert not (tmp_path / 'none').exists()


def test_help_lists_the_options(capsys):
    with pytest.raises(SystemExit) as stop:
        main(['--help'])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    assert 'does not record a contact schedule' in ' '.join(text.split())
    for option in ('--urdf', '--floating-base', '--joint-states', '--output', '--write-bag',
                   '--start', '--joints', '--window', '--order', '--max-gap', '--contacts',
                   '--friction', '--lock', '--lock-missing', '--accelerations-from',
                   '--overwrite', '--threads'):
        assert option in text


# ---------------------------------------------------------------- contacts


def standing_bag(path: Path, n: int = 200):
    """solo12 standing still on its four feet: q constant, v = a = 0, odometry constant."""
    from harness import standing
    model, q = standing.standing('solo12')
    times = sample_times(n)
    joints = list(model.joint_names[1:])
    zeros = np.zeros(len(joints))
    states = [(ns, bagdata.joint_state(ns, joints, q[7:], zeros)) for ns in times.tolist()]
    desired = [(ns, bagdata.desired_acceleration(ns, joints, zeros)) for ns in times.tolist()]
    odometry = [(ns, bagdata.odometry(ns, q[:3], q[3:7], (0, 0, 0), (0, 0, 0)))
                for ns in times.tolist()]
    bagdata.write_bag(path, {
        '/joint_states': (bagdata.JOINT_STATE, states),
        '/desired_accelerations': (bagdata.JOINT_TRAJECTORY, desired),
        '/odometry': (bagdata.ODOMETRY, odometry)})
    return model, q, times


def test_contacts_on_a_standing_robot(tmp_path, capsys):
    from harness.standing import SOLO_FEET

    from rnea_ros.contacts import ContactSolver
    model, q, times = standing_bag(tmp_path / 'bag')
    code, out, err = run(capsys, tmp_path / 'bag', tmp_path / 'out', '--floating-base',
                         '--contacts', ','.join(SOLO_FEET), '--format', 'csv', '--write-bag',
                         urdf=robot_path('solo12'))
    assert code == 0, err
    assert 'warning' not in err
    solution = ContactSolver(model, list(SOLO_FEET)).solve(q, np.zeros(18), np.zeros(18))
    assert solution.feasible
    # Torques: the contact solver's, every sample; the base rows balanced.
    header, torques = read_csv(tmp_path / 'out' / 'torques.csv')
    assert torques.shape == (times.size, 19)
    np.testing.assert_allclose(torques[:, 1:], np.tile(solution.tau, (times.size, 1)),
                               rtol=0, atol=1e-9)
    assert np.abs(torques[:, 1:7]).max() < 1e-9
    # The external term is -J^T f, non-zero, and the terms still sum to the total.
    parts = read_table(tmp_path / 'out' / 'decomposition.csv')
    labels = header[1:]
    external = np.column_stack([parts[f'external/{label}'] for label in labels])
    total = sum(np.column_stack([parts[f'{term}/{label}'] for label in labels])
                for term in ('inertial', 'velocity_product', 'gravity', 'external'))
    np.testing.assert_allclose(total, torques[:, 1:], rtol=0, atol=1e-9)
    assert np.abs(external[:, 2]).min() > 10.0  # the feet carry the weight
    # Contact wrenches: link frame, the solver's, and the forces sum to the weight.
    wrench_header, wrenches = read_csv(tmp_path / 'out' / 'contact_wrenches.csv')
    assert wrench_header == ['time'] + [f'{foot}.{axis}' for foot in SOLO_FEET
                                        for axis in ('fx', 'fy', 'fz', 'tx', 'ty', 'tz')]
    np.testing.assert_allclose(wrenches[:, 0], torques[:, 0])
    per_foot = wrenches[:, 1:].reshape(times.size, 4, 6)
    np.testing.assert_allclose(per_foot, np.broadcast_to(solution.wrenches, per_foot.shape),
                               rtol=0, atol=1e-9)
    rotations, _ = model.link_placements(q, list(SOLO_FEET))
    world = np.einsum('cij,ncj->ni', rotations, per_foot[:, :, :3])
    mass = model.mass_matrix(q)[0, 0]  # the whole robot's mass (base translation row)
    np.testing.assert_allclose(world, np.tile([0.0, 0.0, 9.81 * mass], (times.size, 1)),
                               rtol=0, atol=1e-8)
    # Summary: the contacts and no infeasible sample.
    summary = json.loads((tmp_path / 'out' / 'summary.json').read_text())
    assert summary['contacts']['links'] == list(SOLO_FEET)
    assert summary['contacts']['infeasible_samples'] == 0
    assert summary['contacts']['friction'] == 0.7
    assert 'infeasible samples: 0 of 200' in (tmp_path / 'out' / 'summary.md').read_text()
    # The bag: contact_wrenches/<foot> next to joint_torques, readable by rosbags.
    with Reader(tmp_path / 'out' / 'bag') as reader:
        topics = sorted(reader.topics)
        assert [f'/contact_wrenches/{foot}' for foot in SOLO_FEET] == topics[:4]
        assert '/joint_torques' in topics
        for c, foot in enumerate(SOLO_FEET):
            conns = [x for x in reader.connections if x.topic == f'/contact_wrenches/{foot}']
            assert conns[0].msgtype == 'geometry_msgs/msg/WrenchStamped'
            messages = [bagdata.STORE.deserialize_cdr(raw, x.msgtype)
                        for x, _, raw in reader.messages(conns)]
            assert len(messages) == times.size
            assert {m.header.frame_id for m in messages} == {foot}
            stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in messages]
            assert stamps == times.tolist()
            values = np.array([[m.wrench.force.x, m.wrench.force.y, m.wrench.force.z,
                                m.wrench.torque.x, m.wrench.torque.y, m.wrench.torque.z]
                               for m in messages])
            np.testing.assert_array_equal(values, per_foot[:, c])


def test_infeasible_contacts_are_counted(tmp_path, capsys):
    from harness.standing import SOLO_FEET
    standing_bag(tmp_path / 'bag', 50)
    # One front foot alone cannot hold the robot's weight with its centre of mass elsewhere.
    code, _, err = run(capsys, tmp_path / 'bag', tmp_path / 'out', '--floating-base',
                       '--contacts', SOLO_FEET[0], '--friction', '0.3',
                       urdf=robot_path('solo12'))
    assert code == 0, err
    assert 'rnea_bag: warning: 50 of 50 samples are infeasible with contacts' in err
    summary = json.loads((tmp_path / 'out' / 'summary.json').read_text())
    assert summary['contacts']['infeasible_samples'] == 50
    assert summary['contacts']['max_residual_norm'] > 0.0


def test_contacts_need_a_floating_base(tmp_path, capsys):
    bag = panda_bag(tmp_path / 'bag', sample_times(100))
    code, _, err = run(capsys, bag, tmp_path / 'out', '--contacts', 'panda_hand')
    assert code == 2
    assert 'rnea_bag: error: --contacts needs --floating-base' in err


def test_unknown_contact_link_is_named(tmp_path, capsys):
    standing_bag(tmp_path / 'bag', 50)
    code, _, err = run(capsys, tmp_path / 'bag', tmp_path / 'out', '--floating-base',
                       '--contacts', 'FL_FOOT,LEFT_HOOF', urdf=robot_path('solo12'))
    assert code == 2
    assert "--contacts: ['LEFT_HOOF'] are not links of the model" in err
