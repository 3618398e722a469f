"""
MJCF (MuJoCo's robot format) -> ``KinematicTree`` and ``Actuation``, through MuJoCo's compiler.

MuJoCo compiles the file (includes, defaults, inertias from geoms, meshes, angle units: all its
own rules); the compiled ``mujoco.MjModel`` is turned into the links and joints the tree builder
of ``tree_builder`` folds and numbers, so that an MJCF robot is the same model as the URDF robot it
describes. ``mujoco`` is imported here only, inside the functions: ``import rnea_ros`` does not
need it. Before MuJoCo opens a file, what it would read is checked (``mjcf_paths``): every file
it includes, attaches or loads inside the file's folder, a regular file, bounded.

The mapping (everything else that changes MuJoCo's dynamics is refused by name):

- a body is a link named as the body; the world body is the root link 'world'. A body without
  joint is fixed to its parent (folded into the parent's moving body, as a URDF fixed joint);
- a hinge joint is revolute, a slide joint prismatic, with the joint's name, axis, range
  (``limited``; none when the ``limit`` or ``constraint`` flag is disabled, as MuJoCo then
  enforces none) and ``actuatorfrcrange`` (the effort limit, when ``actuatorfrclimited``). q is
  MuJoCo's qpos (the angle from the body's pose in the file is qpos - ``ref``). A hinge away
  from its body's origin (``pos`` not zero) turns about an axis through that point: the moving
  body's frame is then the joint's, a link '<body>/joint', and the body's link hangs in it;
- a free joint on the one body of the world (a legged robot) is the free-flyer of
  ``floating_base=True``: joint 'root_joint', q[:7] = [x y z qx qy qz qw] (MuJoCo's qpos has
  w first), v[:6] = [linear; angular] in the body frame (MuJoCo's linear velocity is in the
  world frame); no other body may then hang from the world;
- ``armature`` -> ``Actuation.armature``, plus gear^2 x the ``armature`` of each actuator on
  the joint (``<motor joint=... gear=... armature=...>``, as MuJoCo's mass matrix holds it),
  ``damping`` -> ``viscous``, ``frictionloss`` ->
  ``coulomb`` (MuJoCo's is a constraint opposing the motion up to that level, the actuation
  model's a smooth sign tanh(v / velocity_threshold): equal once the joint moves);
- an active joint equality joint1 = polycoef[0] + polycoef[1] joint2 (MuJoCo's URDF compiler
  makes them of URDF mimic joints) makes joint1 a mimic joint of joint2, whose armature and
  damping (times polycoef[1]^2) and frictionloss (times abs(polycoef[1])) go to joint2's terms;
  with the ``equality`` or ``constraint`` flag disabled MuJoCo enforces no equality, and every
  joint is independent;
- ``option gravity`` is the model's gravity (zero when the gravity flag is disabled); a
  disabled ``damper`` flag zeroes the viscous friction, a disabled ``frictionloss`` or
  ``constraint`` flag the Coulomb friction.

Refused, by name: ball joints, several joints in one body, a free joint elsewhere, other
equality constraints, armature, damping or friction on a free joint, unnamed bodies and
joints; and every field of ``mjcf_fields.REFUSED`` that is not 0: joint springs
(``stiffness``, ``stiffnesspoly``, ``springyield``), nonlinear damping, gravity compensation,
actuator damping, fluid forces (``density``, ``viscosity``), tendons, flexes, engine plugins,
mocap bodies. ``rnea_ros.description.mjcf_fields`` places every field of MuJoCo's compiled model,
its options and its flags: used here, refused, or why it does not change the dynamics.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
import os
from pathlib import Path
import warnings

import numpy as np

from rnea_ros.description.mjcf_fields import REFUSED, unknown_fields
from rnea_ros.description.mjcf_paths import check_paths
from rnea_ros.description.tree_builder import TreeBuilder
from rnea_ros.description.urdf_elements import Inertial, UrdfJoint
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import MJCFError, ModelWarning

WORLD = 'world'
JOINT_LINK = '{body}/joint'  # the frame of a hinge away from its body's origin
# The features MuJoCo's constraint flag disables with the constraint solver (mjtDisableBit).
CONSTRAINTS = ('EQUALITY', 'FRICTIONLOSS', 'LIMIT', 'CONTACT')


@dataclass(frozen=True)
class MjcfRobot:
    """An MJCF robot: its rigid-body model and its joints' armature, damping and friction."""

    model: RobotModel
    actuation: Actuation


