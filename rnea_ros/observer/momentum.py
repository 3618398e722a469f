"""
The generalized-momentum observer: external joint torques from the measured effort, no q''.

With p = M(q) v the generalized momentum, the rigid-body dynamics give

    dp/dt = tau_m + C^T(q, v) v - g(q) - tau_f + tau_ext = beta(q, v, tau_m) + tau_ext,

so the momentum that the measured effort tau_m does not explain is the external torque's
integral. The observer (De Luca et al. 2003) filters it to first order per joint,
dr/dt = K (tau_ext - r): r = K (p - p(0) - int (beta + r) dt).

Discretisation (``observer_step``), per sample k with dt = t_k - t_{k-1}:

    m_k = (p_k - p_{k-1}) / dt - (beta_k + beta_{k-1}) / 2
    r_k = exp(-K dt) r_{k-1} + (1 - exp(-K dt)) m_k

m_k is the external torque the momentum balance shows over the interval (the integral of beta
by the trapezoid rule: second order, so fast motion sampled at 100 Hz adds no lag bias), and the
first-order filter is integrated exactly for an input held over the interval. Why not Euler:
its r_k = (1 - K dt) r_{k-1} + ... overshoots for K dt > 1 and diverges for K dt > 2 (K = 50/s
on a 100 Hz bag with a dropped sample); the exact form is stable for every gain and every dt,
so stamp jitter and gaps need no special case, and a constant push gives r = tau_ext exactly.
Summed over the samples, the increments p_k - p_{k-1} telescope to p_k - p(0): the
observer's integral form, without keeping p(0).

One integration per sample with a newer stamp: a repeated or older stamp (the node's cycle
reusing a sample) returns the previous residual unchanged. ``measured_effort``: 'link_side'
(torque sensors after the gearbox: tau_m is the rigid-body torque) or 'motor' (from the motor
currents: tau_m also drives the actuation model's friction and armature). For 'motor' the actuation
model's friction tau_f(v) is subtracted in beta, and its armature is treated as part of the
mass matrix, p = (M(q) + diag(armature)) v: the armature torque armature * q'' is then inside
dp/dt and needs no acceleration (the armature is constant: it adds nothing to C^T v).
For both, tau_m is the measured torque of the actuation model, ``effort_gain`` times the measured
effort less ``effort_bias`` (the effort sensor's gain, e.g. N m per A of a motor current, and
bias, ``Actuation.corrected_effort``): a bias left in would show as a constant r.
The node and ``rnea_bag --observer`` use this one class: the same samples give the same r.
"""
from __future__ import annotations

import math

from numba import njit
import numpy as np

from rnea_ros.dynamics import checks
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.dynamics.coriolis import momentum_terms
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import InputError

MEASURED_EFFORTS = ('link_side', 'motor')
DEFAULT_GAIN = 50.0  # 1/s: a 20 ms time constant, within a 1 kHz cycle's noise budget
MIN_GAIN, MAX_GAIN = 0.1, 1000.0  # 1/s: a 10 s lag at most; a 1 ms one, a 1 kHz cycle's, at least


@njit(cache=True, error_model='numpy', inline='always')
def observer_step(model, work, q, v, effort, friction, armature, gain, dt, p, ctv, grav,
                  beta, p_prev, beta_prev, r):
    """
    One observer sample (module docstring): new p, beta; r updated unless ``dt`` is 0.

    ``dt`` 0 initialises: p_prev, beta_prev take this sample's values and r is left as it is.
    Raises ValueError (before any state changes) for a non-finite input.
    """
    poison = 0.0
    for k in range(effort.shape[0]):
        poison += effort[k] * 0.0 + friction[k] * 0.0
    if poison != 0.0 or effort.shape[0] != p.shape[0]:
        raise ValueError('observer: non-finite or wrongly sized effort')
    momentum_terms(model, work, q, v, p, ctv, grav)
    for k in range(p.shape[0]):
        p[k] += armature[k] * v[k]
        beta[k] = effort[k] - friction[k] + ctv[k] - grav[k]
    if dt > 0.0:
        decay = math.exp(-gain[0] * dt)
        for k in range(p.shape[0]):
            if k and gain[k] != gain[k - 1]:  # one exp for a run of equal gains
                decay = math.exp(-gain[k] * dt)
            measured = (p[k] - p_prev[k]) / dt - 0.5 * (beta[k] + beta_prev[k])
            r[k] = decay * r[k] + (1.0 - decay) * measured
    for k in range(p.shape[0]):
        p_prev[k] = p[k]
        beta_prev[k] = beta[k]


