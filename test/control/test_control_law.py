"""The control laws without ROS: hand-computed torques, the damped rest, gravity left out."""
from __future__ import annotations

from dataclasses import replace
import math

from harness.oracle import robot_path
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.control.core import ControlCore
from rnea_ros.control.safety import JOINT_STATES_STALE
from rnea_ros.control.settings import Settings
from rnea_ros.control.trajectory import Trajectory

# A pendulum: one revolute joint about y, a point-like 2 kg at 0.5 m along x (its own inertia
# about y 0.01 kg m^2), gravity -z. Hand-computed: M = m l^2 + I = 0.51 kg m^2; the centre of
# mass at (l cos q, 0, -l sin q), so g(q) = dV/dq = -m g l cos q; C v = 0 (one joint).
MASS, LENGTH, IYY, G, LIMIT = 2.0, 0.5, 0.01, 9.81, 100.0
PENDULUM = f"""<robot name="pendulum">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="{LENGTH} 0 0"/><mass value="{MASS}"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="{IYY}" iyz="0" izz="0.01"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="{LIMIT}" velocity="5"/></joint>
</robot>"""
M = MASS * LENGTH ** 2 + IYY
TOL = 1e-9  # N m: hand-computed against the compiled RNEA (double precision, one joint)


def gravity(q: float) -> float:
    return -MASS * G * LENGTH * math.cos(q)


@pytest.fixture(scope='module')
def pendulum() -> RobotModel:
    return RobotModel.from_urdf_string(PENDULUM)


def make(model, **settings) -> ControlCore:
    return ControlCore(model, Settings(**settings).validate())


def point(names, q=None, v=None, a=None) -> Trajectory:
    return Trajectory.from_points(names, [(0, q or [], v or [], a or [])])


def run(core, q, v, now=1.0, desired=None, ros_time=0.0):
    core.on_joint_states(core.joint_names, [q], [v], [], now=now)
    if desired is not None:
        core.on_desired(desired, 0.0, now=now)
    assert core.cycle(now + 0.001, ros_time)
    return core.effort[0]


@pytest.mark.parametrize('law, expected', [
    # tau = M a_d + g(q) + Kp e + Kd e_dot
    ('pd_feedforward', lambda q, v, qd, vd, ad, kp, kd: M * ad + gravity(q) + kp * (qd - q)
     + kd * (vd - v)),
    # tau = M (a_d + Kp e + Kd e_dot) + g(q)
    ('computed_torque', lambda q, v, qd, vd, ad, kp, kd: M * (ad + kp * (qd - q) + kd * (vd - v))
     + gravity(q)),
])
def test_feedback_laws_match_the_hand_computed_torque(pendulum, law, expected):
    q, v, qd, vd, ad, kp, kd = 0.3, -0.4, 0.5, 0.2, 1.5, 30.0, 4.0
    core = make(pendulum, control_law=law, gains={'kp.hinge': kp, 'kd.hinge': kd})
    tau = run(core, q, v, desired=point(['hinge'], [qd], [vd], [ad]))
    assert tau == pytest.approx(expected(q, v, qd, vd, ad, kp, kd), abs=TOL)
    assert not core.torques.law.resting
    # Without velocities in the point, v_d = 0.
    tau = run(core, q, v, now=2.0, desired=point(['hinge'], [qd], None, [ad]))
    assert tau == pytest.approx(expected(q, v, qd, 0.0, ad, kp, kd), abs=TOL)


def test_feedforward_is_unchanged_by_gains(pendulum):
    core = make(pendulum, gains={'kp.hinge': 30.0, 'kd.hinge': 4.0})
    tau = run(core, 0.3, -0.4, desired=point(['hinge'], [0.5], [0.2], [1.5]))
    assert tau == pytest.approx(M * 1.5 + gravity(0.3), abs=TOL)


def test_live_gains_apply_from_the_next_cycle(pendulum):
    core = make(pendulum, control_law='pd_feedforward')
    desired = point(['hinge'], [0.5], [0.0], [0.0])
    assert run(core, 0.3, 0.0, desired=desired) == pytest.approx(gravity(0.3), abs=TOL)
    core.use(core.settings.updated({'kp.hinge': 10.0, 'kd.other_model_joint': 1.0},
                                   core.joint_names))
    assert run(core, 0.3, 0.0, now=2.0, desired=desired) == pytest.approx(
        gravity(0.3) + 10.0 * 0.2, abs=TOL)


