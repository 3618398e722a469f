"""External wrenches from r = J^T F, and collision detection and thresholds on r."""
from __future__ import annotations

from harness.bagdata import PANDA
import numpy as np
import pytest

from rnea_ros import InputError, RobotModel
from rnea_ros.observer import (calibrate_thresholds, CollisionDetector, detect_events,
                               estimate_wrench)

LINK = 'panda_hand'


@pytest.fixture(scope='module')
def panda():
    return RobotModel.from_urdf_file(PANDA)


def posture(model):
    q = model.neutral_configuration()
    q[:7] = [0.1, -0.4, 0.2, -1.9, 0.1, 1.7, 0.6]
    return q


def test_wrench_from_its_joint_torques(panda):
    q = posture(panda)
    wrench = np.array([5.0, -3.0, 20.0, 0.4, -0.2, 0.3])
    r = panda.link_jacobian(q, LINK, 'local').T @ wrench
    # The residual's sign: the torques the environment applies, the opposite of
    # external_torques (the torques that balance the wrench).
    assert np.allclose(r, -panda.external_torques(q, {LINK: wrench}), atol=1e-12)
    assert np.allclose(estimate_wrench(panda, q, r, LINK, damping=0.0), wrench, atol=1e-9)
    # The default damping biases by about damping^2 / sigma_min^2.
    assert np.allclose(estimate_wrench(panda, q, r, LINK), wrench, atol=1e-3)


def test_pure_force_at_a_point(panda):
    q = posture(panda)
    point = np.array([0.0, 0.0, 0.1])
    force = np.array([0.0, 20.0, -4.0])
    wrench = np.concatenate([force, np.cross(point, force)])
    r = panda.link_jacobian(q, LINK, 'local').T @ wrench
    assert np.allclose(estimate_wrench(panda, q, r, LINK, point=point, damping=0.0), wrench,
                       atol=1e-9)


def test_wrench_bad_input_is_named(panda):
    q = posture(panda)
    with pytest.raises(InputError) as error:
        estimate_wrench(panda, q, np.zeros(panda.nv), 'tool0')
    assert str(error.value) == "link: unknown link 'tool0'"
    with pytest.raises(InputError) as error:
        estimate_wrench(panda, q, np.zeros(panda.nv), LINK, damping=-1.0)
    assert str(error.value) == 'damping: expected a finite number >= 0, got -1.0'
    with pytest.raises(InputError) as error:
        estimate_wrench(panda, q, np.zeros(3), LINK)
    assert str(error.value) == 'residual: expected shape (8,), got (3,)'


def test_detector_events_name_the_joint_and_peak():
    detector = CollisionDetector([1.0, 2.0], joint_names=['a', 'b'], min_duration=0.0)
    samples = [(0.0, [0.5, 0.5]), (0.1, [1.5, 0.0]), (0.2, [1.2, 5.0]), (0.3, [0.0, 3.0]),
               (0.4, [0.0, 1.0]), (0.5, [0.0, -2.5]), (0.6, [0.0, 0.0])]
    states = [detector.update(t, r) for t, r in samples]
    assert states == [False, True, True, True, False, True, False]
    assert detector.events == [
        {'start': 0.1, 'end': 0.4, 'joint': 'b', 'peak': 5.0},
        {'start': 0.5, 'end': 0.6, 'joint': 'b', 'peak': 2.5}]
    assert not detector.active
    assert detect_events([t for t, _ in samples], [r for _, r in samples], [1.0, 2.0],
                         ['a', 'b'], min_duration=0.0) == detector.events
    detector.update(0.7, [3.0, 0.0])
    assert detector.active and detector.events[-1]['end'] is None
    detector.reset()
    assert detector.events == [] and not detector.active


def test_a_collision_is_on_after_min_duration_over_and_short_excursions_are_not_events():
    detector = CollisionDetector([1.0], joint_names=['a'])
    assert detector.min_duration == 0.01  # the default
    stamps = np.arange(40) * 1e-3
    r = np.zeros(40)
    r[2:11] = 3.0  # 9 ms over: a spike, never reported
    r[15:30] = 2.0  # 15 ms over: on from its 10th ms on
    r[20] = 4.0
    states = [detector.update(t, [x]) for t, x in zip(stamps, r)]
    assert np.flatnonzero(states).tolist() == list(range(25, 30))
    assert detector.events == [{'start': 0.015, 'end': 0.03, 'joint': 'a', 'peak': 4.0}]
    assert detect_events(stamps, r[:, None], [1.0], ['a']) == detector.events
    with pytest.raises(InputError) as error:
        CollisionDetector([1.0], min_duration=-0.1)
    assert str(error.value) == 'min_duration: expected a finite number >= 0 (s), got -0.1'


def test_calibrated_thresholds_are_the_documented_margin():
    residuals = np.array([[0.1, -0.4], [-0.3, 0.2], [0.2, 0.0]])
    sigma = 1.4826 * np.array([0.1, 0.2])  # MAD about the medians 0.1 and 0.0
    assert np.allclose(calibrate_thresholds(residuals),
                       np.array([1.5 * 0.3, 1.5 * 0.4]) + 2.0 * sigma + 0.2, atol=1e-12)
    assert np.allclose(calibrate_thresholds(residuals, margin=2.0, floor=0.0, spread=0.0),
                       [0.6, 0.8])
    # The calibration data themselves are never detected.
    assert detect_events(np.arange(3.0), residuals, calibrate_thresholds(residuals)) == []


@pytest.mark.parametrize('thresholds, message', [
    ([1.0, 0.0], 'collision_thresholds[1] is 0.0: expected a finite number > 0'),
    ([1.0, np.nan], 'collision_thresholds[1] is nan: expected a finite number > 0'),
    ([[1.0]], 'collision_thresholds: expected one per joint positive numbers'),
])
def test_bad_thresholds_are_refused_by_name(thresholds, message):
    with pytest.raises(InputError) as error:
        CollisionDetector(thresholds)
    assert str(error.value) == message


def test_bad_calibration_input_is_refused_by_name():
    with pytest.raises(InputError) as error:
        calibrate_thresholds(np.zeros((0, 2)))
    assert str(error.value) == ('residuals: expected finite values of shape (N, nv), N > 0, '
                                'got shape (0, 2)')
    with pytest.raises(InputError) as error:
        calibrate_thresholds(np.zeros((3, 2)), margin=-1)
    assert str(error.value) == 'margin: expected a finite number >= 0, got -1'


@pytest.mark.parametrize('damping', [0.0, 1e-3, 0.5])
@pytest.mark.parametrize('point', [None, (0.01, -0.02, 0.1)])
def test_the_jitted_and_the_checked_path_agree(panda, damping, point):
    """float64 arrays take the kernel; lists take the checked numpy path: the same wrench."""
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = posture(panda) + 0.3 * rng.standard_normal(panda.nv)
        r = rng.standard_normal(panda.nv)
        fast = estimate_wrench(panda, q, r, LINK, damping=damping,
                               point=None if point is None else np.array(point))
        checked = estimate_wrench(panda, q.tolist(), r.tolist(), LINK, damping=damping,
                                  point=point)
        np.testing.assert_allclose(fast, checked, rtol=1e-9, atol=1e-9)


def test_a_link_no_joint_moves_feels_no_wrench(panda):
    """J = 0: without damping the normal matrix is singular; the least-squares path gives 0."""
    q = posture(panda)
    for damping in (0.0, 1e-3):
        wrench = estimate_wrench(panda, q, np.ones(panda.nv), 'panda_link0', damping=damping)
        assert np.array_equal(wrench, np.zeros(6))
