"""
Every offline tool's outputs on the bench bags, at two versions of the package, byte for byte.

    python bench/compare_outputs.py [BEFORE] [AFTER] [--minutes 0.5] [--keep DIR]

BEFORE and AFTER are commits (a detached ``git worktree`` is made of each, removed at the end)
or the folders of source trees (default: 5399e66 and this tree). The inputs are generated once,
by this tree's bench generators: the panda bag of ``bench_bag.py``, the xarm7 bag of
``bench_identify.py``, the two-robot folder of ``bench_fleet.py`` (``--minutes`` each, 1 kHz),
and the Kinova Gen3 logs of the shared real logs (if present) for ``rnea_convert``. Each version
then runs, in fresh processes with its own ``PYTHONPATH`` and numba cache, the commands the
benches run: ``rnea_bag`` (with ``--write-bag`` and ``--observer``), ``rnea_identify``,
``rnea_fleet`` on a local cluster, ``rnea_convert`` (then ``rnea_bag`` on its bag) and
``rnea_excite`` (``bench_excite.py``'s command, tiny). Both versions write into the same
folder (moved aside after each run), so the paths the outputs name are the same.

Prints a row per file: ``same``, ``DIFFERENT`` (with the first lines of the difference),
``only in ...``, or ``same but ...`` for a file that carries what changes from run to run by
design (``VOLATILE``: which, why, and the pattern masked before comparing). Exits 1 when a file
differs. ``--compare-only`` compares the outputs a ``--keep DIR`` run left, without running;
``--reuse-before`` runs AFTER only, against the inputs and BEFORE's outputs of a ``--keep DIR``
run (rename DIR/after to DIR/before to compare a third version with the second).
"""
from __future__ import annotations

import argparse
import difflib
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'bench'))
sys.path.insert(0, str(ROOT / 'test'))

from harness.oracle import robot_path  # noqa: E402

# What changes from run to run by design, per file name: (pattern masked, why).
VOLATILE = {
    'report.html': (r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}',
                    "plotly's random element ids"),
    'identification.json': (r'"timings": \{[^}]*\}', "rnea_identify's phase durations"),
    'excitation.json': (r'"seconds": [0-9.e+-]+', "the optimiser's wall-clock time"),
    'excitation.md': (r'iterations, [0-9.]+ s', "the optimiser's wall-clock time"),
}
KINOVA = Path('/work/shared/real_logs/kinova_gen3')
KINOVA_JOINTS = ','.join(f'joint_{k}' for k in range(1, 8))
EXCITE_JOINTS = ','.join(f'panda_joint{k}' for k in range(1, 8))


def inputs(folder: Path, minutes: float) -> dict[str, Path]:
    """Generate the bench inputs into ``folder`` (this tree's generators, seeded)."""
    import bench_bag
    import bench_identify
    from rnea_ros import RobotModel
    n = int(round(minutes * 60_000))
    panda = RobotModel.from_urdf_file(robot_path('panda'))
    found = {'panda_bag': folder / 'panda_bag', 'xarm7_bag': folder / 'xarm7_bag',
             'fleet': folder / 'fleet'}
    bench_bag.generate(found['panda_bag'], n, 1000.0, 'mcap', panda)
    xarm7 = RobotModel.from_urdf_file(robot_path(bench_identify.ROBOT))
    bench_identify.generate(found['xarm7_bag'], n, 1000.0, xarm7)
    for k in range(2):  # bench_fleet.bags_of: robot_0/run_00, robot_1/run_01
        bag = found['fleet'] / f'robot_{k % 2}' / f'run_{k:02d}'
        bag.parent.mkdir(parents=True)
        shutil.copytree(found['panda_bag'], bag)
    return with_kinova_log(found)


def with_kinova_log(found: dict[str, Path]) -> dict[str, Path]:
    """Add the first Kinova Gen3 log as ``kinova_log`` when the shared real logs are here."""
    for log in sorted((KINOVA / 'data').glob('*.csv'))[:1]:
        found['kinova_log'] = log
    return found


