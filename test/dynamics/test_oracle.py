"""
RNEA, batch RNEA and CRBA against Pinocchio (``pin.rnea``, ``pin.crba``) on real robots.

The oracle (test/harness/oracle.py) loads the same URDF in Pinocchio with ``mimic=True`` and maps
our q/v/tau layout onto Pinocchio's; URDFs whose mimic joints Pinocchio cannot couple are loaded
with ``mimic=False`` and the coupling is imposed by the oracle. Errors are relative to
max(1, |tau|_inf) and must stay below 1e-9.
"""
from __future__ import annotations

import math
import re
import warnings

from harness.corpus import (BASES, chain_urdf, CORPUS, corpus_id, GRAVITY, INCONSISTENT_INERTIA,
                            loaded, ORACLE_ROBOTS, PINOCCHIO_MIMIC_UNSUPPORTED, random_wrenches,
                            REFUSED, relative_error, robot_cases, UNALIGNED_SUFFIX)
from harness.oracle import load_pinocchio, Oracle, robot_params, ROBOTS_DIR
import numpy as np
import pinocchio as pin
import pytest

from rnea_ros import ModelWarning, RobotModel, URDFError

TOLERANCE = 1e-9


def assert_matches(tau, expected, model, what: str, tolerance: float = TOLERANCE):
    tau, expected = np.asarray(tau), np.asarray(expected)
    assert tau.shape == expected.shape, f'{what}: shape {tau.shape} != {expected.shape}'
    error = relative_error(tau, expected)
    if error >= tolerance:
        worst = int(np.argmax(np.abs(tau - expected)))
        names = [name for joint in model.joints for name in [joint.name] * joint.nv]
        raise AssertionError(f'{what}: relative error {error:.3g} >= {tolerance:g}, worst at '
                             f'v[{worst}] ({names[worst]}): {tau[worst]!r} vs '
                             f'{expected[worst]!r}')


def state_count(model: RobotModel) -> int:
    return 2 if model.nv > 40 else 4


# ---------------------------------------------------------------------------- coverage
def test_oracle_robots_cover_the_joint_kinds():
    """The robot list exercises every feature the issue names (guards against list edits)."""
    real = {name for name in ORACLE_ROBOTS if not name.endswith(UNALIGNED_SUFFIX)}
    assert len(real) >= 12
    kinds, mimic, unaligned = set(), 0, 0
    for name in ORACLE_ROBOTS:
        model, _, _ = loaded(name, True)
        kinds |= {joint.kind for joint in model.joints}
        tree = model.tree
        mimic += sum(body not in model.joint_names for body in tree.body_names)
        unaligned += int(np.sum(np.count_nonzero(np.abs(tree.axis) > 1e-9, axis=1) > 1))
    assert {'free-flyer', 'revolute', 'prismatic', 'continuous'} <= kinds
    assert mimic >= 20
    assert unaligned >= 20


@pytest.mark.parametrize('relpath', sorted(PINOCCHIO_MIMIC_UNSUPPORTED), ids=corpus_id)
def test_pinocchio_needs_mimic_off_for(relpath):
    """The oracle's mimic=False fallback is only used where Pinocchio needs it."""
    with pytest.raises(ValueError, match='mimic'):
        load_pinocchio(ROBOTS_DIR / relpath, False, mimic=True)


# ---------------------------------------------------------------------------- rnea
@pytest.mark.parametrize('name, floating_base', robot_cases(ORACLE_ROBOTS))
def test_rnea_matches_pinocchio(name, floating_base):
    model, oracle, _ = loaded(name, floating_base)
    rng = np.random.default_rng(sum(map(ord, name)))
    for trial in range(state_count(model)):
        q, v, a = oracle.random_state(rng, scale=1.0 + trial)
        if trial == 1:  # continuous joints far outside [-pi, pi]
            for joint in model.joints:
                if joint.kind == 'continuous':
                    q[joint.idx_q] += 2 * math.pi * rng.choice([-3, 2]) + 0.25
        assert_matches(model.rnea(q, v, a), oracle.rnea(q, v, a), model, f'state {trial}')


@pytest.mark.parametrize('name, floating_base', robot_cases(ORACLE_ROBOTS))
def test_rnea_with_external_wrenches_matches_pinocchio(name, floating_base):
    model, oracle, xml = loaded(name, floating_base)
    rng = np.random.default_rng(1 + sum(map(ord, name)))
    for trial in range(state_count(model)):
        q, v, a = oracle.random_state(rng)
        f_ext = random_wrenches(model, xml, rng)
        gravity = GRAVITY if trial % 2 else None
        expected = oracle.rnea(q, v, a, f_ext=f_ext, gravity=gravity)
        assert relative_error(oracle.rnea(q, v, a, gravity=gravity), expected) > 1e-6
        assert_matches(model.rnea(q, v, a, f_ext=f_ext, gravity=gravity), expected, model,
                       f'state {trial}, wrenches on {list(f_ext)}')


