"""
``RobotModel.from_mjcf`` / ``mjcf.load_mjcf`` against MuJoCo's own inverse dynamics.

What is compared: ``mj_inverse`` with the constraints disabled (no joint limits, contacts or
frictionloss, which is a constraint in MuJoCo) and the RK4 integrator (MuJoCo's Euler turns a
damped qacc into its discrete-time one), so that qfrc_inverse = M(q) qacc + armature qacc +
c(q, qvel) + damping qvel, against ``rnea(q, v, a) + armature a + viscous v``; frictionloss is
compared as a value (``coulomb``). The free joint's layout is converted (MuJoCo: qpos
[x y z qw qx qy qz], linear velocity and force in the world frame). Relative to
max(1, |tau|_inf), below 1e-9.

Corpus: the MJCF MuJoCo writes (``MjSpec.to_xml``) from the project's URDFs (example-robot-data,
their geometry removed as the sim does), with armature, damping and frictionloss added and a
free joint for the legged robots; the MJCF the ``mujoco`` package ships (``testdata/model.xml``)
is refused, by name; hand-written MJCF for hinges away from the body origin, ``ref``, slide
joints, gravity and each refused feature.
"""
from __future__ import annotations

from pathlib import Path
import warnings

from harness.oracle import robot_path
import mujoco
import numpy as np
import pytest

from rnea_ros import ModelWarning, RobotModel, URDFError
from rnea_ros.description.mjcf import load_mjcf, route_mujoco_warnings
from rnea_ros.errors import MJCFError
from rnea_ros.sim.mjmodel import mujoco_urdf

TOLERANCE = 1e-9
SHIPPED = Path(mujoco.__file__).parent / 'testdata' / 'model.xml'
# (robot, floating): robots that MuJoCo compiles (it refuses anymal's inertias); panda and
# baxter have mimic joints (MuJoCo's URDF compiler makes joint equalities of them).
CORPUS = (('ur5', False), ('xarm7', False), ('kinova', False), ('double_pendulum_continuous',
          False), ('panda', False), ('baxter', False), ('solo12', True), ('talos_reduced', True),
          ('g1', True))


def _couplings(mj, model=None) -> dict[int, tuple[int, float, float]]:
    """
    Return MuJoCo's joint equalities: joint1 id -> (joint2 id, polycoef[1], polycoef[0]).

    With ``model``, only those whose joint1 is a mimic joint of it (an equality the file's
    flags disable leaves joint1 independent).
    """
    return {int(mj.eq_obj1id[k]): (int(mj.eq_obj2id[k]), float(mj.eq_data[k][1]),
                                   float(mj.eq_data[k][0])) for k in range(mj.neq)
            if model is None or mj.joint(int(mj.eq_obj1id[k])).name not in model.joint_names}


def _mj_state(mj, model, q, v, a):
    """Return MuJoCo's qpos, qvel, qacc of our q, v, a, and the free body's rotation."""
    qpos, qvel, qacc = np.zeros(mj.nq), np.zeros(mj.nv), np.zeros(mj.nv)
    rotation = None
    for joint in model.joints:
        if joint.kind == 'free-flyer':
            x, y, z, w = q[3:7]
            quat = np.array([w, x, y, z])
            rotation = np.zeros(9)
            mujoco.mju_quat2Mat(rotation, quat)
            rotation = rotation.reshape(3, 3)
            qpos[:7] = [*q[:3], *quat]
            qvel[:6] = [*(rotation @ v[:3]), *v[3:6]]
            qacc[:6] = [*(rotation @ (a[:3] + np.cross(v[3:6], v[:3]))), *a[3:6]]
            continue
        target = mj.joint(joint.name)
        qpos[target.qposadr[0]] = q[joint.idx_q]
        qvel[target.dofadr[0]] = v[joint.idx_v]
        qacc[target.dofadr[0]] = a[joint.idx_v]
    # y - y0 = c0 + c1 (x - x0)
    for joint, (master, factor, shift) in _couplings(mj, model).items():
        jq, mq = mj.jnt_qposadr[joint], mj.jnt_qposadr[master]
        jv, mv = mj.jnt_dofadr[joint], mj.jnt_dofadr[master]
        qpos[jq] = mj.qpos0[jq] + shift + factor * (qpos[mq] - mj.qpos0[mq])
        qvel[jv], qacc[jv] = factor * qvel[mv], factor * qacc[mv]
    return qpos, qvel, qacc, rotation


