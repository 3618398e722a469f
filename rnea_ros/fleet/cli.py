"""
``rnea_fleet``: the ``rnea_bag`` analysis over many bags on Dask, and the fleet's drift view.

Usage::

    rnea_fleet BAG_OR_DIR [...] --output DIR [--urdf FILE]
               [--scheduler tcp://HOST:PORT [--connect-timeout S] [--allow-remote-scheduler]]
               [--workers N] [--overwrite] [--robot-pattern REGEX] [rnea_bag options]
    rnea_fleet --manifest FILE --output DIR [...]

``--manifest FILE`` names each robot's URDF, actuation model and bags (``rnea_ros.fleet.manifest``)
instead of BAG_OR_DIR, ``--urdf``, ``--actuation`` and ``--robot-pattern``.

Every bag is analysed by the ``rnea_bag`` pipeline (same numbers) into ``DIR/bags/<bag>``;
``DIR/fleet.parquet``, ``DIR/fleet.md`` and ``DIR/report.html`` gather the fleet. The
per-bag analysis options are ``rnea_bag``'s own (``rnea_fleet --help`` lists them). Exit
status: 0 when every bag was analysed, 1 when a bag failed (its row says why) or the run could
not start (one line: a scheduler that does not answer as Dask within ``--connect-timeout``),
2 for bad usage (also a ``tcp://`` --scheduler that is not a loopback address, without
``--allow-remote-scheduler``: ``cluster.unprotected``), 130 after a Ctrl-C (one line; the
bags done so far are kept and reused).
"""
from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, replace
import os
from pathlib import Path
import shutil
import sys
import xml.etree.ElementTree as ET

from rnea_ros.bag import options as bag_options
from rnea_ros.description.loading import read_file_option
from rnea_ros.description.robot_file import read_robot_description
from rnea_ros.errors import InputError, RneaError, UsageParser
from rnea_ros.fleet import drift
from rnea_ros.fleet.cluster import ALLOW_REMOTE, check_address, CONNECT_TIMEOUT, unprotected
from rnea_ros.tools.options import add_fields, from_namespace, MAIN, option, positional, \
    THREADS
from rnea_ros.tools.run import run_tool


DRIFT = 'drift'
GROUPS = {bag_options.MAIN: None, DRIFT: 'A joint of a robot with at least MIN bags is '
          'drifting when the residual RMS of its last bags (median) exceeds that of its first '
          'bags by more than the bag-to-bag scatter explains (false-alarm rate ALPHA over all '
          'joints) and exceeds max(FACTOR x baseline, baseline + FLOOR); stable otherwise; '
          'with fewer bags it is not judged.'}


