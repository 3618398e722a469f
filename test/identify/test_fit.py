"""
The base parameters and the chunked normal equations against the stacked regressor.

Checked on random states of the UR5 and of the panda (a mimic finger, a prismatic joint):
the torques of any theta are the base regressor times E theta, and the per-joint normal
equations (only each row's own columns kept, in chunks) equal those of the full stacked matrix.
"""
from __future__ import annotations

from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.identify import base as base_params
from rnea_ros.identify import covariance, filtering, fit, inertial_layout, pipeline
from rnea_ros.identify.samples import Samples


@pytest.fixture(scope='module', params=['ur5', 'panda'])
def setup(request):
    model = RobotModel.from_urdf_file(robot_path(request.param))
    lay = inertial_layout.layout(model)
    return model, lay, base_params.base_parameters(model, lay)


def stacked(model, lay, q, v, a) -> np.ndarray:
    """(N, nv, size) the full regressor with the joint columns, theta order."""
    return np.concatenate([model.regressor_batch(q, v, a), lay.joint_columns(v, a)], axis=2)


def test_base_parameters_reproduce_every_torque(setup):
    model, lay, base = setup
    q, v, a = base_params.random_states(model, 300, seed=7)
    W = stacked(model, lay, q, v, a)
    theta = np.random.default_rng(0).standard_normal(lay.size)
    full = W @ theta
    reduced = W[:, :, base.columns] @ (base.E @ theta)
    np.testing.assert_allclose(reduced, full, rtol=0, atol=1e-9 * np.abs(full).max())
    # The base columns have full rank: no combination of them vanishes on every state.
    Wb = W[:, :, base.columns].reshape(-1, base.size)
    singular = np.linalg.svd(Wb / np.linalg.norm(Wb, axis=0), compute_uv=False)
    assert singular.min() > 1e-6 * singular.max()


def test_chunked_normal_equations_equal_the_stacked_ones(setup, monkeypatch):
    model, lay, base = setup
    q, v, a = base_params.random_states(model, 1000, seed=8)
    tau = np.random.default_rng(1).standard_normal((1000, model.nv))
    monkeypatch.setattr(pipeline, 'CHUNK', 128)  # several chunks, a short last one
    data = Samples('x', np.arange(1000) * 1e-3, q, v, a, tau)
    equations = pipeline.accumulate(model, lay, base, [data])
    Wb = stacked(model, lay, q, v, a)[:, :, base.columns]
    for j in range(model.nv):
        np.testing.assert_allclose(equations.gram[j], Wb[:, j].T @ Wb[:, j], rtol=1e-10,
                                   atol=1e-9)
        np.testing.assert_allclose(equations.moment[j], tau[:, j] @ Wb[:, j], rtol=1e-10,
                                   atol=1e-9)
    beta = np.random.default_rng(2).standard_normal(base.size)
    residual = tau - Wb @ beta
    np.testing.assert_allclose(equations.rss(beta), (residual ** 2).sum(axis=0), rtol=1e-8)
    assert equations.count == 1000


def test_weighted_fit_recovers_beta_and_noise():
    rng = np.random.default_rng(3)
    equations = fit.NormalEquations(2, 3, np.zeros((2, 1), dtype=np.int64),
                                    np.zeros((2, 1), dtype=np.int64), np.zeros(2, np.int64))
    beta = np.array([1.0, -2.0, 0.5])
    sigma = np.array([0.1, 1.0])
    for _ in range(4):
        joint = rng.standard_normal((5000, 2, 3))  # every column on both rows
        equations.add(np.zeros((5000, 2, 0)), np.zeros((5000, 2, 0)), np.zeros((5000, 2)))
        tau = joint @ beta + rng.standard_normal((5000, 2)) * sigma
        for j in range(2):
            equations.gram[j] += joint[:, j].T @ joint[:, j]
            equations.moment[j] += tau[:, j] @ joint[:, j]
        equations.energy += (tau ** 2).sum(axis=0)
    result = fit.weighted_fit(equations)
    np.testing.assert_allclose(result.sigma, sigma, rtol=0.03)
    np.testing.assert_allclose(result.beta, beta, atol=5 * result.std.max())
    assert np.all(result.std < 0.01)