def _mj_torque(mj, model, qfrc, rotation):
    """qfrc_inverse in our tau layout."""
    tau = np.zeros(model.nv)
    for joint in model.joints:
        if joint.kind == 'free-flyer':
            tau[:6] = [*(rotation.T @ qfrc[:3]), *qfrc[3:6]]
        else:
            tau[joint.idx_v] = qfrc[mj.joint(joint.name).dofadr[0]]
    for joint, (master, factor, _) in _couplings(mj, model).items():  # the coupled torque's share
        tau[model.joint(mj.joint(master).name).idx_v] += factor * qfrc[mj.jnt_dofadr[joint]]
    return tau


def assert_matches_mj_inverse(mj, robot, samples: int = 5, seed: int = 0):
    """``robot`` (``load_mjcf``) against mj_inverse at random states (module docstring)."""
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    mj.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    data = mujoco.MjData(mj)
    model, terms = robot.model, robot.actuation
    rng = np.random.default_rng(seed)
    for _ in range(samples):
        q = rng.uniform(-1.5, 1.5, model.nq)
        for joint in model.joints:
            if joint.nq == 7:
                q[joint.idx_q + 3:joint.idx_q + 7] /= np.linalg.norm(q[3:7])
        v, a = rng.normal(size=(2, model.nv))
        data.qpos[:], data.qvel[:], data.qacc[:], rotation = _mj_state(mj, model, q, v, a)
        mujoco.mj_inverse(mj, data)
        expected = _mj_torque(mj, model, data.qfrc_inverse, rotation)
        tau = model.rnea(q, v, a) + terms.armature * a + terms.viscous * v
        error = np.abs(tau - expected).max() / max(1.0, np.abs(expected).max())
        assert error < TOLERANCE, (error, tau, expected)


def _urdf_spec(name: str, floating: bool, seed: int = 1):
    """Return MuJoCo's spec of a robot's URDF (no geometry, joint terms added), its text."""
    urdf = robot_path(name).read_text()
    spec = mujoco.MjSpec.from_string(mujoco_urdf(urdf))
    rng = np.random.default_rng(seed)
    for joint in spec.joints:
        joint.armature, joint.frictionloss = rng.uniform(0.01, 0.5, 2)
        joint.damping = [rng.uniform(0.01, 0.5), 0.0, 0.0]
    if floating:
        spec.worldbody.first_body().add_freejoint()
    return spec, urdf


def _quiet_load(source):
    with warnings.catch_warnings():  # the URDFs' ModelWarnings: not what is tested here
        warnings.simplefilter('ignore', ModelWarning)
        return load_mjcf(source, inertia_check='warn')


@pytest.mark.parametrize('name,floating', CORPUS, ids=[name for name, _ in CORPUS])
def test_mjcf_written_by_mujoco_from_urdf_matches_mj_inverse(name, floating, tmp_path):
    spec, _ = _urdf_spec(name, floating)
    path = tmp_path / f'{name}.xml'
    path.write_text(spec.to_xml())  # MuJoCo writes 6 significant digits
    robot = _quiet_load(path)
    mj = mujoco.MjModel.from_xml_path(str(path))
    assert robot.model.floating_base == floating
    assert_matches_mj_inverse(mj, robot)
    # Each joint's terms, with those of the joints coupled to it reflected (factor^2; |factor|
    # for frictionloss).
    for term, values in (('coulomb', mj.dof_frictionloss), ('armature', mj.dof_armature),
                         ('viscous', mj.dof_damping)):
        expected = np.zeros(robot.model.nv)
        for joint in robot.model.joints:
            if joint.nv == 1:
                expected[joint.idx_v] = values[mj.joint(joint.name).dofadr[0]]
        for coupled, (master, factor, _) in _couplings(mj).items():
            gain = abs(factor) if term == 'coulomb' else factor ** 2
            expected[robot.model.joint(mj.joint(master).name).idx_v] += \
                gain * values[mj.jnt_dofadr[coupled]]
        np.testing.assert_allclose(getattr(robot.actuation, term), expected, rtol=1e-15,
                                   atol=0)


