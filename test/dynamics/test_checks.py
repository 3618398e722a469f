"""
The argument and result checks (``checks.py``): bad kinds, aliasing outputs, overflows.

Each public function refuses what it cannot compute with an ``InputError`` naming the argument,
or the function and the result that overflowed; none returns NaN or inf, none computes on a
silently converted value (complex cut to its real part, bools or strings taken as numbers).
"""
from __future__ import annotations

import functools
import re

from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import InputError, RobotModel

# Two prismatic joints along x (finite positions whose sum overflows), a revolute joint, a tool.
SLIDES = """<robot name="slides">
  <link name="base"/>
  <link name="carriage"><inertial><mass value="2"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="slider"><inertial><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tool"/>
  <joint name="slide_a" type="prismatic"><parent link="base"/><child link="carriage"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="100" velocity="1"/></joint>
  <joint name="slide_b" type="prismatic"><parent link="carriage"/><child link="slider"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="100" velocity="1"/></joint>
  <joint name="turn" type="revolute"><parent link="slider"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="tool_mount" type="fixed"><parent link="arm"/><child link="tool"/>
    <origin xyz="0.4 0 0"/></joint>
</robot>
"""
OVERFLOW = 'the {} is not finite (inputs too large?)'


@functools.cache
def panda() -> RobotModel:
    return RobotModel.from_urdf_file(robot_path('panda'))


@functools.cache
def slides() -> RobotModel:
    return RobotModel.from_urdf_string(SLIDES)


def state(model: RobotModel, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-0.5, 0.5, model.nq), rng.standard_normal(model.nv), \
        rng.standard_normal(model.nv)


def raises(message: str):
    return pytest.raises(InputError, match=f'^{re.escape(message)}$')


# ---------------------------------------------------------------------------- overflow (#12)
def test_mass_matrix_refuses_an_overflow_instead_of_returning_nan():
    """Issue 9 #12: panda's finger joint at 1e300 gave an all-NaN mass matrix, no error."""
    model = panda()
    q = model.neutral_configuration()
    q[model.joint('panda_finger_joint1').idx_q] = 1e300
    with raises(f'mass_matrix: {OVERFLOW.format("mass matrix")}'):
        model.mass_matrix(q)


def test_every_function_refuses_a_result_that_overflows():
    """Finite inputs whose result overflows: InputError naming the function, never inf/NaN."""
    model = slides()
    zeros = np.zeros(3)
    huge_v = np.array([0.0, 0.0, 1e200])  # the centripetal force overflows
    far = np.array([1e308, 1e308, 0.0])  # each finite, the world position of 'slider' is not
    along_slides = (1e308, 0.0, 0.0)  # finite, but 4 kg of it is not
    push = {'slider': [1e308, 0, 0, 0, 0, 0], 'tool': [1e308, 0, 0, 0, 0, 0]}
    torque = OVERFLOW.format('torque')
    cases = {
        'rnea': (lambda: model.rnea(zeros, huge_v, zeros), f'rnea: {torque}'),
        'rnea(out)': (lambda: model.rnea(zeros, huge_v, zeros, out=np.zeros(3)),
                      f'rnea: {torque}'),
        'rnea(gravity)': (lambda: model.rnea(zeros, zeros, zeros, gravity=along_slides),
                          f'rnea: {torque}'),
        'rnea(f_ext)': (lambda: model.rnea(zeros, zeros, zeros, f_ext=push), f'rnea: {torque}'),
        'gravity_torques': (lambda: model.gravity_torques(zeros, gravity=along_slides),
                            f'gravity_torques: {torque}'),
        'velocity_product': (lambda: model.velocity_product(zeros, huge_v),
                             f'velocity_product: {torque}'),
        'external_torques': (lambda: model.external_torques(zeros, push),
                             f'external_torques: {torque}'),
        'mass_matrix': (lambda: panda().mass_matrix([0.0] * 7 + [1e300]),
                        f'mass_matrix: {OVERFLOW.format("mass matrix")}'),
        'link_placement': (lambda: model.link_placement(far, 'tool'),
                           f'link_placements: {OVERFLOW.format("placement")}'),
        'link_placements': (lambda: model.link_placements(far, ['base', 'tool']),
                            f'link_placements: {OVERFLOW.format("placement")}'),
        'link_jacobian': (lambda: model.link_jacobian(far, 'tool', 'world'),
                          f'link_jacobian: {OVERFLOW.format("link placement")}'),
        'joint_reaction_wrenches': (lambda: model.joint_reaction_wrenches(zeros, huge_v, zeros),
                                    f'joint_reaction_wrenches: {torque}'),
        'rnea_batch': (lambda: model.rnea_batch([zeros, zeros], [zeros, huge_v], [zeros] * 2),
                       f'sample 1: {torque}'),
        'rnea_batch(f_ext)': (lambda: model.rnea_batch([zeros], [zeros], [zeros], f_ext=push),
                              f'sample 0: {torque}'),
        'rnea_terms_batch': (lambda: model.rnea_terms_batch([zeros, zeros], [zeros, huge_v],
                                                            [zeros] * 2),
                             f'sample 1: {torque}'),
    }
    for name, (call, message) in cases.items():
        with raises(message):
            call()
            pytest.fail(f'{name} returned')


