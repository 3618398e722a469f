"""
State prediction without ROS: the robot's state when a command computed now will act.

A controller out of the robot's process answers a joint_states sample (q, v at its stamp) with a
command the robot applies a delay later (the sample's transport, the cycle, the command's
transport and the robot's own tick). ``StatePredictor`` integrates the model from the sample's
(q, v) at its stamp to that time (stamp + command delay), with the torques the robot applies
meanwhile, so that a feedback law can act on the state its command will meet.

What it assumes, and its conventions:

- The robot applies each command from the time it was applied until the next one arrives, as
  ros2_control's effort controllers (``forward_command_controller`` on the ``effort``
  interface) hold the last command: a zero-order hold. The caller pushes each command with the
  time the robot applies it (``push_command``); the predictor keeps the last ``capacity`` of
  them in a ring buffer. Before the oldest command it holds, the oldest is taken as the one in
  force; with none, zero.
- The torque on the joints is that command, plus g(q) when the robot compensates gravity itself
  (``gravity_compensated_by_robot``: then the robot's g(q) is taken to be the model's, and the
  two cancel), and the motion obeys the model with the actuation model's armature and friction:
  (M(q) + diag(armature)) a + h(q, v) + friction(v) = command (+ g(q)), as
  ``RobotModel.forward_dynamics`` solves it. No contact, no external wrench.
- q, v in ``RobotModel``'s layout (a free-flyer's quaternion is integrated on the sphere: the
  rotation exp(w dt) on the right, w in the body frame); times in seconds on the caller's clock
  (the stamps' clock); torques in N m (N for prismatic joints), in ``joint_names`` order.
- Fixed substeps of at most ``substep`` seconds (default 1 ms), each segment between two command
  switches divided evenly, so a substep never straddles a switch. ``method='rk4'`` (default:
  4 forward dynamics per substep) or ``'euler'`` (semi-implicit: v += a dt, then q moves by the
  new v; one per substep); ``test/control/test_prediction.py`` measures both against a fine
  reference rollout.

The rollout is one numba kernel (compiled once, on the model's forward dynamics kernel) on
preallocated arrays: ``predict`` into given arrays allocates nothing per call. One predictor per
thread (its scratch is its own).
"""
from __future__ import annotations

import math

from numba import njit
import numpy as np

from rnea_ros.control.safety import all_finite
from rnea_ros.dynamics import aba
from rnea_ros.dynamics.joints import integrate_joint
from rnea_ros.dynamics.layout import BODY_WIDTH, H_GRAVITY, H_NB, H_NQ, H_NV, HEADER
from rnea_ros.dynamics.rnea import NO_LINKS, NO_POSES, NO_WRENCHES
from rnea_ros.dynamics.spatial import JIT, JIT_INLINE
from rnea_ros.errors import InputError

METHODS = ('rk4', 'euler')
DEFAULT_SUBSTEP = 1e-3  # s
DEFAULT_CAPACITY = 64  # commands kept
# Rows of the scratch array (each max(nq, nv) wide).
S_TAU, S_Q, S_V, S_A1, S_A2, S_A3, S_A4, S_V2, S_V3, S_V4, S_STEP = range(11)
SCRATCH_ROWS = 11


@njit(**JIT_INLINE)
def _integrate(state, q, w, dt, out):
    """Write q moved by the velocity w over dt into out, joint by joint (mimics follow)."""
    nb = int(state[H_NB])
    flags = HEADER + nb * BODY_WIDTH
    for i in range(nb):
        if state[flags + i] != 0.0:
            integrate_joint(state, HEADER + i * BODY_WIDTH, q, w, dt, out)


@njit(**JIT_INLINE)
def _command_in_force(times, count, head, t):
    """Return the ring index of the last command applied at or before t (the oldest if none)."""
    capacity = times.shape[0]
    for k in range(count - 1, 0, -1):
        index = (head + k) % capacity
        if times[index] <= t:
            return index
    return head


@njit(**JIT)
def rollout(state, terms, g, q0, v0, t0, t1, h_max, times, commands, count, head, rk4,
            scratch, q, v):
    """
    Integrate from (q0, v0) at t0 to t1 into (q, v); the commands held zero-order.

    ``times``/``commands``: the ring buffer (``count`` entries from ``head``); ``g``: the gravity
    the motion feels (zero when the robot compensates it). Raises ValueError for wrong sizes,
    non-finite inputs or a non-finite result.
    """
    nq, nv = int(state[H_NQ]), int(state[H_NV])
    if q0.shape[0] != nq or v0.shape[0] != nv or q.shape[0] != nq or v.shape[0] != nv:
        raise ValueError('predict: wrong argument size')
    if _poison(q0, v0) + t0 * 0.0 + t1 * 0.0 != 0.0:
        raise ValueError('predict: non-finite input')
    for k in range(nq):
        q[k] = q0[k]
    for k in range(nv):
        v[k] = v0[k]
    tau = scratch[S_TAU, :nv]
    capacity = times.shape[0]
    t = t0
    while t < t1:
        end = t1
        if count == 0:
            for k in range(nv):
                tau[k] = 0.0
        else:
            index = _command_in_force(times, count, head, t)
            for k in range(nv):
                tau[k] = commands[index, k]
            following = (index + 1) % capacity
            if (index - head) % capacity < count - 1 and times[following] < end:
                end = times[following]
        steps = max(1, int(math.ceil((end - t) / h_max - 1e-9)))
        h = (end - t) / steps
        for _ in range(steps):
            _step(state, terms, g, tau, h, rk4, scratch, q, v)
        t = end
    if _poison(q, v) != 0.0:
        raise ValueError('predict: non-finite result')


