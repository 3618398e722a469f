"""
The actuation model: each joint's friction, armature and effort sensor's gain and bias.

These are the terms of a joint's drive that the URDF has no room for (the URDF's joints are the
kinematics: ``rnea_ros.dynamics.joints``).

The torque a joint's actuator must give is the rigid-body torque plus

    tau_joint = armature * a + coulomb * tanh(v / velocity_threshold) + viscous * v + offset

per revolute, continuous or prismatic joint (friction model ``'coulomb-viscous-offset'``;
``'none'`` switches friction off, the armature stays):

- ``coulomb`` (N m; N for a prismatic joint): dry friction, opposing the motion;
- ``viscous`` (N m s/rad; N s/m): friction proportional to the velocity;
- ``offset`` (N m; N): a constant torque the joint feels, e.g. an unmodelled spring;
- ``armature`` (kg m^2; kg): the rotor inertia reflected through the gearbox (I_rotor times the
  gear ratio squared). It adds to the diagonal of the mass matrix and dominates geared joints
  whose torque is measured from the motor currents.

The Coulomb term uses tanh(v / velocity_threshold), a smooth sign. A true sign jumps between
+-coulomb on the velocity noise of a joint at rest (a filtered encoder velocity at 1 kHz is noisy
to about 1e-3 rad/s): in a feed-forward that is torque chatter, and in a fit it is noise. With
the default threshold ``DEFAULT_VELOCITY_THRESHOLD`` = 0.01 rad/s (m/s), ten times that noise,
the sign is linear through the noise band yet complete (tanh(3) = 0.995) from 0.03 rad/s on,
far below the speeds of a moving robot; static friction (stiction) is not modelled.

``effort_bias`` (N m; N; any sign) is not a torque: it is the zero error of the effort sensor
(a torque sensor's bias, a current sensor's offset), which the measured effort carries and the
joint does not feel. It never enters the torques computed here (the node's feed-forward,
``rnea_bag``'s predictions); it is taken out where a measured effort is read, by
``corrected_effort``: the momentum observer (the node's and ``rnea_bag --observer``) and
``rnea_bag``'s residuals.

``effort_gain`` (N m, or N, per unit of the effort; default 1; from ``MIN_EFFORT_GAIN`` to
``MAX_EFFORT_GAIN``) is the sensor's scale: an arm that reports motor current (UR, xArm, many
drives) reports effort in A, and the torque is the current times the motor's torque constant
and the gear ratio. The measured torque is

    measured torque = effort_gain * effort - effort_bias

(``effort_bias`` in N m, N: the bias of the torque so measured). Like the bias it never enters
a computed torque.

An ``Actuation`` holds one value per entry of v (the model's order), zero for the rows of
floating and planar joints, which take none of these terms. As ROS parameters (a node
parameters file, read and written by ``rnea_ros.params.actuation_file``; PyYAML is imported
there only: the dynamics need numpy and numba alone): ``friction.<joint>.coulomb``,
``friction.<joint>.viscous``, ``friction.<joint>.offset``, ``armature.<joint>``,
``effort_bias.<joint>``, ``effort_gain.<joint>``, ``friction_velocity_threshold`` and
``friction_model``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
import math

import numpy as np

from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import InputError
from rnea_ros.files import brief, finite_number

FRICTION_MODELS = ('coulomb-viscous-offset', 'none')
DEFAULT_VELOCITY_THRESHOLD = 0.01  # rad/s (m/s for prismatic joints): see the module docstring
FRICTION_FIELDS = ('coulomb', 'viscous', 'offset')
SCALAR_PARAMETERS = ('friction_velocity_threshold', 'friction_model')
# effort_gain: a zero or negative gain would hide every collision from the observer.
MIN_EFFORT_GAIN, MAX_EFFORT_GAIN = 1e-6, 1e6
# The bounds of each term of a parameters file (SI: N m or N, N m s/rad or N s/m, kg m^2 or kg):
# beyond any drive, and far from a float's range (1e300 times an acceleration is inf in the
# torques). Coulomb, viscous and armature are not negative: they would push the joint along
# its motion, or make the mass matrix indefinite.
MAX_TERM = 1e6
BOUNDS = {'coulomb': (0.0, MAX_TERM), 'viscous': (0.0, MAX_TERM), 'offset': (-MAX_TERM, MAX_TERM),
          'armature': (0.0, MAX_TERM), 'effort_bias': (-MAX_TERM, MAX_TERM),
          'effort_gain': (MIN_EFFORT_GAIN, MAX_EFFORT_GAIN)}


@dataclass(frozen=True, eq=False)
class Actuation:
    """
    The actuation model: friction, armature, effort bias and gain per entry of v (units: module).

    ``joint_names[k]`` names the joint of v row k ('' for the rows of floating and planar joints,
    whose terms are always zero). Arrays are read-only; build a changed model with
    ``from_parameters`` or ``dataclasses.replace``.
    """

    joint_names: tuple[str, ...]
    coulomb: np.ndarray
    viscous: np.ndarray
    offset: np.ndarray
    armature: np.ndarray
    velocity_threshold: float = DEFAULT_VELOCITY_THRESHOLD
    friction_model: str = FRICTION_MODELS[0]
    effort_bias: np.ndarray | None = None  # None: zeros
    effort_gain: np.ndarray | None = None  # None: ones
    _rows: dict = field(init=False, repr=False)

    def __post_init__(self):
        nv = len(self.joint_names)
        if self.effort_bias is None:
            object.__setattr__(self, 'effort_bias', np.zeros(nv))
        if self.effort_gain is None:
            object.__setattr__(self, 'effort_gain', np.ones(nv))
        for name in ('coulomb', 'viscous', 'offset', 'armature', 'effort_bias', 'effort_gain'):
            values = np.array(getattr(self, name), dtype=np.float64)
            if values.shape != (nv,) or not np.all(np.isfinite(values)):
                raise InputError(f'Actuation.{name}: expected {nv} finite numbers, got '
                                 f'{values.tolist()}')
            values.flags.writeable = False
            object.__setattr__(self, name, values)
        gain = self.effort_gain
        if not np.all((gain >= MIN_EFFORT_GAIN) & (gain <= MAX_EFFORT_GAIN)):
            raise InputError(f'Actuation.effort_gain: expected numbers from {MIN_EFFORT_GAIN:g} '
                             f'to {MAX_EFFORT_GAIN:g}, got {gain.tolist()}')
        if self.friction_model not in FRICTION_MODELS:
            raise InputError(f'friction_model: expected one of {FRICTION_MODELS}, got '
                             f'{self.friction_model!r}')
        threshold = self.velocity_threshold
        if not (isinstance(threshold, (int, float)) and math.isfinite(threshold)
                and threshold > 0):
            raise InputError('friction_velocity_threshold: expected a positive number (rad/s), '
                             f'got {threshold!r}')
        object.__setattr__(self, 'velocity_threshold', float(threshold))
        object.__setattr__(self, '_rows', {name: row for row, name in
                                           enumerate(self.joint_names) if name})

    # ------------------------------------------------------------------ construction
    @classmethod
    def zeros(cls, model: RobotModel) -> Actuation:
        """No friction, no armature, no effort bias, for the joints of ``model``."""
        names = [''] * model.nv
        for joint in model.joints:
            if joint.nv == 1:
                names[joint.idx_v] = joint.name
        zeros = np.zeros(model.nv)
        return cls(tuple(names), zeros, zeros, zeros, zeros)

    @classmethod
    def from_parameters(cls, model: RobotModel, params: Mapping) -> Actuation:
        """
        Build an actuation model from ROS parameter values (names: see the module docstring).

        Parameters outside the actuation model (any other name of a node parameters file) are
        ignored; joints not named get zeros. Raises ``InputError`` naming an unknown joint, a
        joint that takes no such term, an unknown field or a bad value.
        """
        base = cls.zeros(model)
        values = {name: np.zeros(model.nv) for name in ('coulomb', 'viscous', 'offset',
                                                        'armature', 'effort_bias')}
        values['effort_gain'] = np.ones(model.nv)
        threshold = params.get('friction_velocity_threshold', DEFAULT_VELOCITY_THRESHOLD)
        friction_model = params.get('friction_model', FRICTION_MODELS[0])
        for key, value in params.items():
            if key.startswith('friction.'):
                joint, _, term = key[len('friction.'):].rpartition('.')
                if term not in FRICTION_FIELDS:
                    raise InputError(f'parameter {key!r}: expected friction.<joint>.'
                                     f'{{{",".join(FRICTION_FIELDS)}}}')
            elif key.startswith('armature.'):
                joint, term = key[len('armature.'):], 'armature'
            elif key.startswith('effort_bias.'):
                joint, term = key[len('effort_bias.'):], 'effort_bias'
            elif key.startswith('effort_gain.'):
                joint, term = key[len('effort_gain.'):], 'effort_gain'
            else:
                continue
            row = base._joint_row(model, joint, key)
            values[term][row] = _number(key, value, *BOUNDS[term])
        return cls(base.joint_names, values['coulomb'], values['viscous'], values['offset'],
                   values['armature'],
                   _number('friction_velocity_threshold', threshold, 0.0, MAX_TERM),
                   friction_model, values['effort_bias'], values['effort_gain'])

    def _joint_row(self, model: RobotModel, joint: str, key: str) -> int:
        if joint in self._rows:
            return self._rows[joint]
        kinds = {j.name: j.kind for j in model.joints}
        if joint in kinds:
            raise InputError(f'parameter {key!r}: joint {joint!r} is a {kinds[joint]} joint; '
                             'friction, armature, effort bias and gain apply to revolute, '
                             'continuous and prismatic joints')
        raise InputError(f'parameter {key!r}: unknown joint {joint!r}; expected one of '
                         f'{list(self._rows)}')

    # ------------------------------------------------------------------ export
    def to_parameters(self) -> dict:
        """Return the ROS parameters of this model: flat names -> values, every 1-DoF joint."""
        params = {'friction_model': self.friction_model,
                  'friction_velocity_threshold': self.velocity_threshold}
        for joint, row in self._rows.items():
            for term in FRICTION_FIELDS:
                params[f'friction.{joint}.{term}'] = float(getattr(self, term)[row])
        for joint, row in self._rows.items():
            params[f'armature.{joint}'] = float(self.armature[row])
        for joint, row in self._rows.items():
            params[f'effort_bias.{joint}'] = float(self.effort_bias[row])
        for joint, row in self._rows.items():
            params[f'effort_gain.{joint}'] = float(self.effort_gain[row])
        return params

    # ------------------------------------------------------------------ measured effort
    def corrected_effort(self, effort, out=None) -> np.ndarray:
        """
        Return the measured torque: effort_gain * effort - effort_bias, (nv,) or (N, nv).

        Into ``out`` if given (a float64 array of the same shape). Non-finite values stay as
        they are (the caller decides what a missing effort means).
        """
        out = np.multiply(effort, self.effort_gain, out=out)
        return np.subtract(out, self.effort_bias, out=out)

    # ------------------------------------------------------------------ torques
    @property
    def has_friction(self) -> bool:
        """Whether ``friction_torques`` can be nonzero."""
        return self.friction_model != 'none' and bool(
            np.any(self.coulomb) or np.any(self.viscous) or np.any(self.offset))

    def friction_torques(self, v, out=None) -> np.ndarray:
        """Friction torques (nv,) at joint velocities v (nv,), into ``out`` if given."""
        v = self._rows_of(v, 1, 'v')
        if out is None:
            out = np.empty(len(self.joint_names))
        elif not (isinstance(out, np.ndarray) and out.dtype == np.float64
                  and out.shape == v.shape and out.flags.writeable):
            raise InputError(f'out: expected a writeable float64 array of shape {v.shape}')
        if self.friction_model == 'none':
            out[:] = 0.0
            return out
        np.divide(v, self.velocity_threshold, out=out)
        np.tanh(out, out=out)
        out *= self.coulomb
        out += self.viscous * v
        out += self.offset
        return out

    def friction_torques_batch(self, V) -> np.ndarray:
        """Friction torques (N, nv) at the velocities V (N, nv)."""
        V = self._rows_of(V, 2, 'V')
        if self.friction_model == 'none':
            return np.zeros(V.shape)
        return np.tanh(V / self.velocity_threshold) * self.coulomb + self.viscous * V \
            + self.offset

    def armature_torques(self, a) -> np.ndarray:
        """Armature torques armature * a for accelerations a (nv,) or (N, nv)."""
        a = np.asarray(a, dtype=np.float64)
        if a.ndim not in (1, 2):
            raise InputError(f'a: expected shape ({len(self.joint_names)},) or (N, '
                             f'{len(self.joint_names)}), got {a.shape}')
        return self.armature * self._rows_of(a, a.ndim, 'a')

    def friction_regressor(self, V) -> np.ndarray:
        """
        F (N, nv, 3) with friction_torques_batch(V) = (F * [coulomb, viscous, offset]).sum(-1).

        Per sample k and v row j, F[k, j] = [tanh(V[k, j] / velocity_threshold), V[k, j], 1]:
        the columns of joint j's Coulomb, viscous and offset parameters, which act on row j
        only (a block-diagonal regressor, stored as its diagonal blocks). Zero for the rows of
        floating and planar joints. Independent of the friction model's values.
        """
        V = self._rows_of(V, 2, 'V')
        columns = np.empty(V.shape + (3,))
        np.tanh(V / self.velocity_threshold, out=columns[..., 0])
        columns[..., 1] = V
        columns[..., 2] = 1.0
        columns[:, [row for row, name in enumerate(self.joint_names) if not name]] = 0.0
        return columns

    def _rows_of(self, value, ndim: int, name: str) -> np.ndarray:
        array = np.asarray(value, dtype=np.float64)
        nv = len(self.joint_names)
        if array.ndim != ndim or array.shape[-1] != nv:
            expected = f'({nv},)' if ndim == 1 else f'(N, {nv})'
            raise InputError(f'{name}: expected shape {expected}, got {array.shape}')
        if not np.all(np.isfinite(array)):
            raise InputError(f'{name}: values must be finite')
        return array


def _number(key: str, value, low: float, high: float) -> float:
    """Return ``value`` as a float, refused naming ``key`` unless a number from low to high."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f'parameter {key!r}: expected a number, got {brief(value)}')
    if not finite_number(value) or not low <= value <= high:
        raise InputError(f'parameter {key!r}: expected a number from {low:g} to {high:g}, got '
                         f'{brief(value)}')
    return float(value)