@pytest.mark.parametrize('name, floating_base', robot_cases(
    ['ur5', 'panda', 'solo12', 'talos_reduced', 'pr2', 'romeo', 'ur5_unaligned']))
def test_nondefault_gravity_matches_pinocchio(name, floating_base):
    model, oracle, xml = loaded(name, floating_base)
    rng = np.random.default_rng(2)
    q, v, a = oracle.random_state(rng)
    for gravity in (GRAVITY, (0.0, 0.0, 0.0), (0.0, 0.0, -9.81 * 3)):
        assert_matches(model.rnea(q, v, a, gravity=gravity),
                       oracle.rnea(q, v, a, gravity=gravity), model, f'gravity {gravity}')
        assert_matches(model.gravity_torques(q, gravity=gravity),
                       oracle.rnea(q, 0 * v, 0 * a, gravity=gravity), model,
                       f'gravity_torques, gravity {gravity}')
    # A model whose default gravity is not (0, 0, -9.81).
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ModelWarning)
        tilted = RobotModel.from_urdf_string(xml, floating_base=floating_base, gravity=GRAVITY)
    np.testing.assert_array_equal(tilted.gravity, GRAVITY)
    assert_matches(tilted.rnea(q, v, a), oracle.rnea(q, v, a, gravity=GRAVITY), model,
                   'model built with gravity=GRAVITY')
    assert_matches(tilted.copy().rnea(q, v, a), oracle.rnea(q, v, a, gravity=GRAVITY), model,
                   'copy() of the model built with gravity=GRAVITY')


@pytest.mark.parametrize('name, floating_base', robot_cases(
    ['panda', 'baxter', 'pr2', 'tiago_pro', 'panda_unaligned']))
def test_mimic_coupling_matches_uncoupled_pinocchio(name, floating_base):
    """Mimic joints against Pinocchio without its own coupling (every joint independent)."""
    model, _, xml = loaded(name, floating_base)
    uncoupled = Oracle(model, None, floating_base, mimic=False, xml=xml)
    assert len(uncoupled.mimics) >= 1
    rng = np.random.default_rng(7)
    for trial in range(2):
        q, v, a = uncoupled.random_state(rng)
        f_ext = random_wrenches(model, xml, rng)
        assert_matches(model.rnea(q, v, a, f_ext=f_ext), uncoupled.rnea(q, v, a, f_ext=f_ext),
                       model, f'state {trial}')
        np.testing.assert_allclose(model.mass_matrix(q), uncoupled.mass_matrix(q), rtol=0,
                                   atol=TOLERANCE)


# ---------------------------------------------------------------------------- rnea_batch
BATCH_ROBOTS = ['ur5', 'panda', 'solo12', 'talos_reduced', 'pr2', 'tiago_pro']


@pytest.mark.parametrize('name, floating_base', robot_cases(BATCH_ROBOTS))
def test_rnea_batch_matches_per_sample_and_pinocchio(name, floating_base):
    model, oracle, _ = loaded(name, floating_base)
    rng = np.random.default_rng(3)
    Q, V, A = oracle.random_states(rng, 5)
    taus = model.rnea_batch(Q, V, A)
    assert taus.shape == (5, model.nv)
    for k in range(5):
        np.testing.assert_allclose(taus[k], model.rnea(Q[k], V[k], A[k]), rtol=0, atol=1e-12)
        assert_matches(taus[k], oracle.rnea(Q[k], V[k], A[k]), model, f'sample {k}')
    np.testing.assert_allclose(model.rnea_batch(Q, V, A, threads=1), taus, rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.rnea_batch(Q[:1], V[:1], A[:1])[0], taus[0],
                               rtol=0, atol=1e-12)
    assert model.rnea_batch(Q[:0], V[:0], A[:0]).shape == (0, model.nv)


@pytest.mark.parametrize('name, floating_base', robot_cases(BATCH_ROBOTS))
def test_rnea_batch_with_external_wrenches(name, floating_base):
    model, oracle, xml = loaded(name, floating_base)
    rng = np.random.default_rng(4)
    n = 4
    Q, V, A = oracle.random_states(rng, n)
    links = list(random_wrenches(model, xml, rng))
    f_ext = {link: 10.0 * rng.standard_normal((n, 6)) for link in links[:-1]}
    constant = 5.0 * rng.standard_normal(6)  # a (6,) wrench applies at every sample
    f_ext[links[-1]] = constant
    for gravity in (None, GRAVITY):
        taus = model.rnea_batch(Q, V, A, f_ext=f_ext, gravity=gravity)
        for k in range(n):
            sample = {link: (value if value.ndim == 1 else value[k])
                      for link, value in f_ext.items()}
            np.testing.assert_allclose(
                taus[k], model.rnea(Q[k], V[k], A[k], f_ext=sample, gravity=gravity),
                rtol=0, atol=1e-12)
            assert_matches(taus[k], oracle.rnea(Q[k], V[k], A[k], f_ext=sample,
                                                gravity=gravity), model, f'sample {k}')