def load_mjcf(source, *, inertia_check: str = 'error') -> MjcfRobot:
    """
    Read an MJCF file (a path) or a compiled ``mujoco.MjModel``; see the module docstring.

    Raises ``MJCFError`` (a ``URDFError``) naming the file and MuJoCo's message when MuJoCo
    cannot compile it, or naming what the model cannot carry over; ``inertia_check`` as
    ``RobotModel.from_urdf_string``.
    """
    mj = _compiled(source)
    where = f'MJCF {str(source)!r}: ' if isinstance(source, (str, os.PathLike)) else 'MJCF: '
    try:
        tree, gravity = _tree(mj, inertia_check)
    except MJCFError as exc:
        raise MJCFError(f'{where}{exc}') from None
    model = RobotModel(tree, gravity)
    unknown = unknown_fields(mj)
    if unknown:  # a MuJoCo other than the one the package was tested with
        import mujoco
        warnings.warn(ModelWarning(
            f'{where}MuJoCo {mujoco.__version__} has fields this package does not know, set '
            f'in this model: {", ".join(unknown)}; whether they change its dynamics is not '
            'judged (rnea_ros.description.mjcf_fields places the fields it knows)'), stacklevel=2)
    return MjcfRobot(model, _actuation(mj, model))


def mujoco_warning(message: str) -> None:
    """Warn with MuJoCo's warning text, as a Python ``RuntimeWarning``."""
    warnings.warn(f'MuJoCo: {message}', RuntimeWarning, stacklevel=2)


def route_mujoco_warnings() -> None:
    """
    Make MuJoCo's warnings Python warnings (``mujoco_warning``), for every MuJoCo call after.

    MuJoCo's default handler appends them to MUJOCO_LOG.TXT in the working directory: a file
    written where no one asked (its compiler warns about a model it accepts, e.g. a singular
    mass matrix).
    """
    import mujoco
    mujoco.set_mju_user_warning(mujoco_warning)


def _compiled(source):
    if not isinstance(source, (str, os.PathLike)):
        return source
    import mujoco  # the sim's dependency: only an MJCF needs it here
    route_mujoco_warnings()
    if not Path(source).exists():
        raise MJCFError(f'MJCF {str(source)!r}: no such file')
    try:  # what MuJoCo would open: inside the file's folder, regular files, bounded
        check_paths(source)
    except MJCFError as exc:
        raise MJCFError(f'MJCF {str(source)!r}: {exc}') from None
    try:
        return mujoco.MjModel.from_xml_path(str(source))
    except ValueError as exc:  # MuJoCo's compiler error, over several lines
        raise MJCFError(f'MJCF {str(source)!r}: MuJoCo cannot compile it: '
                        f'{" ".join(str(exc).split())}') from None


def _name(mj, kind: str, index: int) -> str:
    return getattr(mj, kind)(index).name


def _refuse_unsupported(mj) -> None:
    """
    Raise ``MJCFError`` for the first field of ``mjcf_fields.REFUSED`` that is not 0.

    A count (tendons, flexes, plugins, mocap bodies) names the element's first; an array the
    element that holds the value, and the field.
    """
    import mujoco
    for field, (owner, what) in REFUSED.items():
        if field.startswith('opt.'):
            value = float(getattr(mj.opt, field[4:]))
            if value:
                raise MJCFError(f'option {field[4:]}={value:g}: {what} are not supported '
                                '(expected 0)')
            continue
        values = np.asarray(getattr(mj, field))
        if values.ndim == 0:  # a count
            if not values:
                continue
            if field == 'nmocap':
                body = int(np.flatnonzero(mj.body_mocapid >= 0)[0])
                raise MJCFError(f'body {_name(mj, "body", body)!r} is a mocap body: not '
                                'supported')
            first = mujoco.mj_id2name(mj, getattr(mujoco.mjtObj, f'mjOBJ_{owner.upper()}'), 0)
            raise MJCFError(f'{owner} {first or "#0"!r} ({int(values)} in all): {what} are not '
                            'supported (rigid bodies with hinge, slide and free joints only)')
        rows = np.flatnonzero(np.any(values.reshape(len(values), -1) != 0, axis=1)) \
            if values.size else []
        if len(rows):
            index = int(rows[0]) if owner != 'dof' else int(mj.dof_jntid[rows[0]])
            kind = 'joint' if owner == 'dof' else owner
            raise MJCFError(f'{kind} {_name(mj, kind, index) or f"#{index}"!r} has {what}: not '
                            f'supported ({field} {values[rows[0]].tolist()}, expected 0)')


