"""
``RobotModel.forward_dynamics`` (ABA) against Pinocchio, against rnea and with an actuation model.

The oracle (test/harness/oracle.py) runs ``pin.aba`` where Pinocchio's model is ours up to the
joint order, and solves the coupled system (G^T M G) a = tau - G^T h from Pinocchio's terms where
mimic joints couple it (``pin.aba`` refuses them). Errors are relative to max(1, |a|_inf) and must
stay below 1e-10 (``TOLERANCE``), as the issue asks, except where the mass matrix's conditioning
bounds what any solve can give (``conditioned_tolerance``).
"""
from __future__ import annotations

import warnings

from harness.corpus import (BASES, CORPUS, corpus_id, GRAVITY, INCONSISTENT_INERTIA, loaded,
                            ORACLE_ROBOTS, PINOCCHIO_MIMIC_UNSUPPORTED, random_wrenches, REFUSED,
                            relative_error, robot_cases)
from harness.oracle import Oracle
from harness.oracle import ROBOTS_DIR
import numpy as np
import pytest

from rnea_ros import InputError, ModelWarning, RobotModel
from rnea_ros.dynamics import Actuation

TOLERANCE = 1e-10
# Robots whose mass matrix is singular: a joint that moves no mass (romeo's finger subtrees).
SINGULAR = {'romeo', 'romeo_description/urdf/romeo.urdf'}


def conditioned_tolerance(model, q) -> float:
    """1e-10, or the solve's own bound 1e3 eps cond(M) where M is worse conditioned (icub)."""
    if model.nv == 0:
        return TOLERANCE
    condition = np.linalg.cond(model.mass_matrix(q))
    return max(TOLERANCE, 1e3 * np.finfo(float).eps * condition)


def check(model, oracle, q, v, tau, what, f_ext=None, gravity=None):
    acceleration = model.forward_dynamics(q, v, tau, f_ext=f_ext, gravity=gravity)
    expected = oracle.forward_dynamics(q, v, tau, f_ext=f_ext, gravity=gravity)
    error = relative_error(acceleration, expected)
    assert error < conditioned_tolerance(model, q), f'{what}: relative error {error:.3g}'
    # The identity: rnea of the acceleration gives back the torque, to the rounding of M a.
    torque = model.rnea(q, v, acceleration, f_ext=f_ext, gravity=gravity)
    scale = max(1.0, np.abs(model.mass_matrix(q)).max(initial=0.0)
                * np.abs(acceleration).max(initial=0.0))
    residual = np.abs(torque - tau).max(initial=0.0) / scale
    assert residual < 1e-12, f'{what}: rnea(q, v, a) - tau is {residual:.3g} of |M| |a|'
    return acceleration


@pytest.mark.parametrize('name, floating_base', robot_cases(ORACLE_ROBOTS))
def test_forward_dynamics_matches_pinocchio(name, floating_base):
    model, oracle, xml = loaded(name, floating_base)
    rng = np.random.default_rng(11 + sum(map(ord, name)))
    q, v, _ = oracle.random_state(rng)
    tau = 10.0 * rng.standard_normal(model.nv)
    if name.removesuffix('_unaligned') in SINGULAR:
        with pytest.raises(InputError, match='^forward_dynamics: the acceleration is not '
                                             'finite'):
            model.forward_dynamics(q, v, tau)
        return
    check(model, oracle, q, v, tau, 'no wrench')
    check(model, oracle, q, v, tau, 'wrenches, gravity', f_ext=random_wrenches(model, xml, rng),
          gravity=GRAVITY)


def test_pinocchio_aba_is_the_oracle_where_it_can_be():
    """The oracle runs pin.aba itself on robots without mimic joints (not a dense solve)."""
    model, oracle, _ = loaded('talos_reduced', True)
    assert np.count_nonzero(oracle.coupling) == model.nv == oracle.pm.nv
    q, v, _ = oracle.random_state(np.random.default_rng(0))
    tau = np.ones(model.nv)
    expected = np.linalg.solve(oracle.mass_matrix(q), tau - oracle.rnea(q, v, 0 * v))
    np.testing.assert_allclose(oracle.forward_dynamics(q, v, tau), expected, rtol=1e-8,
                               atol=1e-8)


@BASES
@pytest.mark.parametrize('relpath', CORPUS, ids=corpus_id)
def test_corpus_forward_dynamics_matches_pinocchio(relpath, floating_base):
    """The held-out URDFs of the oracle tests (example-robot-data's whole corpus)."""
    if relpath in REFUSED:
        pytest.skip('not a valid robot (test_oracle checks the refusal)')
    path = ROBOTS_DIR / relpath
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ModelWarning)
        model = RobotModel.from_urdf_file(path, floating_base=floating_base,
                                          inertia_check='warn' if relpath in
                                          INCONSISTENT_INERTIA else 'error')
    oracle = Oracle(model, path, floating_base, mimic=relpath not in PINOCCHIO_MIMIC_UNSUPPORTED)
    rng = np.random.default_rng(12)
    q, v, _ = oracle.random_state(rng)
    tau = 10.0 * rng.standard_normal(model.nv)
    if np.linalg.matrix_rank(oracle.mass_matrix(q)) < model.nv:
        assert relpath in SINGULAR or relpath in INCONSISTENT_INERTIA, relpath
        with pytest.raises(InputError, match='not finite'):
            model.forward_dynamics(q, v, tau)
        return
    check(model, oracle, q, v, tau, relpath, f_ext=random_wrenches(model, path.read_text(), rng,
                                                                   count=2), gravity=GRAVITY)


