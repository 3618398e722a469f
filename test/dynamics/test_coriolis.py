"""
C(q, v) and C^T(q, v) v against Pinocchio's ``computeCoriolisMatrix``, and dM/dt = C + C^T.

Errors are relative to max(1, |expected|_inf) and must stay below 1e-10. The identity is checked
independently of Pinocchio, with a central difference of our own mass matrix along v.

The oracle loads Pinocchio without mimic coupling and couples the joints itself (C = G^T C_pin G,
test/harness/oracle.py): Pinocchio 4.1's computeCoriolisMatrix on a model with mimic joints is not
a factorisation of its own nonlinear effects (C v differs from the RNEA's by 1e-2 on the panda).
"""
from __future__ import annotations

from harness.oracle import Oracle, robot_path
import numpy as np
import pytest

from rnea_ros import InputError, RobotModel

TOLERANCE = 1e-10
# Fixed-base arms (revolute, continuous and mimic prismatic joints) and a free-flyer each.
ROBOTS = [('ur5', False), ('panda', False), ('kinova', False), ('xarm7', False),
          ('double_pendulum_continuous', False), ('solo12', True), ('panda', True)]


def loaded(name: str, floating_base: bool):
    path = robot_path(name)
    model = RobotModel.from_urdf_file(path, floating_base=floating_base)
    return model, Oracle(model, path, floating_base, mimic=False)


def relative_error(actual, expected) -> float:
    return float(np.abs(actual - expected).max()) / max(1.0, float(np.abs(expected).max()))


def pinocchio_coriolis(oracle: Oracle, q, v) -> np.ndarray:
    pin = oracle.pin
    matrix = pin.computeCoriolisMatrix(oracle.pm, oracle.pd, oracle.q_to_pin(q),
                                       oracle.v_to_pin(v))
    return oracle.coupling.T @ np.asarray(matrix) @ oracle.coupling


def random_cases(name: str, floating_base: bool, seed: int):
    """Yield (model, q, v, Pinocchio's C(q, v)) at three random states of the robot."""
    model, oracle = loaded(name, floating_base)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        q, v, _ = oracle.random_state(rng)
        yield model, q, v, pinocchio_coriolis(oracle, q, v)


@pytest.mark.parametrize('name, floating_base', ROBOTS)
def test_coriolis_matrix_matches_pinocchio(name, floating_base):
    for model, q, v, expected in random_cases(name, floating_base, 18):
        matrix = model.coriolis_matrix(q, v)
        assert matrix.shape == (model.nv, model.nv)
        assert relative_error(matrix, expected) < TOLERANCE
        assert relative_error(matrix @ v, model.velocity_product(q, v)) < TOLERANCE


@pytest.mark.parametrize('name, floating_base', ROBOTS)
def test_coriolis_transpose_velocity_matches_pinocchio(name, floating_base):
    for model, q, v, coriolis in random_cases(name, floating_base, 19):
        expected = coriolis.T @ v
        actual = model.coriolis_transpose_velocity(q, v)
        assert actual.shape == (model.nv,)
        assert relative_error(actual, expected) < TOLERANCE


def integrate(model: RobotModel, q, v, dt: float) -> np.ndarray:
    """Return q moved along v for dt (the free-flyer by its body twist, to first order in dt)."""
    q = q.copy()
    for joint in model.joints:
        if joint.kind == 'free-flyer':
            import pinocchio as pin
            pose = pin.XYZQUATToSE3(q[joint.idx_q:joint.idx_q + 7])
            moved = pose * pin.exp6(pin.Motion(v[joint.idx_v:joint.idx_v + 6] * dt))
            q[joint.idx_q:joint.idx_q + 7] = pin.SE3ToXYZQUAT(moved)
        else:
            q[joint.idx_q] += v[joint.idx_v] * dt
    return q


@pytest.mark.parametrize('name, floating_base', ROBOTS)
def test_mass_matrix_derivative_is_c_plus_c_transpose(name, floating_base):
    """dM/dt along v (a central difference of our CRBA) equals C + C^T."""
    model, oracle = loaded(name, floating_base)
    rng = np.random.default_rng(20)
    q, v, _ = oracle.random_state(rng)
    dt = 1e-6
    derivative = (model.mass_matrix(integrate(model, q, v, dt))
                  - model.mass_matrix(integrate(model, q, v, -dt))) / (2 * dt)
    matrix = model.coriolis_matrix(q, v)
    # A central difference: truncation O(dt^2), rounding about 1e-16 |M| / dt.
    assert relative_error(matrix + matrix.T, derivative) < 1e-7
    assert relative_error(model.coriolis_transpose_velocity(q, v), matrix.T @ v) < TOLERANCE


@pytest.mark.parametrize('method', ['coriolis_transpose_velocity', 'coriolis_matrix'])
def test_coriolis_refuses_bad_states_by_name(method):
    model = RobotModel.from_urdf_file(robot_path('ur5'))
    v = np.zeros(model.nv)
    v[2] = np.nan
    with pytest.raises(InputError) as error:
        getattr(model, method)(model.neutral_configuration(), v)
    assert str(error.value) == 'v[2] is nan: values must be finite'
    with pytest.raises(InputError) as error:
        getattr(model, method)(np.zeros(3), np.zeros(model.nv))
    assert str(error.value) == 'q: expected shape (6,), got (3,)'
    free = RobotModel.from_urdf_file(robot_path('ur5'), floating_base=True)
    q = free.neutral_configuration()
    q[3:7] = [0.0, 0.0, 0.0, 2.0]
    with pytest.raises(InputError) as error:
        getattr(free, method)(q, np.zeros(free.nv))
    assert str(error.value) == ("q[3:7] (quaternion of joint 'root_joint') has norm 2: "
                                'expected a unit quaternion')
    huge = np.full(model.nv, 1e200 if method == 'coriolis_transpose_velocity' else 1e308)
    # C^T v is quadratic in v, C linear: each overflows for its own size of v.
    with pytest.raises(InputError) as error:
        getattr(model, method)(model.neutral_configuration(), huge)
    assert str(error.value) == f'{method}: the result is not finite (inputs too large?)'