def test_rows_at_rest_are_left_out_only_where_the_joint_reverses_often():
    """And every row of a joint nearly always at rest: nothing in them tells its joint terms."""
    t = np.arange(5000) / 500.0
    sine = 0.8 * np.cos(2 * np.pi * 0.3 * t)  # reverses: 4 % of the time below 0.05 rad/s
    one_way = 0.5 + 0.4 * np.cos(2 * np.pi * 0.3 * t)  # never reverses
    creeping = 0.03 * np.cos(2 * np.pi * 0.3 * t)  # always below 0.05 rad/s
    # Regression: kept whole (slow over 10 % of the time), its stiction biased the fit.
    hesitant = 0.13 * np.cos(2 * np.pi * 0.3 * t)  # 25 % of the time below 0.05 rad/s
    v = np.column_stack([sine, one_way, creeping, hesitant])
    data = Samples('bag', t, np.zeros_like(v), v, np.zeros_like(v), np.ones_like(v))
    low_pass = filtering.design([data], 0.01)
    assert np.mean(np.abs(hesitant) < 0.05) == pytest.approx(0.25, abs=0.01)
    np.testing.assert_array_equal(low_pass.rest, [0.05, 0.0, np.inf, 0.05])
    np.testing.assert_array_equal(low_pass.still, [False, False, True, False])
    np.testing.assert_allclose(low_pass.moving_fraction, [0.96, 1.0, 0.0, 0.75], atol=0.01)
    assert 0.1 < low_pass.cutoff < 5.0  # 5 x the 0.3 Hz motion's band
    effort = low_pass.leave_out(data.effort, v)
    np.testing.assert_array_equal(np.isnan(effort[:, 0]), np.abs(sine) < 0.05)
    np.testing.assert_array_equal(np.isnan(effort[:, 3]), np.abs(hesitant) < 0.05)
    assert np.isnan(effort[:, 2]).all() and np.isfinite(effort[:, 1]).all()
    assert filtering.design([data]).rest is None  # no friction model: every row


def test_sandwich_std_is_honest_for_correlated_noise_and_white_std_is_not():
    n, rho, runs = 4000, 0.95, 40
    t = np.arange(n) * 0.01
    regressor = np.sin(0.7 * t)[:, None, None]  # one inertial column
    joint = np.ones((n, 1, 1))  # one joint term: an offset
    rng = np.random.default_rng(5)
    estimates, sandwich, white = [], [], []
    for _ in range(runs):
        shocks = rng.standard_normal(n)
        noise = np.empty(n)
        noise[0] = shocks[0]
        for k in range(1, n):  # AR(1): correlated over about 40 samples
            noise[k] = rho * noise[k - 1] + np.sqrt(1 - rho ** 2) * shocks[k]
        tau = (2.0 * regressor[:, 0, 0] + 0.5 + noise)[:, None]
        equations = fit.NormalEquations(1, 2, np.array([[0]]), np.array([[0]]), np.array([1]))
        equations.add(regressor, joint, tau)
        result = fit.weighted_fit(equations)
        scores = covariance.Scores(equations, result.beta, result.sigma, n)
        scores.add(regressor, joint, tau)
        estimates.append(result.beta)
        sandwich.append(scores.result(result.H).std)
        white.append(result.std)
    spread = np.std(estimates, axis=0)
    # 40 runs: the spread itself is known to about 11 %.
    np.testing.assert_allclose(np.mean(sandwich, axis=0), spread, rtol=0.3)
    assert np.all(np.mean(white, axis=0) < 0.4 * spread)


def test_a_delayed_effort_is_paired_with_the_state_its_stamp_minus_the_delay_hits():
    """samples.delayed_state: exact on a stamp, linear between two, nothing over a hole."""
    from rnea_ros.identify.samples import delayed_state
    times = np.array([0, 1, 2, 4, 5], dtype=np.int64) * 1_000_000  # ns: a hole from 2 to 4 ms
    q = np.array([[0.0], [10.0], [20.0], [40.0], [50.0]])
    v = -q
    known = np.ones(5, dtype=bool)
    (q1, v1), found = delayed_state(times, (q, v), known, 0.001)
    np.testing.assert_array_equal(found, [False, True, True, False, True])
    np.testing.assert_array_equal(q1[[1, 2, 4], 0], [0.0, 10.0, 40.0])  # 4 ms hit exactly
    np.testing.assert_array_equal(v1[[1, 2, 4], 0], [-0.0, -10.0, -40.0])
    (q1, _), found = delayed_state(times, (q, v), known, 0.0005)
    np.testing.assert_array_equal(found, [False, True, True, False, True])
    np.testing.assert_allclose(q1[[1, 2, 4], 0], [5.0, 15.0, 45.0], rtol=1e-12)
    known[3] = False  # no state estimate at 4 ms: nothing taken from it
    q[3] = np.nan
    (q1, _), found = delayed_state(times, (q, v), known, 0.0005)
    np.testing.assert_array_equal(found, [False, True, True, False, False])
    (q1, _), found = delayed_state(times, (q, v), known, 0.001)
    np.testing.assert_array_equal(found, [False, True, True, False, False])
    assert np.isfinite(q1[found]).all()
    (q1, _), found = delayed_state(times, (q, v), known, 0.0)
    assert q1 is q and (found == known).all()


