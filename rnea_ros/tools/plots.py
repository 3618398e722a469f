"""
What every tool's figures share: the joints' plot groups and the torque terms' labels and colours.

``groups`` cuts a model's joints into groups of up to ``GROUP_SIZE`` (a free-flyer's forces and
torques form two groups of their own), named safely for file names: every character but letters,
digits, ``-`` and ``_`` becomes ``_``, and a name that would repeat another gets ``_2``, ``_3``...
(case-insensitively). ``TERM_STYLE`` labels and colours the terms of a torque decomposition.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
import re

__all__ = ['GROUP_SIZE', 'groups', 'TERM_STYLE']

GROUP_SIZE = 4
TERM_STYLE = {  # term: (legend label, colour)
    'inertial': ('inertial M(q)a', '#4c72b0'),
    'velocity_product': ('velocity product C(q,v)v', '#dd8452'),
    'gravity': ('gravity g(q)', '#55a868'),
    'external': ('external -J^T f', '#c44e52'),
    'friction': ('joint friction', '#8172b3'),
}


def groups(labels: Sequence[str], wrenches: Collection[str] = ()
           ) -> list[tuple[str, list[int]]]:
    """
    Return (name, column indices) of the plot groups; names safe and unique as file names.

    ``wrenches``: the labels that are wrench components of a multi-DoF joint ('J.fx', ...);
    every other label is a one-DoF joint, whatever its name holds.
    """
    singles: list[int] = []
    bases: dict[str, list[int]] = {}
    for k, label in enumerate(labels):
        if label in wrenches:
            joint, axis = label.rsplit('.', 1)
            kind = 'forces' if axis.startswith('f') else 'torques'
            bases.setdefault(f'{joint}_{kind}', []).append(k)
        else:
            singles.append(k)
    named = list(bases.items())
    for g, first in enumerate(range(0, len(singles), GROUP_SIZE), start=1):
        named.append((f'joints{g}', singles[first:first + GROUP_SIZE]))
    out: list[tuple[str, list[int]]] = []
    taken: set[str] = set()
    for name, columns in named:
        stem = re.sub(r'[^A-Za-z0-9_-]', '_', name)
        unique, count = stem, 1
        while unique.lower() in taken:  # case-insensitive file systems too
            count += 1
            unique = f'{stem}_{count}'
        taken.add(unique.lower())
        out.append((unique, columns))
    return out