BATCH_CASES = robot_cases(['ur5', 'panda', 'solo12', 'pr2'])


@pytest.mark.parametrize('name, floating_base', BATCH_CASES)
def test_batch_matches_single_calls(name, floating_base):
    model, oracle, xml = loaded(name, floating_base)
    rng = np.random.default_rng(13)
    n = 5
    Q, V, _ = oracle.random_states(rng, n)
    TAU = rng.standard_normal((n, model.nv))
    links = list(random_wrenches(model, xml, rng))
    f_ext = {link: rng.standard_normal((n, 6)) for link in links[:-1]}
    f_ext[links[-1]] = rng.standard_normal(6)  # a (6,) wrench applies at every sample
    for wrenches, gravity in ((None, None), (f_ext, GRAVITY)):
        batch = model.forward_dynamics_batch(Q, V, TAU, f_ext=wrenches, gravity=gravity)
        threaded = model.forward_dynamics_batch(np.repeat(Q, 60, axis=0),
                                                np.repeat(V, 60, axis=0),
                                                np.repeat(TAU, 60, axis=0), threads=2) \
            if wrenches is None else None
        for k in range(n):
            sample = None if wrenches is None else {
                link: value if value.ndim == 1 else value[k] for link, value in f_ext.items()}
            single = model.forward_dynamics(Q[k], V[k], TAU[k], f_ext=sample, gravity=gravity)
            np.testing.assert_allclose(batch[k], single, rtol=0, atol=1e-12)
            if threaded is not None:
                np.testing.assert_allclose(threaded[60 * k + 59], single, rtol=0, atol=1e-12)
    assert model.forward_dynamics_batch(Q[:0], V[:0], TAU[:0]).shape == (0, model.nv)


def random_actuation(model, rng, friction_model='coulomb-viscous-offset'):
    zero = Actuation.zeros(model)
    rows = np.array([bool(name) for name in zero.joint_names])
    return Actuation(zero.joint_names, rows * rng.uniform(0.5, 2.0, model.nv),
                     rows * rng.uniform(0.1, 1.0, model.nv),
                     rows * rng.uniform(-0.5, 0.5, model.nv),
                     rows * rng.uniform(0.1, 1.0, model.nv), 0.05, friction_model)


@pytest.mark.parametrize('name, floating_base', robot_cases(['panda', 'solo12', 'tiago_pro']))
def test_armature_and_friction_solve_the_stated_equation(name, floating_base):
    """
    The acceleration is solve(M + diag(armature), tau - h - friction(v)).

    rnea plus the armature and friction torques of it gives tau back.
    """
    model, oracle, _ = loaded(name, floating_base)
    rng = np.random.default_rng(14)
    q, v, _ = oracle.random_state(rng)
    tau = 10.0 * rng.standard_normal(model.nv)
    for friction_model in ('coulomb-viscous-offset', 'none'):
        actuation = random_actuation(model, rng, friction_model)
        acceleration = model.forward_dynamics(q, v, tau, actuation=actuation)
        mass = model.mass_matrix(q) + np.diag(actuation.armature)
        bias = model.rnea(q, v, np.zeros(model.nv)) + actuation.friction_torques(v)
        expected = np.linalg.solve(mass, tau - bias)
        assert relative_error(acceleration, expected) < TOLERANCE * np.linalg.cond(mass)
        total = model.rnea(q, v, acceleration) + actuation.armature_torques(acceleration) \
            + actuation.friction_torques(v)
        assert relative_error(total, tau) < 1e-9
        plain = model.forward_dynamics(q, v, tau)
        assert relative_error(plain, acceleration) > 1e-3  # the terms count
        batch = model.forward_dynamics_batch(q[None], v[None], tau[None], actuation=actuation)
        np.testing.assert_allclose(batch[0], acceleration, rtol=0, atol=1e-12)


def test_armature_makes_a_massless_joint_solvable():
    """Romeo's massless finger subtrees: refused without armature, solved with it."""
    model, oracle, _ = loaded('romeo', False)
    rng = np.random.default_rng(15)
    q, v, _ = oracle.random_state(rng)
    tau = rng.standard_normal(model.nv)
    zero = Actuation.zeros(model)
    armature = Actuation(zero.joint_names, zero.coulomb, zero.viscous, zero.offset,
                         np.full(model.nv, 0.01))
    acceleration = model.forward_dynamics(q, v, tau, actuation=armature)
    mass = oracle.mass_matrix(q) + 0.01 * np.eye(model.nv)
    expected = np.linalg.solve(mass, tau - oracle.rnea(q, v, 0 * v))
    assert relative_error(acceleration, expected) < TOLERANCE


