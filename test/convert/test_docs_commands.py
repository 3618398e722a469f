"""
The commands of docs/logs.md run as shown, on generated Kinova-style logs.

The folder the docs start from is built here: ``kinova_gen3/data/opti_traj_testing{1,2}.csv``
(``test_convert.kinova_style_log``: an xArm7 motion in the Kinova logs' columns),
``kinova_gen3/GEN3-7DOF-VISION_ARM_URDF_V12.urdf`` (the xArm7 URDF, its joints renamed
``joint_1..joint_7`` as Kinova's) and ``arm_log.npz`` (the second log's samples as ``t`` in
seconds and ``q``, ``dq``, ``tau`` matrices). The commands are read from the page, not copied.
"""
from __future__ import annotations

import os
from pathlib import Path
import re
import shlex
import subprocess
import sys

from harness.convert_logs import kinova_style_log, write_csv
from harness.oracle import robot_path
import numpy as np

from rnea_ros import RobotModel
from rnea_ros.convert import cli, mapping, matfile

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / 'docs' / 'logs.md'
TOOLS = {'rnea_convert': 'rnea_ros.convert', 'rnea_bag': 'rnea_ros.bag',
         'rnea_identify': 'rnea_ros.identify', 'rnea_fleet': 'rnea_ros.fleet'}


def shown_commands() -> list[str]:
    """Return the commands of the page's bash blocks, in order."""
    commands = []
    for block in re.findall(r'```bash\n(.*?)```', PAGE.read_text(), re.S):
        commands += [line.strip() for line in block.replace('\\\n', ' ').splitlines()
                     if line.strip()]
    return commands


def kinova_folder(folder: Path) -> Path:
    """Write the generated logs and the renamed URDF where the docs' commands find them."""
    data = folder / 'kinova_gen3' / 'data'
    data.mkdir(parents=True)
    model = RobotModel.from_urdf_file(robot_path('xarm7'))
    for name, seconds, seed in (('opti_traj_testing1', 3.0, 3), ('opti_traj_testing2', 2.0, 4)):
        columns = kinova_style_log(model, seconds, seed)
        write_csv(data / f'{name}.csv', columns)
    np.savez(folder / 'arm_log.npz', t=columns['Time'] * 1e-3, **{
        name: np.column_stack([columns[f'{field}{k}'] for k in range(1, 8)])
        for name, field in (('q', 'Position'), ('dq', 'Velocity'), ('tau', 'TorqueSm'))})
    urdf = re.sub(r'(name|joint)="joint(\d)"', r'\1="joint_\2"',
                  robot_path('xarm7').read_text())
    (folder / 'kinova_gen3' / 'GEN3-7DOF-VISION_ARM_URDF_V12.urdf').write_text(urdf)
    return folder


def test_the_commands_of_the_page_run(tmp_path):
    folder = kinova_folder(tmp_path)
    commands = shown_commands()
    assert [shlex.split(c)[0] for c in commands] == [
        '.venv/bin/rnea_convert', '.venv/bin/rnea_convert', '.venv/bin/rnea_bag',
        '.venv/bin/rnea_identify', '.venv/bin/rnea_fleet', '.venv/bin/rnea_convert']
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
    for command in commands:
        argv = shlex.split(command)
        # The module of the console script: the same main(), installed or not.
        module = TOOLS[Path(argv[0]).name]
        done = subprocess.run([sys.executable, '-m', module, *argv[1:]], cwd=folder,
                              capture_output=True, text=True, timeout=600, env=environment)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    assert (folder / 'kinova_1' / 'metadata.yaml').is_file()
    torques = np.loadtxt(folder / 'kinova_1_rnea' / 'torques.csv', delimiter=',', skiprows=1,
                         ndmin=2)
    # time and 7 joints; all but the ends (half a differentiation window each) of 3000 rows
    assert torques.shape[1] == 8 and 0.9 * 3000 < torques.shape[0] < 3000
    assert (folder / 'kinova_identified' / 'actuation.yaml').is_file()
    assert (folder / 'kinova_fleet' / 'fleet.parquet').is_file()
    # The npz of the second log's samples: its messages, serialized, are those of its CSV.
    assert len(serialized(folder / 'arm_bag')) == 2000
    assert serialized(folder / 'arm_bag') == serialized(folder / 'kinova_2')


def serialized(bag: Path) -> list[tuple[int, bytes]]:
    """Return the log time and the CDR bytes of each message of ``bag``."""
    from rosbags.highlevel import AnyReader
    with AnyReader([bag]) as reader:
        return [(time, bytes(raw)) for _, time, raw in reader.messages()]


def test_the_page_states_the_bounds():
    text = ' '.join(PAGE.read_text().split())
    assert (f"The time column's values are at most {mapping.MAX_SECONDS:g} s in magnitude, the "
            f'offset at most {mapping.MAX_OFFSET:g} s') in text
    assert f'nonzero, magnitude at most {cli.MAX_EFFORT_SCALE:g}' in text
    assert f'more than {matfile.MAX_EXPANSION} times the file' in text
    for units in (mapping.TIME_UNITS, mapping.POSITION_UNITS, mapping.VELOCITY_UNITS):
        assert '|'.join(units) in text
