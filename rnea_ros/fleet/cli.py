"""
``rnea_fleet``: the ``rnea_bag`` analysis over many bags on Dask, and the fleet's drift view.

Usage::

    rnea_fleet BAG_OR_DIR [...] --output DIR [--urdf FILE]
               [--scheduler tcp://HOST:PORT [--connect-timeout S]] [--workers N]
               [--overwrite] [--robot-pattern REGEX] [rnea_bag options]

Every bag is analysed by the ``rnea_bag`` pipeline (same numbers) into ``DIR/bags/<bag>``;
``DIR/fleet.parquet``, ``DIR/fleet.md`` and ``DIR/report.html`` gather the fleet. The
per-bag analysis options are ``rnea_bag``'s own (``rnea_fleet --help`` lists them). Exit
status: 0 when every bag was analysed, 1 when a bag failed (its row says why) or the run could
not start (one line: a scheduler that does not answer as Dask within ``--connect-timeout``),
2 for bad usage, 130 after a Ctrl-C (one line; the bags done so far are kept and reused).
"""
from __future__ import annotations

import argparse
from dataclasses import asdict, replace
import math
import os
from pathlib import Path
import sys
import xml.etree.ElementTree as ET

from rnea_ros.bag import options as bag_options
from rnea_ros.errors import RneaError
from rnea_ros.fleet import drift
from rnea_ros.fleet.cluster import CONNECT_TIMEOUT

# rnea_bag options that are the fleet's own business (or its own option of the same name).
NOT_PER_BAG = frozenset({'bag', 'output', 'progress', 'timings', 'threads', 'overwrite'})


def build_parser() -> tuple[argparse.ArgumentParser, list[str]]:
    """Return the parser, and the names of the per-bag ``BagOptions`` fields it parses."""
    parser = argparse.ArgumentParser(
        prog='rnea_fleet', description='Analyse many rosbag2 bags with the rnea_bag pipeline '
        'on a Dask cluster (local by default): per-bag results, a fleet table, drift of the '
        'residual per robot and joint, an HTML report.',
        epilog='With --scheduler the bags, --urdf and DIR must be readable (DIR writable) by '
        'the workers at the same paths (shared storage), and the workers need this rnea_ros '
        'installed.')
    parser.add_argument('bags', nargs='+', metavar='BAG_OR_DIR',
                        help='a rosbag2 bag (directory or .mcap/.db3 file), or a directory: '
                        'every bag under it, its robot the name of the folder holding it')
    parser.add_argument('--output', required=True, metavar='DIR',
                        help='output directory: bags/<bag>/, fleet.parquet, fleet.md, '
                        'report.html')
    parser.add_argument('--scheduler', metavar='tcp://HOST:PORT',
                        help='run on this existing Dask cluster (default: a local cluster)')
    parser.add_argument('--connect-timeout', type=float, metavar='S',
                        help='seconds the --scheduler has to answer as a Dask scheduler '
                        f'(default: {CONNECT_TIMEOUT:g})')
    parser.add_argument('--workers', type=int, metavar='N',
                        help='worker processes of the local cluster (default: one per core)')
    parser.add_argument('--overwrite', action='store_true',
                        help='analyse every bag again (default: reuse the results in DIR '
                        'made from the same bag content and settings)')
    parser.add_argument('--robot-pattern', metavar='REGEX',
                        help='take the robot name from the bag path: the one group of REGEX '
                        r'(e.g. "fleet/(\w+)/")')
    parser.add_argument('--progress', action=argparse.BooleanOptionalAction, default=None,
                        help='progress bar of bags done on stderr (default: on a terminal)')
    checks = parser.add_argument_group(
        'drift', 'A joint drifts when its residual RMS (median of the last bags) exceeds '
        'max(FACTOR x baseline, baseline + FLOOR); baseline: median of its first bags, or of '
        'the other robots of its model when it has too few.')
    checks.add_argument('--drift-factor', type=float, default=drift.FACTOR, metavar='FACTOR',
                        help='relative growth (default: %(default)s)')
    checks.add_argument('--drift-floor', type=float, default=drift.FLOOR, metavar='FLOOR',
                        help='absolute growth, N·m or N (default: %(default)s)')
    checks.add_argument('--drift-baseline-bags', type=int, default=drift.BASELINE_BAGS,
                        metavar='K', help='first bags forming the baseline (default: '
                        '%(default)s)')
    checks.add_argument('--drift-recent-bags', type=int, default=drift.RECENT_BAGS,
                        metavar='M', help='last bags forming the current level (default: '
                        '%(default)s)')
    return parser, bag_options.add_arguments(parser, exclude=NOT_PER_BAG,
                                             main_title='per-bag analysis (as rnea_bag)')


