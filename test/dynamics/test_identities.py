"""
Identities between the dynamics functions of ``RobotModel``, and its argument checks.

No oracle here: each test compares the library with itself (gravity = rnea(q, 0, 0), M a =
rnea(q, v, a) - rnea(q, v, 0), invariance to the order of the URDF elements...) or checks the
exact error message of a bad argument (``checks.py``; more in ``test_checks.py``).
"""
from __future__ import annotations

import functools
import math
import re
import warnings
import xml.etree.ElementTree as ET

from harness.oracle import robot_params, robot_path
import numpy as np
import pytest

from rnea_ros import InputError, ModelWarning, RobotModel

GRAVITY = (0.7, -1.9, -3.1)
ZERO_GRAVITY = (0.0, 0.0, 0.0)

# Fixed and free-flyer bases; prismatic (panda, baxter, tiago_pro), continuous
# (double_pendulum_continuous, tiago_pro) and mimic joints (panda, baxter, tiago_pro).
IDENTITY_CASES = robot_params([
    ('ur5', False), ('panda', False), ('baxter', False), ('double_pendulum_continuous', False),
    ('solo12', True), ('talos_reduced', True), ('tiago_pro', True)])


@functools.cache
def load(name: str, floating_base: bool) -> RobotModel:
    return RobotModel.from_urdf_file(robot_path(name), floating_base=floating_base)


def random_q(model: RobotModel, rng: np.random.Generator) -> np.ndarray:
    """Return a configuration within the URDF limits (angles in [-pi, pi] where unlimited)."""
    q = np.empty(model.nq)
    for joint in model.joints:
        span = slice(joint.idx_q, joint.idx_q + joint.nq)
        if joint.nq == 7:
            quaternion = rng.standard_normal(4)
            q[span] = np.concatenate([rng.uniform(-1, 1, 3), quaternion / np.linalg.norm(
                quaternion)])
        elif joint.nq == 1:
            q[span] = rng.uniform(max(joint.lower, -math.pi), min(joint.upper, math.pi))
        else:
            q[span] = rng.uniform(-1, 1, joint.nq)
    return q


def random_state(model: RobotModel, rng: np.random.Generator):
    return random_q(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)


def trials(name: str, floating_base: bool, seed: int, count: int):
    """Yield (model, rng, zeros(nv)) ``count`` times: one model, one generator of random states."""
    model = load(name, floating_base)
    rng = np.random.default_rng(seed)
    zeros = np.zeros(model.nv)
    for _ in range(count):
        yield model, rng, zeros


