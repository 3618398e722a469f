"""
Calibrated collision thresholds on the simulated panda (``rnea_ros.sim.Plant``, in process).

The plant has the default reality gap (``load_gap('default')``: inertia errors, a 0.5 kg tool
on the flange, armature, stiction and viscous friction, torque readings from the motor
currents with a bias and noise). The observer (gain 50/s, ``measured_effort='motor'``) runs on
the plant's true rigid-body model (``Plant.true_urdf``) and its true joint terms (the gap's
armature, Coulomb and viscous friction, the readings' bias as the offset): the stand-in for an
identified model, the best ``rnea_identify`` can give. Its smooth Coulomb term (tanh) differs
from the simulator's stiction at every reversal, which the calibration has to absorb.

60 s of one collision-free motion calibrate the thresholds (``calibrate_thresholds``'
defaults); over 120 s of a different motion of the same speed the detector (its default
minimum duration) reports no event but the one of a 20 N push on the flange, and reports it
within 20 ms of the push's start.
"""
from __future__ import annotations

from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.observer import calibrate_thresholds, CollisionDetector, MomentumObserver
from rnea_ros.sim.gap import load_gap
from rnea_ros.sim.plant import pd_effort, Plant

pytestmark = pytest.mark.timeout(600)

FLANGE = 'panda_link8'
PUSH = np.array([12.0, -16.0, 0.0, 0.0, 0.0, 0.0])  # 20 N in the flange's x-y plane
PUSH_START, PUSH_END = 100.0, 100.5  # s into the second motion
CENTRE = np.array([0.0, -0.3, 0.0, -1.8, 0.0, 1.6, 0.7])
# Two sums of sines per joint: (amplitude [rad], frequency [rad/s], phase per joint index [rad],
# phase offset): peak joint speeds 0.59 rad/s both, different frequencies and shapes.
CALIBRATION = ((0.3, 0.9, 1.0, 0.0), (0.15, 2.1, 2.0, 0.0))
OTHER = ((0.25, 1.2, 0.5, 1.0), (0.12, 2.4, 3.0, 0.5))


def desired(sines, t: float, nv: int):
    """q, v, a of the panda (fingers held at 0.02 m) for one of the motions above."""
    q, v, a = np.zeros(nv), np.zeros(nv), np.zeros(nv)
    q[:7], q[7:] = CENTRE, 0.02
    joints = np.arange(7)
    for amplitude, frequency, phase, offset in sines:
        angle = frequency * t + phase * joints + offset
        q[:7] += amplitude * np.sin(angle)
        v[:7] += amplitude * frequency * np.cos(angle)
        a[:7] -= amplitude * frequency ** 2 * np.sin(angle)
    return q, v, a


def simulate(plant, sines, duration: float, push: bool):
    """Track the motion with PD + the URDF's feed-forward; return stamps, q, v, effort."""
    model, rows = plant.nominal, plant.actuated_v
    plant.reset(*desired(sines, 0.0, plant.nv)[:2])
    start = plant.time
    n = int(round(duration / plant.timestep))
    stamps, Q, V, E = np.zeros(n), np.zeros((n, model.nq)), np.zeros((n, model.nv)), \
        np.zeros((n, model.nv))
    for k in range(n):
        t = k * plant.timestep
        if push and abs(t - PUSH_START) < 0.5 * plant.timestep:
            plant.apply_wrench(FLANGE, PUSH)
        if push and abs(t - PUSH_END) < 0.5 * plant.timestep:
            plant.clear_wrench(FLANGE)
        q_d, v_d, a_d = desired(sines, t, plant.nv)
        q, v = plant.q(), plant.v()
        plant.step(pd_effort(100.0, 10.0, q_d[rows], v_d[rows], q[rows], v[rows],
                             model.rnea(q_d, v_d, a_d)[rows]))
        stamps[k] = plant.time - start
        Q[k, plant.actuated_q] = plant.measured_position()
        V[k, rows] = plant.measured_velocity()
        E[k, rows] = plant.measured_effort()
    return stamps, Q, V, E


@pytest.fixture(scope='module')
def runs():
    gap = load_gap('default')
    plant = Plant(robot_path('panda').read_text(), gap=gap)
    true_model = RobotModel.from_urdf_string(plant.true_urdf)
    terms = [gap.joint_terms(name) for name in plant.joint_names]
    rows = plant.actuated_v
    values = {field: np.zeros(true_model.nv) for field in ('armature', 'coulomb', 'viscous')}
    for field in values:
        values[field][rows] = [term[field] for term in terms]
    offset = np.zeros(true_model.nv)
    offset[rows] = plant.torque_offset
    actuation = Actuation(Actuation.zeros(true_model).joint_names, values['coulomb'],
                          values['viscous'], offset, values['armature'])
    observer = MomentumObserver(true_model, 50.0, measured_effort='motor',
                                actuation=actuation)
    calibration = observer.run(*simulate(plant, CALIBRATION, 60.0, push=False))
    observer.reset()
    stamps, *samples = simulate(plant, OTHER, 120.0, push=True)
    return calibration, stamps, observer.run(stamps, *samples)


def test_thresholds_from_60_s_give_no_false_detection_over_120_s_and_see_a_push(runs):
    calibration, stamps, residual = runs
    thresholds = calibrate_thresholds(calibration)
    detector = CollisionDetector(thresholds)
    on = np.array([detector.update(t, r) for t, r in zip(stamps, residual)])
    events = detector.events
    assert len(events) == 1, events  # the push, nothing else
    first = stamps[np.argmax(on)]
    assert PUSH_START <= events[0]['start'] and first - PUSH_START <= 0.020, (first, events)
    assert events[0]['end'] is not None and events[0]['end'] <= PUSH_END + 0.1
    # Not by thresholds so wide that little else would be seen: the push's torque on joint 2
    # (about 4 N m) is several thresholds, and the quiet residual outside the push stays under
    # them with room to spare on every joint.
    quiet = (stamps < PUSH_START) | (stamps > PUSH_END + 0.2)
    assert np.abs(residual[quiet]).max(axis=0).max() < 1.0
    assert (np.abs(residual[quiet]).max(axis=0) / thresholds).max() < 0.9
