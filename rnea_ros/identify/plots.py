"""
PNG plots of the validation data: measured effort vs the URDF's and the identified model's.

``validation_<group>.png`` per group of up to four joints (``rnea_ros.tools.plots.groups``), one
panel per joint: the measured effort, the URDF's prediction (before) and the identified model's
with its friction and armature (after), each with its RMS residual over the samples plotted in
the legend (long data: every k-th sample, at most ``outputs.PLOT_SAMPLES``; then reduced to
min/max envelopes by ``rnea_ros.tools.downsample``, as the bag plots are). The figures are
yielded with their file names; ``rnea_ros.identify.outputs`` saves them.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from rnea_ros.tools.downsample import envelope
from rnea_ros.tools.plots import groups

DPI = 90
STYLE = {  # curve: (legend label, colour, line width)
    'measured': ('measured', '#7f7f7f', 1.4),
    'urdf': ('URDF (before)', '#d62728', 0.9),
    'identified': ('identified (after)', '#1f77b4', 0.9),
}


def validation_figures(time: np.ndarray, labels: Sequence[str], units: Sequence[str],
                       curves: dict[str, np.ndarray], title: str = '') -> Iterator:
    """Yield (file name, figure); ``curves``: 'measured', 'urdf', 'identified' -> (N, J)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    t_reduced, reduced = envelope(time, curves)
    measured = curves['measured']
    for name, columns in groups(labels):
        height = 0.9 + 2.0 * len(columns)
        fig, axes = plt.subplots(len(columns), 1, sharex=True, squeeze=False,
                                 figsize=(10, height))
        for ax, k in zip(axes[:, 0], columns):
            for curve, v in reduced.items():
                label, colour, width = STYLE[curve]
                if curve != 'measured':
                    rms = float(np.sqrt(np.mean((measured[:, k] - curves[curve][:, k]) ** 2)))
                    label = f'{label}: RMS {rms:.3g}'
                ax.plot(t_reduced, v[:, k], color=colour, lw=width, label=label)
            ax.legend(loc='lower right', bbox_to_anchor=(1.0, 0.98), fontsize=7, frameon=False,
                      ncol=3)
            ax.set_ylabel(f'{labels[k]}\n[{units[k]}]', fontsize=9)
            ax.grid(True, alpha=0.3)
        axes[-1, 0].set_xlabel('time [s]')
        fig.suptitle(f'Validation: measured effort vs predicted{f" — {title}" if title else ""}',
                     x=0.01, ha='left', fontsize=10)
        fig.tight_layout()
        try:
            yield f'validation_{name}.png', fig
        finally:
            plt.close(fig)
