"""
Clock steps, stamps out of order and two motions interleaved by one stamp clock are refused.

A header clock that steps (back, or forward while the receive times do not), stamps out of
order, and a clock that steps back with the receive times (two motions interleaved).

Sorted by stamp, the two sides of a step would interleave into a motion that never happened:
both tools refuse with one line naming the topic, the message and the stamps (exit 2); the
receive clock, or with ``rnea_bag`` a time window on one side of the step, are the ways out.
"""
from __future__ import annotations

from harness import bagdata
from harness.bagdata import BAG_START, PANDA, PANDA_JOINTS, sample_times, trajectory
from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros.bag.cli import main as rnea_bag
from rnea_ros.identify.cli import main as rnea_identify
from rnea_ros.recording import series as replay

N = 2000
STEP_AT = 1000


def stepped(times: np.ndarray, seconds: float) -> np.ndarray:
    """Return the stamps of a clock that jumps by ``seconds`` at message ``STEP_AT``."""
    stamps = times.copy()
    stamps[STEP_AT:] += int(seconds * 1e9)
    return stamps


def seconds(ns: int) -> str:
    return f'{ns // 10**9}.{ns % 10**9:09d} s'


def step_line(tool: str, stamps: np.ndarray, direction: str, ways_out: str,
              prefix: str = '', received: str = '1.000000', period: str = '0.001') -> str:
    return (f'{tool}: error: {prefix}/joint_states: the header clock steps {direction} '
            f'{abs(int(stamps[STEP_AT]) - int(stamps[STEP_AT - 1])) * 1e-9:.6g} s at message '
            f'{STEP_AT}, received {received} s after the bag start (stamp '
            f'{seconds(int(stamps[STEP_AT]))} after {seconds(int(stamps[STEP_AT - 1]))}, '
            f'received {period} s later): sorted by stamp the two sides would interleave; use '
            f'{ways_out}\n')


def test_steps_are_told_from_reordering_jitter_and_gaps():
    times = sample_times(N, jitter=0.3)
    assert replay.clock_steps(times, times).size == 0
    jittered = times.copy()
    jittered[[10, 11]] = jittered[[11, 10]]  # two publishers: neighbours swapped
    jittered[500:520] += 3_000_000  # sent late by 3 periods
    gap = times.copy()
    gap[700:] += 2_000_000_000  # 2 s dropped: both clocks see it
    for stamps, receive in ((jittered, times), (gap, gap)):
        assert replay.clock_steps(stamps, receive).size == 0
    for jump in (-5.0, 5.0, -0.6):
        assert replay.clock_steps(stepped(times, jump), times).tolist() == [STEP_AT]
    # Below the threshold (100 periods, at least 0.5 s): delivery disorder, sorted by stamp.
    assert replay.clock_steps(stepped(times, -0.4), times).size == 0


def panda_stepped_bag(path, jump: float):
    times = sample_times(N)
    t = (times - BAG_START) * 1e-9
    q = np.column_stack([trajectory(t), trajectory(t)[:, 7]])
    stamps = stepped(times, jump)
    bagdata.joint_states_bag(path, times, PANDA_JOINTS + [bagdata.MIMIC], q,
                             stamps_ns=stamps)
    return stamps


@pytest.mark.parametrize('jump, direction', [(-5.0, 'back'), (5.0, 'forward')])
def test_rnea_bag_refuses_a_stepping_clock(tmp_path, capsys, jump, direction):
    stamps = panda_stepped_bag(tmp_path / 'bag', jump)
    argv = [str(tmp_path / 'bag'), '--urdf', str(PANDA), '--no-plots']
    code = rnea_bag(argv + ['--output', str(tmp_path / 'out')])
    assert (code, capsys.readouterr().err) == (2, step_line(
        'rnea_bag', stamps, direction, '--clock receive, or --start/--end on one side of it'))
    assert not (tmp_path / 'out').exists()
    code = rnea_bag(argv + ['--output', str(tmp_path / 'receive'), '--clock', 'receive'])
    err = capsys.readouterr().err
    assert code == 0, err
    # A window before the step (at 1 s): the messages read after it for the margin (1 s) are
    # left out.
    code = rnea_bag(argv + ['--output', str(tmp_path / 'before'), '--end', '0.8'])
    err = capsys.readouterr().err
    assert code == 0, err
    assert ('rnea_bag: warning: /joint_states: left out 800 messages read around the time '
            'window on the other side of a header clock step\n') in err
    torques = np.loadtxt(tmp_path / 'before' / 'torques.csv', delimiter=',', skiprows=1)
    assert torques[-1, 0] < 0.8 and torques.shape[0] > 700