@njit(**JIT_INLINE)
def _poison(q, v):
    """Return 0.0 if every entry of q and v is finite, else NaN (x * 0 is NaN for NaN, inf)."""
    poison = 0.0
    for k in range(q.shape[0]):
        poison += q[k] * 0.0
    for k in range(v.shape[0]):
        poison += v[k] * 0.0
    return poison


@njit(**JIT_INLINE)
def _stage(state, terms, g, tau, q, v, previous_v, previous_a, dt, qs, stage_v, acceleration):
    """Run an RK4 stage: q_k = q (+) dt v_(k-1), v_k = v + dt a_(k-1), a_k = FD(q_k, v_k)."""
    _integrate(state, q, previous_v, dt, qs)
    for k in range(v.shape[0]):
        stage_v[k] = v[k] + dt * previous_a[k]
    aba.fd_core(state, qs, stage_v, tau, g, NO_LINKS, NO_POSES, NO_WRENCHES, terms,
                acceleration)


@njit(**JIT_INLINE)
def _step(state, terms, g, tau, h, rk4, scratch, q, v):
    """One substep of h seconds at the torque tau, in place on (q, v)."""
    nq, nv = q.shape[0], v.shape[0]
    a1 = scratch[S_A1, :nv]
    aba.fd_core(state, q, v, tau, g, NO_LINKS, NO_POSES, NO_WRENCHES, terms, a1)
    if not rk4:  # semi-implicit Euler: the new velocity moves q
        for k in range(nv):
            v[k] += h * a1[k]
        _integrate(state, q, v, h, q)
        return
    qs, vs, step = scratch[S_Q, :nq], scratch[S_V, :nv], scratch[S_STEP, :nv]
    a2, a3, a4 = scratch[S_A2, :nv], scratch[S_A3, :nv], scratch[S_A4, :nv]
    v2, v3, v4 = scratch[S_V2, :nv], scratch[S_V3, :nv], scratch[S_V4, :nv]
    _stage(state, terms, g, tau, q, v, v, a1, 0.5 * h, qs, v2, a2)
    _stage(state, terms, g, tau, q, v, v2, a2, 0.5 * h, qs, v3, a3)
    _stage(state, terms, g, tau, q, v, v3, a3, h, qs, v4, a4)
    for k in range(nv):
        step[k] = (v[k] + 2.0 * v2[k] + 2.0 * v3[k] + v4[k]) / 6.0
        vs[k] = v[k] + h * (a1[k] + 2.0 * a2[k] + 2.0 * a3[k] + a4[k]) / 6.0
    _integrate(state, q, step, h, q)
    for k in range(nv):
        v[k] = vs[k]


