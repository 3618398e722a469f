"""The compiled helpers of the control cycle (numba, no temporaries): one call each."""
from __future__ import annotations

from numba import njit
import numpy as np


@njit(cache=True, nogil=True)
def oldest(times, indices) -> float:
    """min(times[indices]) without a temporary array."""
    result = np.inf
    for k in indices:
        if times[k] < result:
            result = times[k]
    return result


@njit(cache=True, nogil=True)
def input_ages(position_time, velocity_time, indices):
    """(oldest position time, oldest velocity time) of the joints ``indices`` (inf if none)."""
    position, velocity = np.inf, np.inf
    for k in indices:
        if position_time[k] < position:
            position = position_time[k]
        if velocity_time[k] < velocity:
            velocity = velocity_time[k]
    return position, velocity


@njit(cache=True, nogil=True)
def add_joint_terms(tau, a, v, coulomb, viscous, offset, armature, threshold, friction) -> None:
    """
    Add the joint terms to tau in place, per v entry.

    tau += armature * a, and with ``friction`` coulomb * tanh(v / threshold) + viscous * v +
    offset (``rnea_ros.dynamics.actuation``).
    """
    for k in range(tau.shape[0]):
        tau[k] += armature[k] * a[k]
        if friction:
            tau[k] += coulomb[k] * np.tanh(v[k] / threshold) + viscous[k] * v[k] + offset[k]


@njit(cache=True, nogil=True)
def finish_outputs(tau, lower, upper, clip, command_index, q, v, q_offset, v_offset,
                   position_out, velocity_out, effort_out, command_out) -> int:
    """
    Finish a cycle in one call.

    Unless tau holds a non-finite value (then -1, nothing written), clip it to [lower, upper]
    when ``clip``, write the joint entries of q, v, tau (from the offsets on) and
    tau[command_index]; returns 1 if an entry was clipped, else 0.
    """
    for k in range(tau.shape[0]):
        if not np.isfinite(tau[k]):
            return -1
    clipped = 0
    if clip:
        for k in range(tau.shape[0]):
            if tau[k] >= upper[k]:
                tau[k] = upper[k]
                clipped = 1
            elif tau[k] <= lower[k]:
                tau[k] = lower[k]
                clipped = 1
    for k in range(effort_out.shape[0]):
        position_out[k] = q[q_offset + k]
        velocity_out[k] = v[v_offset + k]
        effort_out[k] = tau[v_offset + k]
    for k in range(command_index.shape[0]):
        command_out[k] = tau[command_index[k]]
    return clipped


@njit(cache=True, nogil=True)
def first_beyond(effort, gain, bias, bound, torque) -> int:
    """
    Write |gain * effort - bias| into ``torque``; return the first index beyond ``bound``.

    -1 if none is (a NaN is beyond nothing): the observer's plausibility check in one call.
    """
    first = -1
    for k in range(effort.shape[0]):
        torque[k] = abs(effort[k] * gain[k] - bias[k])
        if first < 0 and torque[k] > bound[k]:
            first = k
    return first


@njit(cache=True, nogil=True)
def largest_magnitude(values) -> float:
    """Return max |values[k]|, 0 for none (finite values), without a temporary array."""
    largest = 0.0
    for x in values:
        if abs(x) > largest:
            largest = abs(x)
    return largest
