"""The demos: scripts/demo.sh (the closed loop), the library demo's trajectory, table, errors."""
from __future__ import annotations

from pathlib import Path

from harness.grouped import run_grouped
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.demos import library as demo, motions

ROOT = Path(__file__).resolve().parents[1]

TWO_LINK_URDF = """<robot name="two_link">
  <link name="base"/>
  <link name="upper">
    <inertial><origin xyz="0 0 0.25"/><mass value="2"/>
      <inertia ixx="0.05" iyy="0.05" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="slider">
    <inertial><mass value="0.5"/>
      <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="50" velocity="2"/>
  </joint>
  <joint name="slide" type="prismatic">
    <parent link="upper"/><child link="slider"/><origin xyz="0 0 0.5"/><axis xyz="0 0 1"/>
    <limit lower="0" upper="0.2" effort="100" velocity="0.5"/>
  </joint>
</robot>
"""


@pytest.fixture
def two_link_file(tmp_path):
    path = tmp_path / 'two_link.urdf'
    path.write_text(TWO_LINK_URDF)
    return path


@pytest.mark.parametrize('start_at_rest', [False, True])
@pytest.mark.parametrize('floating_base', [False, True])
def test_trajectory_is_consistent_and_inside_limits(floating_base, start_at_rest):
    model = RobotModel.from_urdf_string(TWO_LINK_URDF, floating_base=floating_base)
    times = np.linspace(0.0, 2.0, 2001)
    Q, V, A = motions.sinusoidal_trajectory(model, times, start_at_rest)
    # Starting at rest, the motion starts without a jump in velocity; otherwise it does not.
    assert np.all(np.abs(V[0]) <= 1e-12) == start_at_rest
    assert Q.shape == (times.size, model.nq) and V.shape == A.shape == (times.size, model.nv)
    step = times[1] - times[0]
    for joint in model.joints:
        if joint.nq == 7:
            q_rows, v_rows = joint.idx_q + 2, joint.idx_v + 2
            np.testing.assert_allclose(np.linalg.norm(Q[:, joint.idx_q + 3:joint.idx_q + 7],
                                                      axis=1), 1.0)
        else:
            q_rows, v_rows = joint.idx_q, joint.idx_v
            assert np.all(Q[:, q_rows] >= joint.lower) and np.all(Q[:, q_rows] <= joint.upper)
            assert np.all(np.abs(V[:, v_rows]) <= joint.velocity_limit)
        # v and a are the time derivatives of q and v (central differences).
        np.testing.assert_allclose(np.gradient(Q[:, q_rows], step)[1:-1], V[1:-1, v_rows],
                                   atol=1e-4)
        np.testing.assert_allclose(np.gradient(V[:, v_rows], step)[1:-1], A[1:-1, v_rows],
                                   atol=1e-3)


def test_demo_prints_a_torque_row_per_joint(two_link_file, capsys):
    assert demo.main(['--urdf', str(two_link_file), '--samples', '20', '--columns', '3']) == 0
    out = capsys.readouterr().out
    assert "robot 'two_link'" in out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.strip()}
    for joint in ('shoulder', 'slide'):
        assert len(rows[joint]) == 3 + 2  # three instants, max |tau|, effort limit
    assert 'us/call' in out and 'us/sample' in out


def test_demo_floating_base_labels_the_base_wrench(two_link_file, capsys):
    assert demo.main(['--urdf', str(two_link_file), '--floating-base', '--samples', '5']) == 0
    out = capsys.readouterr().out
    for label in demo.WRENCH_LABELS:
        assert f'root_joint.{label}' in out


def test_demo_loads_panda_by_default(robots_dir, capsys):
    assert motions.PANDA_URDF.is_file()
    assert demo.main(['--samples', '10']) == 0
    out = capsys.readouterr().out
    assert 'panda_joint7' in out and 'panda_finger_joint1' in out
    assert 'panda_finger_joint2' not in out  # a mimic joint: folded into its master


def test_demo_without_example_robot_data_says_what_to_do(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(motions, 'PANDA_URDF', tmp_path / 'missing.urdf')
    with pytest.raises(SystemExit) as exit_info:
        demo.main([])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert 'example-robot-data is not installed' in err and '--urdf' in err


def test_demo_reports_a_bad_urdf(tmp_path, capsys):
    path = tmp_path / 'bad.urdf'
    path.write_text('<robot name="bad"><link name="a"/><joint name="j" type="revolute">')
    assert demo.main(['--urdf', str(path)]) == 2
    assert 'cannot load' in capsys.readouterr().err


TWO_LINK_XACRO = TWO_LINK_URDF.replace(
    '<robot name="two_link">',
    '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="two_link">\n'
    '  <xacro:arg name="prefix" default=""/>').replace(
    'name="shoulder"', 'name="$(arg prefix)shoulder"').replace(
    'name="slide"', 'name="$(arg prefix)slide"')


def test_demo_expands_a_xacro_file_with_its_arguments(tmp_path, capsys):
    """Issue 9 #6: ``rnea_demo --urdf robot.urdf.xacro --xacro-arg name:=value``."""
    path = tmp_path / 'two_link.urdf.xacro'
    path.write_text(TWO_LINK_XACRO)
    assert demo.main(['--urdf', str(path), '--xacro-arg', 'prefix:=left_', '--samples', '5',
                      '--columns', '2']) == 0
    rows = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert {'left_shoulder', 'left_slide'} <= rows
    assert demo.main(['--urdf', str(path), '--samples', '5']) == 0  # the default: no prefix
    rows = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert {'shoulder', 'slide'} <= rows
    broken = tmp_path / 'broken.urdf.xacro'
    broken.write_text(TWO_LINK_XACRO.replace('$(arg prefix)slide', '$(arg side)slide'))
    assert demo.main(['--urdf', str(broken), '--xacro-arg', 'prefix:=left_']) == 2
    assert (f"rnea_demo: cannot load {broken}: xacro cannot expand '{broken}': XacroException: "
            'Undefined substitution argument side') in capsys.readouterr().err


@pytest.mark.parametrize('argv, message', [
    (['--xacro-arg', 'prefix'], "expected a xacro argument name:=value, got 'prefix'"),
    (['--xacro-arg', 'prefix:=left_'], '--xacro-arg needs --urdf FILE'),
])
def test_demo_refuses_a_bad_xacro_argument(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        demo.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.timeout(400)
@pytest.mark.ros
@pytest.mark.sim
@pytest.mark.slow
def test_demo_sh_closes_the_loop_and_the_feedforward_tracks_3x_better(robots_dir):
    """scripts/demo.sh: the sim panda, PD alone then with the node, exit 0 and the verdict."""
    done = run_grouped([str(ROOT / 'scripts' / 'demo.sh'), '--phase', '3'], timeout=380)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr[-3000:]
    assert out.rstrip().endswith('OK')
    rows = [line.split() for line in out.splitlines() if line[:6].strip().replace('.', '')
            .isdigit()]
    assert {' '.join(row[1:3]) for row in rows} >= {'PD alone', 'PD +'}, out
    assert 'x better with the feed-forward (target >= 3x)' in out
    ratio = float(out.split(' rad: ')[1].split('x better')[0])
    assert ratio >= 3.0
    assert ', 0 mismatches' in out and "exit codes after SIGINT: {'sim': 0, 'node': 0}" in out
