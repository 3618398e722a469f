"""Frame kinematics and joint reaction wrenches: against Pinocchio and finite differences."""
from __future__ import annotations

from harness.oracle import Oracle, robot_path
import numpy as np
import pytest

from rnea_ros import InputError, RobotModel

ROBOTS = [('ur5', False), ('panda', False), ('pr2', False), ('solo12', True),
          ('talos_reduced', True), ('tiago', False)]
FRAMES = {'local': 'LOCAL', 'world': 'WORLD', 'local_world_aligned': 'LOCAL_WORLD_ALIGNED'}


@pytest.fixture(scope='module', params=ROBOTS,
                ids=lambda p: f'{p[0]}-{"free" if p[1] else "fixed"}')
def robot(request):
    name, floating = request.param
    model = RobotModel.from_urdf_file(robot_path(name), floating_base=floating)
    return model, Oracle(model, robot_path(name), floating)


def some_links(model: RobotModel) -> list[str]:
    """Every third link plus the last: moving, fixed-joint and world-fixed links alike."""
    return list(model.link_names[::3]) + [model.link_names[-1]]


def test_link_placements_match_pinocchio(robot):
    model, oracle = robot
    pin = oracle.pin
    q, _, _ = oracle.random_state(np.random.default_rng(0))
    pin.framesForwardKinematics(oracle.pm, oracle.pd, oracle.q_to_pin(q))
    links = some_links(model)
    rotations, positions = model.link_placements(q, links)
    for link, rotation, position in zip(links, rotations, positions):
        expected = oracle.pd.oMf[oracle.pm.getFrameId(link, pin.FrameType.BODY)]
        np.testing.assert_allclose(rotation, expected.rotation, atol=1e-12, err_msg=link)
        np.testing.assert_allclose(position, expected.translation, atol=1e-12, err_msg=link)
        single = model.link_placement(q, link)
        np.testing.assert_allclose(single[0], rotation, rtol=0, atol=1e-12)


@pytest.mark.parametrize('frame', FRAMES)
def test_link_jacobians_match_pinocchio(robot, frame):
    model, oracle = robot
    pin = oracle.pin
    q, _, _ = oracle.random_state(np.random.default_rng(1))
    pin.computeJointJacobians(oracle.pm, oracle.pd, oracle.q_to_pin(q))
    pin.updateFramePlacements(oracle.pm, oracle.pd)
    for link in some_links(model):
        expected = pin.getFrameJacobian(oracle.pm, oracle.pd,
                                        oracle.pm.getFrameId(link, pin.FrameType.BODY),
                                        getattr(pin.ReferenceFrame, FRAMES[frame]))
        np.testing.assert_allclose(model.link_jacobian(q, link, frame),
                                   expected[:, oracle.v_perm], atol=1e-12, err_msg=link)


def _rotation_vector(rotation: np.ndarray) -> np.ndarray:
    """Return the log map of a small rotation (axis * angle)."""
    angle = np.arccos(np.clip((np.trace(rotation) - 1) / 2, -1, 1))
    skew = np.array([rotation[2, 1] - rotation[1, 2], rotation[0, 2] - rotation[2, 0],
                     rotation[1, 0] - rotation[0, 1]])
    return skew / 2 if angle < 1e-12 else skew * angle / (2 * np.sin(angle))


def _integrate(model: RobotModel, q: np.ndarray, v: np.ndarray, dt: float) -> np.ndarray:
    """Return q moved along v for dt (free-flyer: body-frame twist; others: q + v dt)."""
    out = q.copy()
    for joint in model.joints:
        iq, iv = joint.idx_q, joint.idx_v
        if joint.nq != 7:
            out[iq:iq + joint.nq] += v[iv:iv + joint.nv] * dt
            continue
        x, y, z, w = q[iq + 3:iq + 7]
        rotation = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                             [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                             [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        out[iq:iq + 3] += rotation @ v[iv:iv + 3] * dt
        omega = v[iv + 3:iv + 6] * dt
        angle = np.linalg.norm(omega)
        step = np.r_[np.sin(angle / 2) * omega / angle, np.cos(angle / 2)]
        # Quaternion product q * step, (x, y, z, w) order.
        qv, qw, sv, sw = np.array([x, y, z]), w, step[:3], step[3]
        out[iq + 3:iq + 7] = np.r_[qw * sv + sw * qv + np.cross(qv, sv), qw * sw - qv @ sv]
    return out


def test_jacobian_matches_finite_differences(robot):
    """J v = the link's velocity measured by moving q along v (central differences)."""
    model, oracle = robot
    q, v, _ = oracle.random_state(np.random.default_rng(2))
    dt = 1e-6
    for link in some_links(model):
        rot_plus, pos_plus = model.link_placement(_integrate(model, q, v, dt), link)
        rot_minus, pos_minus = model.link_placement(_integrate(model, q, v, -dt), link)
        linear = (pos_plus - pos_minus) / (2 * dt)
        angular = _rotation_vector(rot_plus @ rot_minus.T) / (2 * dt)
        jac = model.link_jacobian(q, link, 'local_world_aligned')
        np.testing.assert_allclose(jac @ v, np.r_[linear, angular], atol=1e-6, err_msg=link)


def test_joint_reaction_wrenches_match_pinocchio_body_forces(robot):
    model, oracle = robot
    pin = oracle.pin
    rng = np.random.default_rng(3)
    q, v, a = oracle.random_state(rng)
    f_ext = {model.link_names[-1]: rng.standard_normal(6),
             model.link_names[1]: rng.standard_normal(6)}
    wrenches = model.joint_reaction_wrenches(q, v, a, f_ext=f_ext)
    pin.rnea(oracle.pm, oracle.pd, oracle.q_to_pin(q), oracle.v_to_pin(v), oracle.v_to_pin(a),
             oracle.pin_forces(q, f_ext))
    moving = set(oracle.pm.names[1:])
    assert set(wrenches) == moving
    for name, wrench in wrenches.items():
        expected = oracle.pd.f[oracle.pm.getJointId(name)].vector
        np.testing.assert_allclose(wrench, expected, atol=1e-9 * max(1, abs(expected).max()),
                                   err_msg=name)


def test_reaction_wrench_projects_to_the_joint_torque():
    """On the joint axis (URDF child frame), the reaction wrench is the joint torque."""
    model = RobotModel.from_urdf_file(robot_path('ur5'))
    rng = np.random.default_rng(4)
    q, v, a = rng.standard_normal((3, model.nv))
    tau = model.rnea(q, v, a)
    wrenches = model.joint_reaction_wrenches(q, v, a)
    for joint in model.joints:
        axis = model.tree.axis[model.tree.body_names.index(joint.name)]
        assert wrenches[joint.name][3:] @ axis == pytest.approx(tau[joint.idx_v], abs=1e-10)


def test_kinematics_refuses_bad_arguments():
    model = RobotModel.from_urdf_file(robot_path('ur5'))
    q = model.neutral_configuration()
    with pytest.raises(InputError, match=r"^link: unknown link 'nope'$"):
        model.link_placement(q, 'nope')
    with pytest.raises(InputError, match=r"^frame: expected 'local', 'local_world_aligned' or "
                                         r"'world', got 'body'$"):
        model.link_jacobian(q, 'tool0', 'body')
    with pytest.raises(InputError, match=r'^q\[2\] is nan: values must be finite$'):
        model.link_jacobian(np.r_[0, 0, np.nan, 0, 0, 0], 'tool0')
