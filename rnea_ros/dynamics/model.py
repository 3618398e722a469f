"""
``RobotModel``: the public API. Names <-> indices, argument checks, preallocated workspace.

A model is built once from URDF text (``urdf.parse_urdf``) and compiled kernels are warmed at
construction, so the first dynamics call after loading costs no compilation. A model owns one
scratch workspace: use one model per thread (``copy()`` gives an independent one), like
Pinocchio's ``Data``. ``rnea_batch`` is thread-parallel internally and is safe to call anytime.

This module holds the construction, the description (names, joints, limits), the dynamics
(RNEA, its terms, batches, mass and Coriolis matrices) and the argument checks; the model
inherits its kinematics from ``model_kinematics``, its inertial parameters, payload and
regressor from ``inertial_parameters`` and its forward dynamics from ``model_forward``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import os

import numpy as np

from rnea_ros.dynamics import checks, coriolis, crba
from rnea_ros.dynamics import rnea as kernels
from rnea_ros.dynamics import terms
from rnea_ros.dynamics.inertial_parameters import InertialParameterMethods
from rnea_ros.dynamics.model_forward import ForwardDynamicsMethods
from rnea_ros.dynamics.model_kinematics import KinematicsMethods
from rnea_ros.dynamics.tree import KinematicTree
from rnea_ros.errors import InputError

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


@dataclass(frozen=True)
class PackedModel:
    """
    The arrays the jitted kernels (``rnea_ros.dynamics.rnea``) run on: the model's own, shared.

    Read only: they are the model's, not copies. ``model``: the flat model array (a header, then
    one row per body, in each body's canonical frame: joint axis along z); ``link_body``:
    (n_links,) the body each link of ``RobotModel.link_names`` is fixed to, -1 for links fixed
    to the world; ``link_pose``: (12 n_links,) each link's placement (rotation row-major, then
    translation) in its body's canonical frame; ``n_bodies``: the number of bodies. A kernel
    also needs scratch memory of its own: ``new_workspace()``, one per thread.
    """

    model: np.ndarray
    link_body: np.ndarray
    link_pose: np.ndarray
    n_bodies: int

    def new_workspace(self) -> np.ndarray:
        """Return fresh scratch memory for one RNEA pass at a time on ``model``."""
        return kernels.new_workspace(self.model)


# rnea_batch gives each thread at least this many samples (fewer: it runs on the caller's thread).
MIN_SAMPLES_PER_THREAD = 256
_empty = np.empty
_rnea_default = kernels.rnea_default


class RobotModel(KinematicsMethods, InertialParameterMethods, ForwardDynamicsMethods):
    """
    Rigid-body dynamics of a URDF robot: inverse dynamics (RNEA), gravity, mass matrix.

    Conventions
    -----------
    - ``joint_names``: the independent joints (revolute, continuous, prismatic, floating, planar;
      not fixed, not mimic) in depth-first order from the root, the order of q, v and tau.
      ``joints`` gives each one's slice of q and v (``idx_q``, ``nq``, ``idx_v``, ``nv``).
    - Continuous joints are one angle. Fixed joints are folded into their parent body; their
      links stay addressable by name (``link_names``) for ``f_ext``.
    - Mimic joints are not in q: joint = multiplier * q_master + offset (v, a scaled), and their
      torque is folded into the master: tau_master += multiplier * tau_mimic.
    - ``floating_base=True`` adds a free-flyer joint 'root_joint' above the URDF root link:
      q[:7] = [x y z qx qy qz qw] (root-link pose in the world), v[:6] = [linear; angular]
      velocity of the root link in its own frame, a[:6] its time derivative, tau[:6] =
      [force; torque] in the root frame (Pinocchio's free-flyer convention). A URDF
      ``floating`` joint has the same layout, relative to its joint frame.
    - ``f_ext``: mapping link name -> [fx fy fz tx ty tz], the wrench the environment applies on
      the link, in the link frame about the link origin (batch: (N, 6) per link).
    - ``gravity``: world-frame 3-vector, default (0, 0, -9.81) m/s^2. Units are SI.
    """

    def __init__(self, tree: KinematicTree, gravity=DEFAULT_GRAVITY):
        self._tree = tree
        self._gravity = checks.vector(gravity, 3, 'gravity')
        self._state, self._model, self._work = kernels.new_state(
            kernels.pack_model(tree, self._gravity))
        self._nv = tree.nv
        self._link_body, self._link_pose = kernels.pack_links(tree)
        self._packed = PackedModel(self._model, self._link_body, self._link_pose, tree.n_bodies)
        self._bodies = np.zeros(12 * tree.n_bodies)  # world placements, kinematics scratch
        self._canonical = kernels.canonical_rotations(tree)
        self._regressor_table = None  # identification's table: packed on first use
        self._link_index = {link.name: row for row, link in enumerate(tree.links)}
        self._joint_index = {joint.name: joint for joint in tree.joints}
        self._zeros_v = np.zeros(tree.nv)
        self._zero_gravity = np.zeros(3)
        self._no_fext = np.zeros((0, 6))
        self._warm_up()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_urdf_string(cls, xml: str, *, floating_base: bool = False,
                         gravity=DEFAULT_GRAVITY, inertia_check: str = 'error') -> RobotModel:
        """
        Build a model from URDF text; raises ``URDFError`` naming the bad element.

        ``inertia_check='warn'`` accepts bodies whose inertia is not physically consistent (not
        positive semi-definite, or breaking the triangle inequality) with a ``ModelWarning``
        instead of an error; some published URDFs need it. See ``urdf.parse_urdf``.
        """
        from rnea_ros.description.urdf import parse_urdf  # the parsers stand above dynamics
        return cls(parse_urdf(xml, floating_base=floating_base, inertia_check=inertia_check),
                   gravity)

    @classmethod
    def from_urdf_file(cls, path: str | os.PathLike, *,
                       xacro_args: Mapping[str, str] | None = None, floating_base: bool = False,
                       gravity=DEFAULT_GRAVITY, inertia_check: str = 'error') -> RobotModel:
        """
        Build a model from a URDF file, or a xacro file (see ``from_urdf_string``).

        A file whose name ends in ``.xacro`` (``robot.urdf.xacro``), or given ``xacro_args``, is
        expanded with the ``xacro`` package first (what it may evaluate: ``xacro_guard.py``);
        ``xacro_args`` gives its ``<xacro:arg>`` values, as ``name:=value`` on the xacro command
        line: ``{'prefix': 'left_'}``. Any other file is URDF: xacro text in it is refused. A
        xacro failure (missing include, undefined argument, refused expression) raises
        ``URDFError`` naming the file.
        """
        from rnea_ros.description.robot_file import read_robot_description  # above dynamics
        xml = read_robot_description(path, xacro_args)
        return cls.from_urdf_string(xml, floating_base=floating_base, gravity=gravity,
                                    inertia_check=inertia_check)

    @classmethod
    def from_mjcf(cls, source, *, inertia_check: str = 'error') -> RobotModel:
        """
        Build a model from an MJCF file (or a ``mujoco.MjModel``) with MuJoCo's compiler.

        ``mjcf.load_mjcf`` gives the joints' armature, damping and friction too; what is
        mapped and what is refused (``MJCFError``, naming it): ``rnea_ros.description.mjcf``.
        """
        from rnea_ros.description.mjcf import load_mjcf  # needs mujoco, the sim's dependency
        return load_mjcf(source, inertia_check=inertia_check).model

    def __getstate__(self) -> dict:
        """Pickle without the regressor table: it is rebuilt where it is needed."""
        return {**vars(self), '_regressor_table': None}

    def copy(self) -> RobotModel:
        """Return an independent model (own workspace) for use in another thread."""
        return RobotModel(self._tree, self._gravity)

    def _warm_up(self) -> None:
        """
        Run the per-call kernels once so none compiles on the control path.

        Run the per-call kernels once so none compiles (or loads from cache) on the control
        path. The batch, mass-matrix and regressor kernels load (or, without
        ``python -m rnea_ros.precompile``, compile) on first use: they serve offline work.
        """
        q = self.neutral_configuration()
        tau = np.zeros(self.nv)
        kernels.rnea_default(self._state, q, self._zeros_v, self._zeros_v, tau)
        for wrenches in (self._no_fext, np.zeros((len(self._link_body), 6))):
            kernels.rnea_general(self._model, self._work, q, self._zeros_v, self._zeros_v,
                                 self._gravity, self._link_body, self._link_pose, wrenches, tau)
        # From now on a call with other argument types must not compile on the control path:
        # it raises TypeError and RobotModel.rnea converts the arguments instead.
        if hasattr(kernels.rnea_default, 'disable_compile'):  # absent with NUMBA_DISABLE_JIT
            kernels.rnea_default.disable_compile()
            kernels.rnea_general.disable_compile()

    # ------------------------------------------------------------------ description
    @property
    def name(self) -> str:
        """Return the robot's name in the URDF, empty when it has none."""
        return self._tree.name

    @property
    def tree(self) -> KinematicTree:
        """Return the kinematic tree the kernels run on (bodies after folding fixed joints)."""
        return self._tree

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Independent joints in the order of q, v and tau entries."""
        return tuple(joint.name for joint in self._tree.joints)

    @property
    def joints(self) -> tuple:
        """``tree.Joint`` records (kind, q/v slices, URDF limits) in ``joint_names`` order."""
        return self._tree.joints

    @property
    def link_names(self) -> tuple[str, ...]:
        """Every URDF link, fixed-joint links included, in document order."""
        return tuple(link.name for link in self._tree.links)

    @property
    def body_names(self) -> tuple[str, ...]:
        """
        Links that name the moving bodies, in the order of the regressor's blocks.

        A body is the child link of a moving joint (the URDF root link for a free-flyer) with
        every link fixed to it; its frame is that link's frame.
        """
        return tuple(link for link in self._tree.body_links if link)

    @property
    def nq(self) -> int:
        return self._tree.nq

    @property
    def nv(self) -> int:
        return self._tree.nv

    @property
    def floating_base(self) -> bool:
        """Whether the model has the free-flyer ``root_joint`` of ``floating_base=True``."""
        return self._tree.floating_base

    @property
    def multi_dof_joints(self) -> tuple:
        """
        URDF joints of more than one degree of freedom (``floating``, ``planar``).

        The free-flyer ``root_joint`` that ``floating_base=True`` adds is not one of them: its
        state comes from odometry. A ``sensor_msgs/JointState`` gives one value per joint, so
        the node and the tools that read joint states refuse a model that has any.
        """
        return tuple(joint for joint in self._tree.joints
                     if joint.nv != 1 and joint.kind != 'free-flyer')

    @property
    def packed(self) -> PackedModel:
        """Return the kernels' view of the model (``PackedModel``: read only, shared)."""
        return self._packed

    @property
    def gravity(self) -> np.ndarray:
        """Return the default gravity vector [m/s^2, world frame], for calls that pass none."""
        return self._gravity.copy()

    @property
    def effort_limits(self) -> np.ndarray:
        """URDF ``<limit effort>`` per v entry (inf where none; free-flyer and planar: inf)."""
        limits = np.full(self.nv, np.inf)
        for joint in self._tree.joints:
            if joint.nv == 1:
                limits[joint.idx_v] = joint.effort_limit
        return limits

    def joint(self, name: str):
        """Look up the ``tree.Joint`` of an independent joint; KeyError names unknown ones."""
        try:
            return self._joint_index[name]
        except KeyError:
            raise KeyError(f'unknown joint {name!r}; independent joints: '
                           f'{list(self._joint_index)}') from None

    def neutral_configuration(self) -> np.ndarray:
        """Return q with every joint at zero and every quaternion the identity."""
        q = np.zeros(self.nq)
        for joint in self._tree.joints:
            if joint.nq == 7:
                q[joint.idx_q + 6] = 1.0
        return q

    # ------------------------------------------------------------------ dynamics
    def rnea(self, q, v, a, f_ext: Mapping | None = None, gravity=None, *, out=None
             ) -> np.ndarray:
        """
        Inverse dynamics tau = M(q) a + C(q, v) v + g(q) - J^T f_ext, shape (nv,).

        q (nq,), v (nv,), a (nv,) as in the class docstring; f_ext: link name -> 6-vector
        [force; torque] in the link frame; gravity: world 3-vector (default ``self.gravity``).
        ``out``: a float64 array of shape (nv,) to write tau into and return (no allocation,
        for control loops); it may share memory with q, v or a (the torque is then computed on
        copies first); after an exception its content is unspecified.
        Raises ``InputError`` for an argument that breaks the input rules (``checks.py``: real
        numbers, exact shapes, finite values), an unknown link, or a torque that overflows.
        """
        if f_ext is None and gravity is None:
            # Fast path: the kernel checks sizes and the result's finiteness; any failure falls
            # through to the checked path, which converts the arguments or names the problem.
            tau = _empty(self._nv) if out is None else out
            try:
                _rnea_default(self._state, q, v, a, tau)
                return tau
            except (TypeError, ValueError):
                pass
        return self._rnea_checked(q, v, a, f_ext, gravity, out, 'rnea')

    def _rnea_checked(self, q, v, a, f_ext, gravity, out, function: str) -> np.ndarray:
        """``rnea`` with every argument checked; errors name ``function``."""
        g = self._gravity if gravity is None else checks.vector(gravity, 3, 'gravity')
        # Outside the try: InputError is a ValueError, and its message must not be replaced.
        wrenches = self._wrenches(f_ext)
        tau = np.zeros(self._nv) if out is None else out
        try:
            kernels.rnea_general(self._model, self._work, q, v, a, g, self._link_body,
                                 self._link_pose, wrenches, tau)
            return tau
        except (TypeError, ValueError):
            pass  # as on the fast path: convert the arguments or name the problem
        if out is not None and not (isinstance(out, np.ndarray) and out.dtype == np.float64
                                    and out.shape == (self.nv,) and out.flags.writeable):
            raise InputError(f'out: expected a writeable float64 array of shape ({self.nv},)')
        # Copies: an ``out`` that shares memory with q, v or a (refused by the kernels) is
        # written only after the torque is computed from them.
        q, v, a = self._checked_state(q, v, a)
        tau = np.zeros(self.nv)
        try:
            kernels.rnea_general(self._model, self._work, q, v, a, g, self._link_body,
                                 self._link_pose, wrenches, tau)
        except ValueError:
            raise InputError(f'{function}: the torque is not finite (inputs too large?)') \
                from None
        if out is None:
            return tau
        out[:] = tau
        return out

    def gravity_torques(self, q, gravity=None) -> np.ndarray:
        """g(q) = rnea(q, 0, 0): the torques that hold the robot still against gravity."""
        return self._rnea_checked(q, self._zeros_v, self._zeros_v, None, gravity, None,
                                  'gravity_torques')

    def velocity_product(self, q, v) -> np.ndarray:
        """C(q, v) v = rnea(q, v, 0) without gravity: Coriolis and centrifugal torques."""
        return self._rnea_checked(q, v, self._zeros_v, None, self._zero_gravity, None,
                                  'velocity_product')

    def external_torques(self, q, f_ext: Mapping) -> np.ndarray:
        """-J^T f_ext: the joint torques that the external wrenches alone require."""
        return self._rnea_checked(q, self._zeros_v, self._zeros_v, f_ext, self._zero_gravity,
                                  None, 'external_torques')

    def coriolis_transpose_velocity(self, q, v) -> np.ndarray:
        """C^T(q, v) v, (nv,), with C as ``coriolis_matrix``: the momentum observer's term."""
        return coriolis.transpose_velocity(self._model, self._work, *self._checked_state(
            q, v, self._zeros_v)[:2])

    def coriolis_matrix(self, q, v) -> np.ndarray:
        """C(q, v), (nv, nv), Pinocchio's: C v = velocity_product, dM/dt = C + C^T."""
        return coriolis.matrix(self._model, self._work, *self._checked_state(
            q, v, self._zeros_v)[:2])

    def mass_matrix(self, q) -> np.ndarray:
        """Joint-space inertia M(q), (nv, nv), by the Composite Rigid Body Algorithm."""
        q, _, _ = self._checked_state(q, self._zeros_v, self._zeros_v)
        return checks.finite(crba.crba(self._model, self._work, q), 'mass_matrix',
                             'mass matrix')

    def rnea_batch(self, Q, V, A, f_ext: Mapping | None = None, gravity=None,
                   threads: int | None = None) -> np.ndarray:
        """
        RNEA for N samples at once: Q (N, nq), V (N, nv), A (N, nv) -> tau (N, nv).

        f_ext: link name -> (N, 6) wrenches (or a 6-vector applied at every sample). Runs on at
        most ``threads`` threads (default: numba's thread count), each taking at least
        ``MIN_SAMPLES_PER_THREAD`` samples; shorter batches run on the calling thread.
        """
        tau = self._run_batch(kernels.rnea_batch_serial, kernels.rnea_batch, self._model, (),
                              Q, V, A, f_ext, gravity, threads)
        checks.finite_samples(tau)
        return tau

    def rnea_terms_batch(self, Q, V, A, gravity=None, threads: int | None = None
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """
        Return the terms of rnea_batch(Q, V, A): (M(q) a, C(q, v) v, g(q)), each (N, nv).

        inertial + velocity_product + gravity = rnea_batch(Q, V, A, gravity=gravity) up to
        rounding. One kinematics sweep serves the three terms (~1.7 RNEA passes, not 3); see
        ``terms.py``. Threads as in ``rnea_batch``.
        """
        Q, V, A, g, chunks = self._batch_inputs(Q, V, A, gravity, threads)
        inertial, velocity_product, gravity_term = np.zeros((3, Q.shape[0], self.nv))
        if Q.shape[0] == 0:
            return inertial, velocity_product, gravity_term
        if chunks == 1:
            terms.terms_serial(self._model, Q, V, A, g, inertial, velocity_product, gravity_term)
        else:
            terms.terms_batch(self._model, Q, V, A, g, inertial, velocity_product, gravity_term,
                              chunks)
        for result in (inertial, velocity_product, gravity_term):
            checks.finite_samples(result)
        return inertial, velocity_product, gravity_term

    def _run_batch(self, serial, parallel, model, extra: tuple, Q, V, X, f_ext, gravity,
                   threads, x_name: str = 'A') -> np.ndarray:
        """Check a batch; run ``serial`` or ``parallel`` (chunked) into (N, nv), unchecked."""
        Q, V, X, g, chunks = self._batch_inputs(Q, V, X, gravity, threads, x_name)
        wrenches = self._batch_wrenches(f_ext, Q.shape[0])
        result = np.zeros((Q.shape[0], self.nv))
        if Q.shape[0]:
            arguments = (model, Q, V, X, g, self._link_body, self._link_pose, wrenches, *extra,
                         result)
            if chunks == 1:
                serial(*arguments)
            else:
                parallel(*arguments, chunks)
        return result

    # ------------------------------------------------------------------ checks
    def _batch_inputs(self, Q, V, A, gravity, threads, a_name: str = 'A'):
        """
        Check (Q, V, A, gravity) and count the thread chunks for a batch kernel.

        ``a_name`` names A in the errors (``forward_dynamics_batch`` passes torques there).

        The kernels must not raise: numba loses exceptions raised in its worker threads (the
        call returns zeros, the next call fails), so every sample is validated here first.
        """
        threads = checks.thread_count(threads)
        Q = checks.matrix(Q, self.nq, 'Q')
        n = Q.shape[0]
        V = checks.matrix(V, self.nv, 'V', n)
        A = checks.matrix(A, self.nv, a_name, n)
        g = self._gravity if gravity is None else checks.vector(gravity, 3, 'gravity')
        checks.samples(self._tree.joints, Q, V, A)
        # Threads pay off only for long batches: waking the pool costs tens of microseconds,
        # and much more when another process holds a core.
        chunks = max(1, min(threads, n // MIN_SAMPLES_PER_THREAD))
        return Q, V, A, g, chunks

    def _checked_state(self, q, v, a):
        return checks.state(self._tree.joints, self.nq, self.nv, q, v, a)

    def _link_row(self, link: str, field: str = 'f_ext') -> int:
        try:
            return self._link_index[link]
        except KeyError:
            raise InputError(f'{field}: unknown link {link!r}') from None

    def _wrenches(self, f_ext: Mapping | None) -> np.ndarray:
        if not checks.wrench_mapping(f_ext):
            return self._no_fext
        wrenches = np.zeros((len(self._link_body), 6))
        for link, value in f_ext.items():
            wrenches[self._link_row(link)] = checks.vector(value, 6, f'f_ext[{link!r}]')
        return wrenches

    def _batch_wrenches(self, f_ext: Mapping | None, n: int) -> np.ndarray:
        """Return the batch kernels' wrenches: (n, n_links, 6), or (1, 0, 6) for none."""
        if not checks.wrench_mapping(f_ext):
            return np.zeros((1, 0, 6))
        wrenches = np.zeros((n, len(self._link_body), 6))
        for link, value in f_ext.items():
            row = self._link_row(link)
            value = checks.real_array(value, f'f_ext[{link!r}]',
                                      f'real numbers of shape (6,) or ({n}, 6)', copy=False)
            if value.shape not in ((6,), (n, 6)) or not np.all(np.isfinite(value)):
                raise InputError(f'f_ext[{link!r}]: expected finite shape (6,) or ({n}, 6), '
                                 f'got {value.shape}')
            wrenches[:, row, :] = value
        return wrenches

    def __repr__(self) -> str:
        return (f'RobotModel({self.name!r}, nq={self.nq}, nv={self.nv}, '
                f'floating_base={self.floating_base}, joints={len(self.joint_names)})')