def _tree(mj, inertia_check: str):
    """Return the ``KinematicTree`` and the gravity of a compiled model."""
    import mujoco
    _refuse_unsupported(mj)
    hinge, slide, free = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE,
                          mujoco.mjtJoint.mjJNT_FREE)
    names = [WORLD] + [_name(mj, 'body', b) for b in range(1, mj.nbody)]
    for b in range(1, mj.nbody):
        if not names[b]:
            raise MJCFError(f'body #{b} (child of {names[mj.body_parentid[b]]!r}) has no name: '
                            'every body is a link, named')
    links: dict[str, Inertial | None] = {WORLD: None}
    joints: dict[str, UrdfJoint] = {}
    children: dict[str, list[UrdfJoint]] = {WORLD: []}
    floating = None  # the body of the free joint
    qpos0 = {}
    mimics = _mimics(mj)
    limits = not _disabled(mj, 'LIMIT')
    for b in range(1, mj.nbody):
        body, parent = names[b], names[mj.body_parentid[b]]
        rotation, translation = _quat_matrix(mj.body_quat[b]), np.array(mj.body_pos[b])
        adr, count = int(mj.body_jntadr[b]), int(mj.body_jntnum[b])
        if count > 1:
            raise MJCFError(f'body {body!r} has {count} joints '
                            f'{[_name(mj, "joint", adr + k) for k in range(count)]}: one joint '
                            'per body is supported (nest bodies instead)')
        inertial = _inertial(mj, b)
        kind = int(mj.jnt_type[adr]) if count else None
        joint_name = _name(mj, 'joint', adr) if count else ''
        if count and not joint_name and kind != free:
            raise MJCFError(f'the joint of body {body!r} has no name: every joint is named')
        if kind is None:
            edge = UrdfJoint(f'(fixed {body})', 'fixed', parent, body, rotation, translation,
                             np.zeros(3))
        elif kind == free:
            floating = _check_free(mj, adr, body, b, joint_name)
            links[body], children[body] = inertial, []
            continue
        elif kind in (hinge, slide):
            edge = _joint(mj, adr, joint_name, parent, body, rotation, translation,
                          'revolute' if kind == hinge else 'prismatic', limits)
            edge.mimic = mimics.get(joint_name)
            if edge.mimic is None:  # a mimic's position is its equality's, from the pose
                qpos0[joint_name] = float(mj.qpos0[mj.jnt_qposadr[adr]])
            if kind == hinge and np.any(mj.jnt_pos[adr] != 0):
                frame = JOINT_LINK.format(body=body)
                if frame in names:
                    raise MJCFError(f'body {body!r}: the frame of its joint would be a link '
                                    f'{frame!r}, which is already a body')
                links[frame], children[frame] = None, []
                offset = np.array(mj.jnt_pos[adr])
                edge.translation = translation + rotation @ offset
                edge.child = frame
                children[frame].append(UrdfJoint(f'(fixed {body})', 'fixed', frame, body,
                                                 np.eye(3), -offset, np.zeros(3)))
        else:
            raise MJCFError(f'joint {joint_name!r} (body {body!r}) is a ball joint: not '
                            'supported (hinge, slide and free joints only)')
        links[body], children[body] = inertial, []
        children[edge.parent].append(edge)
    if floating is not None:
        if children[WORLD]:
            raise MJCFError(f'body {names[floating]!r} has a free joint, and body '
                            f'{children[WORLD][0].child!r} hangs from the world too: a '
                            'free-floating robot must be the only body of the world')
        root, links = names[floating], {k: v for k, v in links.items() if k != WORLD}
    else:
        root = WORLD
    joints = {edge.name: edge for edges in children.values() for edge in edges}
    tree = TreeBuilder(_model_name(mj), links, joints, children,
                       root, floating is not None, inertia_check).build()
    offsets = np.array([-qpos0.get(name, 0.0) for name in tree.body_names])
    gravity = np.zeros(3) if _disabled(mj, 'GRAVITY') else np.array(mj.opt.gravity)
    return replace(tree, offset=tree.offset + offsets), gravity