@pytest.mark.parametrize('law, damping', [('pd_feedforward', 4.0),
                                          ('computed_torque', 4.0 * M)])
def test_a_stall_of_the_desired_motion_or_a_fault_publishes_the_damped_rest(
        pendulum, law, damping):
    q, v = 0.3, -0.4
    core = make(pendulum, control_law=law, gains={'kp.hinge': 30.0, 'kd.hinge': 4.0},
                acceleration_timeout=0.05, input_timeout=0.1)
    rest = gravity(q) - damping * v  # tau = g(q) - D v
    # No desired motion ever received: at rest, damped.
    assert run(core, q, v) == pytest.approx(rest, abs=TOL) and core.torques.law.resting
    # A desired motion, then silent beyond acceleration_timeout: the damped rest again.
    core.on_desired(point(['hinge'], [0.5], [0.0], [0.0]), 0.0, now=1.0)
    core.on_joint_states(['hinge'], [q], [v], [], now=1.2)
    assert core.cycle(1.2, 0.0) and core.fault.code is None
    assert core.effort[0] == pytest.approx(rest, abs=TOL)
    # A point without positions gives no target: the damped rest.
    assert run(core, q, v, now=2.0, desired=point(['hinge'], None, None, [1.0])) == \
        pytest.approx(rest, abs=TOL)
    # joint_states stale: the velocity is unknown, g(q) at the last position (not dropped),
    # whatever fault_output says.
    for fault_output in ('zero', 'none', 'hold_gravity'):
        core.use(replace(core.settings, fault_output=fault_output))
        assert core.cycle(3.0, 0.0) and core.fault.code == JOINT_STATES_STALE
        assert core.effort[0] == pytest.approx(gravity(q), abs=TOL)


def test_feedback_laws_are_refused_on_a_floating_base_or_the_desired_state():
    with pytest.raises(ValueError, match="parameter 'control_law' is 'pd_feedforward' but "
                                         'floating_base is true'):
        Settings(control_law='pd_feedforward', floating_base=True).validate()
    with pytest.raises(ValueError, match="parameter 'control_law' is 'computed_torque' but "
                                         "state_source is 'desired'"):
        Settings(control_law='computed_torque', state_source='desired').validate()
    with pytest.raises(ValueError, match="parameter 'gravity_compensated_by_robot' is true but "
                                         'floating_base is true'):
        Settings(gravity_compensated_by_robot=True, floating_base=True).validate()
    with pytest.raises(ValueError, match="parameter 'control_law' is 'pid': expected one of: "
                                         'feedforward, pd_feedforward, computed_torque'):
        Settings(control_law='pid').validate()


def test_gravity_compensated_by_the_robot_is_left_out_of_every_output(pendulum):
    q, v = 0.3, -0.4
    core = make(pendulum, gravity_compensated_by_robot=True)
    assert run(core, q, v, desired=point(['hinge'], None, None, [1.5])) == pytest.approx(
        M * 1.5, abs=TOL)
    assert core.command[0] == core.effort[0]
    # hold_gravity: the robot holds it; zero stays zero (not -g).
    for fault_output in ('hold_gravity', 'zero'):
        core.use(replace(core.settings, fault_output=fault_output))
        assert core.cycle(3.0, 0.0) and core.fault.code == JOINT_STATES_STALE
        assert core.effort[0] == 0.0
    # The damped rest of a feedback law: -D v.
    core = make(pendulum, gravity_compensated_by_robot=True, control_law='pd_feedforward',
                gains={'kd.hinge': 4.0})
    assert run(core, q, v) == pytest.approx(-4.0 * v, abs=TOL)
    # Clipped as a total torque: the robot's g(q) + the command stays within the limit.
    core = make(pendulum, gravity_compensated_by_robot=True)
    tau = run(core, 0.0, 0.0, desired=point(['hinge'], None, None, [-1000.0]))
    assert tau == pytest.approx(-LIMIT - gravity(0.0), abs=TOL)
    assert core.clipped_cycles == 1