def assert_close(actual, expected, what: str, rtol: float = 1e-10):
    """|actual - expected|_inf <= rtol * max(1, |expected|_inf)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f'{what}: shape {actual.shape} != {expected.shape}'
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    error = float(np.abs(actual - expected).max(initial=0.0))
    assert error <= rtol * scale, f'{what}: error {error:.3g} > {rtol:g} * {scale:.3g}'


# ---------------------------------------------------------------------------- identities
@pytest.mark.parametrize('name, floating_base', IDENTITY_CASES)
def test_gravity_torques_equal_rnea_at_rest(name, floating_base):
    for model, rng, zeros in trials(name, floating_base, seed=10, count=3):
        q = random_q(model, rng)
        gravity = model.gravity_torques(q)
        assert np.abs(gravity).max() > 1e-3  # a robot with mass feels gravity
        assert_close(gravity, model.rnea(q, zeros, zeros), 'gravity_torques(q)')
        tilted = model.gravity_torques(q, gravity=GRAVITY)
        assert_close(tilted, model.rnea(q, zeros, zeros, gravity=GRAVITY), 'tilted gravity')
        assert_close(model.gravity_torques(q, gravity=2 * np.array(GRAVITY)), 2 * tilted,
                     'g(q) is linear in the gravity vector')
        assert_close(model.gravity_torques(q, gravity=ZERO_GRAVITY), zeros, 'zero gravity')


@pytest.mark.parametrize('name, floating_base', IDENTITY_CASES)
def test_velocity_product_is_rnea_without_gravity_and_acceleration(name, floating_base):
    for model, rng, zeros in trials(name, floating_base, seed=11, count=3):
        q, v, _ = random_state(model, rng)
        product = model.velocity_product(q, v)
        assert np.abs(product).max() > 1e-6
        assert_close(product, model.rnea(q, v, zeros) - model.rnea(q, zeros, zeros),
                     'C(q, v) v = rnea(q, v, 0) - rnea(q, 0, 0)')
        assert_close(product, model.rnea(q, v, zeros, gravity=ZERO_GRAVITY),
                     'C(q, v) v = rnea(q, v, 0) without gravity')
        assert_close(model.velocity_product(q, 3.0 * v), 9.0 * product,
                     'C(q, v) v is quadratic in v')
        assert_close(model.velocity_product(q, zeros), zeros, 'C(q, 0) 0 = 0')


@pytest.mark.parametrize('name, floating_base', IDENTITY_CASES)
def test_torque_is_affine_in_acceleration(name, floating_base):
    for model, rng, zeros in trials(name, floating_base, seed=12, count=3):
        q, v, a1 = random_state(model, rng)
        a2 = rng.standard_normal(model.nv)
        bias = model.rnea(q, v, zeros)
        mass = model.mass_matrix(q)
        assert_close(model.rnea(q, v, a1) - bias, mass @ a1, 'rnea(q, v, a) - rnea(q, v, 0)')
        assert_close(model.rnea(q, v, a1 + a2) - model.rnea(q, v, a2),
                     model.rnea(q, v, a1) - bias, 'superposition in a')
        assert_close(model.rnea(q, v, -2.5 * a1), bias - 2.5 * (model.rnea(q, v, a1) - bias),
                     'scaling of a')


@pytest.mark.parametrize('name, floating_base', IDENTITY_CASES)
def test_mass_matrix_is_spd_and_equals_rnea_columns(name, floating_base):
    for model, rng, zeros in trials(name, floating_base, seed=13, count=2):
        q = random_q(model, rng)
        mass = model.mass_matrix(q)
        assert mass.shape == (model.nv, model.nv)
        scale = np.abs(mass).max()
        assert np.abs(mass - mass.T).max() <= 1e-12 * scale, 'M is not symmetric'
        assert np.linalg.eigvalsh(mass)[0] > 0.0, 'M is not positive definite'
        columns = np.column_stack([
            model.rnea(q, zeros, np.eye(model.nv)[k], gravity=ZERO_GRAVITY)
            for k in range(model.nv)])
        assert_close(mass, columns, 'M[:, k] = rnea(q, 0, e_k) without gravity')


@pytest.mark.parametrize('name', ['solo12', 'talos_reduced', 'tiago_pro'])
def test_opposite_quaternions_give_the_same_torques(name):
    for model, rng, _ in trials(name, True, seed=14, count=3):
        q, v, a = random_state(model, rng)
        flipped = q.copy()
        flipped[3:7] *= -1.0
        assert_close(model.rnea(flipped, v, a), model.rnea(q, v, a), 'rnea with -quaternion')
        assert_close(model.mass_matrix(flipped), model.mass_matrix(q), 'M with -quaternion')


def test_slightly_unnormalized_quaternion_is_normalized():
    model = load('solo12', True)
    q, v, a = random_state(model, np.random.default_rng(15))
    stretched = q.copy()
    stretched[3:7] *= 1.0 + 5e-4  # within the tolerance the kernel accepts
    original = stretched.copy()
    assert_close(model.rnea(stretched, v, a), model.rnea(q, v, a), 'quaternion * (1 + 5e-4)')
    np.testing.assert_array_equal(stretched, original)  # the caller's q is not normalized


# ---------------------------------------------------------------------------- URDF order
def shuffled_urdf(xml: str, seed: int) -> str:
    """Return the URDF with its <link> and <joint> elements in a random order."""
    robot = ET.fromstring(xml)
    elements = [child for child in robot if child.tag in ('link', 'joint')]
    for element in elements:
        robot.remove(element)
    for index in np.random.default_rng(seed).permutation(len(elements)):
        robot.append(elements[index])
    return ET.tostring(robot, encoding='unicode')


def q_by_name(source: RobotModel, target: RobotModel, q: np.ndarray, field: str) -> np.ndarray:
    """Move a q (field='q') or v-sized (field='v') vector of ``source`` into ``target``'s order."""
    out = np.empty(q.shape)
    for joint in source.joints:
        other = target.joint(joint.name)
        size = joint.nq if field == 'q' else joint.nv
        start, other_start = (joint.idx_q, other.idx_q) if field == 'q' else (joint.idx_v,
                                                                              other.idx_v)
        out[other_start:other_start + size] = q[start:start + size]
    return out