def _mimics(mj) -> dict[str, tuple[str, float, float]]:
    """
    Return the joint couplings of the equality constraints: joint -> (master, factor, shift).

    MuJoCo's joint equality: joint1 - ref1 = polycoef[0] + polycoef[1] (joint2 - ref2) (the
    positions from the body poses of the file, ``ref`` their qpos0). As a URDF mimic, on the
    master's q (its qpos): factor = polycoef[1], shift = polycoef[0] - factor ref2. Any other
    equality (another type, a nonlinear or inactive one, joint2 itself coupled) is refused.
    """
    import mujoco
    mimics = {}
    if _disabled(mj, 'EQUALITY'):  # MuJoCo enforces no equality: every joint moves freely
        return mimics
    for k in range(mj.neq):
        name = _name(mj, 'equality', k) or f'#{k}'
        coefficients = np.asarray(mj.eq_data[k][:5])
        if mj.eq_type[k] != mujoco.mjtEq.mjEQ_JOINT or mj.eq_obj2id[k] < 0 \
                or not mj.eq_active0[k] or np.any(coefficients[2:] != 0):
            raise MJCFError(f'equality {name!r} ({mj.neq} in all): not supported (an active '
                            'joint equality joint1 = polycoef[0] + polycoef[1] joint2 only)')
        joint, master = (_name(mj, 'joint', int(i)) for i in (mj.eq_obj1id[k], mj.eq_obj2id[k]))
        if joint in mimics:
            raise MJCFError(f'equality {name!r}: joint {joint!r} is coupled twice')
        ref = float(mj.qpos0[mj.jnt_qposadr[mj.eq_obj2id[k]]])
        factor = float(coefficients[1])
        mimics[joint] = (master, factor, float(coefficients[0]) - factor * ref)
    for joint, (master, _, _) in mimics.items():
        if master in mimics:
            raise MJCFError(f'joint {joint!r} is coupled to joint {master!r}, which is coupled '
                            'itself: couple both to the independent joint')
    return mimics


def _model_name(mj) -> str:
    """Return the ``<mujoco model=...>`` name (first in MuJoCo's names buffer)."""
    return bytes(mj.names[:bytes(mj.names).index(b'\0')]).decode()


def _check_free(mj, adr: int, body: str, b: int, joint_name: str) -> int:
    where = f'free joint {joint_name!r} (body {body!r})' if joint_name else \
        f'the free joint of body {body!r}'
    if mj.body_parentid[b] != 0:
        raise MJCFError(f'{where}: a free joint is supported on a body of the world only')
    if np.any(mj.jnt_pos[adr] != 0):
        raise MJCFError(f'{where}: pos {mj.jnt_pos[adr].tolist()}, expected 0 0 0')
    dofs = slice(int(mj.jnt_dofadr[adr]), int(mj.jnt_dofadr[adr]) + 6)
    for field, values in (('armature', dof_armature(mj)), ('damping', mj.dof_damping),
                          ('frictionloss', mj.dof_frictionloss)):
        if np.any(values[dofs] != 0):
            raise MJCFError(f'{where} has {field}: not supported on a free joint (expected 0)')
    return b


def _joint(mj, adr, name, parent, body, rotation, translation, kind, limits) -> UrdfJoint:
    lower, upper = (float(x) for x in mj.jnt_range[adr]) if limits and mj.jnt_limited[adr] \
        else (-np.inf, np.inf)
    effort = float(np.abs(mj.jnt_actfrcrange[adr]).max()) if mj.jnt_actfrclimited[adr] \
        else np.inf
    return UrdfJoint(name, kind, parent, body, rotation, translation,
                     np.array(mj.jnt_axis[adr], dtype=float), effort=effort, lower=lower,
                     upper=upper)