def test_trajectory_efforts_leave_out_the_gravity_the_robot_adds(pendulum):
    core = make(pendulum, gravity_compensated_by_robot=True)
    core.on_joint_states(['hinge'], [0.0], [0.0], [], now=1.0)
    trajectory = Trajectory.from_points(['hinge'], [(0, [0.2], [0.0], [1.0]),
                                                    (1, [0.4], [0.0], [2.0])])
    efforts = core.trajectory_efforts(trajectory)
    np.testing.assert_allclose(efforts[:, 0], [M * 1.0, M * 2.0], atol=TOL)


def test_a_stalled_arm_comes_to_rest_damped():
    """
    The ur5 driven by pd_feedforward alone (its only torque), simulated here at 1 kHz.

    A swing of every joint, then the desired motion stops as every joint passes 0 at pi rad/s
    (its fastest): from acceleration_timeout on the torque is the damped rest, every joint is
    below 0.01 rad/s within 1 s of the stall (measured: 0.84 s) and has moved at most 0.65 rad
    from where it was at the stall (measured: 0.60 rad; about v M / D).
    docs/node/control_laws.md says it.
    """
    model = RobotModel.from_urdf_file(robot_path('ur5'))
    names = model.joint_names
    kp = [400.0, 400.0, 200.0, 50.0, 50.0, 10.0]
    kd = [40.0, 40.0, 20.0, 5.0, 5.0, 1.0]  # damping ratio ~1 on the ur5's inertia
    gains = {f'kp.{n}': k for n, k in zip(names, kp)}
    gains.update({f'kd.{n}': k for n, k in zip(names, kd)})
    core = make(model, control_law='pd_feedforward', gains=gains, acceleration_timeout=0.05)
    dt, q, v = 1e-3, np.zeros(6), np.zeros(6)
    stall, rest_time, max_drift = 1.0, 1.0, 0.65
    at_stall, rested = None, None
    for k in range(int((stall + 2 * rest_time) / dt)):
        t = k * dt
        core.on_joint_states(names, q, v, [], now=t)
        if t < stall:  # a swing of every joint, sent as single points each tick
            qd = 0.5 * np.sin(2 * np.pi * t) * np.ones(6)
            vd = np.pi * np.cos(2 * np.pi * t) * np.ones(6)
            ad = -2 * np.pi ** 2 * np.sin(2 * np.pi * t) * np.ones(6)
            core.on_desired(Trajectory.from_points(names, [(0, qd, vd, ad)]), t, now=t)
        elif at_stall is None:
            at_stall = q.copy()
        assert core.cycle(t, t)
        tau = core.effort.copy()
        a = np.linalg.solve(model.mass_matrix(q), tau - model.rnea(q, v, np.zeros(6)))
        v = v + dt * a  # semi-implicit Euler
        q = q + dt * v
        if at_stall is not None and rested is None and np.max(np.abs(v)) < 0.01:
            rested = t - stall
    assert rested is not None and rested < rest_time, (rested, v)
    assert np.max(np.abs(q - at_stall)) < max_drift, q - at_stall
    assert core.torques.law.resting and np.max(np.abs(v)) < 0.01


def trajectory(positions, duration=1.0) -> Trajectory:
    """Return a two-point trajectory of the hinge from ``positions[0]`` to ``positions[1]``."""
    return Trajectory.from_points(['hinge'], [(0.0, [positions[0]], [0.0], [0.0]),
                                              (duration, [positions[1]], [0.0], [0.0])])