def test_the_condition_number_is_that_of_what_the_fit_resolves():
    """A column no row sees, or two that are one, is not determined: not ill-conditioning."""
    x = np.array([[1.0, 0.0], [0.0, 10.0], [1.0, 1.0]])
    H = x.T @ x
    expected = fit.condition_number(H)
    assert 1.0 < expected < 10.0
    blind = np.zeros((3, 3))
    blind[:2, :2] = H
    assert fit.condition_number(blind) == pytest.approx(expected, rel=1e-12)
    assert fit.condition_number(np.zeros((2, 2))) == np.inf
    lumped = np.zeros((3, 3))  # the third column is the first: one direction not determined
    x3 = np.column_stack([x, x[:, 0]])
    lumped[:] = x3.T @ x3
    assert 1.0 < fit.condition_number(lumped) < 1e3
    assert np.isinf(fit.covariance_diagonal(lumped)[[0, 2]]).all()


def test_the_base_of_a_robot_with_a_still_joint_is_that_of_the_robot_holding_it():
    """UR5 with its last wrist held: its body one with the one before, its terms kept, zero."""
    model = RobotModel.from_urdf_file(robot_path('ur5'))
    lay = inertial_layout.layout(model)
    free = base_params.base_parameters(model, lay)
    still = np.zeros(model.nv, dtype=bool)
    still[-1] = True
    states = base_params.held_states(model, still, np.array([0.3]))
    assert np.all(states[1][:, -1] == 0.0) and np.all(states[0][:, -1] == 0.3)
    held = base_params.base_parameters(model, lay, states=states, rows=~still,
                                       all_joint_terms=True)
    k = len(lay.joint_terms)
    joint_terms = [name for name in held.names if not name.startswith(lay.body_links)]
    assert len(joint_terms) == model.nv * k  # fit.NormalEquations' layout: k per joint
    assert held.size < free.size
    # Any torque of the other joints, with the wrist held there, is W beta of the held base.
    q, v, a = base_params.held_states(model, still, np.array([0.3]), count=20, seed=7)
    theta = inertial_layout.prior(model, lay)[0]
    W = model.regressor_batch(q, v, a)[:, :-1, :]
    tau = W @ theta[:lay.n_inertial]
    inertial = held.columns[held.columns < lay.n_inertial]
    rows = np.concatenate([W[:, :, inertial], lay.joint_columns(v, a)[:, :-1, :]], axis=2)
    np.testing.assert_allclose(rows @ (held.E @ theta), tau, atol=1e-9)
    # Held data see every held-base parameter but the wrist's own terms (zero columns); on the
    # free base they leave directions no data can tell (the wrist's body from the one before).
    q, v, a = base_params.held_states(model, still, np.array([0.3]), seed=8)
    for base, blind in ((held, k), (free, None)):
        inertial = base.columns[base.columns < lay.n_inertial]
        x = np.concatenate([model.regressor_batch(q, v, a)[:, :-1, inertial],
                            lay.joint_columns(v, a)[:, :-1, :]], axis=2).reshape(-1, base.size)
        std = fit.covariance_diagonal(x.T @ x)
        if blind is None:
            assert np.isinf(std[:inertial.size]).sum() > 0
        else:
            assert np.isinf(std).sum() == blind and np.isinf(std[-blind:]).all()


def test_a_still_joint_is_held_in_the_base_only_where_it_stays():
    """Slow all the time: rows left out; held in the base only within HELD of its median."""
    model = RobotModel.from_urdf_file(robot_path('ur5'))
    lay = inertial_layout.layout(model)
    free = base_params.base_parameters(model, lay)
    t = np.arange(20000) / 1000.0
    q = np.zeros((t.size, 6))
    q[:, :4] = np.sin(t)[:, None]
    v = np.zeros_like(q)
    v[:, :4] = np.cos(t)[:, None]
    q[:, 4] = 0.3 + 0.01 * np.sin(t)  # still and staying: spread 0.02 rad
    v[:, 4] = 0.01 * np.cos(t)
    q[:, 5] = 0.03 * t  # still but creeping: 0.6 rad in 20 s at 0.03 rad/s
    v[:, 5] = 0.03
    data = Samples('bag', t, q, v, np.zeros_like(q), np.zeros_like(q))
    still = filtering.design([data], 0.01).still
    np.testing.assert_array_equal(still, [False] * 4 + [True] * 2)
    held, base = pipeline._held_base(model, lay, [data], still, free)
    assert held.tolist() == [False, False, False, False, True, False]
    assert base.size < free.size
    q[:, 4] = 0.3 + 0.1 * np.sin(t)  # spread 0.2 rad: not held, the free base kept
    data = Samples('bag', t, q, v, np.zeros_like(q), np.zeros_like(q))
    held, base = pipeline._held_base(model, lay, [data], still, free)
    assert not held.any() and base is free