def commands(found: dict[str, Path], out: Path) -> dict[str, list[str]]:
    """Return the tool runs: name -> arguments of ``python -m``."""
    panda, xarm7 = str(robot_path('panda')), str(robot_path('xarm7'))
    runs = {
        'rnea_bag': ['rnea_ros.bag', str(found['panda_bag']), '--urdf', panda, '--output',
                     str(out / 'rnea_bag'), '--write-bag', '--no-progress'],
        'rnea_bag_observer': ['rnea_ros.bag', str(found['panda_bag']), '--urdf', panda,
                              '--output', str(out / 'rnea_bag_observer'), '--observer',
                              '--format', 'csv', '--no-plots', '--no-progress'],
        'rnea_identify': ['rnea_ros.identify', str(found['xarm7_bag']), '--urdf', xarm7,
                          '--output', str(out / 'rnea_identify')],
        'rnea_fleet': ['rnea_ros.fleet', str(found['fleet']), '--output',
                       str(out / 'rnea_fleet'), '--urdf', panda, '--workers', '1',
                       '--no-progress'],
        'rnea_excite': ['rnea_ros.excite', '--urdf', panda, '--output', str(out / 'rnea_excite'),
                        '--joints', EXCITE_JOINTS, '--harmonics', '2', '--duration', '10',
                        '--max-iterations', '2', '--no-plots'],
    }
    if 'kinova_log' in found:
        urdf = str(KINOVA / 'GEN3-7DOF-VISION_ARM_URDF_V12.urdf')
        runs['rnea_convert'] = [
            'rnea_ros.convert', str(found['kinova_log']), '--output',
            str(out / 'rnea_convert'), '--joints', KINOVA_JOINTS, '--time', 'Time',
            '--time-unit', 'ms', '--position', 'Position{n}', '--velocity', 'Velocity{n}',
            '--effort', 'TorqueSm{n}']
        runs['rnea_bag_converted'] = [
            'rnea_ros.bag', str(out / 'rnea_convert'), '--urdf', urdf, '--output',
            str(out / 'rnea_bag_converted'), '--format', 'csv', '--no-plots', '--no-progress']
    return runs


def run_version(tree: Path, found: dict[str, Path], out: Path, cache: Path, keep: Path) -> None:
    """Run every tool with ``tree``'s package into ``out``, then move ``out`` to ``keep``."""
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=str(cache),
               MPLBACKEND='Agg')
    out.mkdir()
    for name, argv in commands(found, out).items():
        begin = time.perf_counter()
        done = subprocess.run([sys.executable, '-m', *argv], env=env, cwd=tree,
                              capture_output=True, text=True)
        print(f'  {name}: exit {done.returncode}, {time.perf_counter() - begin:.0f} s, '
              f'load {os.getloadavg()[0]:.2f}', flush=True)
        folder = out / name
        folder.mkdir(exist_ok=True)
        (folder / 'stdout.txt').write_text(
            f'exit {done.returncode}\n{done.stdout}\n--- stderr\n{done.stderr}')
    out.rename(keep)


def compare(before: Path, after: Path) -> int:
    """Print a row per file of both trees; return how many differ not by design."""
    names = sorted({p.relative_to(before) for p in before.rglob('*') if p.is_file()}
                   | {p.relative_to(after) for p in after.rglob('*') if p.is_file()})
    differ = 0
    print('| tool | file | before vs after |\n|---|---|---|')
    for name in names:
        a, b = before / name, after / name
        if not (a.exists() and b.exists()):
            verdict = f'only in {"before" if a.exists() else "after"}'
            differ += 1
        elif a.read_bytes() == b.read_bytes():
            verdict = 'same'
        elif name.name in VOLATILE and masked(a) == masked(b):
            verdict = f'same but {VOLATILE[name.name][1]}'
        else:
            verdict = 'DIFFERENT'
            differ += 1
            show(a, b)
        print(f'| {name.parts[0]} | {Path(*name.parts[1:])} | {verdict} |')
    return differ


