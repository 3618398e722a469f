"""
The fleet table (``fleet.parquet``, ``fleet.md``) and the drift verdicts (``fleet.json``).

Columns of ``fleet.parquet`` (pyarrow): ``bag`` (output folder name, ``DIR/bags/<bag>``),
``path`` (the bag as given, absolute), ``robot``, ``model`` (the URDF robot name), ``joint``,
``unit``, ``start`` (bag start, timestamp UTC, µs resolution), ``duration`` (analysed span,
s), ``samples``, ``rms_torque``, ``peak_torque``, ``rms_residual``, ``peak_residual`` (N·m, N
for prismatic joints; NaN without measured effort), ``drift`` (True when
``rnea_ros.fleet.drift`` judged the robot's joint drifting, on every row of the robot and
joint), ``verdict`` ('drifting', 'stable' or 'not judged: needs N more bags'; on the rows of a
bag whose motion is unlike its robot's usual one 'not judged: not comparable with ...' and the
reason, ``rnea_ros.fleet.comparable``; empty on a failed bag's row), ``compared`` (True when
the bag's residual took part in the drift judgement), ``speed_rms`` (rad/s, m/s) and
``moving_share`` (the joint's motion in the bag), ``status`` ('ok' or 'error') and ``error``
(the message). A bag that failed has one row with an empty joint. Rows are in bag order
(start time, then name; failed bags last), joints in model order: a run and its re-run give
the same table.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
import math
from pathlib import Path

from rnea_ros.fleet import comparable, drift
from rnea_ros.fleet.task import Outcome

COLUMNS = ('bag', 'path', 'robot', 'model', 'joint', 'unit', 'start', 'duration', 'samples',
           'rms_torque', 'peak_torque', 'rms_residual', 'peak_residual', 'drift', 'verdict',
           'compared', 'speed_rms', 'moving_share', 'status', 'error')
NAN = float('nan')


def ordered(outcomes: Sequence[Outcome]) -> list[Outcome]:
    """Order the bags: successful ones by start time then name, then failed ones by name."""
    return sorted(outcomes, key=lambda o: (o.status != 'ok', o.start_ns or 0, o.bag))


def samples(outcomes: Sequence[Outcome]) -> list[drift.Sample]:
    """Return the residual RMS of every joint of every successful bag (drift samples)."""
    return [drift.Sample(o.robot or '', o.model, j.joint, o.start_ns, o.bag, j.rms_residual)
            for o in outcomes if o.status == 'ok' for j in o.joints]


def rows(outcomes: Sequence[Outcome], checks: Sequence[drift.Check],
         not_judged: Mapping[str, str] | None = None) -> dict[str, list]:
    """
    Return the table as columns (name -> list), in ``ordered`` row order.

    ``not_judged``: bag -> why it was left out of the drift judgement.
    """
    not_judged = not_judged or {}
    flagged = {(c.robot, c.joint) for c in checks if c.flagged}
    verdicts = {(c.robot, c.joint): c.verdict for c in checks}
    table: dict[str, list] = {name: [] for name in COLUMNS}

    def add(outcome: Outcome, joint=None):
        ok = joint is not None
        left_out = not_judged.get(outcome.bag)
        verdict = verdicts.get((outcome.robot or '', joint.joint), '') if ok else ''
        values = {
            'bag': outcome.bag, 'path': outcome.path, 'robot': outcome.robot or '',
            'model': outcome.model, 'joint': joint.joint if ok else '',
            'unit': joint.unit if ok else '',
            'start': None if outcome.start_ns is None else outcome.start_ns // 1000,
            'duration': outcome.duration if ok else NAN, 'samples': outcome.samples,
            'rms_torque': joint.rms_torque if ok else NAN,
            'peak_torque': joint.peak_torque if ok else NAN,
            'rms_residual': joint.rms_residual if ok else NAN,
            'peak_residual': joint.peak_residual if ok else NAN,
            'drift': ok and (outcome.robot or '', joint.joint) in flagged,
            'verdict': f'{drift.NOT_JUDGED}: {left_out}' if ok and left_out else verdict,
            'compared': ok and left_out is None,
            'speed_rms': joint.speed_rms if ok else NAN,
            'moving_share': joint.moving_share if ok else NAN,
            'status': outcome.status, 'error': outcome.error}
        for name in COLUMNS:
            table[name].append(values[name])

    for outcome in ordered(outcomes):
        if outcome.status == 'ok' and outcome.joints:
            for joint in outcome.joints:
                add(outcome, joint)
        else:
            add(outcome)
    return table


def write_parquet(path: Path, table: dict[str, list]) -> Path:
    """Write ``fleet.parquet`` with typed columns (``start``: timestamp[us, UTC])."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    schema = pa.schema([
        ('bag', pa.string()), ('path', pa.string()), ('robot', pa.string()),
        ('model', pa.string()), ('joint', pa.string()), ('unit', pa.string()),
        ('start', pa.timestamp('us', tz='UTC')), ('duration', pa.float64()),
        ('samples', pa.int64()), ('rms_torque', pa.float64()), ('peak_torque', pa.float64()),
        ('rms_residual', pa.float64()), ('peak_residual', pa.float64()),
        ('drift', pa.bool_()), ('verdict', pa.string()), ('compared', pa.bool_()),
        ('speed_rms', pa.float64()), ('moving_share', pa.float64()), ('status', pa.string()),
        ('error', pa.string())])
    pq.write_table(pa.table({name: table[name] for name in COLUMNS}, schema=schema), path)
    return path