def _urdf_name(path: str) -> str | None:
    try:
        return ET.parse(path).getroot().get('name') or None
    except (OSError, ET.ParseError):
        return None  # the tasks report the problem


def main(argv: list[str] | None = None) -> int:
    """Run ``rnea_fleet`` with ``argv`` (default: the command line); return the exit status."""
    parser, dests = build_parser()
    args = parser.parse_args(argv)
    if args.scheduler and args.workers is not None:
        parser.error('--workers sets the size of the local cluster; with --scheduler the '
                     'cluster has its own workers')
    if args.connect_timeout is not None and not args.scheduler:
        parser.error('--connect-timeout is the time --scheduler has to answer; without '
                     '--scheduler the cluster is local')
    if args.connect_timeout is not None and not 0 < args.connect_timeout < math.inf:
        parser.error(f'--connect-timeout must be a positive number of seconds, got '
                     f'{args.connect_timeout:g}')
    if args.workers is not None and args.workers < 1:
        parser.error(f'--workers must be at least 1, got {args.workers}')
    if args.drift_baseline_bags < 1 or args.drift_recent_bags < 1:
        parser.error('--drift-baseline-bags and --drift-recent-bags must be at least 1')
    try:
        return _run(args, dests)
    except (RneaError, ValueError, OSError) as exc:
        print(f'rnea_fleet: error: {exc}', file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print('rnea_fleet: interrupted (the bags analysed so far are kept; a re-run reuses '
              'them)', file=sys.stderr)
        return 130


def _run(args, dests: list[str]) -> int:
    from rnea_ros.bag.progress import Progress
    from rnea_ros.fleet import bags as fleet_bags
    from rnea_ros.fleet import cluster, digest, run
    output = Path(os.path.abspath(args.output))
    if output.exists() and not output.is_dir():
        raise RneaError(f'--output {args.output!r} exists and is not a directory')
    # threads 1: one bag per core, the cluster runs bags side by side.
    per_bag = bag_options.from_namespace(args, bag='', output=None, progress=None,
                                         overwrite=False, threads=1)
    files = bag_options.FILE_OPTIONS
    per_bag = replace(per_bag, **{name: os.path.abspath(getattr(per_bag, name))
                                  for name in files if getattr(per_bag, name)})
    chosen = asdict(per_bag)
    settings = digest.settings(chosen, files)
    options = {name: chosen[name] for name in [*dests, 'threads']}
    found = fleet_bags.discover(args.bags, args.robot_pattern, exclude=output)
    if options.get('urdf') and args.robot_pattern is None:
        name = _urdf_name(options['urdf'])
        found = [bag if bag.robot is not None else
                 fleet_bags.Bag(bag.path, name, bag.name, bag.robot_error) for bag in found]
    output.mkdir(parents=True, exist_ok=True)
    run.clean_partial(output)
    work = run.jobs(found, output, options, digest.settings_digest(settings), args.overwrite)
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    progress = Progress('bags', len(work), show, unit='bag')
    count = [0]

    def done(outcome):
        count[0] += 1
        progress(count[0])
        if outcome.status != 'ok':
            if show:
                sys.stderr.write('\n')
            print(f'rnea_fleet: error: {outcome.bag}: {outcome.error}', file=sys.stderr)

    try:
        with cluster.client(output, args.scheduler, args.workers,
                            args.connect_timeout or cluster.CONNECT_TIMEOUT) as connection:
            outcomes = run.analyse_all(connection, work, done)
    except KeyboardInterrupt:
        if show:
            sys.stderr.write('\n')  # end the progress bar's line
        if not args.scheduler:  # the local workers are closed: their partial folders are orphans
            run.clean_partial(output)
        raise
    progress.close()
    run.clean_partial(output)
    thresholds = drift.Thresholds(args.drift_factor, args.drift_floor,
                                  args.drift_baseline_bags, args.drift_recent_bags)
    shown = {'scheduler': args.scheduler or f'local ({args.workers or os.cpu_count()} '
             'workers)', 'robot_pattern': args.robot_pattern, **settings}
    result = run.write_outputs(output, outcomes, thresholds, shown)
    for check in result.checks:
        if check.flagged:
            print(f'rnea_fleet: drift: {check.robot} / {check.joint}: residual RMS '
                  f'{check.current:.4g}, baseline {check.baseline:.4g} ({check.method})',
                  file=sys.stderr)
    computed = len(outcomes) - len(result.skipped) - len(result.failed)
    print(f'rnea_fleet: {len(outcomes)} bags: {computed} analysed, {len(result.skipped)} '
          f'reused (unchanged), {len(result.failed)} failed -> {output}')
    return 1 if result.failed else 0


if __name__ == '__main__':
    sys.exit(main())
