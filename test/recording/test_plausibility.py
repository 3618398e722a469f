"""
``rnea_ros.recording.plausibility``: recorded joints against the URDF limits.

The samples: test/harness/bagdata.py's panda trajectory (inside every limit), then the same in
degrees, pushed to a limit, too fast, or with a saturated torque; the truth is what was done
to them.
"""
from __future__ import annotations

from pathlib import Path

from harness.bagdata import PANDA, trajectory
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.recording.joint_states import one_dof_joints
from rnea_ros.recording.plausibility import (AT_LIMIT, check, check_unit, EFFORT_FACTOR,
                                             LIMIT_MARGIN, SATURATION, UnitError,
                                             VELOCITY_FACTOR)

DEGREES = 180.0 / np.pi


@pytest.fixture(scope='module')
def panda():
    model = RobotModel.from_urdf_file(PANDA)
    t = np.linspace(0.0, 3.0, 301)
    return model, one_dof_joints(model), trajectory(t), trajectory(t, 1)


def test_a_motion_inside_the_limits_passes_without_a_word(panda):
    model, joints, q, v = panda
    v = 0.5 * v  # the trajectory's wrist turns at 1.26 times its velocity limit
    judged = check(joints, q, v, model.rnea_batch(q, v, 0 * q), model.rnea_batch(q, v, 0 * q))
    assert judged.beyond == () and not judged.flagged.any() and judged.warnings() == []
    assert judged.counts() == {'at_limit': 0, 'at_effort_limit': 0, 'flagged': 0}


def test_revolute_positions_in_degrees_are_refused_naming_the_worst_joint(panda):
    _, joints, q, _ = panda
    degrees = q.copy()
    degrees[:, :7] *= DEGREES  # the arm's revolute joints; the finger (prismatic) in metres
    with pytest.raises(UnitError) as caught:
        check_unit(joints, degrees)
    error = caught.value
    lower = np.array([j.lower for j in joints[:7]])
    upper = np.array([j.upper for j in joints[:7]])
    span = upper - lower
    excess = np.maximum(lower - degrees[:, :7].min(axis=0),
                        degrees[:, :7].max(axis=0) - upper) / span
    worst = int(np.argmax(excess))
    assert error.joint == joints[worst].name and error.unit == 'deg' and error.si == 'rad'
    column = degrees[:, worst]
    expected = column.min() if lower[worst] - column.min() >= column.max() - upper[worst] \
        else column.max()
    assert error.extent == expected
    assert error.limit in (lower[worst], upper[worst])
    assert error.converted == pytest.approx(expected / DEGREES, rel=1e-15)
    assert str(error) == (
        f'joint_states positions look like degrees read as radians: {error.joint} reaches '
        f'{expected:.4g} rad against its limit {error.limit:.4g} rad (as deg, '
        f'{expected / DEGREES:.4g} rad, within the limits)')
    worded = error.worded('the remedy', 'bag')
    assert str(worded) == f'bag: {error}; the remedy' and isinstance(worded, UnitError)


def test_prismatic_positions_in_millimetres_are_refused(panda):
    _, joints, q, _ = panda
    millimetres = q.copy()
    millimetres[:, 7] *= 1000.0
    with pytest.raises(UnitError, match='millimetres read as metres: panda_finger_joint1'):
        check_unit(joints, millimetres)


def test_one_joint_far_beyond_its_limits_that_degrees_do_not_explain_is_reported(panda):
    model, joints, q, _ = panda
    wrong = q.copy()
    wrong[:, 3] = np.linspace(-3.0, 500.0, q.shape[0])  # /57.3 would still be beyond -0.07
    check_unit(joints, wrong)  # not a unit: reported, not refused
    judged = check(joints, wrong)
    [excess] = judged.beyond
    joint = joints[3]
    margin = LIMIT_MARGIN * (joint.upper - joint.lower)
    assert (excess.joint, excess.what, excess.extent, excess.limit) == (
        'panda_joint4', 'position', 500.0, joint.upper)
    assert excess.samples == int((wrong[:, 3] > joint.upper + margin).sum())
    assert 'panda_joint4: position 500 rad against its limit -0.0698 rad' in \
        judged.warnings()[0]


def test_samples_at_a_limit_are_flagged_on_their_joint_only(panda):
    model, joints, q, _ = panda
    joint = joints[1]
    band = AT_LIMIT * (joint.upper - joint.lower)
    pushed = q.copy()
    pushed[:10, 1] = joint.lower + 0.5 * band  # at the stop, inside the limits
    pushed[10:15, 1] = joint.lower - 0.5 * band  # a little past it
    pushed[15:20, 1] = joint.lower + 2.0 * band  # near, not at it
    judged = check(joints, pushed)
    expected = np.zeros_like(judged.at_limit)
    expected[:15, 1] = True
    np.testing.assert_array_equal(judged.at_limit, expected)
    assert judged.beyond == ()  # within the margin: at the limit, not implausible
    assert judged.counts()['at_limit'] == 15


def test_a_locked_joint_at_its_limit_is_not_flagged(panda):
    _, joints, q, _ = panda
    held = q.copy()
    held[:, 7] = 0.0  # the finger held at its lower limit by --lock-missing
    assert check(joints, held).counts()['at_limit'] == q.shape[0]
    assert not check(joints, held, locked={'panda_finger_joint1': (0.0, '')}).flagged.any()


def test_fast_velocities_big_torques_and_saturation_are_reported_with_their_extent(panda):
    model, joints, q, v = panda
    limit_v = np.array([j.velocity_limit for j in joints])
    limit_e = np.array([j.effort_limit for j in joints])
    fast = 0.5 * v  # inside the velocity limits but for:
    fast[5, 0] = -1.5 * VELOCITY_FACTOR * limit_v[0]
    predicted = np.zeros_like(q)
    predicted[7, 2] = 2.0 * EFFORT_FACTOR * limit_e[2]
    effort = np.zeros_like(q)
    effort[[3, 4], 1] = SATURATION * limit_e[1]
    judged = check(joints, q, fast, effort, predicted)
    assert [(e.joint, e.what, e.extent, e.limit, e.samples, e.unit) for e in judged.beyond] == [
        ('panda_joint1', 'velocity', fast[5, 0], -limit_v[0], 1, 'rad/s'),
        ('panda_joint3', 'torque', predicted[7, 2], limit_e[2], 1, 'N m')]
    assert np.flatnonzero(judged.at_effort_limit.any(axis=1)).tolist() == [3, 4]
    assert judged.summary()['at_effort_limit'] == 2


def test_the_bag_page_states_the_margins_of_the_module():
    text = ' '.join((Path(__file__).parents[2] / 'docs' / 'bag.md').read_text().split())
    for phrase in (f"by more than {LIMIT_MARGIN:g} of the joint's range",
                   f'beyond {VELOCITY_FACTOR:g} times the velocity limit',
                   f'beyond {EFFORT_FACTOR:g} times the effort limit',
                   f'within {AT_LIMIT:g} of its range from a position limit',
                   f'reaches {SATURATION:g} of the effort limit'):
        assert phrase in text, phrase
