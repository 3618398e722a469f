"""
Contact inverse dynamics (rnea_ros.contacts) against physics, Pinocchio and a second QP solver.

- Standing solo12 (4 point feet) and talos_reduced (2 soles) at rest: the ground carries the
  weight, mirror-symmetric problems give mirror-symmetric wrenches, and the torques equal
  Pinocchio's rnea with those wrenches as f_ext.
- Random feasible motions: base rows below 1e-9 (our RNEA and Pinocchio's), every wrench in
  its cone by an independent test (circular cone; a sole's wrench decomposed into corner
  forces), and the same QP solved by quadprog (Goldfarb-Idnani) gives the same wrenches.
- Infeasible motions are flagged, finite, and least-violating (quadprog again).
- The seeds' foot-shank: a ground reaction force at a centre of pressure, converted by
  ``ground_reaction_wrench``, and the joint reaction wrenches at ankle and knee equal the
  stacked Newton-Euler solution of seed 004 (helpers from test/harness/seeds.py).
"""
from __future__ import annotations

import math

from harness.oracle import Oracle, robot_path
from harness.seeds import (assert_close, foot_shank_urdf, KNEE_IN_WORLD_FIXED, OBLIQUE_GRAVITY,
                           oblique_leg_cases, plane_to_3d, PUSH_OFF, sagittal_floating_state,
                           sagittal_foot_wrench, SAGITTAL_LEG, sagittal_matrix_inverse_dynamics,
                           sagittal_rotation, SagittalFrame)
from harness.standing import contacts, SOLO_FEET, standing
import numpy as np
import pytest
import quadprog

from rnea_ros import InputError, RobotModel
from rnea_ros.contacts import Contact, ContactSolver, ground_reaction_wrench, RESIDUAL_WEIGHT
from rnea_ros.contacts.cones import contact_wrench_cone, friction_pyramid, tangent_frame

ROBOT_NAMES = ('solo12', 'talos_reduced')
BASE_TOLERANCE = 1e-9  # N and N m
CONE_TOLERANCE = 1e-7  # N
SOLVER_TOLERANCE = 1e-6  # N and N m, between DAQP and quadprog


@pytest.fixture(scope='module', params=ROBOT_NAMES)
def robot(request):
    """(name, model, solver, oracle, q standing)."""
    name = request.param
    model, q = standing(name)
    solver = ContactSolver(model, contacts(name))
    return name, model, solver, Oracle(model, robot_path(name), True), q


def total_mass(model: RobotModel, q) -> float:
    return float(model.mass_matrix(q)[0, 0])  # free-flyer: the linear block is m I


