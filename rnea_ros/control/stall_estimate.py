"""
A payload estimated online from the node's own closed loop, for the stall; no ROS.

``stall_payload_estimate`` names the link a payload the model lacks would be fixed to (a tool
flange). The cycle records, for each pair of consecutive joint_states samples (fixed base, at
most ``MAX_GAP`` apart), the mid-point (q, v), the velocity change over the gap (the
acceleration) and the command the robot held over it (``record``: into preallocated rows, no
allocation; only pairs the node answered on time: ``cycle_prediction.ON_TIME``). Off the
cycle (``fit``: the node's status timer, under its lock) a least-squares fit over the last
``WINDOW`` seconds of them solves

    command - ID(q, v, a) - armature a = Y_link(q, v, a) phi + coulomb sign(v) + viscous v

for the payload's 10 inertial parameters about the link origin, in the link frame (``phi``,
through ``RobotModel.regressor_batch`` and ``dynamics.payload.payload_block``) and, as nuisance
terms, per joint a Coulomb and a viscous friction (so that friction is not read as a payload;
they are not used). The estimate is a ``Payload``: its inertia about the centre of mass is
dropped (a point mass) when it is not physically consistent.

**The gate.** No estimate (``payload`` None, ``reason`` says why) from fewer than
``MIN_SAMPLES`` finite rows, an arm that never moved faster than ``MIN_SPEED``, a mass below
``MIN_MASS`` or with a standard error above ``MAX_RELATIVE_ERROR`` of it (the arm did not move
enough to tell), or one ``check_payload`` refuses: the blind hold of a top-heavy arm is so
sensitive that a spurious estimate of 1e-4 kg on the true model made its stall drift 0.047 ->
0.080 rad.

The estimate is used only while joint_states stall and in the hold after it (``cycle_torques``'s
stall brake, ``cycle_prediction``'s stall model), never by the laws or the prediction of a cycle
with fresh inputs.
"""
from __future__ import annotations

import math

import numpy as np

from rnea_ros.dynamics.payload import (check_payload, from_link_parameters, moving_mass,
                                       Payload, payload_block)
from rnea_ros.errors import InputError

WINDOW = 0.5  # s of samples fitted
CAPACITY = 1024  # samples kept (WINDOW at up to 2 kHz)
MAX_GAP = 0.02  # s: a longer gap between two samples gives no acceleration
MIN_SAMPLES = 100
MIN_SPEED = 0.1  # rad/s (m/s): the largest joint speed in the window, at least
MIN_MASS = 0.05  # kg: a smaller estimate is not used
MAX_RELATIVE_ERROR = 0.2  # the mass's standard error over the mass, at most
COULOMB_WIDTH = 0.01  # rad/s: sign(v) smoothed as tanh(v / COULOMB_WIDTH)


