"""
payload.py and ``RobotModel.with_payload``: the checks, and the torques against Pinocchio.

The oracle adds the payload as Pinocchio would: ``pin.Inertia(m, c, I_c)`` in the link frame,
moved into the joint frame by the link frame's placement and added to the parent joint's
inertia; ``pin.rnea`` must then equal ``with_payload(...).rnea`` to 1e-10 relative to
max(1, |tau|). The panda's ``panda_link8`` and ``panda_hand`` are fixed-joint links folded into
link 7 (a placement to apply), the UR5's ``tool0`` likewise in ``wrist_3_link``.
"""
from __future__ import annotations

from harness.oracle import Oracle, robot_path
import numpy as np
import pinocchio as pin
import pytest

from rnea_ros import InputError, RobotModel
from rnea_ros.dynamics.payload import (
    body_transform, check_payload, from_link_parameters, link_parameters, MAX_MASS_RATIO,
    MAX_RADIUS, moving_mass, Payload)

INERTIA = (0.011, 0.001, -0.002, 0.009, 0.0005, 0.006)
COM = (0.02, -0.03, 0.07)
CASES = [('panda', 'panda_link8'), ('panda', 'panda_hand'), ('panda', 'panda_link4'),
         ('ur5', 'tool0'), ('ur5', 'wrist_3_link')]


def relative_error(value, expected) -> float:
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    return float(np.abs(np.asarray(value) - expected).max()) / scale


@pytest.fixture(scope='module', params=['panda', 'ur5'])
def robot(request):
    model = RobotModel.from_urdf_file(robot_path(request.param))
    return request.param, model


def pinocchio_with_payload(name, link, mass, com, inertia):
    oracle = Oracle(RobotModel.from_urdf_file(robot_path(name)), robot_path(name), False)
    pm = oracle.pm
    frame = pm.frames[pm.getFrameId(link)]
    ixx, ixy, ixz, iyy, iyz, izz = inertia
    added = pin.Inertia(mass, np.array(com),
                        np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]))
    pm.inertias[frame.parentJoint] = pm.inertias[frame.parentJoint] + frame.placement.act(added)
    return oracle


@pytest.mark.parametrize('name, link', CASES)
def test_torques_equal_pinocchio_with_the_payload_on_the_parent_joint(name, link):
    model = RobotModel.from_urdf_file(robot_path(name))
    loaded = model.with_payload(link, 2.0, COM, INERTIA)
    oracle = pinocchio_with_payload(name, link, 2.0, COM, INERTIA)
    rng = np.random.default_rng(4)
    changed = 0.0
    for _ in range(5):
        q, v, a = oracle.random_state(rng)
        expected = oracle.rnea(q, v, a)
        assert relative_error(loaded.rnea(q, v, a), expected) < 1e-10
        changed = max(changed, relative_error(model.rnea(q, v, a), expected))
    assert changed > 1e-3  # the payload is visible in the torques


def test_a_massless_payload_leaves_the_torques(robot):
    name, model = robot
    link = model.body_names[-1]
    same = model.with_payload(link, 0.0, (0.1, 0.2, 0.3), (0.0,) * 6)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = rng.uniform(-1.0, 1.0, model.nq)
        v, a = rng.standard_normal((2, model.nv))
        np.testing.assert_array_equal(same.rnea(q, v, a), model.rnea(q, v, a))


def test_parameters_round_trip_and_transform_is_rigid():
    payload = Payload('l', 2.0, COM, INERTIA)
    back = from_link_parameters('l', link_parameters(payload))
    np.testing.assert_allclose(back.com, COM, atol=1e-15)
    np.testing.assert_allclose(back.inertia, INERTIA, atol=1e-15)
    rotation = pin.rpy.rpyToMatrix(0.3, -0.2, 1.1)
    moved = body_transform(rotation, [0.1, 0.2, -0.3]) @ link_parameters(payload)
    inverse = body_transform(rotation.T, -rotation.T @ np.array([0.1, 0.2, -0.3]))
    np.testing.assert_allclose(inverse @ moved, link_parameters(payload), atol=1e-14)