def rotation_z(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


# ------------------------------------------------------------------------------------------------
# Independent checks
# ------------------------------------------------------------------------------------------------
def corner_generators(mu: float, half_length: float, half_width: float) -> np.ndarray:
    """
    Return the (6, 16) wrenches of unit edge forces at the sole's corners.

    (6, 16): [f; moment about the sole centre] of unit edge forces (+-mu', +-mu', 1) of the
    friction pyramid (mu' = mu / sqrt 2) at each corner of the sole.
    """
    m = mu / math.sqrt(2.0)
    columns = []
    for corner in ((half_length, half_width, 0.0), (half_length, -half_width, 0.0),
                   (-half_length, half_width, 0.0), (-half_length, -half_width, 0.0)):
        for edge in ((m, m, 1.0), (m, -m, 1.0), (-m, m, 1.0), (-m, -m, 1.0)):
            columns.append(np.concatenate([edge, np.cross(corner, edge)]))
    return np.array(columns).T


def corner_decomposition_error(generators: np.ndarray, wrench: np.ndarray) -> float:
    """Return min |G lambda - w| over lambda >= 0 (quadprog, a whisker of regularisation)."""
    gram = generators.T @ generators
    hessian = gram + 1e-12 * np.trace(gram) * np.eye(len(gram))
    weights = quadprog.solve_qp(hessian, generators.T @ wrench, np.eye(len(gram)),
                                np.zeros(len(gram)))[0]
    return float(np.linalg.norm(generators @ weights - wrench))


def assert_in_cones(solver: ContactSolver, solution, tolerance: float = CONE_TOLERANCE):
    """
    Every wrench in its true friction cone, without the solver's constraint rows.

    Point: the world force has a normal component >= 0 and a tangential part within mu times
    it (the circular cone) and no moment about the contact point. Sole: the wrench about the
    sole centre is a sum of corner forces inside their pyramids.
    """
    for c, contact in enumerate(solver.contacts):
        force, moment = solution.wrenches[c, :3], solution.wrenches[c, 3:]
        offset = np.asarray(contact.position)
        if contact.kind == 'point':
            world = solution.world_wrenches[c, :3]
            normal = np.asarray(contact.normal) / np.linalg.norm(contact.normal)
            f_n = world @ normal
            assert f_n >= -tolerance, (contact.link, f_n)
            tangential = np.linalg.norm(world - f_n * normal)
            assert tangential <= contact.friction * f_n + tolerance, (contact.link, world)
            np.testing.assert_allclose(moment, np.cross(offset, force), atol=tolerance)
        else:
            about_centre = np.concatenate([force, moment - np.cross(offset, force)])
            generators = corner_generators(contact.friction, *contact.half_extents)
            error = corner_decomposition_error(generators, about_centre)
            assert error <= tolerance * max(1.0, np.linalg.norm(about_centre)), \
                (contact.link, about_centre, error)


def quadprog_solution(qp) -> np.ndarray:
    """Solve the same QP by quadprog: min 1/2 x^T H x s.t. A x = b, -C x >= 0."""
    constraints = np.hstack([qp.A.T, -qp.C.T])
    bounds = np.concatenate([qp.b, np.zeros(len(qp.C))])
    return quadprog.solve_qp(qp.H, np.zeros(len(qp.H)), constraints, bounds, meq=6)[0]


def quadprog_least_violation(qp) -> np.ndarray:
    """
    Solve the least-violation QP by quadprog, its slack eliminated.

    The least-violation QP with its slack eliminated: min 1/2 x^T H x
    + RESIDUAL_WEIGHT / 2 |A x - b|^2 s.t. C x <= 0.
    """
    hessian = qp.H + RESIDUAL_WEIGHT * qp.A.T @ qp.A
    return quadprog.solve_qp(hessian, RESIDUAL_WEIGHT * qp.A.T @ qp.b, -qp.C.T,
                             np.zeros(len(qp.C)))[0]


def check_solution(model, solver, oracle, q, v, a, solution, f_ext=None):
    """Check that base rows vanish, torques equal Pinocchio's and cones hold."""
    assert solution.feasible and solution.status == 'optimal'
    wrenches = solution.f_ext()
    for link, wrench in (f_ext or {}).items():
        wrenches[link] = wrenches.get(link, 0.0) + np.asarray(wrench)
    ours = model.rnea(q, v, a, f_ext=wrenches)
    pinocchio = oracle.rnea(q, v, a, f_ext=wrenches)
    assert np.max(np.abs(solution.residual)) < BASE_TOLERANCE
    assert np.max(np.abs(ours[:6])) < BASE_TOLERANCE
    assert np.max(np.abs(pinocchio[:6])) < BASE_TOLERANCE
    assert_close(solution.tau, ours)
    assert_close(solution.tau, pinocchio)
    assert_in_cones(solver, solution)


# ------------------------------------------------------------------------------------------------
# Constraint sets
# ------------------------------------------------------------------------------------------------
def test_contact_wrench_cone_is_the_cone_of_corner_forces():
    """
    The 16 closed-form rows describe exactly the wrenches of corner forces in pyramids.

    Sound: every sum of corner forces satisfies them. Tight: every row is a facet (it holds
    with equality on at least five independent generators). Complete: every wrench that
    satisfies them decomposes into corner forces.
    """
    rng = np.random.default_rng(11)
    mu, half_length, half_width = 0.8, 0.11, 0.07
    rows = contact_wrench_cone(mu, half_length, half_width)
    generators = corner_generators(mu, half_length, half_width)
    samples = generators @ rng.uniform(0.0, 1.0, (16, 2000))
    assert np.max(rows @ samples) <= 1e-12
    for row in rows:
        touching = generators[:, np.abs(row @ generators) < 1e-12]
        assert np.linalg.matrix_rank(touching) == 5
        assert np.max(row @ generators) <= 1e-12
    inside = 0
    for _ in range(3000):
        wrench = rng.normal(size=6) * [1.0, 1.0, 1.0, 0.1, 0.1, 0.05]
        wrench[2] = 3.0 * abs(wrench[2])
        if np.all(rows @ wrench <= 0.0):
            inside += 1
            assert corner_decomposition_error(generators, wrench) < 1e-6
    assert inside > 500


def test_friction_pyramid_is_inscribed_in_the_cone():
    """Its edges lie on the circular cone, so every accepted force is inside it."""
    mu = 0.6
    rows = friction_pyramid(mu)
    m = mu / math.sqrt(2.0)
    for edge in ((m, m, 1.0), (m, -m, 1.0), (-m, m, 1.0), (-m, -m, 1.0)):
        assert math.isclose(math.hypot(edge[0], edge[1]), mu)
        assert np.max(rows @ edge) <= 1e-15
    frame = tangent_frame((0.1, -0.2, 1.0))
    np.testing.assert_allclose(frame.T @ frame, np.eye(3), atol=1e-15)
    np.testing.assert_allclose(np.linalg.det(frame), 1.0)


# ------------------------------------------------------------------------------------------------
# Standing
# ------------------------------------------------------------------------------------------------
def test_standing_at_rest_carries_the_weight(robot):
    """
    At rest the contact forces sum to the weight, and nothing else.

    At rest the contact forces sum to the weight, and nothing else: no net horizontal
    force; the torques are Pinocchio's rnea with the contact wrenches as f_ext.
    """
    name, model, solver, oracle, q = robot
    v = a = np.zeros(model.nv)
    solution = solver.solve(q, v, a)
    check_solution(model, solver, oracle, q, v, a, solution)
    weight = total_mass(model, q) * 9.81
    np.testing.assert_allclose(solution.world_wrenches[:, :3].sum(axis=0), [0.0, 0.0, weight],
                               rtol=1e-12, atol=1e-9)
    assert np.all(solution.world_wrenches[:, 2] > 0.1 * weight / len(solver.contacts))
    centers = solution.centers_of_pressure
    np.testing.assert_allclose(centers[:, 2], 0.0, atol=1e-12)  # on the ground


def test_standing_solo12_is_symmetric():
    """
    Standing solo12 is symmetric about both vertical planes of the base.

    solo12's URDF and the X pose are symmetric about both vertical planes of the base:
    the four feet carry a quarter of the weight each, vertically (their links turn with the
    shanks, so in link frames the force leans, mirrored).
    """
    model, q = standing('solo12')
    solver = ContactSolver(model, contacts('solo12'))
    solution = solver.solve(q, np.zeros(model.nv), np.zeros(model.nv))
    quarter = total_mass(model, q) * 9.81 / 4
    expected = np.tile([0.0, 0.0, quarter, 0.0, 0.0, 0.0], (4, 1))
    np.testing.assert_allclose(solution.world_wrenches, expected, atol=1e-10)
    fl, fr, hl, hr = (solution.wrenches[solver.links.index(link)] for link in SOLO_FEET)
    np.testing.assert_allclose(fr, fl, atol=1e-10)
    np.testing.assert_allclose(hl, fl * [-1, 1, 1, 1, -1, 1], atol=1e-10)
    np.testing.assert_allclose(hr, hl, atol=1e-10)


def test_standing_talos_symmetric_problem_gives_mirrored_soles():
    """
    A mirror-symmetric problem has a mirror-symmetric solution (the QP is strictly convex).

    The soles of the symmetric pose are mirror images (checked), but Talos' mass is not quite:
    its centre of mass is ~1 mm off the mid-plane. At rest the contacts see the robot only
    through its weight wrench, so a measured moment on the base that cancels the weight's roll
    moment makes the problem symmetric; then left and right sole wrenches are mirror images:
    force (fx, -fy, fz), moment (-tx, ty, -tz), centres of pressure mirrored.
    """
    model, q = standing('talos_reduced')
    solver = ContactSolver(model, contacts('talos_reduced'))
    mirror = np.diag([1.0, -1.0, 1.0])
    rotations, positions = model.link_placements(q, solver.links)
    np.testing.assert_allclose(positions[1], mirror @ positions[0], atol=1e-12)
    np.testing.assert_allclose(rotations[1], mirror @ rotations[0] @ mirror, atol=1e-12)
    zeros = np.zeros(model.nv)
    weight_wrench = model.gravity_torques(q)[:6]  # root frame = world axes (level base)
    assert abs(weight_wrench[3]) > 1e-2  # the asymmetry is real
    base_moment = {'base_link': [0.0, 0.0, 0.0, weight_wrench[3], 0.0, 0.0]}
    solution = solver.solve(q, zeros, zeros, f_ext=base_moment)
    check_solution(model, solver, Oracle(model, robot_path('talos_reduced'), True), q, zeros,
                   zeros, solution, base_moment)
    left, right = solution.world_wrenches
    np.testing.assert_allclose(right, left * [1, -1, 1, -1, 1, -1], atol=1e-9)
    np.testing.assert_allclose(solution.centers_of_pressure[1],
                               mirror @ solution.centers_of_pressure[0], atol=1e-12)
    # Without the cancelling moment the left sole, nearer the centre of mass, carries more.
    plain = solver.solve(q, zeros, zeros)
    assert plain.world_wrenches[0, 2] > plain.world_wrenches[1, 2]


def test_sole_wrenches_do_not_depend_on_where_the_robot_stands():
    """
    Moving the robot on the ground changes no link-frame sole wrench.

    Turning the whole robot about the vertical and moving it on the ground changes no
    link-frame sole wrench (every sole constraint lives in the sole's frame).
    """
    model, q = standing('talos_reduced')
    solver = ContactSolver(model, contacts('talos_reduced'))
    zeros = np.zeros(model.nv)
    reference = solver.solve(q, zeros, zeros)
    moved = q.copy()
    moved[:3] += [1.5, -0.7, 0.0]
    moved[3:7] = [0.0, 0.0, math.sin(0.6), math.cos(0.6)]  # 1.2 rad about z
    moved[:2] = rotation_z(1.2)[:2, :2] @ moved[:2]
    solution = solver.solve(moved, zeros, zeros)
    np.testing.assert_allclose(solution.wrenches, reference.wrenches, atol=1e-9)


def test_contacts_away_from_the_link_origin(robot):
    """
    A contact away from the link origin is the same physical contact.

    A contact declared on the parent link, at the foot's (sole's) position in it, is the same
    physical contact: same world forces and torques; the link-frame wrench moves by the lever.
    (solo12: FL_FOOT is FL_LOWER_LEG's point (0, 0.008, -0.16); talos: the sole link sits
    0.107 m below leg_*_6_link.)
    """
    name, model, solver, oracle, q_standing = robot
    rng = np.random.default_rng(8)
    q, v, a = random_motion(rng, model, q_standing, 0.3)
    reference = solver.solve(q, v, a)
    moved = []
    for contact in solver.contacts:
        parent = {'FL_FOOT': 'FL_LOWER_LEG', 'left_sole_link': 'leg_left_6_link'}.get(
            contact.link)
        if parent is None:
            moved.append(contact)
            continue
        rotation, position = model.link_placement(q, parent)
        _, foot = model.link_placement(q, contact.link)
        offset = rotation.T @ (foot - position)
        moved.append(Contact(parent, contact.kind, contact.friction, position=offset,
                             half_extents=contact.half_extents))
        index = len(moved) - 1
    shifted = ContactSolver(model, moved).solve(q, v, a)
    assert shifted.feasible
    np.testing.assert_allclose(shifted.world_wrenches[:, :3], reference.world_wrenches[:, :3],
                               atol=1e-9)
    np.testing.assert_allclose(shifted.centers_of_pressure, reference.centers_of_pressure,
                               atol=1e-12)
    assert_close(shifted.tau, reference.tau)
    wrench = shifted.wrenches[index]
    force_world = rotation @ wrench[:3]
    moment_at_foot = rotation @ wrench[3:] - np.cross(foot - position, force_world)
    np.testing.assert_allclose(moment_at_foot, reference.world_wrenches[index, 3:], atol=1e-9)


# ------------------------------------------------------------------------------------------------
# Random motions
# ------------------------------------------------------------------------------------------------
def random_motion(rng, model, q_standing, scale: float):
    """Return a state near standing: joints and base tilt perturbed, random v and a."""
    q = q_standing.copy()
    q[7:] += rng.uniform(-0.05, 0.05, model.nq - 7)
    axis = rng.normal(size=3)
    angle = rng.uniform(0.0, 0.1)
    q[3:6] = math.sin(angle / 2) * axis / np.linalg.norm(axis)
    q[6] = math.cos(angle / 2)
    return q, scale * rng.normal(size=model.nv), scale * rng.normal(size=model.nv)


def test_random_feasible_motions(robot):
    """
    Brisk random motions satisfy the base rows and cones, as quadprog agrees.

    Brisk random motions (some with a foot or sole edge unloaded, i.e. active inequality
    constraints): base rows below 1e-9, every wrench in its cone, and quadprog on the same
    QP finds the same wrenches.
    """
    name, model, solver, oracle, q_standing = robot
    rng = np.random.default_rng(4 if name == 'solo12' else 5)
    # Talos' soles bound the base moments tightly: gentler motions keep most samples feasible.
    scale = 1.5 if name == 'solo12' else 0.5
    feasible = active = 0
    for _ in range(40):
        q, v, a = random_motion(rng, model, q_standing, scale)
        solution = solver.solve(q, v, a)
        qp = solver.problem(q, v, a)
        if not solution.feasible:  # too brisk for the contacts: flagged, still sound
            assert solution.status == 'least_violation' and solution.residual_norm > 1e-6
            assert np.all(np.isfinite(solution.tau))
            assert_in_cones(solver, solution)
            continue
        feasible += 1
        check_solution(model, solver, oracle, q, v, a, solution)
        x = quadprog_solution(qp)
        np.testing.assert_allclose(qp.wrenches(x), solution.wrenches, rtol=0,
                                   atol=SOLVER_TOLERANCE)
        active += np.any(np.abs(qp.C @ x) < 1e-9 * max(1.0, np.max(np.abs(x))))
    assert feasible >= 20
    assert active >= 5


def test_equality_rows_are_the_rnea_columns(robot):
    """
    Column j of A is the base wrench that unit unknown j produces.

    Column j of A is the base wrench that unit unknown j produces, from RNEA itself:
    -external_torques(q, wrench)[:6] (root frame) turned into world axes.
    """
    name, model, solver, oracle, q_standing = robot
    rng = np.random.default_rng(7)
    q, v, a = random_motion(rng, model, q_standing, 1.0)
    qp = solver.problem(q, v, a)
    root_rotation, _ = model.link_placement(q, 'base_link')  # both robots' root link
    for j in range(solver.n_variables):
        unit = np.zeros(solver.n_variables)
        unit[j] = 1.0
        base = -model.external_torques(q, dict(zip(solver.links, qp.wrenches(unit))))[:6]
        column = np.concatenate([root_rotation @ base[:3], root_rotation @ base[3:]])
        np.testing.assert_allclose(qp.A[:, j], column, atol=1e-12)
    tau = model.rnea(q, v, a)
    np.testing.assert_allclose(qp.b, np.concatenate([root_rotation @ tau[:3],
                                                     root_rotation @ tau[3:6]]), atol=1e-9)


def test_measured_wrenches_are_included(robot):
    """
    A measured wrench enters the dynamics; the contacts balance the rest.

    A measured wrench (a hand pushed sideways; for solo12 a force plate under one foot)
    enters the dynamics; the contacts balance the rest.
    """
    name, model, solver, oracle, q = robot
    zeros = np.zeros(model.nv)
    if name == 'solo12':
        measured = {'FL_FOOT': ground_reaction_wrench(model, q, 'FL_FOOT', [0.5, 0.0, 4.0],
                                                      model.link_placement(q, 'FL_FOOT')[1])}
    else:
        measured = {'arm_left_7_link': [10.0, -20.0, 5.0, 0.5, 0.0, 0.2]}
    solution = solver.solve(q, zeros, zeros, f_ext=measured)
    check_solution(model, solver, oracle, q, zeros, zeros, solution, measured)
    plain = solver.solve(q, zeros, zeros)
    assert not np.allclose(solution.wrenches, plain.wrenches)


# ------------------------------------------------------------------------------------------------
# Infeasible motions
# ------------------------------------------------------------------------------------------------
def test_falling_faster_than_gravity_is_flagged():
    """
    Falling faster than gravity while the feet touch the ground is flagged.

    Base accelerating downwards at 2 g while the feet touch the ground: the ground would
    have to pull. Flagged; the least-violating wrenches are zero; the residual is the whole
    unbalanced base wrench, m (a - g) downwards; everything finite.
    """
    model, q = standing('solo12')
    solver = ContactSolver(model, contacts('solo12'))
    a = np.zeros(model.nv)
    a[2] = -2 * 9.81
    solution = solver.solve(q, np.zeros(model.nv), a)
    assert not solution.feasible and solution.status == 'least_violation'
    assert np.all(np.isfinite(solution.tau)) and np.all(np.isfinite(solution.wrenches))
    np.testing.assert_allclose(solution.wrenches, 0.0, atol=1e-9)
    mass = total_mass(model, q)
    np.testing.assert_allclose(solution.residual, [0, 0, -mass * 9.81, 0, 0, 0], atol=1e-9)
    assert math.isclose(solution.residual_norm, mass * 9.81)
    assert np.all(np.isfinite(solution.centers_of_pressure))  # point contacts: the points
    # The next feasible call is solved exactly again.
    again = solver.solve(q, np.zeros(model.nv), np.zeros(model.nv))
    assert again.feasible and np.max(np.abs(again.residual)) < BASE_TOLERANCE


def test_sliding_beyond_friction_is_flagged_and_least_violating():
    """
    Talos accelerating sideways at 1 g with mu = 0.7: friction cannot supply it.

    The result is flagged, finite, inside the cones, and equals the least-violation QP solved
    by quadprog; its residual is far smaller than with no contact wrench at all.
    """
    model, q = standing('talos_reduced')
    solver = ContactSolver(model, contacts('talos_reduced'))
    a = np.zeros(model.nv)
    a[1] = 9.81
    solution = solver.solve(q, np.zeros(model.nv), a)
    assert not solution.feasible and solution.status == 'least_violation'
    assert np.all(np.isfinite(solution.tau))
    assert_in_cones(solver, solution)
    qp = solver.problem(q, np.zeros(model.nv), a)
    expected = qp.wrenches(quadprog_least_violation(qp))
    np.testing.assert_allclose(solution.wrenches, expected, atol=1e-6 * np.max(np.abs(expected)))
    unbalanced = np.linalg.norm(model.rnea(q, np.zeros(model.nv), a)[:6])
    assert 1.0 < solution.residual_norm < 0.6 * unbalanced
    # Friction saturated on every loaded sole: |fy| = mu / sqrt(2) fz.
    np.testing.assert_allclose(np.abs(solution.wrenches[:, 1]),
                               0.7 / math.sqrt(2) * solution.wrenches[:, 2], rtol=1e-6,
                               atol=1e-9)
    assert np.max(solution.wrenches[:, 2]) > 0.5 * total_mass(model, q) * 9.81


class FailingQP:
    """Stands in for a DAQP workspace whose every solve fails (exit flag -4: iteration limit)."""

    def update(self, **data):
        return 0

    def solve(self):
        return np.full(3, np.nan), np.nan, -4, {}


def test_solver_failure_is_flagged_not_hidden():
    """
    A solver failure is flagged, not hidden.

    If both QPs fail, the result says so: status 'failed', zero contact wrenches, finite
    torques (those without contacts), and the whole base wrench as the residual.
    """
    model, q = standing('solo12')
    solver = ContactSolver(model, contacts('solo12'))
    solver._qp = solver._qp2 = FailingQP()
    zeros = np.zeros(model.nv)
    solution = solver.solve(q, zeros, zeros)
    assert not solution.feasible and solution.status == 'failed'
    np.testing.assert_array_equal(solution.wrenches, 0.0)
    np.testing.assert_allclose(solution.tau, model.rnea(q, zeros, zeros), atol=1e-12)
    assert solution.residual_norm > 1.0


# ------------------------------------------------------------------------------------------------
# Seed 004: ground reaction force at a centre of pressure, joint reaction wrenches
# ------------------------------------------------------------------------------------------------
def test_ground_reaction_wrench_is_the_seed_foot_wrench():
    """GRF at the COP (world) -> the foot's f_ext, as test_seeds builds it by hand."""
    model = RobotModel.from_urdf_string(foot_shank_urdf(SAGITTAL_LEG, fixed_knee=False),
                                        floating_base=True)
    q, _, _ = sagittal_floating_state(PUSH_OFF)
    wrench = ground_reaction_wrench(model, q, 'foot', plane_to_3d(PUSH_OFF.grf),
                                    plane_to_3d(PUSH_OFF.cop))
    assert_close(wrench, sagittal_foot_wrench(PUSH_OFF))
    with pytest.raises(InputError, match='center_of_pressure'):
        ground_reaction_wrench(model, q, 'foot', [0, 0, 1], [0, np.nan, 0])


def test_foot_shank_joint_reactions_sagittal_seed_004():
    """
    Sagittal foot-shank joint reactions equal seed 004's stacked system.

    Floating shank: the ankle and knee reactions equal the 6x6 stacked system's F_A, M_A,
    F_K, M_K (moments about -y), in the foot and shank frames.
    """
    model = RobotModel.from_urdf_string(foot_shank_urdf(SAGITTAL_LEG, fixed_knee=False),
                                        floating_base=True)
    for frame in (PUSH_OFF, SagittalFrame(knee=(0.1, 0.45), knee_vel=(-0.4, 0.2),
                                          knee_acc=(3.0, -1.0), shank=(0.2, 1.5, -6.0),
                                          ankle=(-0.1, 2.0, 12.0), grf=(-60.0, 640.0),
                                          cop=(0.0, 0.0))):
        unknowns, _ = sagittal_matrix_inverse_dynamics(frame)
        q, v, a = sagittal_floating_state(frame)
        grf = ground_reaction_wrench(model, q, 'foot', plane_to_3d(frame.grf),
                                     plane_to_3d(frame.cop))
        reactions = model.joint_reaction_wrenches(q, v, a, f_ext={'foot': grf})
        foot_rotation = sagittal_rotation(frame.shank[0] + frame.ankle[0])
        shank_rotation = sagittal_rotation(frame.shank[0])
        assert_close(reactions['ankle'], np.concatenate([
            foot_rotation.T @ plane_to_3d(unknowns[0:2]), [0.0, -unknowns[2], 0.0]]))
        assert_close(reactions['root_joint'], np.concatenate([
            shank_rotation.T @ plane_to_3d(unknowns[3:5]), [0.0, -unknowns[5], 0.0]]))


def test_foot_shank_joint_reactions_fixed_knee_seed_004():
    """Fixed thigh: the knee is a revolute joint, its reaction the stacked system's F_K, M_K."""
    model = RobotModel.from_urdf_string(foot_shank_urdf(SAGITTAL_LEG, fixed_knee=True))
    frame = SagittalFrame(knee=tuple(KNEE_IN_WORLD_FIXED[[0, 2]]), knee_vel=(0.0, 0.0),
                          knee_acc=(0.0, 0.0), shank=(-0.3, -2.5, 8.0),
                          ankle=(0.2, -4.0, -30.0), grf=(150.0, 750.0), cop=(0.02, 0.0))
    unknowns, _ = sagittal_matrix_inverse_dynamics(frame)
    q, v, a = np.transpose([frame.shank, frame.ankle])
    grf = ground_reaction_wrench(model, q, 'foot', plane_to_3d(frame.grf),
                                 plane_to_3d(frame.cop))
    reactions = model.joint_reaction_wrenches(q, v, a, f_ext={'foot': grf})
    shank_rotation = sagittal_rotation(frame.shank[0])
    foot_rotation = sagittal_rotation(frame.shank[0] + frame.ankle[0])
    assert_close(reactions['knee'], np.concatenate([
        shank_rotation.T @ plane_to_3d(unknowns[3:5]), [0.0, -unknowns[5], 0.0]]))
    assert_close(reactions['ankle'], np.concatenate([
        foot_rotation.T @ plane_to_3d(unknowns[0:2]), [0.0, -unknowns[2], 0.0]]))


def test_foot_shank_joint_reactions_3d_seed_004():
    """
    3-D foot-shank joint reactions equal seed 004's 12x12 system.

    Seed 004's 12x12 system in 3-D (oblique ankle, tilted gravity): the ankle reaction is
    [R_F^T F_A; M_A^F], the knee's [R_S^T F_K; M_K^S], all six components each.
    """
    for model, state, unknowns, q, v, a in oblique_leg_cases(40, 5):
        grf = ground_reaction_wrench(model, q, 'foot', state['grf'], state['cop'])
        reactions = model.joint_reaction_wrenches(q, v, a, f_ext={'foot': grf},
                                                  gravity=OBLIQUE_GRAVITY)
        assert_close(reactions['ankle'], np.concatenate([state['rot_f'].T @ unknowns[0:3],
                                                         unknowns[3:6]]))
        assert_close(reactions['root_joint'], np.concatenate([state['rot_s'].T @ unknowns[6:9],
                                                              unknowns[9:12]]))


# ------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------
def test_bad_contacts_and_inputs_are_refused():
    model, q = standing('solo12')
    with pytest.raises(InputError, match='floating base'):
        ContactSolver(RobotModel.from_urdf_file(robot_path('solo12')), ['FL_FOOT'])
    with pytest.raises(InputError, match="'NO_FOOT': unknown link"):
        ContactSolver(model, ['NO_FOOT'])
    with pytest.raises(InputError, match='at least one contact'):
        ContactSolver(model, [])
    with pytest.raises(InputError, match='half_extents'):
        Contact('FL_FOOT', 'surface')
    with pytest.raises(InputError, match='friction must be'):
        Contact('FL_FOOT', friction=-0.5)
    with pytest.raises(InputError, match='kind'):
        Contact('FL_FOOT', 'line')
    with pytest.raises(InputError, match='normal is zero'):
        Contact('FL_FOOT', normal=(0, 0, 0))
    solver = ContactSolver(model, SOLO_FEET)
    zeros = np.zeros(model.nv)
    with pytest.raises(InputError, match='q'):
        solver.solve(q[:-1], zeros, zeros)
    bad = q.copy()
    bad[9] = np.nan
    with pytest.raises(InputError, match='q'):
        solver.solve(bad, zeros, zeros)
    with pytest.raises(InputError, match='unknown link'):
        solver.solve(q, zeros, zeros, f_ext={'nowhere': np.zeros(6)})
    with pytest.raises(InputError, match='f_ext'):
        solver.solve(q, zeros, zeros, f_ext={'FL_FOOT': [0, 0, np.inf, 0, 0, 0]})
    assert solver.solve(q, zeros, zeros).feasible  # still works after the errors
