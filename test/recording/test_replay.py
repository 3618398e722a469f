"""
``replay.joint_series``: the direct column copy against the general scatter.

One block of every message in order (the usual bag) takes a direct column copy; it must give
what the general scatter of several blocks gives.
"""
from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.recording import series as replay
from rnea_ros.recording.bagio import cdr

NAMES = ('j1', 'j2', 'j3')
URDF = {'j1', 'j2', 'j3', 'mimic'}


def decoded_as(blocks: int, names: tuple, pos, vel, eff, stamps) -> cdr.Decoded:
    """Return the same messages as one block, or split into ``blocks`` interleaved blocks."""
    rows = np.arange(stamps.size)
    parts = [rows[k::blocks] for k in range(blocks)]
    return cdr.Decoded(stamps, tuple(cdr.Block(r, (names, ''), (pos[r], vel[r], eff[r]))
                                     for r in parts), 0)


@pytest.mark.parametrize('names, locked', [
    (('j1', 'j2', 'j3', 'mimic'), {}),  # model columns first, in order: one slice copy
    (('j3', 'mimic', 'j1'), {'j2': 0.5}),  # permuted, j2 missing (locked)
])
def test_one_block_in_order_equals_the_general_path(names, locked):
    rng = np.random.default_rng(11)
    n = 500
    stamps = 10**9 + np.cumsum(rng.integers(900_000, 1_100_000, n))
    stamps[200] = stamps[199]  # a shared stamp: merged
    pos = rng.normal(size=(n, len(names)))
    pos[50:60, 0] = np.nan  # a hole: interpolated
    vel = rng.normal(size=(n, len(names))) if len(names) == 4 else np.zeros((n, 0))
    eff = rng.normal(size=(n, len(names)))
    eff[7, 1] = np.inf  # passes through
    receive = stamps + 1000
    fast, general = (replay.joint_series(decoded_as(blocks, names, pos, vel, eff, stamps),
                                         receive, NAMES, URDF, locked=locked)
                     for blocks in (1, 2))
    for field in ('times_ns', 'receive_ns', 'position', 'velocity', 'effort'):
        ours, theirs = getattr(fast, field), getattr(general, field)
        assert ours.shape == theirs.shape and ours.flags.c_contiguous
        assert ours.tobytes() == theirs.tobytes(), field  # copies, no arithmetic: bit for bit
    assert fast.warnings == general.warnings
    assert 'interpolated 10 joint positions missing from some messages' in fast.warnings
    assert fast.position.shape == (n - 1, 3)
    if locked:
        assert np.all(fast.position[:, 1] == 0.5) and np.all(np.isnan(fast.effort[:, 1]))