def _fmt(value, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return '–'
    if isinstance(value, float):
        return f'{value:.{digits}g}'
    return str(value)


def _utc(ns: int | None) -> str:
    if ns is None:
        return '–'
    from datetime import datetime, timezone
    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).strftime('%Y-%m-%d %H:%M:%S UTC')


def rule(thresholds: drift.Thresholds) -> str:
    """Return the drift rule in one paragraph (Markdown), for fleet.md."""
    return (f'A joint of a robot is judged from {thresholds.min_bags} bags with measured '
            'effort: its *current* residual RMS (median of its last bags, up to '
            f'{thresholds.recent_bags}) against its *baseline* (median of its first bags, up '
            f'to {thresholds.baseline_bags}). It is **drifting** when the growth is beyond '
            'the bag-to-bag scatter (one-sided test on log RMS; the scatter pooled over the '
            'robots per joint, or over the run; false-alarm rate '
            f'{_fmt(thresholds.alpha)} over all judged joints, Holm) and '
            f'current > threshold = max({_fmt(thresholds.factor)} x baseline, baseline + '
            f'{_fmt(thresholds.floor)}); **stable** when judged and not drifting; **not '
            'judged: needs N more bags** when it has fewer bags: nothing is said about its '
            'drift. z: the growth in units of its expected scatter; p: the chance of a growth '
            'this large without drift, Holm-adjusted over the judged joints. '
            + comparable.rule())


def markdown(outcomes: Sequence[Outcome], checks: Sequence[drift.Check],
             thresholds: drift.Thresholds, settings: dict,
             not_judged: Mapping[str, str] | None = None) -> str:
    """
    Return fleet.md: counts, drift verdicts, per-(robot, joint) table, bags, failures.

    ``not_judged``: bag -> why it was left out of the drift judgement (its own section).
    """
    not_judged = not_judged or {}
    ok = [o for o in outcomes if o.status == 'ok']
    failed = [o for o in outcomes if o.status != 'ok']
    robots = sorted({o.robot or '' for o in ok})
    flagged = [c for c in checks if c.flagged]
    lines = ['# Fleet torque analysis', '',
             f'- {len(outcomes)} bags: {len(ok)} analysed, {len(failed)} failed; '
             f'{len(robots)} robots', '', '## Drift', '',
             f'**{drift.headline(list(checks), len(not_judged))}.**', '']
    if flagged:
        lines += [f'**{len(flagged)} joint(s) drifting:** '
                  + ', '.join(f'`{c.robot}` / `{c.joint}`' for c in flagged), '']
    lines += [rule(thresholds), '']
    lines += ['| robot | joint | bags | verdict | baseline | current | ratio | threshold | '
              'scatter [%] | z | p (Holm) |', '|---|---|---|---|---|---|---|---|---|---|---|']
    order = {drift.DRIFTING: 0, drift.STABLE: 1}
    for c in sorted(checks, key=lambda c: (order.get(c.verdict, 2), c.robot, c.joint)):
        verdict = f'**{c.verdict}**' if c.flagged else c.verdict
        lines.append(f'| `{c.robot}` | `{c.joint}` | {c.bags} | {verdict} | '
                     f'{_fmt(c.baseline)} | {_fmt(c.current)} | '
                     f'{_fmt(c.ratio, 3)} | {_fmt(c.threshold)} | {_fmt(100 * c.scatter, 3)} | '
                     f'{_fmt(c.statistic, 3)} | '
                     f'{_fmt(c.p_adjusted, 2)} |')
    lines += ['', '## Bags', '',
              '| bag | robot | start | duration [s] | samples | at a limit | worst RMS residual |',
              '|---|---|---|---|---|---|---|']
    for o in ordered(ok):
        residuals = [(j.rms_residual, j.joint) for j in o.joints
                     if not math.isnan(j.rms_residual)]
        worst = f'{_fmt(max(residuals)[0])} (`{max(residuals)[1]}`)' if residuals else '–'
        lines.append(f'| `{o.bag}` | `{o.robot}` | {_utc(o.start_ns)} | {_fmt(o.duration)} | '
                     f'{o.samples} | {o.at_limit} | {worst} |')
    if not_judged:
        lines += ['', '## Bags not judged', '', '| bag | robot | why |', '|---|---|---|']
        for o in ordered(ok):
            if o.bag in not_judged:
                lines.append(f'| `{o.bag}` | `{o.robot}` | {_cell(not_judged[o.bag])} |')
    if failed:
        lines += ['', '## Failed bags', '', '| bag | path | error |', '|---|---|---|']
        for o in ordered(failed):
            lines.append(f'| `{o.bag}` | `{o.path}` | {_cell(o.error)} |')
    lines += ['', '## Settings', '', '```', *(f'{k}: {v}' for k, v in settings.items()), '```']
    return '\n'.join(lines) + '\n'


