"""
The forward dynamics of ``RobotModel``: joint accelerations from torques (``aba.py``).

``RobotModel`` inherits these methods. The equation solved, the frames and the mimic coupling:
``aba``'s docstring and ``forward_dynamics``'s; the argument rules are rnea's (``checks.py``).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from rnea_ros.dynamics import aba, checks
from rnea_ros.errors import InputError

_empty = np.empty


class ForwardDynamicsMethods:
    """``RobotModel``'s forward dynamics, single and batch (a base of it)."""

    _fd_state = None  # the ABA kernel's array, built on first use (``aba.new_fd_state``)
    _fd_actuation = None  # (Actuation, its packed joint terms) of the last call that gave one

    def forward_dynamics(self, q, v, tau, f_ext: Mapping | None = None, gravity=None, *,
                         actuation=None, out=None) -> np.ndarray:
        """
        Joint accelerations a, (nv,), by the Articulated-Body Algorithm (O(n)).

        Solves (M(q) + diag(armature)) a + h(q, v) - J^T f_ext + friction(v) = tau, where
        h(q, v) = rnea(q, v, 0) holds the Coriolis, centrifugal and gravity torques: the a for
        which ``rnea(q, v, a, f_ext, gravity) + armature * a + friction(v) = tau``. armature
        and friction(v) are those of ``actuation`` (an ``Actuation`` of this model: its
        ``armature_torques`` and ``friction_torques``), none without it. A floating base's
        rows tau[:6] are the wrench [force; torque] applied on the root body in its frame
        (zero for a robot nothing pushes but f_ext), and a[:6] the derivative of v[:6]
        (Pinocchio's ``aba``). Mimic joints are coupled as in ``rnea``.
        q (nq,), v (nv,), tau (nv,), f_ext and gravity as in ``rnea``. ``out``: a float64 array
        of shape (nv,) to write a into (no allocation); it may be q, v or tau. Raises
        ``InputError`` for a bad argument (naming it) and for an acceleration that is not
        finite (a joint that moves no mass and has no armature, or inputs too large).
        """
        terms = self._joint_terms(actuation)
        state = self._fd_state
        if f_ext is None and gravity is None and state is not None:
            # Fast path, as rnea's: any failure goes to the checked path, which names it.
            result = _empty(self._nv) if out is None else out
            try:
                aba.fd_default(state, q, v, tau, terms, result)
                return result
            except (TypeError, ValueError):
                pass
        return self._forward_dynamics_checked(q, v, tau, f_ext, gravity, terms, out)

    def _forward_dynamics_checked(self, q, v, tau, f_ext, gravity, terms, out) -> np.ndarray:
        state = self._forward_state()
        g = self._gravity if gravity is None else checks.vector(gravity, 3, 'gravity')
        wrenches = self._wrenches(f_ext)
        if out is not None and not (isinstance(out, np.ndarray) and out.dtype == np.float64
                                    and out.shape == (self.nv,) and out.flags.writeable):
            raise InputError(f'out: expected a writeable float64 array of shape ({self.nv},)')
        q, v, _ = self._checked_state(q, v, self._zeros_v)
        tau = checks.vector(tau, self.nv, 'tau')
        result = np.zeros(self.nv)  # not ``out``, which may be of another layout than C
        try:
            aba.fd_general(state, q, v, tau, g, self._link_body, self._link_pose, wrenches,
                           terms, result)
        except ValueError:
            raise InputError('forward_dynamics: the acceleration is not finite (a joint that '
                             'moves no mass and has no armature, or inputs too large?)') from None
        if out is None:
            return result
        out[:] = result
        return out

    def forward_dynamics_batch(self, Q, V, TAU, f_ext: Mapping | None = None, gravity=None, *,
                               actuation=None, threads: int | None = None) -> np.ndarray:
        """
        ``forward_dynamics`` for N samples: Q (N, nq), V (N, nv), TAU (N, nv) -> a (N, nv).

        f_ext: link name -> (N, 6) wrenches (or a 6-vector at every sample); threads as in
        ``rnea_batch``.
        """
        terms = self._joint_terms(actuation)
        state = self._forward_state()
        result = self._run_batch(aba.fd_batch_serial, aba.fd_batch, state, (terms,), Q, V, TAU,
                                 f_ext, gravity, threads, 'TAU')
        ok = np.isfinite(result).all(axis=1)
        if not ok.all():
            raise InputError(f'sample {int(np.argmin(ok))}: the acceleration is not finite (a '
                             'joint that moves no mass and has no armature, or inputs too '
                             'large?)')
        return result

    def forward_dynamics_arrays(self, actuation=None) -> tuple[np.ndarray, np.ndarray]:
        """
        Return (state, joint_terms) for a kernel that runs ``aba.fd_core`` itself.

        ``state``: a copy of the ABA kernel's array (the packed model, its mimic table and a
        workspace: one per thread); ``joint_terms``: ``actuation``'s armature and friction as
        the kernel reads them (``aba.pack_joint_terms``). Used by ``control.prediction``.
        """
        terms = self._joint_terms(actuation)
        return self._forward_state().copy(), terms.copy()

    def _forward_state(self) -> np.ndarray:
        if self._fd_state is None:
            self._fd_zero_terms = aba.pack_joint_terms(self.nv)
            state = aba.new_fd_state(self._model, self._tree)
            # Compiled (or loaded) once, for float64 C arrays only: a call with other types
            # then raises TypeError, and ``forward_dynamics`` converts the arguments instead.
            q, v = self.neutral_configuration(), self._zeros_v
            out = np.empty(self.nv)
            try:  # a model with a joint that moves no mass has no finite acceleration
                aba.fd_default(state, q, v, v, self._fd_zero_terms, out)
            except ValueError:
                pass
            for wrenches in (self._no_fext, np.zeros((len(self._link_body), 6))):
                try:
                    aba.fd_general(state, q, v, v, self._gravity, self._link_body,
                                   self._link_pose, wrenches, self._fd_zero_terms, out)
                except ValueError:
                    pass
            if hasattr(aba.fd_default, 'disable_compile'):  # absent with NUMBA_DISABLE_JIT
                aba.fd_default.disable_compile()
                aba.fd_general.disable_compile()
            self._fd_state = state
        return self._fd_state

    def _joint_terms(self, actuation) -> np.ndarray:
        """Return the packed armature and friction of ``actuation`` (cached by identity)."""
        if actuation is None:
            self._forward_state()
            return self._fd_zero_terms
        cached = self._fd_actuation
        if cached is not None and cached[0] is actuation:
            return cached[1]
        names = getattr(actuation, 'joint_names', None)
        expected = tuple(joint.name if joint.nv == 1 else '' for joint in self._tree.joints
                         for _ in range(joint.nv))
        if names != expected:
            raise InputError(f'actuation: expected an Actuation of this model (joints '
                             f'{[name for name in expected if name]}), got '
                             f'{type(actuation).__name__}'
                             + (f' of joints {[name for name in names if name]}'
                                if isinstance(names, tuple) else ''))
        terms = aba.pack_joint_terms(self.nv, actuation.armature, actuation.coulomb,
                                     actuation.viscous, actuation.offset,
                                     actuation.velocity_threshold,
                                     actuation.friction_model != 'none')
        self._fd_actuation = (actuation, terms)
        return terms