@pytest.mark.parametrize('name, floating_base', robot_params([
    ('solo12', True), ('talos_reduced', True), ('baxter', False),
    ('pr2', False), ('tiago_pro', False)]))
def test_reordering_the_urdf_changes_nothing_by_name(name, floating_base):
    xml = robot_path(name).read_text()
    model = load(name, floating_base)
    for seed in range(20):  # find an order that changes the q layout, not just the text
        other = RobotModel.from_urdf_string(shuffled_urdf(xml, seed),
                                            floating_base=floating_base)
        if other.joint_names != model.joint_names:
            break
    assert other.joint_names != model.joint_names, 'no shuffle changed the joint order'
    assert other.link_names != model.link_names
    assert sorted(other.joint_names) == sorted(model.joint_names)
    assert sorted(other.link_names) == sorted(model.link_names)
    rng = np.random.default_rng(16)
    for _ in range(2):
        q, v, a = random_state(model, rng)
        links = rng.choice(model.link_names, size=3, replace=False)
        f_ext = {link: 10.0 * rng.standard_normal(6) for link in links}
        tau = model.rnea(q, v, a, f_ext=f_ext, gravity=GRAVITY)
        tau_other = other.rnea(q_by_name(model, other, q, 'q'), q_by_name(model, other, v, 'v'),
                               q_by_name(model, other, a, 'v'), f_ext=f_ext, gravity=GRAVITY)
        assert_close(q_by_name(other, model, tau_other, 'v'), tau, 'tau by joint name')
        perm = q_by_name(model, other, np.arange(model.nv, dtype=float), 'v').astype(int)
        assert_close(other.mass_matrix(q_by_name(model, other, q, 'q')),
                     model.mass_matrix(q)[np.ix_(perm, perm)], 'M by joint name')


# ---------------------------------------------------------------------------- f_ext
def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF rpy: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    def rot(axis, angle):
        c, s = math.cos(angle), math.sin(angle)
        i, j = [k for k in range(3) if k != axis]
        matrix = np.eye(3)
        matrix[i, i], matrix[i, j], matrix[j, i], matrix[j, j] = c, -s, s, c
        return matrix
    return rot(2, yaw) @ rot(1, pitch) @ rot(0, roll)


@pytest.mark.parametrize('name, floating_base', IDENTITY_CASES)
def test_external_torques_are_consistent_with_rnea(name, floating_base):
    for model, rng, zeros in trials(name, floating_base, seed=17, count=2):
        q, v, a = random_state(model, rng)
        first, second = rng.choice(model.link_names[1:], size=2, replace=False)
        w1, w2 = 10.0 * rng.standard_normal(6), 10.0 * rng.standard_normal(6)
        external = model.external_torques(q, {first: w1})
        assert_close(external, model.rnea(q, zeros, zeros, f_ext={first: w1},
                                          gravity=ZERO_GRAVITY), 'external_torques = rnea')
        assert_close(model.rnea(q, v, a, f_ext={first: w1}) - model.rnea(q, v, a), external,
                     'rnea(f_ext) - rnea() = external_torques')
        assert_close(model.external_torques(q, {first: 2.0 * w1, second: -w2}),
                     2.0 * external - model.external_torques(q, {second: w2}),
                     'external torques are linear in the wrenches')
        assert_close(model.external_torques(q, {first: np.zeros(6)}), zeros, 'zero wrench')


