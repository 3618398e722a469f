"""
``rnea_bag --observer``: the smallest force the thresholds detect; a bag too still refused.

A moving bag with an exact model (``recording`` of test/harness/observer_bags.py: link-side
effort of the dynamics plus 0.05 N m noise) gives thresholds that find a small force on the
flange; the numbers are checked against the Jacobian by hand at one pose. A bag where the arm
never moves is refused (exit 2, one line naming the joints, nothing written); one where some
joints do not move is warned about, naming them.
"""
from __future__ import annotations

import json
from pathlib import Path
import re
import shlex
import shutil
import subprocess
import sys

from harness.bagdata import BAG_START, joint_states_bag, MIMIC, PANDA, PANDA_JOINTS, sample_times
from harness.observer_bags import recording, run
from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.bag import detectable
from rnea_ros.bag.cli import main

DOCS = Path(__file__).resolve().parents[2] / 'docs'


@pytest.fixture(scope='module')
def panda() -> RobotModel:
    return RobotModel.from_urdf_file(PANDA)


def test_a_moving_bag_with_an_exact_model_detects_a_small_force(tmp_path, capsys,
                                                                quiet):
    summary = run(capsys, quiet[1], tmp_path / 'out', '--observer')
    force = summary['observer']['smallest_detectable_force']
    assert force['link'] == 'panda_hand_tcp'
    assert 0 < force['best_direction']['min'] <= force['worst_direction']['min']
    # Thresholds of ~0.3 N m on an arm of ~0.1-0.9 m levers: a few newtons, not 20.
    assert force['guaranteed'] is not None and force['guaranteed'] < detectable.DETECTABLE_FORCE
    assert not [w for w in summary['warnings'] if 'collision thresholds' in w]
    text = (tmp_path / 'out' / 'summary.md').read_text()
    assert f'Smallest detectable force on {force["link"]}' in text
    assert 'Smallest detectable force' in (tmp_path / 'out' / 'report.html').read_text()


def test_the_detectable_force_is_the_jacobians_at_one_pose(panda):
    q = np.array([0.3, -0.4, 0.2, -1.8, 0.1, 1.5, 0.6, 0.02])[:panda.nq]
    thresholds = np.linspace(0.5, 2.0, panda.nv)
    link = 'panda_hand_tcp'
    J = panda.link_jacobian(q, link, frame='local_world_aligned')[:3]
    result = detectable.smallest_detectable_force(panda, q[None, :], thresholds)
    assert result['link'] == link
    # Best direction, by hand: along the column j that reaches its threshold first.
    ratios = np.linalg.norm(J, axis=0) / thresholds
    j = int(np.argmax(ratios))
    best = 1.0 / ratios[j]
    np.testing.assert_allclose(result['best_direction']['min'], best, rtol=1e-12)
    tau = J.T @ (best * J[:, j] / np.linalg.norm(J[:, j]))
    np.testing.assert_allclose(np.max(np.abs(tau) / thresholds), 1.0, rtol=1e-12)
    # Worst direction: at the guaranteed force every direction crosses a threshold, and one
    # of them just reaches it.
    worst = result['guaranteed']
    assert worst == result['worst_direction']['max'] and worst > best
    crossing = np.max(np.abs(detectable.directions() @ J) / thresholds, axis=1) * worst
    assert crossing.min() == pytest.approx(1.0, rel=1e-12)
    # Rotating the force away from the sampled worst direction detects it sooner or as soon.
    assert np.all(crossing >= 1.0 - 1e-12)


def still_bag(path, moving: tuple[str, ...] = ()):
    model = RobotModel.from_urdf_file(PANDA)
    times = sample_times(1500)
    t = (times - BAG_START) * 1e-9
    q = np.tile([0.0, -0.3, 0.0, -1.9, 0.0, 1.6, 0.8, 0.02], (t.size, 1))
    v, a = np.zeros_like(q), np.zeros_like(q)
    for name in moving:
        k = PANDA_JOINTS.index(name)
        q[:, k] += 0.3 * np.sin(2.0 * t)
        v[:, k] = 0.6 * np.cos(2.0 * t)
        a[:, k] = -1.2 * np.sin(2.0 * t)
    effort = model.rnea_batch(q, v, a) + np.random.default_rng(5).normal(0, 0.05, q.shape)
    names = PANDA_JOINTS + [MIMIC]

    def with_mimic(x):
        return np.column_stack([x, x[:, 7]])

    return joint_states_bag(path, times, names, with_mimic(q), with_mimic(v),
                            np.column_stack([effort, np.zeros(t.size)]))


def test_a_bag_where_the_arm_never_moves_is_refused_naming_the_joints(tmp_path, capsys, panda):
    bag = still_bag(tmp_path / 'bag')
    code = main([str(bag), '--output', str(tmp_path / 'out'), '--urdf', str(PANDA),
                 '--no-plots', '--observer'])
    assert code == 2
    joints = ', '.join(panda.joint_names)
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f'rnea_bag: error: --observer: the arm never moves in this bag (|velocity| below '
        f'{detectable.STICTION_VELOCITY:g} for every joint: {joints}): thresholds calibrated '
        'on it would miss the model error of motion; record a bag of the motion to watch')
    assert not (tmp_path / 'out').exists()


def test_joints_that_never_move_are_warned_about_by_name(tmp_path, capsys, panda):
    bag = still_bag(tmp_path / 'bag', moving=('panda_joint1', 'panda_joint4'))
    summary = run(capsys, bag, tmp_path / 'out', '--observer')
    still = [name for name in panda.joint_names if name not in ('panda_joint1', 'panda_joint4')]
    assert (f'--observer: joints that never leave the stiction band (|velocity| below '
            f'{detectable.STICTION_VELOCITY:g}) in this bag: {", ".join(still)}; their '
            'thresholds miss the model error of their motion') in summary['warnings']
    json.dumps(summary)  # the detectable force is JSON (null where infinite)