def _inertial(mj, b: int) -> Inertial:
    """Return a body's mass, centre of mass and inertia about it, in the body frame."""
    axes = _quat_matrix(mj.body_iquat[b])
    return Inertial(float(mj.body_mass[b]), np.array(mj.body_ipos[b], dtype=float),
                    axes @ np.diag(mj.body_inertia[b]) @ axes.T)


def _quat_matrix(quat) -> np.ndarray:
    """Rotation matrix of a unit quaternion [w x y z] (MuJoCo's order)."""
    w, x, y, z = (float(c) for c in quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _disabled(mj, feature: str) -> bool:
    """
    Whether MuJoCo applies no ``feature`` (a ``mjtDisableBit`` name without ``mjDSBL_``).

    The ``constraint`` flag disables every constraint with the solver: equalities,
    frictionloss, limits and contacts.
    """
    import mujoco
    flags = int(mj.opt.disableflags)
    bit = {name: int(getattr(mujoco.mjtDisableBit, f'mjDSBL_{name}'))
           for name in (feature, 'CONSTRAINT')}
    return bool(flags & bit[feature]) or (feature in CONSTRAINTS
                                          and bool(flags & bit['CONSTRAINT']))


def dof_armature(mj) -> np.ndarray:
    """
    Return each dof's armature as MuJoCo's mass matrix holds it, (nv,).

    The joint's ``armature`` plus, for each actuator on the joint (``<motor joint=...>``,
    ``jointinparent``), gear^2 times the actuator's ``armature`` (its rotor's inertia, reflected
    through the gear). MuJoCo allows an actuator's armature on a joint or tendon transmission
    only, and tendons are refused.
    """
    import mujoco
    armature = np.array(mj.dof_armature, dtype=float)
    joint_kinds = (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT))
    for a in np.flatnonzero(np.asarray(mj.actuator_armature) != 0):
        if int(mj.actuator_trntype[a]) not in joint_kinds:
            raise MJCFError(f'actuator {_name(mj, "actuator", a) or f"#{a}"!r} has armature on '
                            'a transmission other than a joint: not supported (expected 0)')
        joint = int(mj.actuator_trnid[a, 0])
        gear = float(mj.actuator_gear[mj.actuator_outadr[a], 0])
        dofs = int(mj.jnt_dofadr[joint])
        armature[dofs] += gear * gear * float(mj.actuator_armature[a])
    return armature


def _actuation(mj, model: RobotModel) -> Actuation:
    """
    Return the armature, damping and frictionloss of the hinge and slide joints, in v order.

    The armature is ``dof_armature``'s (the actuators' reflected armature included). Damping
    and frictionloss are zero where the model's flags disable them (``damper``,
    ``frictionloss`` or ``constraint``): MuJoCo then applies none.
    """
    base = Actuation.zeros(model)
    mimics = _mimics(mj)
    terms = {name: np.zeros(model.nv) for name in ('armature', 'damping', 'frictionloss')}
    per_dof = {'armature': dof_armature(mj), 'damping': np.asarray(mj.dof_damping),
               'frictionloss': np.asarray(mj.dof_frictionloss)}
    disabled = {'armature': False, 'damping': _disabled(mj, 'DAMPER'),
                'frictionloss': _disabled(mj, 'FRICTIONLOSS')}
    for joint in model.joints:
        if joint.nv != 1:
            continue
        # A coupled joint's terms act on its master: armature and damping times factor^2
        # (reflected through the coupling), frictionloss times |factor|.
        coupled = [(joint.name, 1.0)] + [(name, factor) for name, (master, factor, _)
                                         in mimics.items() if master == joint.name]
        for name, values in terms.items():
            if disabled[name]:
                continue
            for member, factor in coupled:
                gain = abs(factor) if name == 'frictionloss' else factor * factor
                values[joint.idx_v] += gain * float(per_dof[name][mj.joint(member).dofadr[0]])
    return replace(base, coulomb=terms['frictionloss'], viscous=terms['damping'],
                   armature=terms['armature'])
