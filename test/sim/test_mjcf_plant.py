"""
``Plant.from_mjcf``: the simulated robot of an MJCF file (``rnea_ros.sim.mjcf_robot``).

The file is identified.xml as ``rnea_identify --mjcf`` writes it (``mjcf_out.mjcf_text`` of the
UR5 with armature, viscous and Coulomb friction): the plant steps as MuJoCo stepping the same
file directly, its nominal model is ``RobotModel.from_mjcf`` of the file, its effort limits are
the file's; what the plant cannot take is refused naming the file and the element.
"""
from __future__ import annotations

from pathlib import Path

from harness.mjcf_twins import identified_xml, joint_terms, joint_terms_gap, UR5
from harness.sim_cases import ARM
import mujoco
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.description.mjcf import load_mjcf
from rnea_ros.errors import MJCFError
from rnea_ros.sim.gap import parse_gap
from rnea_ros.sim.plant import Plant


def test_the_plant_steps_as_mujoco_stepping_the_file(tmp_path):
    """Same torques, 500 steps of 4 substeps: the same qpos and qvel as MuJoCo's, to 1e-12."""
    path = identified_xml(tmp_path)
    rate, substeps = 500.0, 4
    plant = Plant.from_mjcf(path, rate=rate, substeps=substeps)
    assert plant.joint_names == RobotModel.from_mjcf(path).joint_names
    assert plant.true_urdf is None and not plant.floating_base
    direct = mujoco.MjModel.from_xml_path(str(path))
    direct.opt.timestep = 1.0 / rate / substeps
    direct.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    data = mujoco.MjData(direct)
    q0 = np.array([0.3, -1.2, 1.0, -0.5, 0.4, 0.1])
    plant.reset(q0)
    data.qpos[:] = q0
    rng = np.random.default_rng(2)
    moved = 0.0
    for _ in range(500):
        torque = rng.uniform(-20.0, 20.0, 6)
        plant.step(torque)
        data.ctrl[:] = torque  # the file's motors, gear 1: the same torque
        for _ in range(substeps):
            mujoco.mj_step(direct, data)
        moved = max(moved, float(np.abs(plant.q() - q0).max()))
    assert moved > 0.3  # gravity and the torques moved the arm, friction and all
    np.testing.assert_allclose(plant.q(), data.qpos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(plant.v(), data.qvel, rtol=0, atol=1e-12)


def test_the_mjcf_plant_is_the_urdf_plant_with_the_same_joint_terms(tmp_path):
    """identified.xml and the URDF + a gap of its joint terms: 2000 steps apart by < 1e-12."""
    ur5 = RobotModel.from_urdf_file(UR5)
    urdf_plant = Plant(UR5.read_text(), gap=parse_gap(joint_terms_gap(ur5, joint_terms(ur5))))
    mjcf_plant = Plant.from_mjcf(identified_xml(tmp_path))
    q0 = np.array([0.3, -1.2, 1.0, -0.5, 0.4, 0.1])
    urdf_plant.reset(q0)
    mjcf_plant.reset(q0)
    rng = np.random.default_rng(1)
    for _ in range(2000):
        torque = rng.uniform(-20.0, 20.0, 6)
        urdf_plant.step(torque)
        mjcf_plant.step(torque)
    assert np.abs(urdf_plant.q() - q0).max() > 1.0
    np.testing.assert_allclose(mjcf_plant.q(), urdf_plant.q(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(mjcf_plant.v(), urdf_plant.v(), rtol=0, atol=1e-12)


def test_the_nominal_model_and_the_effort_limits_are_the_files(tmp_path):
    path = identified_xml(tmp_path)
    plant = Plant.from_mjcf(path)
    ur5 = RobotModel.from_urdf_file(UR5)
    from_file = RobotModel.from_mjcf(path)
    q, v, a = np.full((3, 6), 0.4)
    np.testing.assert_allclose(plant.nominal.rnea(q, v, a), from_file.rnea(q, v, a), rtol=0,
                               atol=1e-12)
    np.testing.assert_array_equal(plant.effort_limits,
                                  [joint.effort_limit for joint in ur5.joints])
    assert np.all(np.isfinite(plant.effort_limits))
    plant.step(plant.effort_limits * 3.0)
    np.testing.assert_array_equal(plant.applied_effort, plant.effort_limits)


def test_a_motor_ctrlrange_alone_bounds_the_effort(tmp_path):
    """No actuatorfrcrange: the motor's ctrlrange times its gear is the limit; none: no limit."""
    path = tmp_path / 'two.xml'
    path.write_text("""<mujoco model="two">
  <worldbody>
    <body name="a"><inertial pos="0 0 0.1" mass="1" diaginertia="0.01 0.01 0.01"/>
      <joint name="j1" axis="0 1 0"/>
      <body name="b" pos="0 0 0.3"><inertial pos="0 0 0.1" mass="1" diaginertia="0.01 0.01 0.01"/>
        <joint name="j2" axis="0 1 0"/></body></body>
  </worldbody>
  <actuator><motor joint="j1" gear="2" ctrlrange="-3 5"/></actuator>
</mujoco>
""")
    plant = Plant.from_mjcf(path)
    np.testing.assert_array_equal(plant.effort_limits, [10.0, np.inf])


REF_ARM = """<mujoco model="ref">
  <compiler angle="radian"/>
  <worldbody>
    <body name="a"><inertial pos="0.1 0 0.1" mass="1" diaginertia="0.01 0.02 0.03"/>
      <joint name="j1" axis="0 1 0" ref="0.4"/>
      <body name="b" pos="0.3 0 0.2">
        <inertial pos="0.1 0 0.05" mass="2" diaginertia="0.01 0.02 0.03"/>
        <joint name="j2" axis="1 0 0" ref="-0.7"/>
        <body name="c" pos="0 0.2 0">
          <inertial pos="0 0.1 0" mass="0.5" diaginertia="0.01 0.01 0.01"/>
          <joint name="j3" axis="0 0 1" ref="0.2"/></body></body></body>
  </worldbody>
  <equality><joint joint1="j3" joint2="j2" polycoef="0.1 -0.5 0 0 0"/></equality>
</mujoco>
"""


def test_joints_with_a_ref_and_a_mimic_keep_the_nominal_models_layout(tmp_path):
    """
    The plant's q is MuJoCo's qpos, whatever the joint's ``ref``; a mimic's is its equality's.

    The plant's state (set, read back) and its MuJoCo inverse dynamics are the nominal model's
    (``RobotModel.from_mjcf``) at the same q, to 1e-9.
    """
    path = _write(tmp_path, REF_ARM)
    plant = Plant.from_mjcf(path)
    nominal = RobotModel.from_mjcf(path)
    assert plant.joint_names == ('j1', 'j2')
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, v, a = rng.uniform(-1.0, 1.0, (3, 2))
        plant.reset(q, v)
        np.testing.assert_allclose(plant.q(), q, rtol=0, atol=1e-15)
        np.testing.assert_allclose(plant.v(), v, rtol=0, atol=1e-15)
        mimic = plant.data.qpos[plant.model.joint('j3').qposadr[0]]
        assert mimic == pytest.approx(0.2 + 0.1 - 0.5 * (q[1] + 0.7), abs=1e-12)
        np.testing.assert_allclose(plant.inverse_dynamics(q, v, a), nominal.rnea(q, v, a),
                                   rtol=0, atol=1e-9)


def _write(folder: Path, text: str, name: str = 'robot.xml') -> Path:
    path = folder / name
    path.write_text(text)
    return path


@pytest.mark.parametrize('make, message', [
    (lambda tmp: tmp / 'absent.xml', 'no such file'),
    (lambda tmp: _write(tmp, '<robot name="r"><link name="a"/></robot>'),
     'the root element is <robot>: expected <mujoco> (an MJCF file; a URDF goes to --urdf)'),
    (lambda tmp: _write(tmp, '<mujoco><worldbody>'),
     'not XML: no element found: line 1, column 19'),
    (lambda tmp: _write(tmp, ARM.format(joint='<joint name="j" type="ball"/>', extra='')),
     "joint 'j' (body 'a') is a ball joint: rnea_sim --mjcf takes fixed-base robots (hinge and "
     'slide joints)'),
    (lambda tmp: _write(tmp, ARM.format(joint='<freejoint name="f"/>', extra='')),
     "joint 'f' (body 'a') is a free joint: rnea_sim --mjcf takes fixed-base robots (hinge and "
     'slide joints)'),
    (lambda tmp: _write(tmp, ARM.format(joint='<joint name="j"/>',
                                        extra='<actuator><position name="servo" joint="j" '
                                              'kp="10"/></actuator>')),
     "actuator 'servo' is not a motor on a joint: rnea_sim applies the joint torques itself "
     '(expected <motor joint=...> actuators, or none)'),
    (lambda tmp: _write(tmp, ARM.format(joint='<joint name="j"/>', extra='') + '\n<x'),
     'not XML: junk after document element: line 5, column 0'),
    (lambda tmp: _write(tmp, ARM.format(joint='<joint name="j" typo="1"/>', extra='')),
     "MuJoCo cannot compile it: XML Error: Schema violation: unrecognized attribute: 'typo'"),
])
def test_what_the_plant_cannot_take_is_one_line_naming_the_file(tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(MJCFError) as caught:
        Plant.from_mjcf(path)
    text = str(caught.value)
    assert text.startswith(f'MJCF {str(path)!r}: {message}'), text
    assert '\n' not in text


@pytest.mark.parametrize('element', [
    '<include file="../outside.xml"/>',
    '<include file="{outside}"/>',
    '<compiler meshdir="../"/><asset><mesh name="m" file="outside.stl"/></asset>',
    '<asset><texture name="t" type="skybox" fileup="../outside.png"/></asset>',
    '<include file="inner.xml"/>',  # inside, and it names a mesh outside
])
def test_a_path_outside_the_files_folder_is_refused_before_mujoco_reads_it(tmp_path, element):
    """A relative path up (``../``) or an absolute one: MuJoCo would read it, refused first."""
    outside = tmp_path / 'outside.xml'
    outside.write_text(ARM.format(joint='<joint name="j"/>', extra=''))
    folder = tmp_path / 'robot'
    folder.mkdir()
    _write(folder, '<mujoco><asset><mesh name="m" file="../outside.stl"/></asset></mujoco>',
           'inner.xml')
    element = element.format(outside=outside)
    path = _write(folder, f'<mujoco>{element}</mujoco>')
    with pytest.raises(MJCFError) as caught:
        Plant.from_mjcf(path)
    assert str(caught.value).startswith(f'MJCF {str(path)!r}: <'), caught.value
    assert str(caught.value).endswith(f"leads outside the file's folder {str(folder)!r}: "
                                      'expected a relative path within it')


def test_an_include_within_the_folder_is_the_robot(tmp_path):
    _write(tmp_path, ARM.format(joint='<joint name="j"/>', extra=''), 'arm.xml')
    path = _write(tmp_path, '<mujoco><include file="arm.xml"/></mujoco>')
    assert Plant.from_mjcf(path).joint_names == ('j',)


# A file within the folder whose mesh is outside it (MuJoCo reads it relative to this file's
# folder or the main file's: '../outside.stl' is outside either way).
MESH_OUTSIDE = """<mujoco><asset><mesh name="m" file="../outside.stl"/></asset>
  <worldbody><body name="b"><joint name="k"/><geom type="mesh" mesh="m"/></body></worldbody>
</mujoco>"""


@pytest.mark.parametrize('element, tag', [
    ('<include xmlns="urn:x" file="inner.xml"/>', 'mesh'),
    ('<asset><model name="m" file="inner.xml"/></asset><worldbody><attach model="m" body="b" '
     'prefix="p_"/></worldbody>', 'mesh'),
    ('<extension><plugin plugin="mujoco.pid"><instance name="i"><config key="file" '
     'value="../outside.stl"/></instance></plugin></extension>', 'extension'),
])
def test_what_mujoco_would_open_through_a_namespace_or_an_attached_model_is_checked(
        tmp_path, element, tag):
    """
    A namespaced include and an attached model (``<asset><model file>``) are followed.

    MuJoCo reads both (it ignores XML namespaces), and so the mesh outside the folder that the
    file within it names: shown here by MuJoCo's own error naming it. The check reads them too
    and refuses, naming the element, before MuJoCo reads the file. Regression: the check
    followed only ``<include>`` elements without a namespace, so MuJoCo opened the mesh.
    """
    folder = tmp_path / 'robot'
    folder.mkdir()
    _write(folder, MESH_OUTSIDE, 'inner.xml')
    path = _write(folder, f'<mujoco>{element}</mujoco>')
    if tag == 'mesh':
        with pytest.raises(ValueError, match='outside.stl'):  # MuJoCo tries to open it
            mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(MJCFError) as caught:
        Plant.from_mjcf(path)
    assert str(caught.value).startswith(f'MJCF {str(path)!r}: <{tag}'), caught.value
    if tag == 'mesh':
        assert str(caught.value).endswith(
            f"<mesh file='../outside.stl'> leads outside the file's folder {str(folder)!r}: "
            'expected a relative path within it')


def test_a_motors_armature_is_in_the_plant_and_in_the_files_model(tmp_path):
    """
    ``<motor gear="3" armature="0.05">``: the plant (MuJoCo) and ``load_mjcf`` both have it.

    The plant's inverse dynamics equals the file's model with its joint terms, gear^2 x the
    motor's armature included. Regression: ``load_mjcf`` dropped it, so the sim simulated a
    robot other than the model of its file (a 43 % torque error on j1).
    """
    path = _write(tmp_path, ARM.format(
        joint='<joint name="j1" axis="0 1 0" armature="0.1" damping="0.2"/>'
              '<geom type="capsule" size=".05 .2" pos="0 0 .2" mass="2"/>',
        extra='<actuator><motor joint="j1" gear="3" armature="0.05"/></actuator>'))
    plant = Plant.from_mjcf(path)
    robot = load_mjcf(path)
    np.testing.assert_allclose(robot.actuation.armature, [0.1 + 9 * 0.05], rtol=1e-15)
    for q, v, a in (([0.3], [0.5], [2.0]), ([-1.0], [-0.2], [-3.0])):
        q, v, a = (np.array(x) for x in (q, v, a))
        expected = robot.model.rnea(q, v, a) + robot.actuation.armature * a \
            + robot.actuation.viscous * v
        np.testing.assert_allclose(plant.inverse_dynamics(q, v, a), expected, rtol=1e-12,
                                   atol=1e-12)
