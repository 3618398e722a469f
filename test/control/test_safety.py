"""Fault output policy, effort limits, the fault state machine."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.control.safety import (all_finite, EffortLimiter, ERROR, fault_torques, FaultState,
                                     JOINT_STATES_STALE, NO_MODEL, OK)


def test_effort_limiter_scales_clips_and_can_be_disabled():
    limiter = EffortLimiter(np.array([10.0, math.inf, 2.0]), 0.5)
    tau = np.array([7.0, 1e9, -3.0])
    assert limiter.clip(tau)
    np.testing.assert_array_equal(tau, [5.0, 1e9, -1.0])
    tau = np.array([1.0, 1.0, 0.5])
    assert not limiter.clip(tau)
    limiter.scale = 0.0
    tau = np.array([100.0, 0.0, -100.0])
    assert not limiter.clip(tau) and tau[0] == 100.0
    with pytest.raises(ValueError, match='effort_limit_scale'):
        limiter.scale = -1.0


def test_fault_torques_modes_always_finite():
    tau = np.full(3, 7.0)
    assert fault_torques('zero', tau, lambda: np.ones(3)) and not tau.any()
    assert fault_torques('hold_gravity', tau, lambda: np.array([1.0, 2.0, 3.0]))
    assert list(tau) == [1.0, 2.0, 3.0]
    assert fault_torques('hold_gravity', tau, lambda: np.array([1.0, math.nan, 3.0]))
    assert not tau.any()  # a non-finite gravity falls back to zero

    def fails():
        raise ValueError('no state')
    tau[:] = 5
    assert fault_torques('hold_gravity', tau, fails) and not tau.any()
    tau[:] = 5
    assert not fault_torques('none', tau, fails) and tau[0] == 5


def test_fault_state_transitions():
    state = FaultState()
    assert state.code == NO_MODEL and state.level == ERROR
    assert state.update(None, 1.0) and state.level == OK and state.text == 'ok'
    assert not state.update(None, 2.0)
    assert state.update(JOINT_STATES_STALE, 3.0) and state.since == 3.0
    assert not state.update(JOINT_STATES_STALE, 4.0) and state.fault_cycles == 2
    assert 'input_timeout' in state.text


def test_all_finite():
    assert all_finite(np.array([1.0, -2.0])) and not all_finite(np.array([1.0, math.nan]))
    assert not all_finite(np.array([math.inf, -math.inf]))
    assert all_finite(np.array([1e308, 1e308]))