def test_joint_reaction_wrench_refused_when_only_it_overflows():
    """A wrench component off the joint axis overflows while the joint torque stays finite."""
    model = RobotModel.from_urdf_string(
        '<robot name="slide"><link name="base"/><link name="block"><inertial>'
        '<mass value="10"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>'
        '</inertial></link><joint name="slide" type="prismatic"><parent link="base"/>'
        '<child link="block"/><axis xyz="1 0 0"/>'
        '<limit lower="-1" upper="1" effort="10" velocity="1"/></joint></robot>')
    zero = np.zeros(1)
    sideways = (0.0, 1e308, 0.0)  # 10 kg of it overflows, along y: the joint moves along x
    assert np.isfinite(model.rnea(zero, zero, zero, gravity=sideways)).all()
    with raises("joint_reaction_wrenches: the wrench of joint 'slide' is not finite "
                '(inputs too large?)'):
        model.joint_reaction_wrenches(zero, zero, zero, gravity=sideways)


# ---------------------------------------------------------------------------- out aliasing (#13)
@pytest.mark.parametrize('general', [False, True], ids=['fast_path', 'with_f_ext_gravity'])
@pytest.mark.parametrize('alias', ['q', 'v', 'a', 'view_over_v', 'view_over_q_and_v'])
def test_out_sharing_memory_with_an_input_gives_the_right_torque(alias, general):
    """
    Issue 9 #13: ``rnea(q, v, a, out=a)`` zeroed ``a`` before reading it (0.75 N m off).

    An ``out`` that shares memory with q, v or a is computed on copies, then written: the torque
    is the one of the inputs as they were before the call.
    """
    model = panda()  # nq == nv: out=q is possible
    nv = model.nv
    kwargs = {'f_ext': {'panda_hand': [1.0, -2.0, 3.0, 0.1, 0.2, -0.3]},
              'gravity': (0.3, 0.0, -9.0)} if general else {}
    q, v, a = state(model, 4)
    expected = model.rnea(q, v, a, **kwargs)
    buffer = np.concatenate([q, v, a])  # q, v, a as views of one buffer
    q, v, a = buffer[:nv], buffer[nv:2 * nv], buffer[2 * nv:]
    out = {'q': q, 'v': v, 'a': a, 'view_over_v': buffer[nv + 3:2 * nv + 3],
           'view_over_q_and_v': buffer[nv // 2:nv // 2 + nv]}[alias]
    assert model.rnea(q, v, a, out=out, **kwargs) is out
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_out_beside_the_inputs_is_written_in_place():
    """Adjacent (not overlapping) memory is not an alias: the fast path writes it directly."""
    model = panda()
    q, v, a = state(model, 5)
    buffer = np.concatenate([q, v, a, np.zeros(model.nv)])
    q, v, a, out = buffer.reshape(4, model.nv)
    expected = model.rnea(q, v, a)
    assert model.rnea(q, v, a, out=out) is out
    np.testing.assert_allclose(buffer[3 * model.nv:], expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(buffer[:model.nv], q)


# ---------------------------------------------------------------------------- kinds (#14)
@pytest.mark.parametrize('threads', [2.5, 0, -1, True, '2', np.float64(2.0)],
                         ids=['2.5', '0', '-1', 'True', 'str', 'float64'])
def test_threads_must_be_a_positive_integer(threads):
    """Issue 9 #14: threads=2.5 failed inside numba ('LLVM IR parsing error')."""
    model = panda()
    Q, V, A = (np.zeros((2, model.nv)) for _ in range(3))
    message = f'threads: expected a positive integer or None, got {threads!r}'
    with raises(message):
        model.rnea_batch(Q, V, A, threads=threads)
    with raises(message):
        model.rnea_terms_batch(Q, V, A, threads=threads)


def test_integer_threads_of_any_kind_are_taken():
    model = panda()
    Q, V, A = (np.zeros((600, model.nv)) for _ in range(3))
    expected = model.rnea_batch(Q, V, A, threads=1)
    for threads in (2, np.int64(2), np.int32(3), None):
        np.testing.assert_allclose(model.rnea_batch(Q, V, A, threads=threads), expected,
                                   rtol=1e-12, atol=1e-12)


def test_f_ext_must_be_a_mapping():
    """Issue 9 #14: f_ext given as a list raised AttributeError."""
    model = panda()
    q, v, a = state(model, 6)
    wrench = [1.0, 0, 0, 0, 0, 0]
    message = 'f_ext: expected a mapping link name -> [fx fy fz tx ty tz], got list'
    for call in (lambda: model.rnea(q, v, a, f_ext=[wrench]),
                 lambda: model.rnea(q, v, a, f_ext=[]),
                 lambda: model.rnea(q, v, a, f_ext=[('panda_hand', wrench)]),
                 lambda: model.external_torques(q, [wrench]),
                 lambda: model.joint_reaction_wrenches(q, v, a, f_ext=[wrench]),
                 lambda: model.rnea_batch(q[None], v[None], a[None], f_ext=[wrench])):
        with raises(message):
            call()


NOT_REAL = [
    pytest.param(lambda q: q.astype(complex), 'a complex128 array', id='complex_array'),
    pytest.param(lambda q: q + 1e-3j, 'a complex128 array', id='complex_nonzero_imaginary'),
    pytest.param(lambda q: [complex(x) for x in q], 'a list holding complex 0j',
                 id='complex_list'),
    pytest.param(lambda q: q != 0.0, 'a bool array', id='bool_array'),
    pytest.param(lambda q: [True] * q.size, 'a list holding bool True', id='bool_list'),
    pytest.param(lambda q: [0.5] * (q.size - 1) + [False], 'a list holding bool False',
                 id='bool_among_floats'),
    pytest.param(lambda q: [str(x) for x in q], "a list holding str '0.0'",
                 id='numeric_str_list'),
    pytest.param(lambda q: q.astype(str), 'a str array', id='numeric_str_array'),
    pytest.param(lambda q: [b'0'] * q.size, "a list holding bytes b'0'", id='bytes_list'),
    pytest.param(lambda q: [0.0] * (q.size - 1) + [None], 'a list holding NoneType None',
                 id='none_in_list'),
]


@pytest.mark.parametrize('convert, got', NOT_REAL)
def test_q_that_is_not_real_numbers_is_refused(convert, got):
    """Issue 9 #14: complex q was cut to its real part, bool and numeric-string q accepted."""
    model = panda()
    q = model.neutral_configuration()
    zeros = np.zeros(model.nv)
    message = f'q: expected {model.nq} real numbers, got {got}'
    for call in (lambda: model.rnea(convert(q), zeros, zeros),
                 lambda: model.rnea(convert(q), zeros, zeros, gravity=(0, 0, -1)),
                 lambda: model.rnea(convert(q), zeros, zeros, out=np.zeros(model.nv)),
                 lambda: model.gravity_torques(convert(q)),
                 lambda: model.mass_matrix(convert(q)),
                 lambda: model.link_placement(convert(q), 'panda_hand'),
                 lambda: model.link_jacobian(convert(q), 'panda_hand')):
        with raises(message):
            call()


def test_every_numeric_argument_refuses_what_is_not_real_numbers():
    """v, a, gravity, f_ext values and the batch matrices follow the same rule as q."""
    model = panda()
    q, v, a = state(model, 7)
    nv = model.nv
    link = "f_ext['panda_hand']"
    cases = [
        (lambda: model.rnea(q, v.astype(complex), a), f'v: expected {nv} real numbers, got a '
         'complex128 array'),
        (lambda: model.rnea(q, v, a == a), f'a: expected {nv} real numbers, got a bool array'),
        (lambda: model.rnea(q, v, a, gravity=['0', '0', '-9.81']),
         "gravity: expected 3 real numbers, got a list holding str '0'"),
        (lambda: model.rnea(q, v, a, f_ext={'panda_hand': np.ones(6, dtype=complex)}),
         f'{link}: expected 6 real numbers, got a complex128 array'),
        (lambda: model.rnea_batch([q], [v], [a], f_ext={'panda_hand': [True] * 6}),
         f'{link}: expected real numbers of shape (6,) or (1, 6), got a list holding bool '
         'True'),
        (lambda: model.rnea_batch(q[None].astype(complex), v[None], a[None]),
         f'Q: expected real numbers of shape (N, {nv}), got a complex128 array'),
        (lambda: model.rnea_batch(q[None], [[str(x) for x in v]], a[None]),
         f'V: expected real numbers of shape (1, {nv}), got a list holding str '
         f"'{v[0]!s}'"),
        (lambda: model.rnea_terms_batch(q[None], v[None], a[None] > 0),
         f'A: expected real numbers of shape (1, {nv}), got a bool array'),
        (lambda: RobotModel.from_urdf_string(SLIDES, gravity=[0, 0, 1j]),
         'gravity: expected 3 real numbers, got a list holding complex 1j'),
    ]
    for call, message in cases:
        with raises(message):
            call()


def test_real_numbers_of_every_kind_are_taken():
    """Integers, float32, lists of numpy scalars: converted to float64, same torques."""
    model = panda()
    q, v, a = state(model, 8)
    expected = model.rnea(q, v, a)
    for kind, q_kind in (('float32', q.astype(np.float32).astype(np.float64)),
                         ('numpy scalars', [np.float64(x) for x in q]),
                         ('int64 array', np.round(q).astype(np.int64)),
                         ('uint8 array', np.zeros(model.nq, dtype=np.uint8))):
        reference = model.rnea(np.asarray(q_kind, dtype=np.float64), v, a)
        np.testing.assert_allclose(model.rnea(q_kind, v, a), reference, rtol=1e-12,
                                   atol=1e-12, err_msg=kind)
    np.testing.assert_allclose(model.rnea(list(q), list(v), tuple(a)), expected, rtol=1e-12,
                               atol=1e-12)
