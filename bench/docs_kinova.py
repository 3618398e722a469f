"""
The docs' blocks generated from the Kinova Gen3 logs (``bench/docs_figures.py``).

Each function takes the ``kinova_gen3`` folder of the shared real logs, runs the tools on it and
returns the block's Markdown: the table and the sentences that compare its numbers. A sentence
whose claim the numbers no longer support is not written: the function stops, naming the claim,
so that a person rewrites it (the docs stay true or the command fails).
"""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
import re
import tempfile
import textwrap

from convert_real_logs import quietly
import numpy as np
from real_log_windows import convert, JOINTS, URDF

from rnea_ros.identify.cli import main as rnea_identify

FILES = ('opti_traj_testing1.csv', 'opti_traj_testing2.csv')
MODELS = {'urdf': 'URDF', 'urdf+friction': 'URDF + fitted friction and armature',
          'identified': 'identified (`--inertial physical`)'}


class StaleProse(SystemExit):
    """A sentence of a generated block that the numbers of today no longer support."""

    def __init__(self, block: str, claim: str):
        super().__init__(f'docs_figures: {block}: the numbers no longer support "{claim}": '
                         'rewrite the sentence in bench/docs_kinova.py')


def fill(text: str) -> str:
    """Wrap each paragraph of ``text`` (blank-line separated) at the docs' width."""
    paragraphs = text.strip().split('\n\n')
    return '\n\n'.join(
        textwrap.fill(' '.join(paragraph.split()), width=96, break_long_words=False,
                      break_on_hyphens=False) for paragraph in paragraphs)


def save_png(figure: Path, path: Path) -> None:
    """Write a tool's PNG ``figure`` as ``path``: the same pixels, compressed fully."""
    from PIL import Image
    with Image.open(figure) as image:
        image.save(path, optimize=True)


def duration(log: Path) -> float:
    """Seconds from a Kinova log's first sample to its last (Time in ms)."""
    time = np.loadtxt(log, delimiter=',', skiprows=1, usecols=0)
    return float(time[-1] - time[0]) * 1e-3


def identify(train: Path, validate: Path, urdf: Path, out: Path, plots: bool) -> dict:
    """Run ``rnea_identify`` with its defaults; return identification.json."""
    quietly(rnea_identify, [str(train), '--urdf', str(urdf), '--validate', str(validate),
                            '--output', str(out)] + ([] if plots else ['--no-plots']))
    return json.loads((out / 'identification.json').read_text())


def residual_table(report: dict) -> str:
    """Tabulate the validation RMS per joint and model, the smallest of each joint in bold."""
    rms = {model: [report['rms'][model]['validation'][j] for j in JOINTS] for model in MODELS}
    best = np.argmin(list(rms.values()), axis=0)
    lines = [f'| model (validation data) | {" | ".join(JOINTS)} |', '|---' * 8 + '|']
    for row, (model, label) in enumerate(MODELS.items()):
        cells = [f'**{value:.2f}**' if best[k] == row else f'{value:.2f}'
                 for k, value in enumerate(rms[model])]
        lines.append(f'| {label} | {" | ".join(cells)} |')
    return '\n'.join(lines)


def warning_counts(report: dict, words: str) -> tuple[int, int] | None:
    """(N, M) of the warning ``... <words> N of M ...``; None without that warning."""
    for warning in report['warnings']:
        found = re.search(rf'{words} (\d+) of (\d+)', warning)
        if found:
            return int(found[1]), int(found[2])
    return None