@pytest.mark.parametrize('fields, message', [
    ({'mass': float('nan')}, 'payload.mass is nan: expected a finite number'),
    ({'mass': -1.0}, 'payload.mass is -1 kg: expected >= 0'),
    ({'mass': '2'}, "payload.mass: expected a number, got '2'"),
    ({'mass': True}, 'payload.mass: expected numbers, got True'),
    ({'com': (0.0, 0.0)}, 'payload.com: expected 3 numbers, got 2'),
    ({'com': (0.0, float('inf'), 0.0)}, 'payload.com[1] is inf: expected a finite number'),
    ({'inertia': (0.1,) * 5}, 'payload.inertia: expected 6 numbers, got 5'),
    ({'inertia': (0.1, 0.0, 0.0, -0.1, 0.0, 0.1)},
     'payload.inertia [0.1, 0.0, 0.0, -0.1, 0.0, 0.1] is not positive semi-definite (smallest '
     'eigenvalue -0.1 kg m^2): no rigid body has it'),
    ({'inertia': (0.1, 0.0, 0.0, 0.1, 0.0, 0.3)},
     'payload.inertia breaks the triangle inequality: izz (0.3) exceeds the sum of the other '
     'two (0.2): no mass density has it'),
    ({'link': 'nowhere'}, "payload.link: unknown link 'nowhere'"),
    ({'link': 3}, 'payload.link: expected a link name (a string), got 3'),
])
def test_bad_payloads_are_refused_naming_the_field(fields, message):
    values = {'link': 'panda_link8', 'mass': 1.0, 'com': COM, 'inertia': INERTIA} | fields
    with pytest.raises(InputError) as error:
        check_payload(Payload(**values), ('panda_link8',))
    assert str(error.value) == message


def test_with_payload_refuses_unknown_and_world_links(robot):
    name, model = robot
    with pytest.raises(InputError, match=r"^payload.link: unknown link 'nowhere'$"):
        model.with_payload('nowhere', 1.0, COM, INERTIA)
    root = {'panda': 'panda_link0', 'ur5': 'base_link'}[name]
    with pytest.raises(InputError) as error:
        model.with_payload(root, 1.0, COM, INERTIA)
    assert str(error.value) == (f'payload.link: link {root!r} is fixed to the world: a payload '
                                'there changes no joint torque')
    with pytest.raises(InputError, match=r'^payload.mass is -2 kg: expected >= 0$'):
        model.with_payload(model.body_names[-1], -2.0, COM, INERTIA)


@pytest.mark.parametrize('fields, message', [
    ({'com': (1e6, 0.0, 0.0)},
     'payload.com [1000000.0, 0.0, 0.0] is 1e+06 m from the link origin: expected at most 3 m'),
    ({'com': (0.0, 2.4, -1.81)},
     'payload.com [0.0, 2.4, -1.81] is 3.00601 m from the link origin: expected at most 3 m'),
    ({'mass': 2.0, 'inertia': (18.5, 0.0, 0.0, 18.5, 0.0, 18.5)},
     'payload.inertia has a principal moment of 18.5 kg m^2: expected at most mass x (3 m)^2 '
     '= 18 kg m^2 (its matter within 3 m)'),
    ({'mass': 0.0, 'inertia': INERTIA},
     'payload.inertia has a principal moment of 0.0119163 kg m^2: expected at most mass x '
     '(3 m)^2 = 0 kg m^2 (its matter within 3 m)'),
])
def test_a_payload_beyond_the_bounds_is_refused_naming_the_field_and_the_bound(fields, message):
    values = {'link': 'panda_link8', 'mass': 1.0, 'com': COM, 'inertia': INERTIA} | fields
    with pytest.raises(InputError) as error:
        check_payload(Payload(**values), ('panda_link8',))
    assert str(error.value) == message


def test_a_payload_on_the_bounds_is_accepted():
    """A 3 m com, a thin ring's moment m R^2 and 5 times the robot's mass are payloads."""
    ring = 2.0 * MAX_RADIUS ** 2
    payload = Payload('panda_link8', 2.0, (0.0, 0.0, MAX_RADIUS), (ring / 2, 0.0, 0.0,
                                                                   ring / 2, 0.0, ring))
    assert check_payload(payload, ('panda_link8',), robot_mass=2.0 / MAX_MASS_RATIO) == payload


def test_with_payload_bounds_the_mass_by_the_robots(robot):
    name, model = robot
    link = model.body_names[-1]
    robot_mass = moving_mass(model.tree)
    assert robot_mass == pytest.approx(float(model.inertial_parameters()[:, 0].sum()),
                                       rel=1e-12)
    model.with_payload(link, MAX_MASS_RATIO * robot_mass, COM, INERTIA)  # the bound itself
    heavy = MAX_MASS_RATIO * robot_mass * 1.01
    with pytest.raises(InputError) as error:
        model.with_payload(link, heavy, COM, INERTIA)
    assert str(error.value) == (
        f"payload.mass is {heavy:g} kg: expected at most 5 times the robot's mass "
        f'(5 x {robot_mass:g} kg = {5 * robot_mass:g} kg)')
    with pytest.raises(InputError, match=r'^payload.com \[1000000.0, 0.0, 0.0\] is 1e\+06 m '
                                         r'from the link origin: expected at most 3 m$'):
        model.with_payload(link, 1.0, (1e6, 0.0, 0.0), INERTIA)