def test_out_may_be_an_input_and_is_written_in_place():
    model, oracle, _ = loaded('solo12', True)
    q, v, _ = oracle.random_state(np.random.default_rng(16))
    tau = np.linspace(-1.0, 1.0, model.nv)
    expected = model.forward_dynamics(q, v, tau)
    out = np.empty(model.nv)
    assert model.forward_dynamics(q, v, tau, out=out) is out
    np.testing.assert_array_equal(out, expected)
    for name in ('v', 'tau'):
        args = {'v': v.copy(), 'tau': tau.copy()}
        result = model.forward_dynamics(q, args['v'], args['tau'], out=args[name])
        assert result is args[name]
        np.testing.assert_allclose(result, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize('call, message', [
    (lambda m, q, v: m.forward_dynamics(q[:-1], v, v), r'^q: expected shape \(19,\)'),
    (lambda m, q, v: m.forward_dynamics(q, v, v[:-1]), r'^tau: expected shape \(18,\)'),
    (lambda m, q, v: m.forward_dynamics(q, v, [np.nan] + [0.0] * 17), r'^tau\[0\] is nan'),
    (lambda m, q, v: m.forward_dynamics(q, v, v, out=np.empty(3)), r'^out: expected'),
    (lambda m, q, v: m.forward_dynamics(np.r_[q[:6], 2.0, q[7:]], v, v), r'quaternion'),
    (lambda m, q, v: m.forward_dynamics(q, v, v, actuation='x'), r'^actuation: expected'),
    (lambda m, q, v: m.forward_dynamics(q, v, v, f_ext={'nope': np.zeros(6)}),
     r"^f_ext: unknown link 'nope'"),
    (lambda m, q, v: m.forward_dynamics_batch(q[None], v[None], v[None, :3]),
     r'^TAU: expected shape \(1, 18\)'),
    (lambda m, q, v: m.forward_dynamics(q, v, np.full(18, 1e308)), r'not finite'),
])
def test_bad_arguments_are_named(call, message):
    model, oracle, _ = loaded('solo12', True)
    q, v, _ = oracle.random_state(np.random.default_rng(17))
    with pytest.raises(InputError, match=message):
        call(model, q, v)


def test_another_models_actuation_is_refused():
    panda, _, _ = loaded('panda', False)
    ur5, oracle, _ = loaded('ur5', False)
    q, v, _ = oracle.random_state(np.random.default_rng(18))
    with pytest.raises(InputError, match=r'^actuation: expected an Actuation of this model '
                                         r"\(joints \['shoulder_pan_joint'"):
        ur5.forward_dynamics(q, v, v, actuation=Actuation.zeros(panda))


PLANAR = ('<robot name="p"><link name="w"/><link name="b"><inertial><origin xyz="0.1 0 0"/>'
          '<mass value="1.5"/><inertia ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="0" izz="0.3"/>'
          '</inertial></link><link name="c"><inertial><origin xyz="0 0.2 0"/><mass value="0.7"/>'
          '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial></link>'
          '<joint name="pl" type="planar"><parent link="w"/><child link="b"/>'
          '<origin xyz="0 0 0.5" rpy="0.3 0 0"/><axis xyz="0 1 1"/></joint>'
          '<joint name="fl" type="floating"><parent link="b"/><child link="c"/>'
          '<origin xyz="0.2 0 0"/></joint></robot>')


def test_planar_and_inner_floating_joints_solve_the_mass_matrix():
    """A planar joint (three bodies) and a floating joint below it, no Pinocchio needed."""
    model = RobotModel.from_urdf_string(PLANAR)
    rng = np.random.default_rng(19)
    q = model.neutral_configuration()
    q[:3] = rng.uniform(-1, 1, 3)
    quaternion = rng.standard_normal(4)
    q[3:6] = rng.uniform(-1, 1, 3)
    q[6:10] = quaternion / np.linalg.norm(quaternion)
    v, tau = rng.standard_normal((2, model.nv))
    acceleration = model.forward_dynamics(q, v, tau, gravity=GRAVITY)
    expected = np.linalg.solve(model.mass_matrix(q),
                               tau - model.rnea(q, v, np.zeros(model.nv), gravity=GRAVITY))
    assert relative_error(acceleration, expected) < TOLERANCE


def test_the_aba_is_compiled_once_not_inlined_into_each_caller():
    """
    fd_core is called by the entry points, the batch and the predictor's four RK4 stages.

    Inlined (inline='always'), numba typed and LLVM optimised the whole ABA again at each call
    site: the first run's compilation of forward_dynamics took minutes (388 s against 92 s at
    load 3-10). Its passes stay inlined into it, once.
    """
    from rnea_ros.dynamics import aba, aba_passes
    assert aba.fd_core.targetoptions.get('inline', 'never') == 'never'
    assert aba_passes.backward_pass.targetoptions['inline'] == 'always'