@pytest.mark.parametrize('name', ['solo12', 'talos_reduced', 'panda'])
def test_wrench_on_the_free_flyer_root_link(name):
    """A wrench on the root link is felt by the free-flyer joint alone, as -[f; tau]."""
    model = load(name, True)
    q = random_q(model, np.random.default_rng(18))
    wrench = np.array([1.0, -2.0, 3.0, -0.4, 0.5, 0.6])
    root = ET.fromstring(robot_path(name).read_text())
    children = {joint.find('child').get('link') for joint in root.findall('joint')}
    root_link = next(link.get('name') for link in root.findall('link')
                     if link.get('name') not in children)
    expected = np.zeros(model.nv)
    expected[:6] = -wrench
    assert_close(model.external_torques(q, {root_link: wrench}), expected, 'root wrench')


def test_wrench_on_a_link_fixed_to_the_world_does_nothing():
    model = load('ur5', False)
    q = random_q(model, np.random.default_rng(19))
    for link in ('world', 'base_link'):
        assert_close(model.external_torques(q, {link: np.arange(1.0, 7.0)}), np.zeros(6), link)


@pytest.mark.parametrize('name, link', [('ur5', 'tool0'), ('ur5', 'ee_link'),
                                        ('panda', 'panda_hand'), ('panda', 'panda_link8')])
def test_wrench_on_a_fixed_joint_link_equals_the_moved_wrench(name, link):
    """A wrench on a fixed-joint child link = the same wrench moved to the parent link."""
    robot = ET.fromstring(robot_path(name).read_text())
    joint = next(j for j in robot.findall('joint') if j.find('child').get('link') == link)
    assert joint.get('type') == 'fixed'
    parent = joint.find('parent').get('link')
    origin = joint.find('origin')
    rotation = rpy_matrix(*map(float, origin.get('rpy', '0 0 0').split()))
    translation = np.array([float(x) for x in origin.get('xyz', '0 0 0').split()])
    for model, rng, _ in trials(name, False, seed=20, count=2):
        q = random_q(model, rng)
        wrench = 10.0 * rng.standard_normal(6)
        force = rotation @ wrench[:3]
        moved = np.concatenate([force, rotation @ wrench[3:] + np.cross(translation, force)])
        tau = model.external_torques(q, {link: wrench})
        assert np.abs(tau).max() > 1e-3
        assert_close(tau, model.external_torques(q, {parent: moved}), f'{link} -> {parent}')


def test_unknown_f_ext_link_is_named():
    model = load('ur5', False)
    q, v, a = random_state(model, np.random.default_rng(21))
    for call in (lambda f: model.rnea(q, v, a, f_ext=f), lambda f: model.external_torques(q, f),
                 lambda f: model.rnea(q, v, a, f_ext=f, gravity=GRAVITY)):
        with pytest.raises(InputError, match=r"^f_ext: unknown link 'no_such_link'$"):
            call({'tool0': np.ones(6), 'no_such_link': np.ones(6)})


# ---------------------------------------------------------------------------- bad arguments
FAULTS = {
    'short': lambda x: x[:-1],
    'long': lambda x: np.append(x, 0.0),
    'nan': lambda x: np.where(np.arange(x.size) == 2, np.nan, x),
    'inf': lambda x: np.where(np.arange(x.size) == 2, np.inf, x),
    '-inf': lambda x: np.where(np.arange(x.size) == 2, -np.inf, x),
}


