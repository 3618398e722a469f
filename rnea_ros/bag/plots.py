"""
PNG plots of a bag analysis (matplotlib, Agg backend: no display needed).

Per joint group (up to ``GROUP_SIZE`` joints in model order; a free-flyer's forces and torques
form two groups of their own), two figures with one panel per joint:

- ``effort_<group>.png``: predicted torque and, when recorded, the measured effort over time;
- ``decomposition_<group>.png``: the terms stacked, positive parts above zero and negative
  parts below, with the total as a line.

Group names come from joint names, which may hold anything (``arm/elbow.pitch``): in file
names every character but letters, digits, ``-`` and ``_`` becomes ``_``, and a name that
would repeat another gets ``_2``, ``_3``...: every file is a new name inside the directory.

Long recordings are reduced before plotting (``rnea_ros.tools.downsample``): lines keep each
time bucket's minimum and maximum (peaks stay visible), stacked areas use each bucket's mean.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np

from rnea_ros.tools.downsample import ReducedBag
from rnea_ros.tools.plots import groups, TERM_STYLE


def plot_all(directory: Path, reduced: ReducedBag, labels: Sequence[str],
             units: Sequence[str], title: str = '', wrenches: Collection[str] = ()
             ) -> list[Path]:
    """
    Write the figures of every group into ``directory``; returns their paths.

    ``reduced``: the curves of the bag (``downsample.reduce_bag``), columns in ``labels``
    order; time in seconds from the bag start; ``wrenches``: as ``groups``.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    lines = {name: (reduced.line_time, values) for name, values in reduced.lines.items()
             if name != 'residual'}
    areas = {name: (reduced.area_time, values) for name, values in reduced.areas.items()}
    paths = []
    for name, columns in groups(labels, wrenches):
        for kind in ('effort', 'decomposition'):
            height = 0.9 + 2.2 * len(columns)  # inches
            # A bare Agg figure: no pyplot figure manager to create and close.
            fig = Figure(figsize=(10, height))
            FigureCanvasAgg(fig)
            axes = fig.subplots(len(columns), 1, sharex=True, squeeze=False)
            for ax, k in zip(axes[:, 0], columns):
                if kind == 'effort':
                    _effort_panel(ax, lines, k)
                else:
                    _decomposition_panel(ax, areas, k)
                ax.set_ylabel(f'{labels[k]}\n[{units[k]}]', fontsize=9)
                ax.grid(True, alpha=0.3)
            axes[-1, 0].set_xlabel('time from bag start [s]')
            handles, legend = axes[0, 0].get_legend_handles_labels()
            top = 1.0 - 0.12 / height
            fig.legend(handles, legend, loc='upper right', bbox_to_anchor=(0.995, top),
                       ncol=min(5, len(legend)), fontsize=8, frameon=False)
            heading = ('Predicted vs measured joint effort' if kind == 'effort'
                       else 'Joint torque by term of the equation of motion')
            fig.suptitle(f'{heading}{f" — {title}" if title else ""}', x=0.01, y=top,
                         ha='left', va='top', fontsize=10)
            fig.tight_layout()
            fig.subplots_adjust(top=1.0 - 0.42 / height)  # room for the title and legend
            path = directory / f'{kind}_{name}.png'
            # zlib level 1: the same pixels, written in a fraction of the default level's time.
            fig.savefig(path, dpi=90, pil_kwargs={'compress_level': 1})
            paths.append(path)
    return paths


def _effort_panel(ax, lines, k: int) -> None:
    t, v = lines['predicted']
    ax.plot(t, v[:, k], color='#1f77b4', lw=1.0, label='predicted (RNEA)')
    if 'measured' in lines:
        t, v = lines['measured']
        if np.isfinite(v[:, k]).any():
            ax.plot(t, v[:, k], color='#d62728', lw=0.8, alpha=0.8, label='measured effort')


def _decomposition_panel(ax, areas, k: int) -> None:
    up = down = None
    for term, (t, values) in areas.items():
        if term == 'total' or not np.any(values[:, k]):
            continue
        v = values[:, k]
        if up is None:
            up, down = np.zeros_like(v), np.zeros_like(v)
        label, colour = TERM_STYLE[term]
        pos, neg = np.maximum(v, 0.0), np.minimum(v, 0.0)
        ax.fill_between(t, up, up + pos, color=colour, alpha=0.75, lw=0, label=label)
        ax.fill_between(t, down, down + neg, color=colour, alpha=0.75, lw=0)
        up, down = up + pos, down + neg
    t, v = areas['total']
    ax.plot(t, v[:, k], color='black', lw=0.9, label='total')