@pytest.mark.parametrize('name,floating', CORPUS, ids=[name for name, _ in CORPUS])
def test_urdf_compiled_by_mujoco_is_the_urdf_model(name, floating):
    spec, urdf = _urdf_spec(name, floating)
    robot = _quiet_load(spec.compile())
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ModelWarning)
        from_urdf = RobotModel.from_urdf_string(urdf, floating_base=floating,
                                                inertia_check='warn')
    assert robot.model.joint_names == from_urdf.joint_names
    assert set(robot.model.link_names) == set(from_urdf.link_names) | {'world'} - (
        {'world'} if floating else set())
    rng = np.random.default_rng(2)
    for _ in range(3):
        q = rng.uniform(-1.5, 1.5, from_urdf.nq)
        if floating:
            q[3:7] /= np.linalg.norm(q[3:7])
        v, a = rng.normal(size=(2, from_urdf.nv))
        expected = from_urdf.rnea(q, v, a)
        error = np.abs(robot.model.rnea(q, v, a) - expected).max()
        assert error < TOLERANCE * max(1.0, np.abs(expected).max())


HAND_WRITTEN = """
<mujoco model="hand">
  <compiler angle="radian"/>
  <option gravity="0.7 -1.9 -3.1"/>
  <worldbody>
    <body name="base" pos="0.1 0 0.2" euler="0.3 0 0.1">
      <geom type="box" size=".1 .1 .1" mass="3"/>
      <body name="upper" pos="0 0 0.5" quat="0.9 0.1 0.2 0.3">
        <joint name="shoulder" ref="0.4" pos="0.1 0.05 -0.02" axis="0 1 1" damping="0.4"
               armature="0.2" frictionloss="0.3" limited="true" range="-2 2"
               actuatorfrclimited="true" actuatorfrcrange="-40 50"/>
        <geom type="box" size=".1 .2 .3" pos="0.2 0 0" euler="0.1 0.2 0.3"/>
        <body name="slider" pos="0.3 0 0.1">
          <joint name="slide" type="slide" axis="1 0.2 0" damping="0.1" armature="0.05"
                 ref="0.1"/>
          <geom size=".05" pos="0 0.1 0" mass="2"/>
          <body name="tool" pos="0.1 0.1 0.1" euler="0 0.5 0">
            <geom type="capsule" size=".05 .1" pos="0.02 0 0.1"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / 'robot.xml'
    path.write_text(text)
    return path


def test_hinge_off_origin_ref_slide_fixed_bodies_and_gravity(tmp_path):
    path = _written(tmp_path, HAND_WRITTEN)
    robot = load_mjcf(path)
    model = robot.model
    assert model.name == 'hand'
    assert model.joint_names == ('shoulder', 'slide')
    assert model.link_names == ('world', 'base', 'upper/joint', 'upper', 'slider', 'tool')
    np.testing.assert_allclose(model.gravity, [0.7, -1.9, -3.1], rtol=0, atol=1e-15)
    shoulder = model.joint('shoulder')
    assert (shoulder.lower, shoulder.upper, shoulder.effort_limit) == (-2.0, 2.0, 50.0)
    np.testing.assert_array_equal(robot.actuation.coulomb, [0.3, 0.0])
    mj = mujoco.MjModel.from_xml_path(str(path))
    assert_matches_mj_inverse(mj, robot, samples=10)
    # The link frames are MuJoCo's body frames: the 'tool' placement as MuJoCo's xpos, xmat.
    data = mujoco.MjData(mj)
    data.qpos[:] = [0.7, -0.2]
    mujoco.mj_kinematics(mj, data)
    rotation, position = model.link_placement(np.array([0.7, -0.2]), 'tool')
    np.testing.assert_allclose(position, data.xpos[mj.body('tool').id], rtol=0, atol=1e-12)
    np.testing.assert_allclose(rotation.reshape(-1), data.xmat[mj.body('tool').id], rtol=0,
                               atol=1e-12)


def test_disabled_gravity_damper_and_frictionloss_flags_are_carried_over(tmp_path):
    path = tmp_path / 'flags.xml'
    path.write_text(HAND_WRITTEN.replace(
        '<option gravity="0.7 -1.9 -3.1"/>', '<option gravity="0.7 -1.9 -3.1"><flag '
        'gravity="disable" damper="disable" frictionloss="disable"/></option>'))
    robot = load_mjcf(path)
    np.testing.assert_array_equal(robot.model.gravity, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(robot.actuation.viscous, [0.0, 0.0])
    np.testing.assert_array_equal(robot.actuation.coulomb, [0.0, 0.0])
    np.testing.assert_array_equal(robot.actuation.armature, [0.2, 0.05])
    assert_matches_mj_inverse(mujoco.MjModel.from_xml_path(str(path)), robot)


COUPLED = """
<mujoco model="coupled">
  <worldbody>
    <body name="a" pos="0 0 0.5">
      <joint name="master" ref="20" axis="0 1 0" armature="0.3" damping="0.2"/>
      <geom type="box" size=".1 .1 .3" pos="0 0 0.3"/>
      <body name="b" pos="0 0 0.6">
        <joint name="follower" ref="-10" axis="1 0 0" armature="0.1" damping="0.4"
               frictionloss="0.5"/>
        <geom type="capsule" size=".05 .2" pos="0 0 0.2"/>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint joint1="follower" joint2="master" polycoef="0.2 -1.5 0 0 0"/>
  </equality>
