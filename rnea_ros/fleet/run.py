"""
A fleet run: one Dask task per bag, the results gathered as they complete, the fleet outputs.

``analyse_all`` submits ``rnea_ros.fleet.task.analyse`` once per bag (``client.map``, with
``retries``: a task that raises is run again, and Dask reruns the tasks of a worker that died
elsewhere on its own, up to the scheduler's ``allowed-failures``) and collects the outcomes
with ``distributed.as_completed``, counting bags on a progress bar. A task that still fails
(an unexpected exception, a worker killed again and again) becomes an 'error' outcome of its
bag. ``write_outputs`` judges drift (between bags of like motions:
``rnea_ros.fleet.comparable``) and writes fleet.parquet, fleet.json (the drift
verdicts), fleet.md and report.html, all or none (staged and committed by
``rnea_ros.tools.staging``, as every tool writes; a full disk leaves the earlier files and names
the file it could not write).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import json
from pathlib import Path
import re
import shutil
import uuid

from rnea_ros.fleet import comparable, drift, table
from rnea_ros.fleet.bags import Bag
from rnea_ros.fleet.task import analyse, failed, Job, Outcome, PARTIAL_PREFIX
from rnea_ros.tools.staging import Staging, Tool

RETRIES = 2
BAGS = 'bags'
# The fleet reuses its output directory (re-runs are incremental): these names are replaced.
TOOL = Tool('rnea_fleet', None, re.compile(r'fleet\.(parquet|json|md)|report\.html'))


@dataclass(frozen=True)
class FleetResult:
    """
    The outcomes of every bag (in input order), the drift checks, the files written.

    ``not_judged``: the bags left out of the drift judgement, bag -> reason
    (``rnea_ros.fleet.comparable``).
    """

    outcomes: list[Outcome]
    checks: list[drift.Check]
    files: list[Path]
    not_judged: dict[str, str]

    @property
    def failed(self) -> list[Outcome]:
        """Return the bags that failed."""
        return [o for o in self.outcomes if o.status != 'ok']

    @property
    def skipped(self) -> list[Outcome]:
        """Return the bags whose stored result was reused."""
        return [o for o in self.outcomes if o.skipped]


def jobs(bags: Sequence[Bag], output: Path, options: dict, settings_digest: str,
         overwrite: bool) -> list[Job]:
    """Make one ``Job`` per bag, its results in ``output/bags/<name>``."""
    return [Job(str(bag.path), bag.name, bag.robot, str(output / BAGS / bag.name), options,
                settings_digest, overwrite, bag.robot_error) for bag in bags]


def analyse_all(client, work: Sequence[Job],
                done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Analyse every job on the cluster; call ``done(outcome)`` as each completes."""
    from distributed import as_completed
    token = uuid.uuid4().hex[:8]
    futures = client.map(analyse, list(work), retries=RETRIES, pure=False,
                         key=[f'rnea_fleet-{job.name}-{token}' for job in work])
    index = {future.key: k for k, future in enumerate(futures)}
    outcomes: list[Outcome | None] = [None] * len(futures)
    for future, result in as_completed(futures, with_results=True, raise_errors=False):
        k = index[future.key]
        if future.status == 'error':
            exc = result[1]
            outcome = failed(work[k], f'{type(exc).__name__}: {exc}')
        else:
            outcome = result
        outcomes[k] = outcome
        future.release()
        if done is not None:
            done(outcome)
    return outcomes


def clean_partial(output: Path) -> None:
    """Remove the partial folders of bags whose task was killed (this run's or an earlier)."""
    try:
        entries = list((output / BAGS).iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(PARTIAL_PREFIX) and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)


def write_outputs(output: Path, outcomes: Sequence[Outcome], thresholds: drift.Thresholds,
                  settings: dict) -> FleetResult:
    """Judge drift; write fleet.parquet, fleet.json, fleet.md and report.html into ``output``."""
    from rnea_ros.fleet import report
    not_judged = comparable.not_comparable(outcomes)
    checks = drift.check(table.samples([o for o in outcomes if o.bag not in not_judged]),
                         thresholds)
    with Staging(output, overwrite=True, tool=TOOL) as staging:
        with staging.writing('fleet.parquet') as path:
            table.write_parquet(path, table.rows(outcomes, checks, not_judged))
        staging.write_text('fleet.json', json.dumps(
            table.verdicts(checks, thresholds, outcomes, not_judged), indent=2,
            allow_nan=False) + '\n')
        staging.write_text('fleet.md', table.markdown(outcomes, checks, thresholds, settings,
                                                      not_judged))
        staging.write_text('report.html', report.page(outcomes, checks, thresholds,
                                                      not_judged))
        files = staging.commit(['fleet.parquet', 'fleet.json', 'fleet.md', 'report.html'])
    return FleetResult(list(outcomes), checks, files, not_judged)
