"""The closed-loop tests share the node tests' harness (``ros_harness``: the domain ids)."""
from __future__ import annotations

from pathlib import Path
import sys

# test/node (ros_harness) and this folder (loop_harness) are importable from here.
for folder in (Path(__file__).resolve().parents[1] / 'node', Path(__file__).resolve().parent):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