def test_rnea_identify_refuses_a_stepping_clock(tmp_path, capsys):
    model_path = robot_path('ur5')
    from rnea_ros import RobotModel
    model = RobotModel.from_urdf_file(model_path)
    times = sample_times(N, rate=500.0)
    t = (times - BAG_START) * 1e-9
    lower = np.array([j.lower for j in model.joints])
    upper = np.array([j.upper for j in model.joints])
    q, v, a = bagdata.fourier_excitation(lower, upper, t)
    stamps = stepped(times, -5.0)
    bag = bagdata.joint_states_bag(tmp_path / 'bag', times, model.joint_names, q, v,
                                   model.rnea_batch(q, v, a), stamps_ns=stamps)
    code = rnea_identify([str(bag), '--urdf', str(model_path), '--output', str(tmp_path / 'o'),
                          '--no-plots'])
    line = step_line('rnea_identify', stamps, 'back', '--clock receive', prefix=f'{bag}: ',
                     received='2.000000', period='0.002')
    assert (code, capsys.readouterr().err) == (2, line)
    assert not (tmp_path / 'o').exists()
    code = rnea_identify([str(bag), '--urdf', str(model_path), '--output', str(tmp_path / 'o'),
                          '--no-plots', '--clock', 'receive'])
    assert code == 0, capsys.readouterr().err


def ur5_bag(path, times, stamps=None, instants=None):
    """
    Write a UR5 Fourier excitation received at ``times``, effort the URDF's torque.

    ``stamps``: the header stamps (default ``times``); ``instants``: when each sample was
    taken (default ``times``).
    """
    from rnea_ros import RobotModel
    model = RobotModel.from_urdf_file(robot_path('ur5'))
    t = ((times if instants is None else instants) - BAG_START) * 1e-9
    lower = np.array([j.lower for j in model.joints])
    upper = np.array([j.upper for j in model.joints])
    q, v, a = bagdata.fourier_excitation(lower, upper, t)
    return bagdata.joint_states_bag(path, times, model.joint_names, q, v,
                                    model.rnea_batch(q, v, a), stamps_ns=stamps)


def both_stepped(seconds_back: float = 3.0, at: float = 10.0):
    """Return sampling instants and a clock that steps back at ``at`` s: 500 Hz, 15 s."""
    instants = sample_times(7500, rate=500.0, jitter=0.2)
    times = instants.copy()
    times[instants - BAG_START >= at * 1e9] -= int(seconds_back * 1e9)
    return instants, times


@pytest.mark.parametrize('tool', ['rnea_bag', 'rnea_identify'])
def test_a_clock_stepping_back_with_the_receive_times_is_refused(tmp_path, capsys, tool):
    # A clock that steps back 3 s at 10 s and the recorder on it: the bag holds 7 s to 10 s
    # twice; sorted, the two motions take turns (the excitation's period is 5 s: a step of 5 s
    # would repeat the same motion).
    instants, times = both_stepped()
    bag = ur5_bag(tmp_path / 'bag', times, instants=instants)
    argv = [str(bag), '--urdf', str(robot_path('ur5')), '--output', str(tmp_path / 'out'),
            '--no-plots']
    if tool == 'rnea_bag':
        code = rnea_bag(argv + ['--observer'])
        prefix, one_side = '', '--start/--end on one side of it'
    else:
        code = rnea_identify(argv)
        prefix, one_side = f'{bag}: ', 'a bag of one side of it'
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count('\n') == 1 and err.startswith(
        f'{tool}: error: {prefix}/joint_states: two stretches of the recording share the '
        'stamps from message '), err
    assert err.endswith(f'the two sides interleaved; use {one_side}\n'), err
    # The stretch is the 3 s the clock went back: from about 7 s to about 10 s (a block of
    # 100 samples, 0.1 s at twice the rate, either side).
    words = err.split()
    first = float(words[words.index('stamped') + 1])
    last = float(words[words.index('stamped', words.index('stamped') + 1) + 1].rstrip(':'))
    assert abs(first - 7.0) <= 0.1 and abs(last - 10.0) <= 0.1, err
    assert 'times as dense as elsewhere' in err
    assert not (tmp_path / 'out').exists()