def identification(logs: Path, images: Path | None) -> str:
    """identify.md's Kinova Gen3 paragraph: trained on the short log, then the other way."""
    name = 'kinova_identify'
    urdf = logs / URDF
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        seconds = {log: duration(logs / 'data' / log) for log in FILES}
        with contextlib.redirect_stdout(io.StringIO()):
            bags = {log: convert(logs / 'data' / log, folder / Path(log).stem) for log in FILES}
        short, long = sorted(FILES, key=seconds.get)
        forward = identify(bags[short], bags[long], urdf, folder / 'forward', images is not None)
        if images is not None:
            save_png(folder / 'forward' / 'validation_joints1.png',
                     images / 'rnea_identify_validation.png')
        backward = identify(bags[long], bags[short], urdf, folder / 'backward', False)

    def validation(report, model, joint):
        return report['rms'][model]['validation'][joint]

    worst = max(JOINTS, key=lambda j: validation(forward, 'urdf', j))
    urdf_rms, terms_rms, identified_rms = (validation(forward, m, worst) for m in MODELS)
    if not identified_rms < terms_rms < urdf_rms:
        raise StaleProse(name, f'the joint terms alone barely help {worst}; the inertias are '
                         'what was wrong')
    worse = [j for j in JOINTS if validation(forward, 'urdf+friction', j)
             > validation(forward, 'urdf', j)]
    worse_text = '' if not worse else ' and makes {} worse ({})'.format(
        ' and '.join(worse), ', '.join(f'{validation(forward, "urdf", j):.2f} to '
                                       f'{validation(forward, "urdf+friction", j):.2f}'
                                       for j in worse))
    departed = warning_counts(forward, 'depart from the least-squares base parameters by more '
                              'than 3 standard deviations in')
    excited = warning_counts(forward, 'barely excite')
    if departed is None or excited is None:
        raise StaleProse(name, 'the report warns ... departs from least squares ... poorly '
                         'determined')
    far = sorted((p for p in forward['excitation']['base_parameters']
                  if abs(p['departure']) > 3), key=lambda p: -abs(p['departure']))
    names = ', '.join(f'`{p["name"]}`' for p in far)
    poorly = f'all {excited[1]}' if excited[0] == excited[1] else \
        f'{excited[0]} of the {excited[1]}'
    back = sorted(JOINTS, key=lambda j: -validation(backward, 'urdf', j))[:2]
    for joint in back:
        if validation(backward, 'identified', joint) >= validation(backward, 'urdf+friction',
                                                                   joint):
            raise StaleProse(name, f'trained on the longer log, {joint} improves')
    first, second = ([f'{validation(backward, m, j):.2f}' for m in MODELS] for j in back)
    mass = forward['total_mass']
    intro = f"""**On a real robot.** The Kinova Gen3 logs of
[dynamapp](https://github.com/wissem01chiha/dynamapp)
(MIT licence; 1 kHz, joint torque sensors, something unlisted on the flange): trained on the
{seconds[short]:.1f} s trajectory, validated on the {seconds[long]:.1f} s one (the plot above), the
RMS residual per joint in N m:"""
    prose = f"""
Fitting only the joint terms to a wrong URDF (with the same prior and friction, armature >= 0
as the identified model: unregularised, {seconds[short]:.1f} s of motion leave armature, offset
and Coulomb friction nearly collinear) takes {worst}, the largest residual, only from
{urdf_rms:.2f} to {terms_rms:.2f} N m (the identified model: {identified_rms:.2f}){worse_text}:
the inertias are what was wrong. The identified arm weighs
{mass["identified"]:.2f} kg against the URDF's {mass["urdf"]:.2f} kg, and the report warns that
the physically consistent solution departs from least squares on {departed[0]} of the
{departed[1]} base parameters (up to {abs(far[0]["departure"]):.1f} standard deviations: {names}):
something on this arm is not a rigid body the URDF describes (the unlisted flange mount, the
sensors, joint flexibility). {seconds[short]:.1f} s of motion leave {poorly} base parameters
poorly determined (the first warning names them). Trained on the longer log and validated on
the short one, {back[0]} improves from {first[0]} (URDF) and {first[1]} (URDF + joint terms) to
{first[2]} N m and {back[1]} from {second[0]} and {second[1]} to {second[2]}. Real
identification wants minutes of exciting motion."""
    return f'{fill(intro)}\n\n{residual_table(forward)}\n\n{fill(prose)}'