@njit(cache=True, error_model='numpy')
def observer_run(model, work, stamps, Q, V, E, F, armature, gain, last, p, ctv, grav, beta,
                 p_prev, beta_prev, r, R):
    """
    ``observer_step`` over samples in order, as ``MomentumObserver.update`` calls it.

    ``last``: a 1-array holding the last integrated stamp (NaN: none yet), updated. Writes each
    sample's residual into R. Returns the number of samples done (all, unless one raised).
    """
    for k in range(stamps.shape[0]):
        if math.isnan(last[0]):
            observer_step(model, work, Q[k], V[k], E[k], F[k], armature, gain, 0.0, p, ctv,
                          grav, beta, p_prev, beta_prev, r)
            for j in range(r.shape[0]):
                r[j] = 0.0
            last[0] = stamps[k]
        elif stamps[k] > last[0]:
            observer_step(model, work, Q[k], V[k], E[k], F[k], armature, gain,
                          stamps[k] - last[0], p, ctv, grav, beta, p_prev, beta_prev, r)
            last[0] = stamps[k]
        R[k] = r
    return stamps.shape[0]


class MomentumObserver:
    """
    External joint torques r (nv,) from joint states with measured effort (module docstring).

    ``gain``: K in 1/s, one number or one per v entry (default ``DEFAULT_GAIN`` in the tools);
    ``measured_effort``: 'link_side' or 'motor'; ``actuation``: its effort bias is taken out
    of the measured effort, and for 'motor' its friction and armature too (None: none). Stamps
    are in seconds. Not thread-safe (one workspace), like ``RobotModel``.
    """

    def __init__(self, model: RobotModel, gain, *, measured_effort: str = 'link_side',
                 actuation: Actuation | None = None):
        if measured_effort not in MEASURED_EFFORTS:
            raise InputError(f'measured_effort: expected one of {MEASURED_EFFORTS}, got '
                             f'{measured_effort!r}')
        self._nv = model.nv
        self._measured_effort = measured_effort
        self.gain = gain
        p, ctv, grav, beta, p_prev, beta_prev, r, friction, effort = np.zeros((9, model.nv))
        self._terms = (p, ctv, grav, beta, p_prev, beta_prev, r)
        self._r = r
        self._friction = friction
        self._effort = effort  # the measured effort less the bias, of the sample integrated
        self._last = np.full(1, np.nan)
        self._sample = None  # the last integrated (q, v, effort): set_model recomputes from it
        self._install(model, actuation)
        self._warm_up()

    def _warm_up(self) -> None:
        """Run the step once (it loads from the cache or compiles), then compile no more."""
        zeros = np.zeros(self._nv)
        observer_step(self._packed, self._work, self._model.neutral_configuration(), zeros,
                      zeros, zeros, self._armature, self._gain, 0.0, *self._terms)
        if hasattr(observer_step, 'disable_compile'):  # absent with NUMBA_DISABLE_JIT
            observer_step.disable_compile()

    def _install(self, model: RobotModel, actuation: Actuation | None) -> None:
        if model.nv != self._nv:
            raise InputError(f'model: expected {self._nv} velocities, got {model.nv}')
        if actuation is not None and len(actuation.joint_names) != model.nv:
            raise InputError(f'actuation: expected {model.nv} rows, got '
                             f'{len(actuation.joint_names)}')
        self._model = model
        self._packed = model.packed.model
        self._work = model.packed.new_workspace()
        self._given = actuation  # its effort bias applies to both measured efforts
        motor = self._measured_effort == 'motor' and actuation is not None
        self._actuation = actuation if motor else None
        self._armature = np.array(actuation.armature) if motor else np.zeros(model.nv)
        if self._actuation is None:
            self._friction[:] = 0.0

    # ------------------------------------------------------------------ parameters
    @property
    def gain(self) -> np.ndarray:
        """Return K (nv,) in 1/s; set one positive number or one per v entry."""
        return self._gain.copy()

    @gain.setter
    def gain(self, value) -> None:
        array = checks.real_array(value, 'observer_gain', 'a positive number (1/s) or '
                                  f'{self._nv} of them')
        if array.shape not in ((), (1,), (self._nv,)):
            raise InputError(f'observer_gain: expected a positive number (1/s) or {self._nv} '
                             f'of them, got shape {array.shape}')
        if not np.all(np.isfinite(array) & (array > 0)):
            raise InputError(f'observer_gain: expected finite positive values (1/s), got '
                             f'{array.tolist()}')
        self._gain = np.broadcast_to(array, (self._nv,)).astype(np.float64)

    @property
    def measured_effort(self) -> str:
        """Return 'link_side' or 'motor' (module docstring)."""
        return self._measured_effort

    @property
    def model(self) -> RobotModel:
        """Return the model the observer runs on."""
        return self._model

    def set_model(self, model: RobotModel, actuation: Actuation | None = None) -> None:
        """
        Run on ``model`` from the next sample on (a payload changed), keeping r.

        The last sample's momentum and beta are recomputed on the new model, so that the change
        of model is not taken for an external torque. ``actuation`` None keeps the current one.
        The new model must have the same joints (``InputError`` otherwise, the old one stays).
        """
        if model.joint_names != self._model.joint_names:
            raise InputError(f'model: expected the joints {list(self._model.joint_names)}, got '
                             f'{list(model.joint_names)}')
        self._install(model, self._given if actuation is None else actuation)
        if self._sample is not None:
            q, v, effort = self._sample
            p, ctv, grav, beta, p_prev, beta_prev, r = self._terms
            friction = self._friction_at(v)
            observer_step(self._packed, self._work, q, v, self._corrected(effort, self._effort),
                          friction, self._armature, self._gain, 0.0, p, ctv, grav, beta,
                          p_prev, beta_prev, r)

    # ------------------------------------------------------------------ samples
    @property
    def residual(self) -> np.ndarray:
        """Return the current r (nv,) [N m; N for prismatic joints]: zeros before two samples."""
        return self._r.copy()

    def reset(self) -> None:
        """Forget every sample: the next one initialises p(0) again."""
        self._last[0] = np.nan
        self._r[:] = 0.0
        self._sample = None

    def update(self, stamp: float, q, v, effort) -> np.ndarray:
        """
        Take one joint-state sample (stamp in s); return r (nv,).

        Integrates once for a stamp newer than the last one; a repeated or older stamp returns
        the previous r. The first sample initialises p(0) and returns zeros. Raises
        ``InputError`` naming a bad argument (then the state is unchanged).
        """
        stamp = float(stamp)
        if not math.isfinite(stamp):
            raise InputError(f'stamp: expected a finite time in seconds, got {stamp}')
        last = self._last[0]
        if not math.isnan(last) and stamp <= last:
            return self._r.copy()
        dt = 0.0 if math.isnan(last) else stamp - last
        try:
            # Fast path: float64 arrays straight to the kernel, which checks sizes and values
            # (it compiles nothing new: other argument types raise TypeError).
            self._step(q, v, effort, dt)
        except (TypeError, ValueError):
            q, v, effort = self._checked(q, v, effort)  # names a bad argument
            try:
                self._step(q, v, effort, dt)
            except ValueError:
                raise InputError('observer: the momentum terms are not finite (inputs too '
                                 'large?)') from None
        if math.isnan(last):
            self._r[:] = 0.0
        self._last[0] = stamp
        kept = self._sample  # the sample's arrays, copied into those of the last one
        if kept is None:
            self._sample = (q.copy(), v.copy(), effort.copy())
        else:
            kept[0][:], kept[1][:], kept[2][:] = q, v, effort
        return self._r.copy()

    def _step(self, q, v, effort, dt: float) -> None:
        friction = self._friction
        if self._actuation is not None:
            if not (isinstance(v, np.ndarray) and v.shape == friction.shape):
                raise TypeError('v: not an array of the right shape')
            self._actuation.friction_torques(v, out=friction)
        observer_step(self._packed, self._work, q, v, self._corrected(effort, self._effort),
                      friction, self._armature, self._gain, dt, *self._terms)

    def _corrected(self, effort, out=None):
        # The one subtraction of the sensor's bias, into ``out`` if given (a sample's: the
        # workspace; a wrong shape raises ValueError here).
        if self._given is None:
            return effort
        return self._given.corrected_effort(effort, out=out)

    def run(self, stamps, Q, V, efforts) -> np.ndarray:
        """
        ``update`` over N samples in order (offline): stamps (N,), Q (N, nq), V, efforts (N, nv).

        Returns R (N, nv), R[k] what ``update`` would return for sample k; continues from the
        current state, so a log can be fed in chunks. One jitted loop: the same arithmetic.
        """
        stamps = checks.real_array(stamps, 'stamps', 'real numbers of shape (N,)')
        if stamps.ndim != 1 or not np.all(np.isfinite(stamps)):
            raise InputError(f'stamps: expected finite times of shape (N,), got shape '
                             f'{stamps.shape}')
        n = stamps.shape[0]
        Q = checks.matrix(Q, self._model.nq, 'Q', n)
        V = checks.matrix(V, self._nv, 'V', n)
        E = checks.matrix(efforts, self._nv, 'efforts', n)
        checks.samples(self._model.joints, Q, V, V)
        if not np.all(np.isfinite(E)):
            row, column = np.argwhere(~np.isfinite(E))[0]
            raise InputError(f'efforts[{row}, {column}] is {E[row, column]}: values must be '
                             'finite')
        F = (self._actuation.friction_torques_batch(V) if self._actuation is not None
             else np.zeros_like(V))
        R = np.zeros((n, self._nv))
        try:
            observer_run(self._packed, self._work, stamps, Q, V, self._corrected(E), F,
                         self._armature, self._gain, self._last, *self._terms, R)
        except ValueError:
            raise InputError('observer: the momentum terms are not finite (inputs too large?)') \
                from None
        if n:
            self._sample = (Q[-1].copy(), V[-1].copy(), E[-1].copy())
        return R

    def _checked(self, q, v, effort):
        model = self._model
        q, v, _ = checks.state(model.joints, model.nq, model.nv, q, v, v)
        return q, v, checks.vector(effort, model.nv, 'effort')

    def _friction_at(self, v) -> np.ndarray:
        if self._actuation is not None:
            self._actuation.friction_torques(v, out=self._friction)
        return self._friction
