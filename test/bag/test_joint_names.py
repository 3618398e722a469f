"""
Joint names and values from the bag that other code could trip over.

Joint names may hold anything a URDF allows (``arm/elbow.pitch``): the plot files are named
from sanitised, unique group names inside the output directory. A finite but absurd value in
a message (1e300) is refused naming that message, before any arithmetic spreads it over its
neighbours: no numpy warning, no "sample" index of the samples kept.
"""
from __future__ import annotations

import warnings

from harness import bagdata
from harness.bagdata import BAG_START, PANDA, PANDA_JOINTS, sample_times, trajectory
import numpy as np
import pytest

from rnea_ros.bag.cli import main as rnea_bag
from rnea_ros.tools.plots import groups

RENAMED = {'panda_joint1': 'arm/base.yaw', 'panda_joint2': 'arm.shoulder',
           'panda_joint3': '../up', 'panda_joint4': 'arm/elbow'}


def panda_motion(n: int) -> np.ndarray:
    times = sample_times(n)
    t = (times - BAG_START) * 1e-9
    return times, np.column_stack([trajectory(t), trajectory(t)[:, 7]])


def test_group_names_are_safe_and_unique():
    wrench = [f'{joint}.{axis}' for joint in ('base/free', 'base.free')
              for axis in ('fx', 'fy', 'fz', 'tx', 'ty', 'tz')]
    labels = wrench + ['arm/base.yaw', '..', 'joints1']
    assert groups(labels, set(wrench)) == [
        ('base_free_forces', [0, 1, 2]), ('base_free_torques', [3, 4, 5]),
        ('base_free_forces_2', [6, 7, 8]), ('base_free_torques_2', [9, 10, 11]),
        ('joints1', [12, 13, 14])]


def test_joint_names_with_dots_and_slashes_are_plotted(tmp_path, capsys):
    text = PANDA.read_text()
    for old, new in RENAMED.items():
        text = text.replace(f'"{old}"', f'"{new}"')
    urdf = tmp_path / 'renamed.urdf'
    urdf.write_text(text)
    times, q = panda_motion(300)
    names = [RENAMED.get(name, name) for name in PANDA_JOINTS] + [bagdata.MIMIC]
    bag = bagdata.joint_states_bag(tmp_path / 'bag', times, names, q)
    out = tmp_path / 'out'
    code = rnea_bag([str(bag), '--urdf', str(urdf), '--output', str(out)])
    assert code == 0, capsys.readouterr().err
    assert sorted(p.name for p in out.glob('*.png')) == [
        'decomposition_joints1.png', 'decomposition_joints2.png', 'effort_joints1.png',
        'effort_joints2.png']
    assert sorted(p.name for p in tmp_path.iterdir()) == ['bag', 'out', 'renamed.urdf']


@pytest.mark.parametrize('field, row, value', [('position', 400, 1e300),
                                               ('velocity', 123, -3e12),
                                               ('effort', 999, 1e300)])
def test_absurd_value_names_its_message_without_numpy_warnings(
        tmp_path, capsys, field, row, value):
    times, q = panda_motion(1000)
    v, effort = np.zeros_like(q), np.zeros_like(q)
    {'position': q, 'velocity': v, 'effort': effort}[field][row, 2] = value
    bag = bagdata.joint_states_bag(tmp_path / 'bag', times, PANDA_JOINTS + [bagdata.MIMIC], q,
                                   v, effort)
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # a numpy RuntimeWarning fails the test
        code = rnea_bag([str(bag), '--urdf', str(PANDA), '--output', str(tmp_path / 'out'),
                         '--no-plots'])
    assert code == 2
    assert capsys.readouterr().err == (
        f"rnea_bag: error: /joint_states: message {row} gives 'panda_joint3' the {field} "
        f'{value:.6g}, beyond +-1e+09 (SI units): a corrupt value\n')