@dataclass(frozen=True)
class FleetOptions:
    """The fleet's own options (``rnea_fleet --help``); the per-bag ones are ``BagOptions``."""

    bags: list = positional(MAIN, nargs='*', metavar='BAG_OR_DIR', help='a rosbag2 bag '
                            '(directory or .mcap/.db3 file), or a directory: every bag under '
                            'it, its robot the name of the folder holding it (or --manifest)')
    output: str = positional(MAIN, required=True, metavar='DIR', help='output directory: '
                             'bags/<bag>/, fleet.parquet, fleet.json, fleet.md, report.html')
    manifest: str | None = option(None, MAIN, metavar='FILE', help='a YAML file naming each '
                                  'robot: urdf, actuation and bags (paths or patterns, '
                                  'relative to FILE): robots of different models in one run; '
                                  'instead of BAG_OR_DIR, --urdf, --actuation and '
                                  '--robot-pattern')
    scheduler: str | None = option(None, MAIN, metavar='tcp://HOST:PORT', help='run on this '
                                   'existing Dask cluster (default: a local cluster)')
    allow_remote_scheduler: bool = option(
        False, MAIN, action='store_true', help='send the work to a --scheduler off this '
        'machine over an address without TLS (tcp://): unencrypted and unauthenticated, '
        'for a network you trust (default: refused; tls:// needs no flag)')
    connect_timeout: float | None = option(
        None, MAIN, type=float, metavar='S', bounds=(1e-3, 86400.0),
        help='seconds the --scheduler has to answer as a '
        f'Dask scheduler (default: {CONNECT_TIMEOUT:g})')
    workers: int | None = option(None, MAIN, type=int, metavar='N', bounds=THREADS,
                                 help='worker processes of '
                                 'the local cluster (default: one per core)')
    overwrite: bool = option(False, MAIN, action='store_true', help='analyse every bag again '
                             '(default: reuse the results in DIR made from the same bag '
                             'content and settings)')
    use_desired_accelerations: bool = option(
        False, MAIN, action='store_true', help='take the accelerations of a bag with a '
        'desired-accelerations topic from it, as rnea_bag does (default: estimated from the '
        'positions in every bag: a desired acceleration the robot did not follow, tracking '
        'error or torque saturation, would count as residual and hide a drift)')
    robot_pattern: str | None = option(
        None, MAIN, metavar='REGEX', help='take the robot name from the bag path: the one '
        r'group of REGEX (e.g. "fleet/(\w+)/")')
    progress: bool | None = option(None, MAIN, action=argparse.BooleanOptionalAction,
                                   help='progress bar of bags done on stderr (default: on a '
                                   'terminal)')
    drift_factor: float = option(drift.FACTOR, DRIFT, type=float, metavar='FACTOR',
                                 bounds=drift.FACTOR_BOUNDS,
                                 help='relative growth (default: %(default)s)')
    drift_floor: float = option(drift.FLOOR, DRIFT, type=float, metavar='FLOOR',
                                bounds=drift.FLOOR_BOUNDS,
                                help='absolute growth, N·m or N (default: %(default)s)')
    drift_baseline_bags: int = option(drift.BASELINE_BAGS, DRIFT, type=int, metavar='K',
                                      bounds=(2, drift.BAGS_BOUNDS),
                                      help='first bags forming the baseline (default: '
                                      '%(default)s)')
    drift_recent_bags: int = option(drift.RECENT_BAGS, DRIFT, type=int, metavar='M',
                                    bounds=(1, drift.BAGS_BOUNDS),
                                    help='last bags forming the current level (default: '
                                    '%(default)s)')
    drift_alpha: float = option(drift.ALPHA, DRIFT, type=float, metavar='ALPHA',
                                bounds=drift.ALPHA_BOUNDS,
                                help='false-alarm rate over all judged joints (default: '
                                '%(default)s)')
    drift_min_bags: int = option(drift.MIN_BAGS, DRIFT, type=int, metavar='MIN',
                                 bounds=(3, drift.BAGS_BOUNDS),
                                 help='bags a joint needs to be judged (default: %(default)s)')


# The BagOptions the fleet sets itself: how results are written, and where the accelerations
# come from (--use-desired-accelerations).
PER_FLEET = bag_options.RUN_OPTIONS | {'estimate_accelerations'}


def build_parser() -> tuple[argparse.ArgumentParser, list[str]]:
    """Return the parser, and the names of the per-bag ``BagOptions`` fields it parses."""
    parser = UsageParser(
        prog='rnea_fleet', description='Analyse many rosbag2 bags with the rnea_bag pipeline '
        'on a Dask cluster (local by default): per-bag results, a fleet table, drift of the '
        'residual per robot and joint, an HTML report.',
        epilog='With --scheduler the bags, --urdf and DIR must be readable (DIR writable) by '
        'the workers at the same paths (shared storage), and the workers need this rnea_ros '
        'installed.')
    add_fields(parser, FleetOptions, GROUPS)
    return parser, bag_options.add_arguments(parser, exclude=PER_FLEET,
                                             main_title='per-bag analysis (as rnea_bag)')


def _urdf_name(path: str) -> str | None:
    try:
        return ET.parse(path).getroot().get('name') or None
    except (OSError, ET.ParseError):
        return None  # the tasks report the problem