def observer_block() -> list[str]:
    """Return the commands of docs/bag.md's --observer block: continuations joined."""
    text = (DOCS / 'bag.md').read_text()
    block = next(block for block in re.findall(r'```bash\n(.*?)```', text, re.S)
                 if '--observer' in block)
    return [re.sub(r'\s+#.*$', '', line).strip()
            for line in block.replace('\\\n', ' ').splitlines() if line.strip()]


def follow(commands: list[str], folder: Path) -> list[subprocess.CompletedProcess]:
    """Run ``commands`` as shown in ``folder`` (rnea_bag without its plots, for time)."""
    shutil.copy(PANDA, folder / 'panda.urdf')
    done = []
    for command in commands:
        argv = shlex.split(command.replace('.venv/bin/', f'{Path(sys.executable).parent}/'))
        if argv[0].endswith('rnea_bag'):
            argv.append('--no-plots')
        done.append(subprocess.run(argv, cwd=folder, capture_output=True, text=True,
                                   timeout=300))
        assert done[-1].returncode == 0, done[-1].stderr
    return done


def test_the_observer_commands_of_the_bag_page_run_as_shown(tmp_path, quiet):
    """docs/bag.md's --observer block, read from the page: calibrate, read, detect a push."""
    commands = observer_block()
    assert len(commands) == 3 and commands[1].startswith('grep ')
    shutil.copytree(quiet[1], tmp_path / 'quiet_run')
    shutil.copytree(recording(tmp_path / 'pushed', 4, push=True)[1], tmp_path / 'my_run')
    calibrate, read, _ = follow(commands, tmp_path)
    calibrated = json.loads((tmp_path / 'quiet_run_rnea' / 'summary.json').read_text())
    force = calibrated['observer']['smallest_detectable_force']
    assert force['guaranteed'] < detectable.DETECTABLE_FORCE
    # What the user reads: the force, in the sentence the page shows; no warning about it.
    assert read.stdout == detectable.describe(force) + '\n'
    assert 'collision thresholds' not in calibrate.stderr
    detected = json.loads((tmp_path / 'my_run_rnea' / 'summary.json').read_text())
    assert [event['joint'] for event in detected['collisions']] == ['panda_joint2']


@pytest.mark.parametrize('robot, link', [
    ('panda', 'panda_hand_tcp'),  # no conventional name: the hand's frame, not a finger
    ('ur5', 'tool0'),  # ROS-Industrial's name; the last link is `world`
    ('kinova', 'j2s6s200_end_effector'),
])
def test_the_flange_is_the_conventional_link_or_the_tip_of_the_revolute_chain(robot, link):
    model = RobotModel.from_urdf_file(robot_path(robot))
    for q in (model.neutral_configuration(), model.neutral_configuration() + 0.3):
        assert detectable.flange(model, q) == link


def test_a_warning_where_no_direction_is_detected_is_written_not_a_crash():
    # A link no joint moves (the ur5's `world`, the old default) has an infinite detectable
    # force in every direction: the warning formatted None and rnea_bag died in a traceback.
    warning = detectable.force_warning({'link': 'world', 'guaranteed': None,
                                        'best_direction': {'min': None}})
    assert warning.startswith('collision thresholds: a 20 N force on world is not detected')
    assert 'in some direction no force is detected' in warning
    assert 'best direction no force at all' in warning


@pytest.mark.slow  # rnea_bag as a process: seconds
def test_a_noisy_calibration_bag_is_told_its_force_is_too_large_and_why(tmp_path):
    """
    The node page's collision section, then the bag page's block on a bag that cannot see 20 N.

    Efforts with 3 N m of noise: thresholds above 10 N m, a guaranteed force near 30 N. The
    user who follows the docs reads that force and is told, on the terminal, that 20 N is not
    detected and why (the model's residual; identify first), in the words the page shows.
    """
    node_page = ' '.join((DOCS / 'node' / 'collisions.md').read_text().split())
    section = node_page[:node_page.index('## Collision reactions')]
    assert '(../bag.md#what-the-thresholds-detect)' in section
    bag_page = ' '.join((DOCS / 'bag.md').read_text().split())
    assert '## What the thresholds detect' in bag_page
    assert f'When a {detectable.DETECTABLE_FORCE:g} N force is not guaranteed' in bag_page
    calibrate, read = observer_block()[:2]
    shutil.copytree(recording(tmp_path / 'noisy', 3, push=False, noise=3.0)[1],
                    tmp_path / 'quiet_run')
    ran = follow([calibrate, read], tmp_path)
    summary = json.loads((tmp_path / 'quiet_run_rnea' / 'summary.json').read_text())
    force = summary['observer']['smallest_detectable_force']
    assert force['guaranteed'] > detectable.DETECTABLE_FORCE
    assert ran[1].stdout == detectable.describe(force) + '\n'
    assert f'{force["guaranteed"]:.3g} N in every direction at every pose' in ran[1].stdout
    warning = (f'rnea_bag: warning: collision thresholds: a {detectable.DETECTABLE_FORCE:g} N '
               f'force on {force["link"]} is not detected at every pose of this bag (only '
               f'{force["guaranteed"]:.3g} N is detected in every direction at every pose; ')
    line = next(line for line in ran[0].stderr.splitlines() if 'collision thresholds' in line)
    assert line.startswith(warning)
    assert line.endswith(": the model's residual sets the thresholds; identify the model first "
                         '(rnea_identify, --actuation, --measured-effort motor for motor '
                         'torques)')
    assert line.removeprefix('rnea_bag: warning: ') in summary['warnings']
