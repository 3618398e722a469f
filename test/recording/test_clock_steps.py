"""
A header clock that steps (back, or forward while the receive times do not) is refused.

Sorted by stamp, the two sides of a step would interleave into a motion that never happened:
both tools refuse with one line naming the topic, the message and the stamps (exit 2); the
receive clock, or with ``rnea_bag`` a time window on one side of the step, are the ways out.
"""
from __future__ import annotations

import bagdata
from bagdata import BAG_START, PANDA, PANDA_JOINTS, sample_times, trajectory
import numpy as np
from oracle import robot_path
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