def verdicts(checks: Sequence[drift.Check], thresholds: drift.Thresholds,
             outcomes: Sequence[Outcome] = (),
             not_judged: Mapping[str, str] | None = None) -> dict:
    """
    Return fleet.json: the drift rule's parameters, the headline and every verdict.

    Per (robot, joint): ``verdict``, ``bags``, ``bags_needed``, ``baseline``, ``current``,
    ``ratio``, ``threshold``, ``scatter`` (of log RMS), ``statistic`` (z), ``p_value``,
    ``p_adjusted`` (Holm) and ``alpha``; ``null`` where not judged. ``bags_not_judged``: per
    bag of ``outcomes`` left out (``not_judged``: bag -> reason), its robot and the reason;
    ``rule.comparable``: the rule that leaves them out.
    """
    not_judged = not_judged or {}

    def number(value: float):
        return None if math.isnan(value) else value

    return {
        'drift': {
            'headline': drift.headline(list(checks), len(not_judged)),
            'rule': {'alpha': thresholds.alpha, 'min_bags': thresholds.min_bags,
                     'baseline_bags': thresholds.baseline_bags,
                     'recent_bags': thresholds.recent_bags, 'factor': thresholds.factor,
                     'floor': thresholds.floor, 'correction': 'holm',
                     'comparable': {'moving_speed': comparable.MOVING_SPEED,
                                    'speed_ratio': comparable.SPEED_RATIO,
                                    'share_difference': comparable.SHARE_DIFFERENCE}},
            'bags_not_judged': [{'robot': o.robot, 'bag': o.bag, 'reason': not_judged[o.bag]}
                                for o in ordered(outcomes) if o.bag in not_judged],
            'counts': {'drifting': sum(c.flagged for c in checks),
                       'stable': sum(c.verdict == drift.STABLE for c in checks),
                       'not_judged': sum(not c.judged for c in checks)},
            'joints': [{'robot': c.robot, 'joint': c.joint, 'verdict': c.verdict,
                        'bags': c.bags, 'bags_needed': c.needed,
                        'baseline': number(c.baseline), 'current': number(c.current),
                        'ratio': number(c.ratio), 'threshold': number(c.threshold),
                        'scatter': number(c.scatter),
                        'statistic': _finite(c.statistic), 'p_value': number(c.p_value),
                        'p_adjusted': number(c.p_adjusted), 'alpha': c.alpha}
                       for c in checks]}}


def _cell(text: str) -> str:
    """Return ``text`` as one Markdown table cell."""
    return text.replace('|', '\\|').replace('\n', ' ')


def _finite(value: float):
    """JSON has no infinity: a z of identical bags is written as a string."""
    if math.isnan(value):
        return None
    return value if math.isfinite(value) else ('inf' if value > 0 else '-inf')
