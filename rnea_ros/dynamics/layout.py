"""
The packed model's and workspace's layout: offsets into the flat arrays every kernel reads.

The model is one flat float64 array: a header [nb, nq, nv, gravity] then one ``BODY_WIDTH``
record per body (offsets ``B_*``; integers are stored as floats to keep the model one array).
The workspace holds one ``WORK_WIDTH`` record per body (offsets ``W_*``). ``rnea.pack_model``
and ``rnea.new_workspace`` build them; ``joints`` and the kernels address them.
"""
from __future__ import annotations

# The packed model is one flat float array: a header, then one record per body.
H_NB, H_NQ, H_NV, H_GRAVITY = 0, 1, 2, 3
HEADER = 6
# Offsets in a body record: parent, joint type, first q and v entries, placement of the joint
# frame in the parent (R row-major, p), joint axis, mimic multiplier and offset, inertia.
B_PARENT, B_TYPE, B_Q, B_V, B_PLACEMENT, B_AXIS, B_MULT, B_OFFSET, B_MASS, B_H, B_INERTIA = (
    0, 1, 2, 3, 4, 16, 19, 20, 21, 22, 25)
BODY_WIDTH = 34
# Offsets in a body's scratch record: placement in the parent (R, p), velocity, acceleration,
# force, a scratch vector; entries 30-35 and 42-50 are spare. numba's cache does not see a change
# in a callee's module: a cached caller elsewhere (contacts/kernels.py) keeps the offsets it was
# compiled with, so a change here must come with cleared caches (python -m rnea_ros.precompile).
W_PLACEMENT, W_VEL, W_ACC, W_FORCE, W_TMP = 0, 12, 18, 24, 36
WORK_WIDTH = 51