</mujoco>
"""


def test_a_joint_equality_is_a_mimic_joint_with_its_terms_on_the_master(tmp_path):
    path = _written(tmp_path, COUPLED)
    robot = load_mjcf(path)
    assert robot.model.joint_names == ('master',)
    # follower - ref = 0.2 - 1.5 (master - ref), in radians
    assert robot.model.tree.multiplier.tolist() == [1.0, -1.5]
    np.testing.assert_allclose(robot.actuation.armature, [0.3 + 2.25 * 0.1], rtol=1e-15)
    np.testing.assert_allclose(robot.actuation.viscous, [0.2 + 2.25 * 0.4], rtol=1e-15)
    np.testing.assert_allclose(robot.actuation.coulomb, [1.5 * 0.5], rtol=1e-15)
    assert_matches_mj_inverse(mujoco.MjModel.from_xml_path(str(path)), robot, samples=10)


def test_from_mjcf_is_the_model_of_load_mjcf(tmp_path):
    path = tmp_path / 'hand.xml'
    path.write_text(HAND_WRITTEN)
    model = RobotModel.from_mjcf(path)
    q, v, a = np.array([0.3, 0.1]), np.array([0.5, -0.2]), np.array([1.0, 2.0])
    np.testing.assert_array_equal(model.rnea(q, v, a), load_mjcf(path).model.rnea(q, v, a))


def _body(joint: str = '', body: str = 'name="b"', extra: str = '') -> str:
    return (f'<mujoco>{extra}<worldbody><body {body}>{joint}<geom size=".1"/>'
            '</body></worldbody></mujoco>')


@pytest.mark.parametrize('xml,message', [
    (_body('<joint name="j" type="ball"/>'), "joint 'j' (body 'b') is a ball joint"),
    (_body('<joint name="j1"/><joint name="j2" axis="1 0 0"/>'),
     "body 'b' has 2 joints ['j1', 'j2']"),
    (_body('<joint name="j" stiffness="3"/>'), "joint 'j' has a spring (stiffness)"),
    (_body('<joint name="j"/>', 'name="b" gravcomp="1"'),
     "body 'b' has gravity compensation (gravcomp)"),
    (_body('', 'name="b" mocap="true"'), "body 'b' is a mocap body"),
    (_body('<joint/>'), "the joint of body 'b' has no name"),
    (_body('<joint name="j"/>', ''), "body #1 (child of 'world') has no name"),
    (_body('<joint name="j"/>', extra='<option density="1.2"/>'),
     'option density=1.2: fluid forces (density) are not supported (expected 0)'),
    (_body('<freejoint name="f"/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
           '<body name="c"><joint name="j" type="ball"/><geom size=".1"/></body>'),
     "joint 'j' (body 'c') is a ball joint"),
    (_body('<joint name="j" type="free" damping="1"/>'),
     "free joint 'j' (body 'b') has damping: not supported on a free joint"),
    ('<mujoco><worldbody><body name="a"><freejoint/><geom size=".1"/></body>'
     '<body name="w"><geom size=".1"/></body></worldbody></mujoco>',
     "body 'a' has a free joint, and body 'w' hangs from the world too"),
    ('<mujoco><worldbody><body name="a"><joint name="j"/><geom size=".1"/></body>'
     '<body name="c"><joint name="k"/><geom size=".1"/></body></worldbody>'
     '<equality><joint name="e" joint1="j" joint2="k" polycoef="0 1 0.5 0 0"/></equality>'
     '</mujoco>', "equality 'e' (1 in all): not supported (an active joint equality joint1 = "
     'polycoef[0] + polycoef[1] joint2 only)'),
    ('<mujoco><worldbody><body name="a"><joint name="j"/><geom size=".1"/></body>'
     '<body name="c"><joint name="k"/><geom size=".1"/></body>'
     '<body name="d"><joint name="m"/><geom size=".1"/></body></worldbody>'
     '<equality><joint joint1="j" joint2="k"/><joint joint1="k" joint2="m"/></equality>'
     '</mujoco>', "joint 'j' is coupled to joint 'k', which is coupled itself"),
    ('<mujoco><worldbody><body name="a"><joint name="j"/><geom size=".1"/>'
     '<site name="s1"/></body><site name="s2" pos="0 0 1"/></worldbody><tendon><spatial '
     'name="t"><site site="s1"/><site site="s2"/></spatial></tendon></mujoco>',
     "tendon 't' (1 in all): tendons are not supported"),
])
def test_unsupported_features_are_refused_by_name(xml, message, tmp_path):
    path = tmp_path / 'robot.xml'
    path.write_text(xml)
    with pytest.raises(MJCFError) as caught:
        load_mjcf(path)
    assert str(caught.value).startswith(f'MJCF {str(path)!r}: ')
    assert message in str(caught.value)


def test_mujoco_warnings_are_python_warnings_not_a_log_file(tmp_path, monkeypatch):
    """
    A warning of MuJoCo's compiler on a model it accepts: a Python warning, no file.

    Regression: its default handler appended the warning to MUJOCO_LOG.TXT in the working
    directory (two joints of one body make a singular mass matrix).
    """
    monkeypatch.chdir(tmp_path)
    path = tmp_path / 'robot.xml'
    path.write_text(_body('<joint name="j1"/><joint name="j2"/>'))
    mujoco.set_mju_user_warning(None)  # MuJoCo's own handler, whatever a test set before
    try:
        with pytest.warns(RuntimeWarning, match='^MuJoCo: Inertia matrix is too close to '
                          'singular'), pytest.raises(MJCFError, match="body 'b' has 2 joints"):
            load_mjcf(path)
    finally:
        route_mujoco_warnings()  # as the sim sets it for every MuJoCo call
    assert sorted(p.name for p in tmp_path.iterdir()) == ['robot.xml']


def test_the_mjcf_shipped_with_mujoco_is_refused_by_name():
    with pytest.raises(URDFError) as caught:
        RobotModel.from_mjcf(SHIPPED)
    assert "MJCF '" in str(caught.value) and 'not supported' in str(caught.value)


def test_a_file_mujoco_cannot_compile_is_one_line_naming_it(tmp_path):
    path = tmp_path / 'bad.xml'
    path.write_text('<mujoco><worldbody><body><joint type="nope"/></body></worldbody></mujoco>')
    with pytest.raises(MJCFError) as caught:
        load_mjcf(path)
    assert str(caught.value).startswith(f'MJCF {str(path)!r}: MuJoCo cannot compile it: ')
    assert '\n' not in str(caught.value)
    with pytest.raises(MJCFError, match='no such file'):
        load_mjcf(tmp_path / 'missing.xml')


ACTUATED = HAND_WRITTEN.replace('</mujoco>', """  <actuator>
    <motor joint="shoulder" gear="3" armature="0.05"/>
    <motor joint="shoulder" gear="-2" armature="0.01"/>
    <general jointinparent="slide" gear="5" armature="0.002"/>
  </actuator>