class StatePredictor:
    """
    The model integrated over a command delay from a joint_states sample (module docstring).

    ``model``: the ``RobotModel``; ``actuation``: its ``Actuation`` (armature and friction the
    joints feel; None: none); ``gravity_compensated_by_robot``: the robot adds g(q) to each
    command; ``substep`` (s, at most 1 ms by default; > 0); ``method``: 'rk4' or 'euler';
    ``capacity``: commands kept (the oldest dropped first).
    """

    def __init__(self, model, *, actuation=None, gravity_compensated_by_robot: bool = False,
                 substep: float = DEFAULT_SUBSTEP, method: str = 'rk4',
                 capacity: int = DEFAULT_CAPACITY):
        if method not in METHODS:
            raise InputError(f'method: expected one of {METHODS}, got {method!r}')
        if isinstance(substep, bool) or not isinstance(substep, (int, float)) \
                or not math.isfinite(substep) or substep <= 0.0:
            raise InputError(f'substep: expected a positive number of seconds, got {substep!r}')
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise InputError(f'capacity: expected a positive integer, got {capacity!r}')
        self._nq, self._nv = model.nq, model.nv
        self._state, self._terms = model.forward_dynamics_arrays(actuation)
        self._gravity = np.zeros(3) if gravity_compensated_by_robot else \
            self._state[H_GRAVITY:H_GRAVITY + 3].copy()
        self._substep = float(substep)
        self._rk4 = method == 'rk4'
        self._times = np.zeros(capacity)
        self._commands = np.zeros((capacity, model.nv))
        self._count = 0
        self._head = 0
        self._scratch = np.zeros((SCRATCH_ROWS, max(model.nq, model.nv)))
        self._q = np.zeros(model.nq)
        self._v = np.zeros(model.nv)
        # Compiled (or loaded) here, not on the control path.
        q = model.neutral_configuration()
        try:
            self.predict(q, self._v.copy(), 0.0, 0.0)
        except InputError:  # a model without a finite acceleration still compiles the kernel
            pass
        _command_in_force(self._times, 1, 0, 0.0)  # command_at's, called from Python

    @property
    def command_count(self) -> int:
        """Return how many commands the ring buffer holds."""
        return self._count

    def clear(self) -> None:
        """Forget every command (e.g. after the robot's controller was restarted)."""
        self._count = 0
        self._head = 0

    def push_command(self, time: float, command) -> None:
        """
        Record that the robot applies ``command`` (nv,) from ``time`` (s) on.

        Times must not decrease; a full buffer drops its oldest command. Raises ``InputError``
        naming ``time`` or ``command``.
        """
        if not (isinstance(time, (int, float)) and not isinstance(time, bool)
                and math.isfinite(time)):
            raise InputError(f'time: expected a finite number of seconds, got {time!r}')
        capacity = self._times.shape[0]
        if self._count and time < self._times[(self._head + self._count - 1) % capacity]:
            raise InputError(f"time: {time!r} is before the last command's "
                             f'{self._times[(self._head + self._count - 1) % capacity]!r}')
        if self._count == capacity:
            self._head = (self._head + 1) % capacity
            self._count -= 1
        index = (self._head + self._count) % capacity
        row = self._commands[index]
        try:
            row[:] = command
        except (TypeError, ValueError):
            raise InputError(f'command: expected {self._nv} real numbers, got '
                             f'{np.shape(command)}') from None
        if not all_finite(row):  # no temporary: push_command runs on the cycle path
            raise InputError('command: values must be finite')
        self._times[index] = time
        self._count += 1

    def command_at(self, time: float, out: np.ndarray) -> bool:
        """Write the command in force at ``time`` (s) into ``out`` (nv,); False: none known."""
        if self._count == 0 or time < self._times[self._head]:
            return False
        out[:] = self._commands[_command_in_force(self._times, self._count, self._head, time)]
        return True

    def use_model(self, arrays: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """
        Predict with another model of the same joints from now on; return the one replaced.

        ``arrays``: its ``RobotModel.forward_dynamics_arrays`` (no copy, no allocation).
        """
        previous = self._state, self._terms
        self._state, self._terms = arrays
        return previous

    def predict(self, q, v, stamp: float, target: float, out_q=None, out_v=None
                ) -> tuple[np.ndarray, np.ndarray]:
        """
        Return (q, v) at ``target`` (s) from the sample (q, v) measured at ``stamp`` (s).

        target >= stamp (target == stamp returns the sample). Into ``out_q`` (nq,) and
        ``out_v`` (nv,) float64 arrays if given (no allocation), else into arrays the predictor
        owns and overwrites at the next call. Raises ``InputError`` for a bad argument or a
        state that is not finite (the model diverged: inputs too large).
        """
        q_out = self._q if out_q is None else out_q
        v_out = self._v if out_v is None else out_v
        try:
            if not stamp <= target:
                raise InputError(f'target: expected a time at or after the stamp {stamp!r}, '
                                 f'got {target!r}')
            rollout(self._state, self._terms, self._gravity, q, v, float(stamp), float(target),
                    self._substep, self._times, self._commands, self._count, self._head,
                    self._rk4, self._scratch, q_out, v_out)
        except (TypeError, ValueError) as error:
            if isinstance(error, InputError):
                raise
            raise InputError(self._reason(q, v, stamp, target, q_out, v_out)) from None
        return q_out, v_out

    def _reason(self, q, v, stamp, target, q_out, v_out) -> str:
        """Name what ``rollout`` refused."""
        for name, value, size in (('q', q, self._nq), ('v', v, self._nv),
                                  ('out_q', q_out, self._nq), ('out_v', v_out, self._nv)):
            if not (isinstance(value, np.ndarray) and value.dtype == np.float64
                    and value.shape == (size,) and value.flags.c_contiguous):
                return f'{name}: expected a float64 array of shape ({size},)'
        for name, value in (('q', q), ('v', v), ('stamp', stamp), ('target', target)):
            if not np.isfinite(value).all():
                return f'{name}: values must be finite'
        return 'predict: the predicted state is not finite (inputs too large?)'


__all__ = ['StatePredictor', 'rollout']