def _check_urdf(options: bag_options.BagOptions) -> None:
    """Refuse a --urdf every bag would fail on (unreadable, not UTF-8, not XML), at once."""
    if not options.urdf:
        return
    xacro_args = dict(options.xacro_arg or ())
    text = read_file_option('--urdf', options.urdf,
                            lambda path: read_robot_description(path, xacro_args))
    try:
        ET.fromstring(text)
    except ET.ParseError as exc:
        raise InputError(f'--urdf {options.urdf!r}: malformed XML: {exc}') from None


def main(argv: list[str] | None = None) -> int:
    """Run ``rnea_fleet`` with ``argv`` (default: the command line); return the exit status."""
    parser, dests = build_parser()
    namespace = parser.parse_args(argv)
    fleet = from_namespace(namespace, FleetOptions)
    if bool(fleet.bags) == bool(fleet.manifest):
        parser.error('give the bags (BAG_OR_DIR ...) or --manifest FILE, not both'
                     if fleet.bags else 'give the bags (BAG_OR_DIR ...) or --manifest FILE')
    per_robot = [flag for flag, value in (('--urdf', namespace.urdf),
                                          ('--actuation', namespace.actuation),
                                          ('--robot-pattern', fleet.robot_pattern)) if value]
    if fleet.manifest and per_robot:
        parser.error(f'{per_robot[0]} is per robot with --manifest: give it in the manifest '
                     '(urdf, actuation; the robots are its names)')
    if fleet.scheduler and fleet.workers is not None:
        parser.error('--workers sets the size of the local cluster; with --scheduler the '
                     'cluster has its own workers')
    if fleet.allow_remote_scheduler and not fleet.scheduler:
        parser.error('--allow-remote-scheduler is for a --scheduler address; without '
                     '--scheduler the cluster is local')
    if fleet.connect_timeout is not None and not fleet.scheduler:
        parser.error('--connect-timeout is the time --scheduler has to answer; without '
                     '--scheduler the cluster is local')
    return run_tool('rnea_fleet', lambda: _start(fleet, namespace, dests),
                    interrupted='interrupted (the bags analysed so far are kept; a re-run '
                    'reuses them)')


def _start(fleet: FleetOptions, namespace: argparse.Namespace, dests: list[str]) -> int:
    # threads 1: one bag per core, the cluster runs bags side by side.
    per_bag = from_namespace(namespace, bag_options.BagOptions, bag='', output=None,
                             progress=None, overwrite=False, threads=1,
                             estimate_accelerations=not fleet.use_desired_accelerations)
    if fleet.scheduler:
        check_address(fleet.scheduler)
        risk = unprotected(fleet.scheduler)
        if risk and not fleet.allow_remote_scheduler:
            raise InputError(risk)
        if risk:
            print(f'rnea_fleet: warning: --scheduler {fleet.scheduler!r} is reached '
                  f'without TLS ({ALLOW_REMOTE}): the work and the results travel '
                  'unencrypted and unauthenticated', file=sys.stderr)
    return _run(fleet, per_bag, [*dests, 'estimate_accelerations'])


