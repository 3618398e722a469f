"""
What ``load_mjcf`` does with each field of MuJoCo's compiled model, its options and its flags.

Every field of ``mujoco.MjModel`` (its arrays, sizes and flags), of ``MjModel.opt`` and every
bit of ``opt.disableflags`` and ``opt.enableflags`` is in one group here, the first whose
pattern (``fnmatch``) it matches:

- ``USED``: read to build the model and its joint terms (``rnea_ros.description.mjcf``);
- ``REFUSED``: a force or an inertia the model has no room for: a value other than MuJoCo's
  default (0 for each of them) is refused, naming the element and the field;
- ``COUNTED``: a part of an element refused as a whole by its count in ``REFUSED`` (a tendon,
  a flex, an engine plugin, a mocap body);
- ``INERT``, by reason: what does not change the equation of motion the model computes,
  M(q) a + c(q, v) + g(q) + the joint terms, for the joints' whole torque (contacts and the
  constraint solver, the simulation's numerics, what an actuator makes of its control,
  appearance and data, what the compiler derives from the fields judged here, and fields that
  act only with one that is refused).

``test/description/test_mjcf_fields.py`` checks that every field of the installed MuJoCo falls in
one group, so that a release that adds a field fails it until the field is placed here; where
the package runs with another MuJoCo than it was tested with, ``unknown_fields`` names the
fields of a model in no group that are set (not 0), for ``load_mjcf`` to warn of them.
"""
from __future__ import annotations

from fnmatch import fnmatchcase

import numpy as np

# Read by the loader (the names of bodies, joints, equalities and actuators with them).
USED = ('qpos0', 'body_parentid', 'body_jntnum', 'body_jntadr', 'body_pos', 'body_quat',
        'body_ipos', 'body_iquat', 'body_mass', 'body_inertia', 'jnt_type', 'jnt_qposadr',
        'jnt_dofadr', 'jnt_limited', 'jnt_range', 'jnt_actfrclimited', 'jnt_actfrcrange',
        'jnt_pos', 'jnt_axis', 'dof_jntid', 'dof_armature', 'dof_damping', 'dof_frictionloss',
        'eq_type', 'eq_obj1id', 'eq_obj2id', 'eq_active0', 'eq_data', 'actuator_trntype',
        'actuator_trnid', 'actuator_gear', 'actuator_outadr', 'actuator_armature', 'names',
        'name_bodyadr', 'name_jntadr', 'name_eqadr', 'name_actuatoradr', 'nbody', 'njnt', 'nq',
        'nv', 'neq', 'opt.gravity', 'opt.disableflags', 'flag.GRAVITY', 'flag.DAMPER',
        'flag.FRICTIONLOSS', 'flag.LIMIT', 'flag.EQUALITY', 'flag.CONSTRAINT')
# field -> (the element that holds it, what a value other than 0 is); counts name the element.
REFUSED = {
    'ntendon': ('tendon', 'tendons'),
    'nflex': ('flex', 'flexes'),
    'nplugin': ('plugin', 'engine plugins'),
    'nmocap': ('body', 'mocap bodies'),
    'jnt_stiffness': ('joint', 'a spring (stiffness)'),
    'jnt_stiffnesspoly': ('joint', 'a nonlinear spring (stiffnesspoly)'),
    'jnt_springyield': ('joint', 'a plastic spring (springyield)'),
    'dof_dampingpoly': ('dof', 'nonlinear damping (dampingpoly)'),
    'body_gravcomp': ('body', 'gravity compensation (gravcomp)'),
    'actuator_damping': ('actuator', 'actuator damping'),
    'actuator_dampingpoly': ('actuator', 'actuator damping (dampingpoly)'),
    'opt.density': ('option', 'fluid forces (density)'),
    'opt.viscosity': ('option', 'fluid forces (viscosity)'),
}
# Parts of the elements refused by their count.
COUNTED = ('tendon_*', 'ten_J_*', 'wrap_*', 'nwrap', 'nJten', 'name_tendonadr', 'flex*',
           'nflex*', 'efm*', 'nefm*', 'nJfe', 'name_flexadr', 'plugin', 'plugin_*', '*_plugin',
           'npluginattr', 'npluginstate', 'name_pluginadr', 'body_mocapid', 'key_mpos',
           'key_mquat')
