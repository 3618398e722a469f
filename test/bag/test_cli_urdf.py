"""``rnea_bag --urdf`` with a xacro file and ``--xacro-arg``; xacro text in robot_description."""
from __future__ import annotations

import json
from pathlib import Path

from harness.bagdata import BAG_START, PANDA, panda_bag, sample_times, trajectory
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.bag.cli import main

PANDA_XACRO = PANDA.read_text().replace(
    '<robot name="panda" xmlns:xacro="http://www.ros.org/wiki/xacro">',
    '<robot name="$(arg robot_name)" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
    '  <xacro:arg name="robot_name" default="panda"/>')


def run(capsys, *argv: str):
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.err


def test_xacro_file_with_arguments(tmp_path, capsys):
    """Issue 9 #6: ``rnea_bag BAG --urdf robot.urdf.xacro --xacro-arg name:=value``."""
    assert PANDA_XACRO != PANDA.read_text()
    xacro_file = tmp_path / 'panda.urdf.xacro'
    xacro_file.write_text(PANDA_XACRO)
    times = sample_times(200)
    bag = panda_bag(tmp_path / 'bag', times, desired=True)
    out = tmp_path / 'out'
    code, err = run(capsys, bag, '--urdf', xacro_file, '--xacro-arg', 'robot_name:=left_panda',
                    '--output', out, '--no-plots', '--format', 'csv')
    assert code == 0, err
    summary = json.loads((out / 'summary.json').read_text())
    assert summary['run']['robot'] == 'left_panda'
    data = np.loadtxt(out / 'torques.csv', delimiter=',', skiprows=1, ndmin=2)
    t = (times - BAG_START) * 1e-9
    expected = RobotModel.from_urdf_file(PANDA).rnea_batch(trajectory(t), trajectory(t, 1),
                                                           trajectory(t, 2))
    np.testing.assert_allclose(data[:, 1:], expected, atol=1e-9)


def test_xacro_text_on_the_robot_description_topic_is_named(tmp_path, capsys):
    bag = panda_bag(tmp_path / 'bag', sample_times(50), description=PANDA_XACRO)
    code, err = run(capsys, bag, '--output', tmp_path / 'out', '--no-plots')
    assert code == 2
    assert err.startswith('rnea_bag: error: topic /robot_description: this is unexpanded xacro, '
                          'not URDF (element '
                          '<xacro:arg>): expand it first')


def test_bad_xacro_argument_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([str(tmp_path), '--urdf', str(PANDA), '--xacro-arg', 'robot_name'])
    assert exit_info.value.code == 2
    assert ("argument --xacro-arg: expected a xacro argument name:=value, got 'robot_name'"
            in capsys.readouterr().err)


def test_xacro_error_names_the_file(tmp_path, capsys):
    broken = Path(tmp_path / 'broken.urdf.xacro')
    broken.write_text(PANDA_XACRO.replace('$(arg robot_name)', '$(arg name)'))
    bag = panda_bag(tmp_path / 'bag', sample_times(50))
    code, err = run(capsys, bag, '--urdf', broken, '--output', tmp_path / 'out')
    assert code == 2
    assert (f"rnea_bag: error: xacro cannot expand '{broken}': XacroException: Undefined "
            'substitution argument name') in err


def test_a_xacro_past_its_memory_limit_is_one_line_and_writes_nothing(tmp_path, capsys):
    from rnea_ros.description.xacro_process import LIMITS
    bomb = tmp_path / 'bomb.urdf.xacro'
    bomb.write_text(PANDA_XACRO.replace('$(arg robot_name)', "${'x' * 10**12}"))
    bag = panda_bag(tmp_path / 'bag', sample_times(50))
    code, err = run(capsys, bag, '--urdf', bomb, '--output', tmp_path / 'out')
    assert code == 2
    assert err == (f"rnea_bag: error: xacro cannot expand '{bomb}': the expansion went past its "
                   f'memory limit of {LIMITS.memory_bytes >> 20} MiB\n')
    assert not (tmp_path / 'out').exists()
