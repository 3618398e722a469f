"""
The docs' figures and the tables of tool output in them, regenerated from the tools.

Each generated block of a page lies between ``<!-- generated: NAME by python
bench/docs_figures.py -->`` and ``<!-- generated: NAME end -->``. This command runs the tool or
benchmark the block describes on its documented input and rewrites the block in place (the
numbers and the sentences that compare them), and draws the figures of ``docs/images/``:

- ``kinova_identify`` (identify.md) and ``rnea_identify_validation.png``: ``rnea_identify`` on
  the Kinova Gen3 logs, trained on each in turn and validated on the other;
- ``kinova_windows`` (bag.md): ``bench/real_log_windows.py``, without and with stamp noise;
- ``kinova_thresholds`` (bag.md): ``bench/bench_thresholds.py`` on the Kinova Gen3 logs;
- ``control_margin`` (benchmarks.md): ``bench/bench_control_margin.py`` (no input: linear
  algebra on the test suite's robots);
- ``rnea_bag_decomposition.png`` (bag.md): ``rnea_bag`` on 12 s of the test suite's analytic
  panda motion (``test/harness/bagdata.panda_bag``).

What needs the real logs (``--logs``, default ``/work/shared/real_logs/kinova_gen3``) is left
as it is, and said so, where they are not. Timings are never generated: they vary from run to
run and from machine to machine. ``--check`` writes nothing: it prints every block whose text or
numbers differ from what the tools give today beyond the block's tolerance, and exits 1::

    python bench/docs_figures.py [--logs DIR] [--only NAME ...] [--check]
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
import difflib
from pathlib import Path
import re
import sys
import tempfile
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'test'))
sys.path.insert(0, str(ROOT / 'bench'))

from convert_real_logs import quietly  # noqa: E402
import docs_kinova  # noqa: E402
from real_log_windows import LOGS  # noqa: E402

DOCS = ROOT / 'docs'
IMAGES = DOCS / 'images'
NUMBER = re.compile(r'(?<![\w.])(\d+(?:\.\d+)?(?:e[-+]?\d+)?)(?![\w])')
# The analytic panda motion of the decomposition figure: seconds and the joint_states rate.
PANDA_SECONDS, PANDA_RATE = 12.0, 200.0


def begin_marker(name: str) -> str:
    return f'<!-- generated: {name} by python bench/docs_figures.py -->'


def end_marker(name: str) -> str:
    return f'<!-- generated: {name} end -->'


@dataclass(frozen=True)
class Block:
    """
    A generated block of a page.

    ``make(logs, images)`` returns its text (without the markers); it draws its figures into
    ``images`` (None: no figure). ``real_logs``: it needs the Kinova logs. Two texts agree when
    they are the same but for their numbers, and each number is within ``absolute`` +
    ``relative`` x |documented| of the other: the tolerance of an iterative computation (the
    identification's SDP and its solver), zero where the computation is exact.
    """

    name: str
    page: str
    real_logs: bool
    make: Callable[[Path, Path | None], str]
    absolute: float = 0.0
    relative: float = 0.0


def documented(text: str, name: str) -> tuple[int, int]:
    """Return the span of the block ``name`` in a page's ``text``, between its markers."""
    begin, end = begin_marker(name), end_marker(name)
    if text.count(begin) != 1 or text.count(end) != 1:
        raise SystemExit(f'docs_figures: the page must hold {begin!r} and {end!r} once each')
    start = text.index(begin) + len(begin)
    return start, text.index(end, start)


def block_text(page: Path, name: str) -> str:
    """Return the generated block ``name`` of ``page`` (without its markers)."""
    text = page.read_text()
    start, stop = documented(text, name)
    return text[start:stop].strip('\n')


def write_block(page: Path, name: str, body: str) -> None:
    """Replace the block ``name`` of ``page`` by ``body``."""
    text = page.read_text()
    start, stop = documented(text, name)
    page.write_text(f'{text[:start]}\n{body}\n{text[stop:]}')


def differences(old: str, new: str, absolute: float, relative: float) -> list[str]:
    """
    Return what differs between two texts: words, or numbers beyond the tolerance.

    Whitespace counts as one space (a number's width moves the line breaks). Numbers are
    decimal literals not part of a name (``joint_2`` and ``testing1`` are words).
    """
    old_parts, new_parts = (NUMBER.split(' '.join(text.split())) for text in (old, new))
    if len(old_parts) != len(new_parts) or old_parts[::2] != new_parts[::2]:
        masked = [NUMBER.sub('#', text).splitlines() for text in (old, new)]
        return ['the words differ (numbers as #):'] + list(
            difflib.unified_diff(*masked, 'documented', 'generated', n=0, lineterm=''))
    wrong = []
    for k in range(1, len(old_parts), 2):
        a, b = old_parts[k], new_parts[k]
        # 1e-12: the tolerance of 0.01 holds 1.04 against 1.05 in binary floating point too.
        if abs(float(a) - float(b)) > absolute + relative * abs(float(a)) + 1e-12:
            context = ''.join(old_parts[:k])[-60:]
            wrong.append(f'{a} documented, {b} generated (after ...{context!r})')
    return wrong


def control_margin(logs: Path, images: Path | None) -> str:
    """Tabulate benchmarks.md's stability margins: the worst over the zero and 50 poses."""
    from bench_control_margin import GAINS, worst_margins
    from threadpoolctl import threadpool_limits
    described = {
        ('panda', 'pd_feedforward', 'sim PD'): "the sim's PD: 100; 10 on every joint",
        ('panda', 'pd_feedforward', 'wrist soft'): '100, 100, 50, 100, 25, 25, 10, 50; a tenth',
        ('ur5', 'pd_feedforward', 'test'): '400, 400, 200, 50, 50, 10; a tenth',
        ('panda', 'computed_torque', '400/40'): '400 1/s²; 40 1/s',
        ('ur5', 'computed_torque', '400/40'): '400 1/s²; 40 1/s'}
    assert set(described) == set(GAINS), 'a row of GAINS without its description'
    rows: dict[tuple, list[str]] = {}  # one row for the robots a law gives the same numbers
    with threadpool_limits(1):  # small eigenvalue problems: threads only contend
        margins = worst_margins(1e-3, 50)
    for (robot, law, label), (rho, delay, gain) in margins.items():
        cells = (f'`{law}`', described[robot, law, label], f'{rho:.3g}', f'{delay} ticks',
                 f'{gain:.2g}')
        rows.setdefault(cells, []).append(robot)
    lines = ['| robot | law | gains (Kp; Kd) | radius, 1 tick | largest stable delay | '
             'gain margin, 1 tick |', '|---|---|---|---|---|---|']
    lines += [f'| {", ".join(robots)} | {" | ".join(cells)} |' for cells, robots in rows.items()]
    return '\n'.join(lines)


def decomposition_figure(images: Path) -> None:
    """rnea_bag's decomposition of the first four joints of 12 s of the panda's motion."""
    from harness import bagdata

    from rnea_ros.bag.cli import main as rnea_bag
    with tempfile.TemporaryDirectory() as scratch:
        bag = Path(scratch) / 'panda'
        bagdata.panda_bag(bag, bagdata.sample_times(int(PANDA_SECONDS * PANDA_RATE) + 1,
                                                    PANDA_RATE))
        out = Path(scratch) / 'out'
        quietly(rnea_bag, [str(bag), '--urdf', str(bagdata.PANDA), '--output', str(out),
                           '--format', 'csv'])
        docs_kinova.save_png(out / 'decomposition_joints1.png',
                             images / 'rnea_bag_decomposition.png')


BLOCKS = (
    Block('kinova_identify', 'identify.md', True, docs_kinova.identification,
          absolute=0.01, relative=0.02),
    Block('kinova_windows', 'bag.md', True, docs_kinova.windows, absolute=0.01),
    Block('kinova_thresholds', 'bag.md', True, docs_kinova.thresholds),
    Block('control_margin', 'benchmarks.md', False, control_margin),
)
FIGURES = {'rnea_bag_decomposition.png': decomposition_figure}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0].strip())
    parser.add_argument('--logs', type=Path, default=LOGS,
                        help='the kinova_gen3 folder of the real logs (default: %(default)s)')
    parser.add_argument('--only', nargs='+', metavar='NAME',
                        choices=[b.name for b in BLOCKS] + list(FIGURES),
                        help='these blocks and figures only')
    parser.add_argument('--check', action='store_true',
                        help='write nothing; exit 1 when a block differs from what the tools give')
    args = parser.parse_args(argv)
    have_logs = (args.logs / 'data').is_dir()
    images = None if args.check else IMAGES
    stale = 0
    for block in BLOCKS:
        if args.only and block.name not in args.only:
            continue
        if block.real_logs and not have_logs:
            print(f'{block.name}: left as it is: no real logs in {args.logs}')
            continue
        page = DOCS / block.page
        generated = block.make(args.logs, images)
        wrong = differences(block_text(page, block.name), generated, block.absolute,
                            block.relative)
        if args.check:
            stale += bool(wrong)
            print(f'{block.name} ({block.page}): ' + ('\n  '.join(['differs'] + wrong)
                                                      if wrong else 'as the tools give'))
        else:
            write_block(page, block.name, generated)
            print(f'{block.name}: written into docs/{block.page}')
    for name, draw in FIGURES.items():
        if not args.check and (not args.only or name in args.only):
            draw(IMAGES)
            print(f'{name}: drawn into docs/images')
    return 1 if stale else 0


if __name__ == '__main__':
    sys.exit(main())