# ---------------------------------------------------------------------------- mass matrix
@pytest.mark.parametrize('name, floating_base', robot_params([
    ('ur5', False), ('panda', False), ('pr2', False), ('pr2_unaligned', True),
    ('tiago_pro', True), ('solo12', True), ('talos_reduced', True), ('romeo', True)]))
def test_mass_matrix_matches_crba(name, floating_base):
    model, oracle, _ = loaded(name, floating_base)
    rng = np.random.default_rng(5)
    for _ in range(2):
        q, _, _ = oracle.random_state(rng)
        mass = model.mass_matrix(q)
        expected = oracle.mass_matrix(q)
        assert mass.shape == (model.nv, model.nv)
        error = np.abs(mass - expected).max() / max(1.0, np.abs(expected).max())
        assert error < TOLERANCE, f'mass matrix: relative error {error:.3g}'


# ---------------------------------------------------------------------------- corpus
def test_corpus_is_installed(robots_dir):
    assert len(CORPUS) >= 60, f'only {len(CORPUS)} URDFs under {robots_dir}'
    assert REFUSED.keys() | INCONSISTENT_INERTIA | PINOCCHIO_MIMIC_UNSUPPORTED <= set(CORPUS)


@BASES
@pytest.mark.parametrize('relpath', CORPUS, ids=corpus_id)
def test_corpus_urdf_loads_and_matches_pinocchio(relpath, floating_base):
    path = ROBOTS_DIR / relpath
    if relpath in REFUSED:
        with pytest.raises(ValueError):
            load_pinocchio(path, floating_base, mimic=True)
        with pytest.raises(URDFError, match=f'^{re.escape(REFUSED[relpath])}'):
            RobotModel.from_urdf_file(path, floating_base=floating_base)
        return
    if relpath in INCONSISTENT_INERTIA:
        with pytest.raises(URDFError, match=r"<inertial>: .*\(load with inertia_check='warn'"):
            RobotModel.from_urdf_file(path, floating_base=floating_base)
        with pytest.warns(ModelWarning) as caught:
            model = RobotModel.from_urdf_file(path, floating_base=floating_base,
                                              inertia_check='warn')
        assert any('<inertial>' in str(w.message) for w in caught)
    else:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always', ModelWarning)
            model = RobotModel.from_urdf_file(path, floating_base=floating_base)
        inertia_warnings = [w for w in caught if '<inertial>' in str(w.message)]
        assert not inertia_warnings, [str(w.message) for w in inertia_warnings]
    oracle = Oracle(model, path, floating_base, mimic=relpath not in PINOCCHIO_MIMIC_UNSUPPORTED)
    bodies = {frame.name for frame in oracle.pm.frames if frame.type == pin.FrameType.BODY}
    assert set(model.link_names) == bodies
    rng = np.random.default_rng(6)
    xml = path.read_text()
    for trial in range(2):
        q, v, a = oracle.random_state(rng)
        f_ext = random_wrenches(model, xml, rng, count=2) if trial else None
        gravity = GRAVITY if trial else None
        assert_matches(model.rnea(q, v, a, f_ext=f_ext, gravity=gravity),
                       oracle.rnea(q, v, a, f_ext=f_ext, gravity=gravity), model,
                       f'state {trial}')


def test_2000_link_chain_loads_and_gives_finite_torques():
    """Issue 9 #11: 1000 links or more raised RecursionError (the tree walk was recursive)."""
    model = RobotModel.from_urdf_string(chain_urdf(2001))
    assert model.nv == 2000 and model.joint_names[-1] == 'joint_2000'
    rng = np.random.default_rng(11)
    q, v, a = rng.uniform(-1, 1, (3, model.nv))
    tau = model.rnea(q, v, a)
    assert np.isfinite(tau).all() and np.abs(tau).max() > 0.0