def expected_message(label: str, fault: str, size: int) -> str:
    if fault == 'short':
        return f'{label}: expected shape ({size},), got ({size - 1},)'
    if fault == 'long':
        return f'{label}: expected shape ({size},), got ({size + 1},)'
    return f'{label}[2] is {fault}: values must be finite'


# (argument, path): q, v, a through both paths of rnea (no f_ext/gravity: the fast kernel call
# first; with gravity: the checked path); gravity and f_ext exist on the checked path only.
BAD_ARGUMENTS = [pytest.param(argument, checked, id=f'{argument}-{path}')
                 for argument in ('q', 'v', 'a')
                 for checked, path in ((False, 'fast_path'), (True, 'checked_path'))]
BAD_ARGUMENTS += [pytest.param('gravity', True, id='gravity'),
                  pytest.param('f_ext', True, id='f_ext')]


@pytest.mark.parametrize('fault', FAULTS)
@pytest.mark.parametrize('argument, checked', BAD_ARGUMENTS)
def test_bad_argument_raises_input_error_naming_it(argument, checked, fault):
    """Wrong sizes and non-finite values name the argument and the index (solo12: nq != nv)."""
    model = load('solo12', True)
    q, v, a = random_state(model, np.random.default_rng(22))
    args = {'q': q, 'v': v, 'a': a}
    kwargs = {'gravity': np.array(GRAVITY)} if checked else {}
    sizes = {'q': model.nq, 'v': model.nv, 'a': model.nv, 'gravity': 3, 'f_ext': 6}
    label = argument
    if argument in args:
        args[argument] = FAULTS[fault](args[argument])
    elif argument == 'gravity':
        kwargs['gravity'] = FAULTS[fault](kwargs['gravity'])
    else:
        label = "f_ext['FL_FOOT']"
        kwargs['f_ext'] = {'base_link': np.ones(6), 'FL_FOOT': FAULTS[fault](np.ones(6))}
    message = expected_message(label, fault, sizes[argument])
    with pytest.raises(InputError, match=f'^{re.escape(message)}$'):
        model.rnea(args['q'], args['v'], args['a'], **kwargs)


@pytest.mark.parametrize('value, message', [
    pytest.param('abc', 'q: expected 19 real numbers, got str', id='str'),
    pytest.param({'x': 1.0}, 'q: expected 19 real numbers, got dict', id='dict'),
    pytest.param(None, 'q: expected 19 real numbers, got NoneType', id='None'),
    pytest.param(1.0, 'q: expected shape (19,), got ()', id='scalar'),
    pytest.param(np.zeros((1, 19)), 'q: expected shape (19,), got (1, 19)', id='2d'),
])
def test_q_of_the_wrong_kind_is_named(value, message):
    model = load('solo12', True)
    zeros = np.zeros(model.nv)
    with pytest.raises(InputError, match=f'^{re.escape(message)}$'):
        model.rnea(value, zeros, zeros)


@pytest.mark.parametrize('norm', [0.0, 0.5, 0.998, 1.002, 1.5])
def test_quaternion_far_from_unit_norm_raises(norm):
    model = load('solo12', True)
    q, v, a = random_state(model, np.random.default_rng(23))
    q[3:7] *= norm
    message = (f"q[3:7] (quaternion of joint 'root_joint') has norm {norm:.6g}: expected a "
               'unit quaternion')
    pattern = f'^{re.escape(message)}$'
    for call in (lambda: model.rnea(q, v, a), lambda: model.rnea(q, v, a, gravity=GRAVITY),
                 lambda: model.gravity_torques(q), lambda: model.mass_matrix(q),
                 lambda: model.velocity_product(q, v)):
        with pytest.raises(InputError, match=pattern):
            call()


