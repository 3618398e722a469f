"""
The docs' generated blocks hold what the tools print today (``bench/docs_figures.py``).

The blocks from synthetic inputs are checked here always; those from the Kinova Gen3 logs only
where the shared real logs are (CI has none: skipped, saying so). Timings are not generated.
"""
from __future__ import annotations

from pathlib import Path
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'bench'))

import docs_figures  # noqa: E402, I100
from docs_figures import BLOCKS, differences  # noqa: E402
from real_log_windows import LOGS  # noqa: E402

pytestmark = [pytest.mark.timeout(600), pytest.mark.docs]


def command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / 'bench' / 'docs_figures.py'), *args],
                          capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize('block', BLOCKS, ids=lambda block: block.name)
def test_every_block_lies_once_between_its_markers(block):
    assert docs_figures.block_text(ROOT / 'docs' / block.page, block.name).strip()


def test_numbers_agree_within_the_tolerance_and_words_exactly():
    documented = '| URDF | 1.04 | 6.11 |\njoint_2 improves from 5.90'
    assert differences(documented, '| URDF | 1.04 | 6.11 |\njoint_2 improves from\n5.90',
                       0.0, 0.0) == []  # the line breaks move with the numbers
    assert differences(documented, '| URDF | 1.05 | 6.12 | joint_2 improves from 5.91',
                       0.01, 0.0) == []
    wrong = differences(documented, '| URDF | 1.04 | 5.31 | joint_2 improves from 5.90',
                        0.01, 0.02)
    assert len(wrong) == 1 and wrong[0].startswith('6.11 documented, 5.31 generated'), wrong
    wrong = differences(documented, '| URDF | 1.04 | 6.11 |\njoint_3 improves from 5.90',
                        0.01, 0.02)  # a digit in a name is a word
    assert wrong[0] == 'the words differ (numbers as #):' and '+joint_3 improves from #' in \
        wrong, wrong


def test_a_block_is_rewritten_between_its_markers_and_nothing_else(tmp_path):
    page = tmp_path / 'page.md'
    begin, end = docs_figures.begin_marker('t'), docs_figures.end_marker('t')
    page.write_text(f'before\n\n{begin}\n| old | 1 |\n{end}\nafter\n')
    docs_figures.write_block(page, 't', '| new | 2 |')
    assert page.read_text() == f'before\n\n{begin}\n| new | 2 |\n{end}\nafter\n'
    page.write_text(f'{begin}\n{begin}\n{end}\n')
    with pytest.raises(SystemExit, match='must hold .* once each'):
        docs_figures.block_text(page, 't')


def test_without_the_real_logs_their_blocks_are_left_as_they_are(tmp_path):
    done = command('--logs', str(tmp_path), '--check', '--only', 'kinova_identify',
                   'kinova_windows')
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        f'kinova_identify: left as it is: no real logs in {tmp_path}',
        f'kinova_windows: left as it is: no real logs in {tmp_path}']


@pytest.mark.slow
def test_the_control_margin_table_is_what_the_benchmark_computes():
    """Linear algebra without iteration: the numbers as printed, no tolerance."""
    done = command('--check', '--only', 'control_margin')
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == 'control_margin (benchmarks.md): as the tools give\n'


@pytest.mark.slow
@pytest.mark.skipif(not (LOGS / 'data').is_dir(),
                    reason=f'the shared real logs are not on this machine ({LOGS})')
@pytest.mark.parametrize('block', [block for block in BLOCKS if block.real_logs],
                         ids=lambda block: block.name)
def test_the_kinova_blocks_are_what_the_tools_give_today(block):
    """rnea_identify's SDP is iterative: its numbers within 0.01 + 2 % (Block.absolute...)."""
    generated = block.make(LOGS, None)
    documented = docs_figures.block_text(ROOT / 'docs' / block.page, block.name)
    wrong = differences(documented, generated, block.absolute, block.relative)
    assert not wrong, 'regenerate: python bench/docs_figures.py\n' + '\n'.join(wrong)