def test_1200_link_chain_is_the_model_pinocchio_loads():
    """
    A 1200-link chain: our tree is Pinocchio's model, joint by joint (placements, inertias).

    Pinocchio loads it but cannot run its dynamics here: its Data holds nv^3 tensors (second
    derivatives of the inverse dynamics), 55 GB at nv = 1200. The dynamics of the same chain
    are compared on 120 links below, and checked on 1200 against the CRBA mass matrix.
    """
    model = RobotModel.from_urdf_string(chain_urdf(1201))
    pm = pin.buildModelFromXML(chain_urdf(1201))
    assert pm.nv == model.nv == 1200
    tree = model.tree
    for body, name in enumerate(tree.body_names):
        joint = pm.getJointId(name)
        assert pm.parents[joint] == body  # Pinocchio's joint 0 is the world: ids are body + 1
        placement = pm.jointPlacements[joint]
        np.testing.assert_allclose(tree.rot_tree[body], placement.rotation, atol=1e-14)
        np.testing.assert_allclose(tree.pos_tree[body], placement.translation, atol=1e-15)
        inertia = pm.inertias[joint]
        assert tree.mass[body] == pytest.approx(inertia.mass, rel=1e-15)
        np.testing.assert_allclose(tree.first_moment[body], inertia.mass * inertia.lever,
                                   atol=1e-17)
        com = inertia.lever
        origin = inertia.inertia + inertia.mass * (com @ com * np.eye(3) - np.outer(com, com))
        np.testing.assert_allclose(tree.inertia_origin[body], origin, atol=1e-17)


def test_long_chain_matches_pinocchio():
    """The chain generator's dynamics against Pinocchio on 120 links: relative error < 1e-9."""
    xml = chain_urdf(121)
    model = RobotModel.from_urdf_string(xml)
    oracle = Oracle(model, None, False, xml=xml)
    rng = np.random.default_rng(12)
    for trial in range(2):
        q, v, a = rng.uniform(-1, 1, (3, model.nv))
        gravity = GRAVITY if trial else None
        assert_matches(model.rnea(q, v, a, gravity=gravity),
                       oracle.rnea(q, v, a, gravity=gravity), model, f'state {trial}')


def test_1200_link_chain_rnea_agrees_with_its_mass_matrix():
    """rnea(q, v, a) - rnea(q, v, 0) = M(q) a on 1200 links (CRBA, another algorithm)."""
    model = RobotModel.from_urdf_string(chain_urdf(1201))
    rng = np.random.default_rng(13)
    q, v, a = rng.uniform(-1, 1, (3, model.nv))
    inertial = model.rnea(q, v, a) - model.rnea(q, v, np.zeros(model.nv))
    assert_matches(inertial, model.mass_matrix(q) @ a, model, 'M a')


MASSLESS_SPINNER = """<robot name="spinner">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>
    <inertia ixx="0.001" iyy="0.002" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="flywheel"><inertial><mass value="0"/>
    <inertia ixx="0.0006" iyy="0.0006" izz="0.0011" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="spin" type="continuous"><parent link="arm"/><child link="flywheel"/>
    <origin xyz="0.2 0 0"/><axis xyz="0 0 1"/></joint>
</robot>
"""


def test_massless_body_with_inertia_has_a_torque_and_no_warning():
    """Issue 9 #15: a body with no mass but rotational inertia was said to have no torque."""
    with warnings.catch_warnings():
        warnings.simplefilter('error', ModelWarning)
        model = RobotModel.from_urdf_string(MASSLESS_SPINNER)
    oracle = Oracle(model, None, False, xml=MASSLESS_SPINNER)
    tau = model.rnea([0.0, 0.0], [0.0, 0.0], [0.0, 1.0])
    assert tau[1] == pytest.approx(0.0011, rel=1e-12)  # izz * a: not zero
    assert_matches(tau, oracle.rnea([0.0, 0.0], [0.0, 0.0], [0.0, 1.0]), model, 'izz * a')
    rng = np.random.default_rng(15)
    q, v, a = rng.uniform(-1, 1, (3, 2))
    assert_matches(model.rnea(q, v, a), oracle.rnea(q, v, a), model, 'random state')


@pytest.mark.parametrize('kind, what', [('continuous', 'no mass and no inertia'),
                                        ('prismatic', 'no mass')])
def test_joint_whose_torque_is_always_zero_still_warns(kind, what):
    """No mass and no inertia (or no mass behind a prismatic joint): the warning is true."""
    xml = MASSLESS_SPINNER.replace('type="continuous"', f'type="{kind}"').replace(
        '<axis xyz="0 0 1"/></joint>',
        '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')
    if kind == 'continuous':
        xml = xml.replace('ixx="0.0006" iyy="0.0006" izz="0.0011"', 'ixx="0" iyy="0" izz="0"')
    with pytest.warns(ModelWarning, match=f"^joint 'spin' moves a subtree with {what}: its "
                                          'torque is always zero'):
        model = RobotModel.from_urdf_string(xml)
    oracle = Oracle(model, None, False, xml=xml)
    rng = np.random.default_rng(16)
    for _ in range(3):
        q, v, a = rng.uniform(-1, 1, (3, 2))
        tau = model.rnea(q, v, a)
        assert abs(tau[1]) < 1e-15
        assert_matches(tau, oracle.rnea(q, v, a), model, kind)