def test_every_dynamics_function_checks_q():
    model = load('ur5', False)
    zeros = np.zeros(6)
    bad = np.array([0.0, 0.1, np.nan, 0.0, 0.0, 0.0])
    pattern = r'^q\[2\] is nan: values must be finite$'
    for call in (lambda: model.gravity_torques(bad), lambda: model.velocity_product(bad, zeros),
                 lambda: model.mass_matrix(bad),
                 lambda: model.external_torques(bad, {'tool0': np.ones(6)})):
        with pytest.raises(InputError, match=pattern):
            call()
    with pytest.raises(InputError, match=r'^v: expected shape \(6,\), got \(5,\)$'):
        model.velocity_product(zeros, zeros[:5])


def test_overflowing_torque_raises_input_error():
    model = load('ur5', False)
    q, _, a = random_state(model, np.random.default_rng(24))
    huge = np.full(6, 1e200)
    for kwargs in ({}, {'gravity': GRAVITY}):
        with pytest.raises(InputError, match='torque is not finite'):
            model.rnea(q, huge, a, **kwargs)


# ---------------------------------------------------------------------------- rnea_batch checks
def flush_numba_error(model: RobotModel):
    """Run one good batch; a kernel error lost by a worker thread would surface here."""
    q = model.neutral_configuration()
    zeros = np.zeros((1, model.nv))
    try:
        model.rnea_batch(q[None], zeros, zeros)
    except SystemError as exc:
        raise AssertionError(f'a previous rnea_batch left an exception set: {exc}') from exc


@pytest.mark.parametrize('threads', [1, 2], ids=['1_thread', '2_threads'])
@pytest.mark.parametrize('bad_sample', [0, 1, 3])
@pytest.mark.parametrize('fault', ['nan_v', 'inf_q', 'quaternion', 'overflow'])
def test_rnea_batch_names_the_bad_sample(fault, bad_sample, threads):
    """A bad sample raises InputError naming it, whichever thread runs it; no zeros returned."""
    model = load('solo12', True)
    rng = np.random.default_rng(25)
    Q, V, A = (np.array(column)
               for column in zip(*[random_state(model, rng) for _ in range(4)]))
    good = model.rnea_batch(Q, V, A)
    if fault == 'nan_v':
        V[bad_sample, 4] = np.nan
        message = 'v[4] is nan: values must be finite'
    elif fault == 'inf_q':
        Q[bad_sample, 9] = np.inf
        message = 'q[9] is inf: values must be finite'
    elif fault == 'quaternion':
        Q[bad_sample, 3:7] *= 1.5
        message = ("q[3:7] (quaternion of joint 'root_joint') has norm 1.5: expected a unit "
                   'quaternion')
    else:
        V[bad_sample] = 1e200
        message = 'the torque is not finite (inputs too large?)'
    try:
        with pytest.raises(InputError, match=f'^{re.escape(f"sample {bad_sample}: {message}")}$'):
            model.rnea_batch(Q, V, A, threads=threads)
    finally:
        flush_numba_error(model)
    Q, V, A = (np.array(column)
               for column in zip(*[random_state(model, rng) for _ in range(4)]))
    np.testing.assert_array_equal(model.rnea_batch(Q, V, A), model.rnea_batch(Q, V, A))
    assert good.shape == (4, model.nv)


def test_rnea_batch_shape_and_f_ext_errors():
    model = load('solo12', True)
    rng = np.random.default_rng(26)
    Q, V, A = (np.array(column)
               for column in zip(*[random_state(model, rng) for _ in range(3)]))
    cases = [
        ((Q[:, :-1], V, A), {}, 'Q: expected shape (N, 19), got (3, 18)'),
        ((Q[0], V, A), {}, 'Q: expected shape (N, 19), got (19,)'),
        ((Q, V[:2], A), {}, 'V: expected shape (3, 18), got (2, 18)'),
        ((Q, V, A[:, :5]), {}, 'A: expected shape (3, 18), got (3, 5)'),
        ((Q, V, A), {'gravity': [np.nan, 0.0, 0.0]}, 'gravity[0] is nan: values must be finite'),
        ((Q, V, A), {'f_ext': {'nope': np.ones(6)}}, "f_ext: unknown link 'nope'"),
        ((Q, V, A), {'f_ext': {'FL_FOOT': np.ones((2, 6))}},
         "f_ext['FL_FOOT']: expected finite shape (6,) or (3, 6), got (2, 6)"),
        ((Q, V, A), {'f_ext': {'FL_FOOT': np.full(6, np.inf)}},
         "f_ext['FL_FOOT']: expected finite shape (6,) or (3, 6), got (6,)"),
    ]
    for args, kwargs, message in cases:
        with pytest.raises(InputError, match=f'^{re.escape(message)}$'):
            model.rnea_batch(*args, **kwargs)
    flush_numba_error(model)