def masked(path: Path) -> str:
    """Return the text of ``path`` with its ``VOLATILE`` pattern replaced by ``#``."""
    return re.sub(VOLATILE[path.name][0], '#', path.read_text())


def show(a: Path, b: Path, lines: int = 12) -> None:
    """Print the first lines of a text file's difference (nothing for a binary file)."""
    try:
        texts = [masked(p) if p.name in VOLATILE else p.read_text() for p in (a, b)]
    except UnicodeDecodeError:
        return
    diff = list(difflib.unified_diff(texts[0].splitlines(), texts[1].splitlines(), 'before',
                                     'after', lineterm='', n=0))
    for line in diff[2:2 + lines]:
        print(f'    {line[:160]}')


def tree_of(version: str, scratch: Path, label: str) -> Path:
    """Return a source tree of ``version``: a folder as is, or a detached worktree of a commit."""
    if Path(version).is_dir():
        return Path(version).resolve()
    tree = scratch / f'tree_{label}'
    subprocess.run(['git', '-C', str(ROOT), 'worktree', 'add', '--detach', str(tree), version],
                   check=True, capture_output=True)
    return tree


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0].strip())
    parser.add_argument('before', nargs='?', default='5399e66', help='commit or source folder')
    parser.add_argument('after', nargs='?', default=str(ROOT), help='commit or source folder')
    parser.add_argument('--minutes', type=float, default=0.5, help='length of each bag')
    parser.add_argument('--keep', type=Path, help='work in DIR and keep it (inputs, outputs, '
                        'numba caches: a second run reuses the caches)')
    parser.add_argument('--compare-only', action='store_true',
                        help="compare the outputs a --keep DIR run left (DIR's before, after)")
    parser.add_argument('--reuse-before', action='store_true',
                        help="run AFTER only, on DIR's inputs, against DIR/before")
    args = parser.parse_args(argv)
    if (args.compare_only or args.reuse_before) and args.keep is None:
        parser.error('--compare-only and --reuse-before need --keep DIR')
    if args.compare_only:
        differ = compare(args.keep / 'before', args.keep / 'after')
        print(f'{differ} file(s) differ')
        return 1 if differ else 0
    print(f'load average {os.getloadavg()[0]:.2f}; {args.before} against {args.after}')
    with tempfile.TemporaryDirectory() as temporary:
        scratch = args.keep or Path(temporary)
        scratch.mkdir(parents=True, exist_ok=True)
        found_dir = scratch / 'inputs'
        if args.reuse_before:
            found = with_kinova_log({name: found_dir / name
                                     for name in ('panda_bag', 'xarm7_bag', 'fleet')})
        else:
            shutil.rmtree(found_dir, ignore_errors=True)
            found_dir.mkdir()
            found = inputs(found_dir, args.minutes)
        versions = [('before', args.before), ('after', args.after)][args.reuse_before:]
        worktrees = []
        try:
            for label, version in versions:
                tree = tree_of(version, scratch, label)
                if tree != Path(version).resolve():
                    worktrees.append(tree)
                print(f'{label}: {tree}', flush=True)
                shutil.rmtree(scratch / label, ignore_errors=True)
                shutil.rmtree(scratch / 'out', ignore_errors=True)
                run_version(tree, found, scratch / 'out', scratch / f'numba_{label}',
                            scratch / label)
        finally:
            for tree in worktrees:
                subprocess.run(['git', '-C', str(ROOT), 'worktree', 'remove', '--force',
                                str(tree)], capture_output=True)
        differ = compare(scratch / 'before', scratch / 'after')
    print(f'load average {os.getloadavg()[0]:.2f}; {differ} file(s) differ')
    return 1 if differ else 0


if __name__ == '__main__':
    sys.exit(main())
