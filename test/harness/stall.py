"""
A stall of the node's inputs in lockstep, the node's core as the arm's only controller.

The set-up of test/control/test_prediction_in_process.py's stall tests and of
bench/bench_stall.py's lockstep rows: ``inprocess_law.run_law_in_process`` (the effort
interface, the command one tick late) with ``pd_feedforward`` at Kp 100 / Kd 10 on every joint;
``STALL`` s into the demo trajectory every input goes silent for ``SILENT`` s, then joint_states
return (the desired motion does not: the stop's hold about the first pose known again).
"""
from __future__ import annotations

from typing import NamedTuple
import xml.etree.ElementTree as ET

from harness.inprocess_law import run_law_in_process
from harness.least_drift import least_drift
import numpy as np

from rnea_ros import RobotModel
from rnea_ros.demos.closed_loop import stiff_gains
from rnea_ros.dynamics.payload import Payload
from rnea_ros.sim.gap import load_gap, TIP
from rnea_ros.sim.true_urdf import apply_gap, tip_link

STALL = 0.5  # s: every input goes silent (the demo motion: 1.7 rad/s on the fastest joint)
SILENT = 0.5  # s without joint_states (the desired motion does not come back)
REST_AFTER = 0.2  # s after joint_states return: the speed is judged from then on (the hold
# after a stall, the stop's: the default gap's panda below 0.05 rad/s from 0.15 s)
INPUT_TIMEOUT = 0.003  # s: three periods (docs/node/prediction.md: a few periods)
STOP_TIME = 0.02  # s: collision_stop_time, the braking's time constant (-2 v / T)
# Physics steps per tick: the blind hold after the braking is open loop, and the arm's unstable
# modes grow any difference between the plant and the continuous dynamics the node integrates
# (RK4): with one implicit step per ms the plant's own integration error (1e-4 rad in the
# braking) grew to 0.04-0.05 rad on the panda's wrist in 0.5 s; with five the plant is within
# 0.01 rad of the continuous arm there, as a real arm is continuous.
SUBSTEPS = 5
TICK = 1e-3  # s: the plant's step
# s between two fits of ``stall_payload_estimate`` (the node fits at each diagnostics report)
REFIT = 0.1


class Stall(NamedTuple):
    """A stall's measures (``stalled``) and the arm's state where it began."""

    speed: float  # rad/s: the fastest joint's speed at the stall
    drift: float  # rad: the largest drift of any joint from where it began, while silent
    settled: float  # rad/s: the largest speed from REST_AFTER after joint_states return
    q: np.ndarray  # the actuated positions where the stall began
    v: np.ndarray  # and velocities


def least(urdf: str, gap: str, q: np.ndarray, v: np.ndarray) -> float:
    """
    Return the least drift any torques within the effort limits reach from (q, v) [rad].

    ``harness.least_drift`` on the plant's true dynamics (``gap``'s URDF and armature), the arm
    coasting INPUT_TIMEOUT first; a fixed-base arm whose actuated joints are its v entries.
    """
    data = load_gap(gap)
    true = RobotModel.from_urdf_string(apply_gap(urdf, data))
    armature = np.array([data.joint_terms(name)['armature'] for name in true.joint_names])
    return least_drift(true, armature, np.asarray(true.effort_limits), q, v,
                       coast=INPUT_TIMEOUT, step=TICK)


def told_payload(urdf: str, gap: str) -> Payload | None:
    """Return the gap's payload as the node's ``payload.*`` would say it (None: none)."""
    payload = load_gap(gap).payload
    if payload is None:
        return None
    link = tip_link(ET.fromstring(urdf)) if payload.link == TIP else payload.link
    (ixx, iyy, izz) = payload.inertia
    return Payload(link=link, mass=payload.mass, com=tuple(payload.com),
                   inertia=(ixx, 0.0, 0.0, iyy, 0.0, izz))


def refitting(t: float, core, plant) -> bool:
    """``run_law_in_process``'s ``each``: fit the stall's payload every REFIT s, as the node."""
    samples = (core.stall_samples() if int(round(t / TICK)) % int(round(REFIT / TICK)) == 0
               else None)
    if samples is not None:
        core.install_stall_model(core.estimate_payload(samples))
    return True


def stalled(urdf: str, gap: str, params: dict, whole: bool = False,
            payload: bool = False) -> Stall:
    """
    Return the stall's measures (``Stall``).

    ``gap``: the plant's gap (``load_gap``); ``params``: node parameters beside the gains,
    ``input_timeout`` and ``collision_stop_time`` (``prediction``, ``armature.<joint>``...);
    ``whole``: the core takes the whole trajectory at the start (``run_law_in_process``);
    ``payload``: the node is told the gap's payload (``told_payload``).
    """
    model = RobotModel.from_urdf_string(urdf)
    _, positions, velocities = run_law_in_process(
        urdf, gap, STALL + SILENT + 2 * REST_AFTER, 'pd_feedforward', stiff_gains(model),
        stall_at=STALL, silent=(STALL, STALL + SILENT), late_steps=1, substeps=SUBSTEPS,
        whole=whole, each=refitting, payload=told_payload(urdf, gap) if payload else None,
        params={'input_timeout': INPUT_TIMEOUT, 'collision_stop_time': STOP_TIME, **params})
    start, back = int(round(STALL / TICK)), int(round((STALL + SILENT) / TICK))
    drift = np.abs(positions[start:back] - positions[start]).max()
    return Stall(np.abs(velocities[start]).max(), drift,
                 np.abs(velocities[back + int(round(REST_AFTER / TICK)):]).max(),
                 positions[start], velocities[start])