def _run(fleet: FleetOptions, per_bag: bag_options.BagOptions, dests: list[str]) -> int:
    """Analyse every bag with ``per_bag`` (the ``BagOptions`` template) on the cluster."""
    from rnea_ros.fleet import bags as fleet_bags
    from rnea_ros.fleet import cluster, digest, run
    from rnea_ros.tools.progress import Progress
    output = Path(os.path.abspath(fleet.output))
    if output.exists() and not output.is_dir():
        raise RneaError(f'--output {fleet.output!r} exists and is not a directory')
    _check_urdf(per_bag)
    files = bag_options.FILE_OPTIONS
    per_bag = replace(per_bag, **{name: os.path.abspath(getattr(per_bag, name))
                                  for name in files if getattr(per_bag, name)})
    if fleet.manifest:
        from rnea_ros.fleet import manifest
        robots = manifest.load(fleet.manifest, dict(per_bag.xacro_arg or ()), exclude=output)
        work, settings = manifest.jobs(robots, per_bag, dests, output, fleet.overwrite)
        settings = {'manifest': os.path.abspath(fleet.manifest), **settings}
    else:
        chosen = asdict(per_bag)
        settings = digest.settings(chosen, files)
        options = {name: chosen[name] for name in [*dests, 'threads']}
        found = fleet_bags.discover(fleet.bags, fleet.robot_pattern, exclude=output)
        if options.get('urdf') and fleet.robot_pattern is None:
            name = _urdf_name(options['urdf'])
            found = [bag if bag.robot is not None else
                     fleet_bags.Bag(bag.path, name, bag.name, bag.robot_error) for bag in found]
        work = run.jobs(found, output, options, digest.settings_digest(settings),
                        fleet.overwrite)
    created = not output.exists()
    output.mkdir(parents=True, exist_ok=True)
    run.clean_partial(output)
    show = fleet.progress if fleet.progress is not None else sys.stderr.isatty()
    progress = Progress('bags', len(work), show, unit='bag')
    count = [0]

    def done(outcome):
        count[0] += 1
        progress(count[0])
        if outcome.status != 'ok' and not outcome.refused:
            if show:
                sys.stderr.write('\n')
            print(f'rnea_fleet: error: {outcome.bag}: {outcome.error}', file=sys.stderr)

    try:
        with cluster.client(output, fleet.scheduler, fleet.workers,
                            fleet.connect_timeout or cluster.CONNECT_TIMEOUT) as connection:
            outcomes = run.analyse_all(connection, work, done)
    except KeyboardInterrupt:
        if show:
            sys.stderr.write('\n')  # end the progress bar's line
        if not fleet.scheduler:  # the local workers are closed: their partial folders are orphans
            run.clean_partial(output)
        raise
    progress.close()
    run.clean_partial(output)
    refused = [outcome for outcome in outcomes if outcome.refused]
    if refused:  # a log in a wrong unit: stop with its one line, write nothing
        if created:
            shutil.rmtree(output, ignore_errors=True)
        raise InputError(f'{refused[0].path}: {refused[0].error}')
    thresholds = drift.Thresholds(fleet.drift_factor, fleet.drift_floor,
                                  fleet.drift_baseline_bags, fleet.drift_recent_bags,
                                  fleet.drift_alpha, fleet.drift_min_bags)
    shown = {'scheduler': fleet.scheduler or f'local ({fleet.workers or os.cpu_count()} '
             'workers)', 'robot_pattern': fleet.robot_pattern, **settings}
    result = run.write_outputs(output, outcomes, thresholds, shown)
    for check in result.checks:
        if check.flagged:
            print(f'rnea_fleet: drift: {check.robot} / {check.joint}: residual RMS '
                  f'{check.current:.4g}, baseline {check.baseline:.4g} (z {check.statistic:.3g}'
                  f', p {check.p_adjusted:.2g} Holm)', file=sys.stderr)
    for bag, reason in sorted(result.not_judged.items()):
        print(f'rnea_fleet: drift: {bag}: {drift.NOT_JUDGED}: {reason}', file=sys.stderr)
    print(f'rnea_fleet: drift: {drift.headline(result.checks, len(result.not_judged))} '
          '(drifting: beyond the '
          f'bag-to-bag scatter at false-alarm rate {thresholds.alpha:g} and above the '
          'threshold; stable: judged, not drifting; not judged: fewer than '
          f'{thresholds.min_bags} bags)')
    computed = len(outcomes) - len(result.skipped) - len(result.failed)
    print(f'rnea_fleet: {len(outcomes)} bags: {computed} analysed, {len(result.skipped)} '
          f'reused (unchanged), {len(result.failed)} failed -> {output}')
    return 1 if result.failed else 0


if __name__ == '__main__':
    sys.exit(main())
