"""
The node's observer integrates every received joint_states sample, in stamp order, without ROS.

``ControlCore.on_joint_states(..., observe=False)`` queues a sample (a message of a batch the
node took from the middleware while its cycle was busy: cycles skipped) and
``observe_queued`` integrates the batch: the residual equals the library observer fed every
sample, whichever were answered. Out-of-order samples within a batch are sorted; duplicates,
late samples and a full queue's lost samples are counted in the diagnostics. The DDS end of it
is ``test_observer_node``.
"""
from __future__ import annotations

from types import SimpleNamespace

from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.control.core import ControlCore
from rnea_ros.control.observer_queue import SampleQueue
from rnea_ros.control.settings import Settings
from rnea_ros.observer.momentum import MomentumObserver


@pytest.fixture(scope='module')
def panda() -> RobotModel:
    return RobotModel.from_urdf_string(robot_path('panda').read_text())


def samples(model, n: int, seed: int = 4):
    """N samples of a moving arm at 1 kHz: stamps (message form and seconds), Q, V, efforts."""
    rng = np.random.default_rng(seed)
    t = 1e-3 * np.arange(n)
    phase = rng.uniform(0, np.pi, model.nv)
    Q = 0.5 * np.sin(3.0 * t[:, None] + phase)
    V = 1.5 * np.cos(3.0 * t[:, None] + phase)
    E = rng.normal(0.0, 3.0, (n, model.nv))
    stamps = [SimpleNamespace(sec=7, nanosec=1_000_000 * k) for k in range(n)]
    return stamps, [s.sec + 1e-9 * s.nanosec for s in stamps], Q, V, E


def core_of(model, **settings) -> ControlCore:
    return ControlCore(model, Settings(observer=True, **settings).validate())


def test_batches_with_skipped_cycles_give_the_library_residual_over_every_sample(panda):
    stamps, seconds, Q, V, E = samples(panda, 60)
    core = core_of(panda)
    # Batches of 1 to 7 messages: the node answers only the last of each (cycles skipped).
    sizes = [1, 3, 7, 2, 1, 5, 4, 6, 1, 2, 7, 3, 5, 4, 9]
    assert sum(sizes) == 60
    k = 0
    for size in sizes:
        for j in range(size):
            core.on_joint_states(core.joint_names, Q[k], V[k], E[k], seconds[k], stamps[k],
                                 observe=j == size - 1)
            k += 1
        assert core.observer_queue.size == 0  # the batch was integrated
    reference = MomentumObserver(panda, 50.0).run(seconds, Q, V, E)
    np.testing.assert_allclose(core.observer.residual, reference[-1], rtol=0, atol=1e-12)
    assert core.observer.samples == 60
    assert np.max(np.abs(reference[-1])) > 0.5  # a residual that can differ


def test_out_of_order_samples_of_a_batch_are_integrated_in_stamp_order(panda):
    stamps, seconds, Q, V, E = samples(panda, 12)
    core = core_of(panda)
    order = [0, 1, 3, 2, 5, 4, 6, 8, 7, 9, 11, 10]  # two publishers' samples interleaved
    for j, k in enumerate(order):
        core.on_joint_states(core.joint_names, Q[k], V[k], E[k], seconds[k], stamps[k],
                             observe=j in (5, 11))
    reference = MomentumObserver(panda, 50.0).run(seconds, Q, V, E)
    np.testing.assert_allclose(core.observer.residual, reference[-1], rtol=0, atol=1e-12)
    assert core.observer.not_newer == 0


def test_duplicates_and_late_samples_are_counted_apart(panda):
    stamps, seconds, Q, V, E = samples(panda, 8)
    core = core_of(panda)
    for k in range(6):
        core.on_joint_states(core.joint_names, Q[k], V[k], E[k], seconds[k], stamps[k])
    r = core.observer.residual.copy()
    core.on_joint_states(core.joint_names, Q[5], V[5], E[5] + 4.0, seconds[5], stamps[5])
    core.on_joint_states(core.joint_names, Q[3], V[3], E[3] + 4.0, seconds[3], stamps[3])
    core.on_joint_states(core.joint_names, Q[2], V[2], E[2] + 4.0, seconds[2], stamps[2])
    np.testing.assert_array_equal(core.observer.residual, r)
    status = core.status(10.0, 0.0)[2]
    assert status['joint_states duplicate stamps (not integrated)'] == '1'
    assert status['joint_states out of order (not integrated)'] == '2'
    assert status['observer queue'] == '256 samples, 9 queued'


def test_a_batch_larger_than_the_queue_loses_its_oldest_samples_counted(panda):
    stamps, seconds, Q, V, E = samples(panda, 12)
    core = core_of(panda, observer_queue=4)
    for k in range(4):
        core.on_joint_states(core.joint_names, Q[k], V[k], E[k], seconds[k], stamps[k])
    for k in range(4, 12):  # one batch of 8: the first 4 of it are pushed out
        core.on_joint_states(core.joint_names, Q[k], V[k], E[k], seconds[k], stamps[k],
                             observe=k == 11)
    kept = [0, 1, 2, 3, 8, 9, 10, 11]
    reference = MomentumObserver(panda, 50.0).run([seconds[k] for k in kept], Q[kept], V[kept],
                                                  E[kept])
    np.testing.assert_allclose(core.observer.residual, reference[-1], rtol=0, atol=1e-12)
    status = core.status(20.0, 0.0)[2]
    assert status['observer queue overflowed (samples not integrated)'] == '4'


def test_the_queue_capacity_is_bounded():
    with pytest.raises(ValueError, match='observer_queue: expected 1 to 100000 samples, got 0'):
        SampleQueue(0, 1, 1, 1)


def test_a_clock_step_within_a_batch_is_one_step_not_a_reordering(panda):
    """The last sample of the old clock sent again, then the first ones of a reset 30 s back."""
    stamps, seconds, Q, V, E = samples(panda, 8)
    core = core_of(panda)
    for k in range(4):
        core.on_joint_states(core.joint_names, Q[k], V[k], E[k], seconds[k], stamps[k])
    back = [SimpleNamespace(sec=stamp.sec - 30, nanosec=stamp.nanosec) for stamp in stamps]
    arrival = seconds[3] + 1e-3
    batch = [(3, stamps[3]), (3, stamps[3]), (5, back[5]), (4, back[4])]
    for j, (k, stamp) in enumerate(batch):  # unsorted, the old clock's first: one step
        core.on_joint_states(core.joint_names, Q[k], V[k], E[k], arrival, stamp,
                             observe=j == len(batch) - 1)
    assert core.observer.clock_steps == 1
    assert core.observer.duplicates == 2
    reference = MomentumObserver(panda, 50.0).run(
        [back[k].sec + 1e-9 * back[k].nanosec for k in (4, 5)], Q[4:6], V[4:6], E[4:6])
    np.testing.assert_allclose(core.observer.residual, reference[-1], rtol=0, atol=1e-12)