# Not part of the model's dynamics, by reason (the first group a field matches).
INERT = {
    'judged bit by bit (enable.NAME)': ('opt.enableflags',),
    'acting only with a refused field (springs, gravity compensation, fluid forces)': (
        'qpos_spring', 'jnt_actgravcomp', 'ngravcomp', 'flg_gravcomp', 'geom_fluid',
        'opt.wind', 'flag.SPRING'),
    'contacts and collision geometry: the model computes the torques without contacts (the '
    "geoms' inertias are compiled into body_mass and body_inertia)": (
        'geom_*', 'ngeom', 'pair_*', 'npair', 'exclude_*', 'nexclude', 'mesh_*', 'nmesh*',
        'hfield_*', 'nhfield*', 'bvh_*', 'nbvh*', 'oct_*', 'noct', 'body_contype',
        'body_conaffinity', 'body_margin', 'body_bvhadr', 'body_bvhnum', 'flg_adhesion',
        'flg_surfacevel', 'npolygonmax', 'nmeshdegmax', 'opt.impratio', 'opt.o_*',
        'opt.ccd_*', 'opt.sdf_*', 'opt.cone', 'flag.CONTACT', 'flag.FILTERPARENT',
        'flag.MIDPHASE', 'flag.NATIVECCD', 'flag.MULTICCD', 'enable.OVERRIDE', 'enable.IPC',
        'enable.SPECULATIVE'),
    "the constraint solver's softness and numerics (limits, frictionloss and equalities are "
    'read from the fields above)': (
        'jnt_solref', 'jnt_solimp', 'jnt_margin', 'dof_solref', 'dof_solimp', 'eq_solref',
        'eq_solimp', 'nemax', 'njmax', 'nconmax', 'opt.tolerance', 'opt.ls_*',
        'opt.noslip_*', 'opt.iterations', 'opt.solver', 'opt.jacobian', 'flag.WARMSTART',
        'flag.REFSAFE', 'flag.ISLAND', 'enable.DIAGEXACT'),
    "the simulation's numerics (timestep, integrator, sleeping, resets)": (
        'opt.timestep', 'opt.integrator', 'opt.sleep_tolerance', 'tree_sleep_policy',
        'flag.EULERDAMP', 'flag.AUTORESET', 'enable.SLEEP', 'enable.INVDISCRETE'),
    "what an actuator makes of its control: the model's torque is the joints' whole torque, "
    'whatever makes it': (
        'actuator_*', 'nu', 'na', 'nactuator', 'nout', 'nJmom', 'nhistory', 'key_act',
        'key_ctrl', 'opt.disableactuator', 'flag.ACTUATION', 'flag.CLAMPCTRL'),
    'appearance, sites, cameras, lights, sensors, user and custom data, keyframes, names, '
    'asset paths': (
        'vis', 'cam_*', 'ncam', 'light_*', 'nlight', 'mat_*', 'nmat', 'tex_*', 'ntex*',
        'skin_*', 'nskin*', 'site_*', 'nsite', 'sensor_*', 'nsensor*', 'jnt_group', '*_user',
        'nuser_*', 'nuserdata', 'numeric_*', 'nnumeric*', 'text_*', 'ntext*', 'tuple_*',
        'ntuple*', 'key_*', 'nkey', 'name_*', 'names_map', 'nnames*', 'paths', 'npaths',
        'opt.magnetic', 'flag.SENSOR', 'enable.ENERGY', 'enable.FWDINV'),
    'derived by the compiler from the fields judged here (addresses, sparsity, trees, '
    'statistics)': (
        'body_rootid', 'body_weldid', 'body_dofnum', 'body_dofadr', 'body_treeid',
        'body_geomnum', 'body_geomadr', 'body_simple', 'body_sameframe', 'body_subtreemass',
        'body_invweight0', 'jnt_bodyid', 'jnt_actuatorid', 'jnt_plasticadr', 'dof_bodyid',
        'dof_parentid', 'dof_treeid', 'dof_Madr', 'dof_simplenum', 'dof_invweight0',
        'dof_M0', 'dof_length', 'tree_*', 'ntree', 'eq_objtype', 'B_*', 'M_*', 'D_*', 'map*',
        'nB', 'nC', 'nD', 'nM', 'nplastic', 'narena', 'nbuffer', 'signature', 'stat'),
}


def group_of(field: str) -> str:
    """
    Return the group of ``field``: 'used', 'refused', 'counted', an inert reason, or ''.

    ``field`` is an ``MjModel`` attribute, ``opt.NAME`` for an option, ``flag.NAME`` for a
    ``mjtDisableBit`` (without ``mjDSBL_``) and ``enable.NAME`` for a ``mjtEnableBit``.
    """
    if field in USED:
        return 'used'
    if field in REFUSED:
        return 'refused'
    if any(fnmatchcase(field, pattern) for pattern in COUNTED):
        return 'counted'
    return next((reason for reason, patterns in INERT.items()
                 if any(fnmatchcase(field, pattern) for pattern in patterns)), '')


def model_fields(mj) -> list[str]:
    """
    Return every field of the compiled model ``mj`` as ``group_of`` names them.

    Its attributes that are not methods (arrays, sizes, flags, ``vis``, ``stat``), the fields
    of ``mj.opt`` as ``opt.NAME``, and the bits of MuJoCo's disable and enable flags as
    ``flag.NAME`` and ``enable.NAME``.
    """
    import mujoco
    fields = [name for name in dir(mj) if not name.startswith('_') and name != 'opt'
              and not callable(getattr(mj, name))]
    fields += [f'opt.{name}' for name in dir(mj.opt) if not name.startswith('_')
               and not callable(getattr(mj.opt, name))]
    for kind, enum, prefix in (('flag', mujoco.mjtDisableBit, 'mjDSBL_'),
                               ('enable', mujoco.mjtEnableBit, 'mjENBL_')):
        fields += [f'{kind}.{name[len(prefix):]}' for name in dir(enum)
                   if name.startswith(prefix) and not name.startswith('mjN')]
    return fields


def unknown_fields(mj) -> list[str]:
    """Return the fields of ``mj`` in no group whose value is set (any number not 0)."""
    return [field for field in model_fields(mj) if not group_of(field) and _is_set(mj, field)]


def _is_set(mj, field: str) -> bool:
    import mujoco
    kind, _, name = field.rpartition('.')
    if kind in ('flag', 'enable'):
        flags = mj.opt.disableflags if kind == 'flag' else mj.opt.enableflags
        enum, prefix = (mujoco.mjtDisableBit, 'mjDSBL_') if kind == 'flag' \
            else (mujoco.mjtEnableBit, 'mjENBL_')
        return bool(int(flags) & int(getattr(enum, f'{prefix}{name}')))
    value = getattr(mj.opt if kind == 'opt' else mj, name)
    try:
        return bool(np.any(np.asarray(value, dtype=float) != 0))
    except (TypeError, ValueError):  # a structure (vis, stat) or text: judged by its fields
        return False