def test_a_window_on_one_side_of_the_shared_stamps_is_analysed(tmp_path, capsys):
    instants, times = both_stepped()
    bag = ur5_bag(tmp_path / 'bag', times, instants=instants)
    code = rnea_bag([str(bag), '--urdf', str(robot_path('ur5')), '--output',
                     str(tmp_path / 'out'), '--no-plots', '--end', '4.0'])
    assert code == 0, capsys.readouterr().err


def test_a_healthy_bag_with_a_rate_that_doubles_is_not_interleaved():
    # 250 Hz, then 500 Hz: denser, but one smooth motion.
    times = np.concatenate([BAG_START + np.arange(1000) * 4_000_000,
                            BAG_START + 4_000_000_000 + np.arange(2000) * 2_000_000])
    t = (times - BAG_START) * 1e-9
    position = trajectory(t)
    from rnea_ros.recording import ordering
    messages = np.arange(t.size)
    ordering.interleaved(times, position, PANDA_JOINTS, '/joint_states', messages, 0, 'x')


def scrambled(times, seconds: float = 1e6, seed: int = 0):
    """Stamps jittered by up to +-``seconds``: their order scrambled."""
    jitter = np.random.default_rng(seed).uniform(-seconds, seconds, times.size)
    return times + np.round(jitter * 1e9).astype(np.int64)


@pytest.mark.parametrize('tool', ['rnea_bag', 'rnea_identify'])
def test_stamps_out_of_order_are_refused(tmp_path, capsys, tool):
    times = sample_times(N, rate=500.0)
    stamps = scrambled(times)
    bag = ur5_bag(tmp_path / 'bag', times, stamps)
    argv = [str(bag), '--urdf', str(robot_path('ur5')), '--output', str(tmp_path / 'out'),
            '--no-plots']
    code = (rnea_bag if tool == 'rnea_bag' else rnea_identify)(argv)
    err = capsys.readouterr().err
    prefix = '' if tool == 'rnea_bag' else f'{bag}: '
    jump = (int(stamps[1]) - int(stamps[0])) * 1e-9
    assert (code, err) == (2, (
        f'{tool}: error: {prefix}/joint_states: the header stamps are out of order by more '
        f'than 0.5 s at {N - 1} messages, the first {"back" if jump < 0 else "forward"} '
        f'{abs(jump):.6g} s at message 1, received 0.002000 s after the bag start (stamp '
        f'{seconds(int(stamps[1]))} after {seconds(int(stamps[0]))}, received 0.002 s later): '
        'sorted by stamp the two sides would interleave; use --clock receive'
        + (', or --start/--end on one side of it' if tool == 'rnea_bag' else '') + '\n'))
    assert not (tmp_path / 'out').exists()
    assert replay.clock_steps(stamps, times).size == N - 1


def test_the_fleet_task_refuses_the_shared_stamps_too(tmp_path):
    # rnea_fleet runs rnea_bag's pipeline per bag: the bag fails with the same message.
    from rnea_ros.fleet.task import analyse, Job
    instants, times = both_stepped()
    bag = ur5_bag(tmp_path / 'bag', times, instants=instants)
    output = tmp_path / 'fleet' / 'bags' / 'bag'
    outcome = analyse(Job(str(bag), 'bag', 'arm', str(output),
                          {'urdf': str(robot_path('ur5')), 'no_plots': True}, 'settings'))
    assert outcome.status == 'error'
    assert outcome.error.startswith('/joint_states: two stretches of the recording share the '
                                    'stamps from message '), outcome.error
    assert not output.exists()