</mujoco>""")


def test_actuator_armature_is_on_its_joint_times_gear_squared(tmp_path):
    """
    An actuator adds gear^2 x its armature to its joint's (MuJoCo): M as mj_fullM, to 1e-12.

    Regression: the actuators' armature was dropped (a 43 % torque error on such a robot).
    """
    path = _written(tmp_path, ACTUATED)
    robot = load_mjcf(path)
    np.testing.assert_allclose(robot.actuation.armature,
                               [0.2 + 9 * 0.05 + 4 * 0.01, 0.05 + 25 * 0.002], rtol=1e-15)
    mj = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.uniform(-1.5, 1.5, 2)
        data.qpos[:] = q
        mujoco.mj_forward(mj, data)
        expected = np.zeros((2, 2))
        mujoco.mj_fullM(mj, data, expected)
        mass = robot.model.mass_matrix(q) + np.diag(robot.actuation.armature)
        np.testing.assert_allclose(mass, expected, rtol=0, atol=1e-12)
    assert_matches_mj_inverse(mj, robot, samples=10)


def test_a_disabled_constraint_flag_drops_frictionloss_and_limits_as_mujoco_does(tmp_path):
    """
    With `<flag constraint="disable"/>` MuJoCo applies no frictionloss and no limit.

    The torques with the Coulomb term equal mj_inverse of the file as it is (its own flags).
    Regression: the frictionloss was kept as Coulomb friction, and the range as limits.
    """
    path = _written(tmp_path, HAND_WRITTEN.replace(
        '<option gravity="0.7 -1.9 -3.1"/>',
        '<option gravity="0.7 -1.9 -3.1"><flag constraint="disable"/></option>'))
    robot = load_mjcf(path)
    np.testing.assert_array_equal(robot.actuation.coulomb, [0.0, 0.0])
    shoulder = robot.model.joint('shoulder')
    assert (shoulder.lower, shoulder.upper) == (-np.inf, np.inf)
    mj = mujoco.MjModel.from_xml_path(str(path))
    mj.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4  # no discrete-time damping
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(4)
    for _ in range(5):
        q = rng.uniform(-3.0, 3.0, 2)  # beyond the shoulder's range too
        v, a = rng.normal(size=(2, 2))
        data.qpos[:], data.qvel[:], data.qacc[:] = q, v, a
        mujoco.mj_inverse(mj, data)
        tau = robot.model.rnea(q, v, a) + robot.actuation.armature_torques(a) \
            + robot.actuation.friction_torques(v)
        np.testing.assert_allclose(tau, data.qfrc_inverse, rtol=0,
                                   atol=TOLERANCE * max(1.0, np.abs(tau).max()))


def test_a_disabled_limit_flag_leaves_the_joints_unlimited(tmp_path):
    path = _written(tmp_path, HAND_WRITTEN.replace(
        '<option gravity="0.7 -1.9 -3.1"/>',
        '<option gravity="0.7 -1.9 -3.1"><flag limit="disable"/></option>'))
    robot = load_mjcf(path)
    shoulder = robot.model.joint('shoulder')
    assert (shoulder.lower, shoulder.upper) == (-np.inf, np.inf)
    np.testing.assert_array_equal(robot.actuation.coulomb, [0.3, 0.0])


@pytest.mark.parametrize('flag', ['equality', 'constraint'])
def test_a_disabled_equality_leaves_its_joints_independent_as_mujoco_does(flag, tmp_path):
    """
    With `<flag equality="disable"/>` (or `constraint`) MuJoCo couples no joint.

    Both joints are independent, each with its own terms; M equals mj_fullM to 1e-12.
    Regression: the follower was made a mimic joint of the master.
    """
    path = _written(tmp_path, COUPLED.replace(
        '<worldbody>', f'<option><flag {flag}="disable"/></option><worldbody>', 1))
    robot = load_mjcf(path)
    assert robot.model.joint_names == ('master', 'follower')
    np.testing.assert_array_equal(robot.actuation.armature, [0.3, 0.1])
    np.testing.assert_array_equal(robot.actuation.viscous, [0.2, 0.4])
    mj = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(mj)
    for q in ([0.3, -0.8], [1.1, 0.4]):
        data.qpos[:] = q
        mujoco.mj_forward(mj, data)
        expected = np.zeros((2, 2))
        mujoco.mj_fullM(mj, data, expected)
        mass = robot.model.mass_matrix(np.array(q)) + np.diag(robot.actuation.armature)
        np.testing.assert_allclose(mass, expected, rtol=0, atol=1e-12)
    assert_matches_mj_inverse(mj, robot, samples=5)