# ---------------------------------------------------------------------------- argument kinds
def test_lists_and_other_array_kinds_work_like_arrays():
    model = load('solo12', True)
    rng = np.random.default_rng(27)
    q, v, a = random_state(model, rng)
    f_ext = {'FL_FOOT': 5.0 * rng.standard_normal(6)}
    tau = model.rnea(q, v, a)
    tau_general = model.rnea(q, v, a, f_ext=f_ext, gravity=GRAVITY)
    read_only = q.copy()
    read_only.setflags(write=False)
    strided = np.repeat(q, 2)[::2]
    assert not strided.flags.c_contiguous
    for kind, q_kind in (('list', list(q)), ('tuple', tuple(q)), ('read-only', read_only),
                         ('strided', strided)):
        assert_close(model.rnea(q_kind, list(v), tuple(a)), tau, kind, rtol=0.0)
        assert_close(model.rnea(q_kind, v, a, f_ext={'FL_FOOT': list(f_ext['FL_FOOT'])},
                                gravity=list(GRAVITY)), tau_general, kind, rtol=0.0)
    single = q.astype(np.float32)
    assert_close(model.rnea(single, v, a), model.rnea(single.astype(np.float64), v, a),
                 'float32 q', rtol=0.0)
    integers = [0, 0, 0, 0, 0, 0, 1] + [1, -1, 0] * 4
    assert_close(model.rnea(integers, [0] * 18, [1] * 18),
                 model.rnea(np.array(integers, float), np.zeros(18), np.ones(18)), 'ints',
                 rtol=0.0)
    assert_close(model.rnea_batch([list(q)], [list(v)], [list(a)])[0], tau, 'batch of lists')
    assert_close(model.mass_matrix(list(q)), model.mass_matrix(q), 'mass_matrix(list)', rtol=0.0)


def test_outputs_never_alias_and_inputs_are_not_modified():
    model = load('solo12', True)
    rng = np.random.default_rng(28)
    (q1, v1, a1), (q2, v2, a2) = random_state(model, rng), random_state(model, rng)
    inputs = [x.copy() for x in (q1, v1, a1, q2, v2, a2)]
    calls = {
        'rnea': lambda q, v, a: model.rnea(q, v, a),
        'rnea(gravity)': lambda q, v, a: model.rnea(q, v, a, gravity=GRAVITY),
        'rnea(f_ext)': lambda q, v, a: model.rnea(q, v, a, f_ext={'FL_FOOT': np.ones(6)}),
        'gravity_torques': lambda q, v, a: model.gravity_torques(q),
        'velocity_product': lambda q, v, a: model.velocity_product(q, v),
        'external_torques': lambda q, v, a: model.external_torques(q, {'FL_FOOT': v[:6]}),
        'mass_matrix': lambda q, v, a: model.mass_matrix(q),
        'rnea_batch': lambda q, v, a: model.rnea_batch(q[None], v[None], a[None]),
    }
    for name, call in calls.items():
        first = call(q1, v1, a1)
        kept = first.copy()
        second = call(q2, v2, a2)
        assert second is not first and not np.shares_memory(first, second), name
        np.testing.assert_array_equal(first, kept, err_msg=f'{name}: first output changed')
        assert not np.array_equal(first, second), name
        for x, original in zip((q1, v1, a1, q2, v2, a2), inputs):
            np.testing.assert_array_equal(x, original, err_msg=f'{name} modified its input')