class StallEstimate:
    """The recorded samples and the last estimate of one model (module docstring)."""

    def __init__(self, model, armature, link: str):
        self.model, self.link = model, link
        self.armature = np.asarray(armature, dtype=np.float64)
        self.block, self.transform = payload_block(model.tree, link)  # InputError: bad link
        n = model.nv
        self._q, self._v = np.zeros((CAPACITY, n)), np.zeros((CAPACITY, n))
        self._a, self._tau = np.zeros((CAPACITY, n)), np.zeros((CAPACITY, n))
        self._time = np.zeros(CAPACITY)
        self._count = self._next = 0
        self.payload: Payload | None = None
        self.phi = np.zeros(10)  # the fitted parameters about the link origin (gated: zeros)
        self.reason = 'no fit yet'

    def record(self, q0, v0, t0: float, q1, v1, t1: float, tau) -> None:
        """Record the pair of samples (q0, v0) at t0, (q1, v1) at t1 and the command held."""
        dt = t1 - t0
        if not 0.0 < dt <= MAX_GAP:
            return
        k = self._next
        q, v, a = self._q[k], self._v[k], self._a[k]
        np.add(q0, q1, out=q)
        q *= 0.5
        np.add(v0, v1, out=v)
        v *= 0.5
        np.subtract(v1, v0, out=a)
        a *= 1.0 / dt
        self._tau[k] = tau
        self._time[k] = t1
        self._next = (k + 1) % CAPACITY
        self._count = min(self._count + 1, CAPACITY)

    def model_for(self, model):
        """
        Return ``model`` carrying the estimate (``model`` itself without one).

        The fitted parameters as they are, added to the body carrying the link, when that
        body's inertia about its centre of mass stays positive definite; else the estimate as
        a ``Payload`` (``with_payload``: a point mass when its own inertia is inconsistent).
        """
        if self.payload is None:
            return model
        phi = model.inertial_parameters()
        body = phi[self.block] + self.transform @ self.phi
        if _consistent(body):
            phi[self.block] = body
            return model.with_inertial_parameters(phi)
        payload = self.payload
        return model.with_payload(payload.link, payload.mass, payload.com, payload.inertia)

    def describe(self) -> str:
        """Say what the estimate is, or why there is none, for the diagnostics."""
        if self.payload is None:
            return f'none on {self.link!r}: {self.reason}'
        com = ', '.join(f'{x:.3g}' for x in self.payload.com)
        return f'{self.payload.mass:.3g} kg on {self.link!r}, com [{com}] m'

    def fit(self, samples: tuple | None = None) -> Payload | None:
        """
        Fit the last WINDOW s of samples; return (and keep) the estimate, None if gated.

        ``samples``: ``window()`` taken before (under the node's lock), else taken now.
        """
        samples = self.window() if samples is None else samples
        self.payload, self.reason = None, 'no fit yet'
        self.phi[:] = 0.0
        try:
            self.payload = self._fit(*samples)
        except (InputError, np.linalg.LinAlgError, ValueError) as error:
            self.reason = str(error)
        return self.payload

    def window(self) -> tuple:
        """Return (q, v, a, tau): the finite samples of the last WINDOW s, copied, oldest first."""
        order = (np.arange(self._count) + self._next - self._count) % CAPACITY
        latest = self._time[order[-1]] if self._count else 0.0
        order = order[self._time[order] >= latest - WINDOW]
        q, v, a, tau = self._q[order], self._v[order], self._a[order], self._tau[order]
        finite = (np.isfinite(q).all(1) & np.isfinite(v).all(1) & np.isfinite(a).all(1)
                  & np.isfinite(tau).all(1))
        return q[finite], v[finite], a[finite], tau[finite]

    def _fit(self, q, v, a, tau) -> Payload:
        samples, n = q.shape[0], self.model.nv
        if samples < MIN_SAMPLES:
            raise ValueError(f'{samples} finite samples in the window (at least {MIN_SAMPLES})')
        if np.abs(v).max() < MIN_SPEED:
            raise ValueError(f'the arm moved slower than {MIN_SPEED:g} rad/s in the window')
        residual = tau - self.model.rnea_batch(q, v, a, threads=1) - self.armature * a
        columns = self.model.regressor_batch(q, v, a, threads=1)
        inertial = columns[:, :, 10 * self.block:10 * self.block + 10] @ self.transform
        matrix = np.zeros((samples, n, 10 + 2 * n))
        matrix[:, :, :10] = inertial
        joints = np.arange(n)
        matrix[:, joints, 10 + joints] = np.tanh(v / COULOMB_WIDTH)
        matrix[:, joints, 10 + n + joints] = v
        matrix = matrix.reshape(samples * n, -1)
        residual = residual.reshape(-1)
        scale = np.linalg.norm(matrix, axis=0)
        if not (np.isfinite(scale).all() and np.isfinite(residual).all()):
            raise ValueError('the samples give a non-finite regressor')
        if scale[0] <= 0.0:
            raise ValueError('no excitation of the payload mass')
        scale[scale <= 0.0] = 1.0
        scaled = matrix / scale
        solution = np.linalg.lstsq(scaled, residual, rcond=1e-8)[0]
        phi = solution / scale
        error = residual - matrix @ phi
        dof = max(scaled.shape[0] - scaled.shape[1], 1)
        covariance = np.linalg.pinv(scaled.T @ scaled) * (error @ error / dof)
        mass, spread = float(phi[0]), math.sqrt(max(covariance[0, 0], 0.0)) / scale[0]
        if not mass >= MIN_MASS:
            raise ValueError(f'estimated mass {mass:.3g} kg below {MIN_MASS:g} kg')
        if spread > MAX_RELATIVE_ERROR * mass:
            raise ValueError(f'estimated mass {mass:.3g} +- {spread:.2g} kg: too uncertain')
        payload = from_link_parameters(self.link, phi[:10])
        self.phi[:] = phi[:10]
        robot = moving_mass(self.model.tree)
        try:
            return check_payload(payload, robot_mass=robot)
        except InputError:  # the inertia is the least known: a point mass at the centre
            return check_payload(Payload(self.link, payload.mass, payload.com, (0.0,) * 6),
                                 robot_mass=robot)


def _consistent(phi: np.ndarray) -> bool:
    """Return whether parameters about a body origin have mass > 0, inertia > 0 about the com."""
    mass = phi[0]
    if not mass > 0.0:
        return False
    c = phi[1:4] / mass
    about_origin = np.array([[phi[4], phi[5], phi[7]], [phi[5], phi[6], phi[8]],
                             [phi[7], phi[8], phi[9]]])
    about_com = about_origin - mass * (c @ c * np.eye(3) - np.outer(c, c))
    return bool(np.linalg.eigvalsh(about_com).min() > 0.0)
