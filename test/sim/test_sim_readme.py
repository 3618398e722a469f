"""
Every command of the simulated robot's page (docs/sim.md) runs as shown (panda.urdf beside it).

The block is read from docs/sim.md, not copied: a command changed there is tested as changed.
"""
from __future__ import annotations

from pathlib import Path
import re
import shlex
import shutil
import subprocess
import sys

from harness.oracle import robot_path
import pytest

pytestmark = [pytest.mark.timeout(300), pytest.mark.docs, pytest.mark.sim, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def readme_sim_commands() -> list[str]:
    """Return the commands of the first bash block of the sim's page, lines joined."""
    section = (ROOT / 'docs' / 'sim.md').read_text()
    block = re.search(r'```bash\n(.*?)```', section, re.S).group(1)
    return [line.strip() for line in block.replace('\\\n', ' ').splitlines()
            if line.strip() and not line.lstrip().startswith('#')]


def test_the_readme_block_is_what_this_test_covers():
    programs = [command.split()[0] for command in readme_sim_commands()]
    assert programs == ['.venv/bin/rnea_sim', '.venv/bin/python']


@pytest.mark.parametrize('index', [0, 1])
def test_readme_sim_command_runs(tmp_path, index):
    shutil.copy(robot_path('panda'), tmp_path / 'panda.urdf')
    words = shlex.split(readme_sim_commands()[index])
    words[0] = str(BIN / Path(words[0]).name)
    result = subprocess.run(words, cwd=tmp_path, capture_output=True, text=True, timeout=200,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert 'done: steps' in result.stderr
    substeps = next((int(word.split(':=')[1]) for word in words
                     if word.startswith('substeps:=')), 1)
    assert f'physics step {1.0 / substeps:g} ms ({substeps} per timestep)' in result.stderr
    if '--record' in words:
        assert (tmp_path / 'sim_bag' / 'metadata.yaml').is_file()


def test_help_lists_the_parameters():
    result = subprocess.run([str(BIN / 'rnea_sim'), '--help'], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0
    for name in ('clock', 'lockstep_timeout', 'command_timeout', 'kp', 'duration',
                 'thread_priority', 'substeps', '--gap',
                 '--record', '--urdf'):
        assert name in result.stdout