def windows(logs: Path, images: Path | None) -> str:
    """bag.md's table of residuals with the automatic and fixed windows, and what it shows."""
    from real_log_windows import residual_rows
    name = 'kinova_windows'
    fixed = ['0.05', '0.1']
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        plain = list(residual_rows(logs, ['auto'] + fixed))
        noisy = list(residual_rows(logs, ['auto'] + fixed, stamp_error=1.2e-4))
    lines = ['| log | window | peak | RMS | peak, stamp noise | RMS, stamp noise | '
             'windows chosen [s] |', '|---|---|---|---|---|---|---|']
    rms_excess, peak_excess, noise_change = [], [], []
    for row, jittered in zip(plain, noisy):
        auto = row['window'] == 'auto'
        log = f'{row["log"]} ({duration(logs / "data" / (row["log"] + ".csv")):.1f} s)' \
            if auto else ''
        chosen = f'{row["windows"][0]:.2f}–{row["windows"][-1]:.2f}' if auto else ''
        window = 'auto' if auto else f'{row["window"]} s'
        cells = (log, window, f'{row["peak"]:.2f}', f'{row["rms"]:.3f}',
                 f'{jittered["peak"]:.2f}', f'{jittered["rms"]:.3f}', chosen)
        lines.append('|' + '|'.join(f' {cell} ' if cell else ' ' for cell in cells) + '|')
        noise_change += [abs(jittered[key] / row[key] - 1.0) for key in ('peak', 'rms')]
        if jittered['time_base'] != 'regular clock':
            raise StaleProse(name, 'with the stamp noise the regular clock is chosen')
        if auto and row['windows'][0] <= 0.1:
            raise StaleProse(name, 'the automatic windows are longer than 0.1 s here')
        if auto:
            rows = [r for r in plain if r['log'] == row['log'] and r['window'] in fixed]
            rms_excess.append(row['rms'] / min(r['rms'] for r in rows) - 1.0)
            peak_excess.append(row['peak'] / min(r['peak'] for r in rows) - 1.0)
    return '\n'.join(lines) + '\n\n' + fill(f"""
With the stamp noise the regular clock is chosen (`time_base`), and every peak
and RMS is within {np.ceil(100 * max(noise_change)):.0f} % of the evenly stamped logs'.
The automatic windows are longer than 0.1 s here: these positions carry a correlated ripple
(their residual around the local fits grows with the window) that the rule, which takes the
residual for white noise, counts as
noise; the RMS stays within {np.ceil(100 * max(rms_excess)):.0f} % of the best fixed window and
the peak within {np.ceil(100 * max(peak_excess)):.0f} % (the longer windows also leave a few
more samples out at the ends).""")


def thresholds(logs: Path, images: Path | None) -> str:
    """bag.md's table of the events each threshold rule detects where there is no collision."""
    from bench_thresholds import event_table, read_log

    from rnea_ros import RobotModel
    urdf = logs / URDF
    names = RobotModel.from_urdf_file(urdf).joint_names
    table = event_table(urdf, names, [read_log(logs / 'data' / log, len(names))
                                      for log in FILES])
    models = {'URDF, link_side': ('URDF (`link_side`)', 'the URDF'),
              'identified, link_side': ('identified (`link_side`)', 'the identified model'),
              'identified + actuation model, motor': (
                  'identified + actuation model (`motor`)',
                  'the identified model with its actuation model')}
    rules = {'1.5 max + 0.2': '1.5 · max + 0.2, at the first sample over',
             '+ 10 ms over': '+ 10 ms over', '+ 2 sigma': '+ 2 σ',
             '+ 2 sigma, 10 ms over (default)': '+ 2 σ, 10 ms over (**the rule**)'}
    lines = ['| model (measured effort) | rule | on log 2, calibrated on 1 | '
             'on log 1, calibrated on 2 |', '|---|---|---|---|']
    for (model, rule), cells in table.items():
        text = ' | '.join(f'{n} ({1e3 * longest:.0f} ms)' if n else '0' for n, longest in cells)
        lines.append(f'| {models[model][0]} | {rules[rule]} | {text} |')

    def left(rule: str) -> str:
        found = []
        for model, (_, words) in models.items():
            cells = table[model, rule]
            count = sum(n for n, _ in cells)
            if count:
                longest = max(1e3 * longest for n, longest in cells if n)
                found.append(f'{words} ({count}, up to {longest:.0f} ms)')
        return ' and '.join(found) if found else 'none'

    return '\n'.join(lines) + '\n\n' + fill(f"""
Events left on the other log by the spread term alone: {left('+ 2 sigma')}; by the minimum
duration alone: {left('+ 10 ms over')}; by the rule: {left('+ 2 sigma, 10 ms over (default)')}.""")