def test_identity_robots_load_without_warnings():
    """The identity robots load without warnings (a warning would mean a suspect model)."""
    for case in IDENTITY_CASES:
        name, floating_base = case.values
        with warnings.catch_warnings():
            warnings.simplefilter('error', ModelWarning)
            RobotModel.from_urdf_file(robot_path(name), floating_base=floating_base)


def test_rnea_out_argument_is_filled_and_returned():
    """``out=`` writes into the caller's array (no allocation) on the fast and checked paths."""
    model = RobotModel.from_urdf_file(robot_path('panda'))
    rng = np.random.default_rng(11)
    q, v, a = rng.standard_normal((3, model.nv))
    out = np.full(model.nv, np.nan)
    assert model.rnea(q, v, a, out=out) is out
    np.testing.assert_allclose(out, model.rnea(q, v, a), rtol=0, atol=1e-12)
    link = model.link_names[-1]
    expected = model.rnea(q, v, a, f_ext={link: np.ones(6)}, gravity=[0, 0, -1.0])
    assert model.rnea(q, v, a, f_ext={link: np.ones(6)}, gravity=[0, 0, -1.0], out=out) is out
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize('out', [np.zeros(3), np.zeros(9), np.zeros(8, dtype=np.float32),
                                 [0.0] * 8, np.zeros((8, 1))],
                         ids=['short', 'long', 'float32', 'list', '2d'])
def test_rnea_refuses_a_bad_out_array(out):
    model = RobotModel.from_urdf_file(robot_path('panda'))
    q = model.neutral_configuration()
    with pytest.raises(InputError, match=r'^out: expected a writeable float64 array of shape '
                                         r'\(8,\)$'):
        model.rnea(q, np.zeros(8), np.zeros(8), out=out)


@pytest.mark.parametrize('name, floating', [('panda', False), ('solo12', True),
                                            ('talos_reduced', True)])
def test_rnea_terms_batch_splits_rnea_into_its_terms(name, floating):
    """M a, C v, g from one sweep equal the separate RNEA calls, and sum to the torque."""
    model = RobotModel.from_urdf_file(robot_path(name), floating_base=floating)
    rng = np.random.default_rng(12)
    n = 2 * 256 + 3  # long enough for two threads
    Q = np.tile(model.neutral_configuration(), (n, 1))
    for joint in model.joints:
        if joint.nq == 1:
            Q[:, joint.idx_q] = rng.uniform(-2, 2, n)
    V, A = rng.standard_normal((2, n, model.nv))
    zero = np.zeros_like(V)
    gravity = (0.5, -1.0, -9.0)
    for threads in (1, 2):
        inertial, velocity, weight = model.rnea_terms_batch(Q, V, A, gravity=gravity,
                                                            threads=threads)
        np.testing.assert_allclose(inertial, model.rnea_batch(Q, zero, A, gravity=(0, 0, 0)),
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(velocity, model.rnea_batch(Q, V, zero, gravity=(0, 0, 0)),
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(weight, model.rnea_batch(Q, zero, zero, gravity=gravity),
                                   rtol=0, atol=1e-12)
        total = model.rnea_batch(Q, V, A, gravity=gravity)
        np.testing.assert_allclose(inertial + velocity + weight, total,
                                   atol=1e-11 * max(1.0, np.abs(total).max()))


def test_rnea_terms_batch_names_a_bad_sample():
    model = RobotModel.from_urdf_file(robot_path('panda'))
    Q, V, A = np.zeros((3, 4, model.nv))
    V[2, 5] = np.inf
    with pytest.raises(InputError, match=r'^sample 2: v\[5\] is inf: values must be finite$'):
        model.rnea_terms_batch(Q, V, A)
    empty = model.rnea_terms_batch(Q[:0], V[:0], A[:0])
    assert [term.shape for term in empty] == [(0, model.nv)] * 3
