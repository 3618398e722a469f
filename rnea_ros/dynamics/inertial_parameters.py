"""
The inertial parameters of ``RobotModel``: read, replaced, a payload added, the regressor.

``RobotModel`` inherits these methods: phi (nb, 10) per body of ``body_names`` in Pinocchio's
order, models built with other parameters or a payload (the kernels are not recompiled), and
the joint-torque regressor Y with rnea = Y phi (the kernels: ``regressor.py``). They use the
model's packed arrays and argument checks (``checks.py``), like every method of the model.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rnea_ros.dynamics import checks, payload, regressor
from rnea_ros.errors import InputError

if TYPE_CHECKING:
    from rnea_ros.dynamics.model import RobotModel


class InertialParameterMethods:
    """``RobotModel``'s inertial parameters, payload and regressor (a base of ``RobotModel``)."""

    def inertial_parameters(self) -> np.ndarray:
        """
        Return phi (nb, 10): the inertial parameters of each body of ``body_names``.

        Per body, Pinocchio's order [m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]
        (kg, kg m, kg m^2): mass, first moment and rotational inertia about the body origin,
        in the body frame (the frame of its link), folded fixed-joint links included.
        """
        return regressor.inertial_parameters(self._tree)

    def with_inertial_parameters(self, phi) -> RobotModel:
        """
        Return a new model whose bodies have the parameters phi (nb, 10).

        phi as ``inertial_parameters`` returns it. The values are taken as given (finite, not
        checked for physical consistency: an identification may produce any), so that ``rnea``
        equals ``regressor(q, v, a) @ phi.reshape(-1)``.
        """
        nb = len(self.body_names)
        phi = checks.matrix(phi, regressor.N_PARAMETERS, 'phi', nb)
        finite = np.isfinite(phi)
        if not finite.all():
            body, column = np.argwhere(~finite)[0]
            raise InputError(f'phi[{body}, {column}] ({regressor.PARAMETERS[column]} of body '
                             f'{self.body_names[body]!r}) is {phi[body, column]}: values must '
                             'be finite')
        return type(self)(regressor.with_parameters(self._tree, phi), self._gravity)

    def with_payload(self, link: str, mass, com, inertia) -> RobotModel:
        """
        Return a new model with a payload rigidly fixed to ``link`` (``dynamics.payload``).

        ``mass`` [kg], ``com`` [m] in the link frame, ``inertia`` [kg m^2] about the com in the
        link frame as (ixx, ixy, ixz, iyy, iyz, izz). The payload's parameters are added to the
        body carrying the link (``with_inertial_parameters``: the kernels are not recompiled).
        ``InputError`` names a field non-finite, negative, inconsistent or beyond
        ``payload.MAX_RADIUS`` or ``MAX_MASS_RATIO``, or a link unknown or fixed to the world.
        """
        checked = payload.check_payload(payload.Payload(link, mass, com, inertia),
                                        robot_mass=payload.moving_mass(self._tree))
        block, transform = payload.payload_block(self._tree, link)
        phi = self.inertial_parameters()
        phi[block] += transform @ payload.link_parameters(checked)
        return self.with_inertial_parameters(phi)

    def regressor(self, q, v, a, gravity=None) -> np.ndarray:
        """
        Return Y (nv, 10 nb) with rnea(q, v, a, gravity=gravity) = Y @ phi.reshape(-1).

        phi as ``inertial_parameters``: column 10 b + k is parameter k of body b of
        ``body_names``. Computed from the packed model (see ``regressor.py``).
        """
        q, v, a = self._checked_state(q, v, a)
        return self.regressor_batch(q[None], v[None], a[None], gravity, threads=1)[0]

    def regressor_batch(self, Q, V, A, gravity=None, threads: int | None = None, out=None
                        ) -> np.ndarray:
        """
        Return Y for N samples: Q (N, nq), V (N, nv), A (N, nv) -> (N, nv, 10 nb).

        ``out``: a C-contiguous writeable float64 (N, nv, 10 nb) array to write into and return,
        so that long logs stream through a reused chunk. Threads as in ``rnea_batch``.
        """
        Q, V, A, g, chunks = self._batch_inputs(Q, V, A, gravity, threads)
        shape = (Q.shape[0], self.nv, regressor.N_PARAMETERS * len(self.body_names))
        if out is None:
            out = np.empty(shape)
        elif not (isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == shape
                  and out.flags.c_contiguous and out.flags.writeable):
            raise InputError(f'out: expected a C-contiguous writeable float64 array of shape '
                             f'{shape}')
        return self._regressor_into(Q, V, A, g, chunks, out)

    def _regressor_into(self, Q, V, A, g, chunks, out):
        # The table grows with the square of the depth (each body lists its ancestors' joints):
        # only identification needs it, so loading a model stays linear in memory.
        if self._regressor_table is None:
            self._regressor_table = regressor.pack_regressor(self._tree)
        status = np.zeros(Q.shape[0])
        if chunks == 1:
            regressor.regressor_serial(self._model, self._regressor_table, Q, V, A, g, out,
                                       status)
        else:
            regressor.regressor_batch(self._model, self._regressor_table, Q, V, A, g, out,
                                      status, chunks)
        if np.isnan(status).any():
            raise InputError(f'sample {int(np.argmax(np.isnan(status)))}: the regressor is not '
                             'finite (inputs too large?)')
        return out