@pytest.mark.parametrize('law', ['pd_feedforward', 'computed_torque'])
def test_a_step_back_of_the_ros_clock_rests_until_a_newer_desired_motion(pendulum, law):
    # A finished trajectory's age went negative at a step back of the ROS clock (a sim reset):
    # the trajectory was active again and its first point the reference, so pd_feedforward
    # published the effort limit for the whole step instead of the damped rest.
    q, v, kp, kd = 0.3, -0.4, 30.0, 4.0
    core = make(pendulum, control_law=law, gains={'kp.hinge': kp, 'kd.hinge': kd},
                acceleration_timeout=0.05)
    damping = kd if law == 'pd_feedforward' else kd * M
    rest = gravity(q) - damping * v
    core.on_desired(trajectory([-2.5, -2.0]), 100.0, now=1.0)  # far from q: a large torque
    assert run(core, q, v, now=1.0, ros_time=100.5) != pytest.approx(rest, abs=1.0)
    assert not core.torques.law.resting
    assert run(core, q, v, now=2.0, ros_time=102.0) == pytest.approx(rest, abs=TOL)  # finished
    for now, ros_time in ((3.0, 40.0), (4.0, 40.5), (5.0, 100.0)):  # stepped back, then on
        assert run(core, q, v, now=now, ros_time=ros_time) == pytest.approx(rest, abs=TOL)
        assert core.torques.law.resting and core.reference.held_back
    assert core.reference.clock_steps == 1
    level, message, values = core.status(5.001, 100.0)
    assert values['desired motion'].startswith('held back')
    assert values['ROS clock steps back under a trajectory'] == '1'
    assert message.startswith('desired motion taken before the last rest or ROS clock step')
    # A desired motion taken after the step is followed.
    assert run(core, q, v, now=6.0, desired=point(['hinge'], [0.5], [0.0], [0.0])) != \
        pytest.approx(rest, abs=1.0)
    assert not core.torques.law.resting and not core.reference.held_back


def test_a_step_back_of_the_ros_clock_mid_trajectory_rests_too(pendulum):
    q, v = 0.3, 0.0
    core = make(pendulum, control_law='pd_feedforward', gains={'kp.hinge': 30.0})
    core.on_desired(trajectory([0.3, 0.8], duration=10.0), 100.0, now=1.0)
    assert run(core, q, v, now=1.0, ros_time=105.0) == pytest.approx(
        gravity(q) + 30.0 * (0.55 - q), abs=1e-6)  # halfway: 0.55 (a quintic at rest)
    assert run(core, q, v, now=1.1, ros_time=99.0) == pytest.approx(gravity(q), abs=TOL)
    assert core.reference.clock_steps == 1 and core.torques.law.resting


@pytest.mark.parametrize('law', ['pd_feedforward', 'computed_torque'])
def test_after_a_fault_rest_only_a_newer_desired_motion_is_followed(pendulum, law):
    # A trajectory sent once moves on while the inputs stall: when they come back, tracking it
    # again would throw the arm towards where it went meanwhile.
    q, v, kd = 0.3, -0.4, 4.0
    core = make(pendulum, control_law=law, gains={'kp.hinge': 30.0, 'kd.hinge': kd},
                input_timeout=0.1)
    rest = gravity(q) - (kd if law == 'pd_feedforward' else kd * M) * v
    core.on_desired(trajectory([0.3, 2.0], duration=60.0), 0.0, now=1.0)
    assert run(core, q, v, now=1.0, ros_time=1.0) != pytest.approx(rest, abs=1e-3)
    assert core.cycle(3.0, 3.0) and core.fault.code == JOINT_STATES_STALE  # a stall
    # The inputs back, the trajectory still on: held back; the pose of the first state back
    # held by the stop's brake and hold (-2 v / T + (q_rest - q) / T^2, T collision_stop_time).
    hold = gravity(q) + M * (-2.0 * v / 0.1)
    for now in (4.0, 4.5):
        assert run(core, q, v, now=now, ros_time=now) == pytest.approx(hold, abs=TOL)
        assert core.fault.code is None and core.reference.held_back
    assert core.reference.clock_steps == 0
    tau = run(core, q, v, now=5.0, ros_time=5.0, desired=trajectory([0.3, 2.0], duration=60.0))
    assert tau != pytest.approx(rest, abs=1e-3) and not core.torques.law.resting


def test_no_desired_motion_is_held_back_under_the_feedforward_law(pendulum):
    # Only the feedback laws rest: after a fault the feed-forward term follows the desired
    # motion it had (the robot's own controller holds the arm meanwhile).
    core = make(pendulum, input_timeout=0.1, acceleration_timeout=10.0)
    assert run(core, 0.3, 0.0, desired=point(['hinge'], None, None, [1.5])) == pytest.approx(
        M * 1.5 + gravity(0.3), abs=TOL)
    assert core.cycle(3.0, 0.0) and core.fault.code == JOINT_STATES_STALE
    assert run(core, 0.3, 0.0, now=4.0) == pytest.approx(M * 1.5 + gravity(0.3), abs=TOL)
