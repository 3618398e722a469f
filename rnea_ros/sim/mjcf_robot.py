"""
An MJCF file -> the plant's MuJoCo model and its nominal ``RobotModel`` (``rnea_sim --mjcf``).

The file is the robot as it is: MuJoCo compiles it (``MjSpec.from_file``: includes, defaults,
inertias from geoms, all its own rules; nothing in it is run), and its joints' armature,
damping and frictionloss, its geoms and contacts, its joint limits and equalities are the sim's
truth; no reality gap is added. The sim sets only what belongs to the simulation, not to the
robot: the timestep (1 / rate / substeps), the integrator (implicit-fast, as the URDF plant's)
and the gravity (the ``gravity`` parameter; a file that disables gravity keeps it disabled).
The nominal model, in ``RobotModel``'s layout, is ``load_mjcf`` of that compiled model
(``RobotModel.from_mjcf`` of the file, with the sim's gravity).

What the plant cannot take is refused by name (``MJCFError``, one line naming the file):

- a path (``<include file>``, ``<asset><model file>`` (for ``<attach>``), an asset's ``file``,
  ``<compiler meshdir texturedir assetdir>``) that is absolute or leads outside the file's
  folder (MuJoCo itself would read it: it takes ``../`` and absolute paths), in the file or in
  a file it includes or attaches, whatever the element's XML namespace (MuJoCo ignores them);
  an engine plugin's element (its configuration can name a file);
- a free or a ball joint (fixed-base robots with hinge and slide joints only), and whatever
  ``load_mjcf`` refuses (springs, tendons, ...);
- an actuator that is not a motor on a joint (no dynamics, fixed gain, no bias: a servo's bias
  would pull the joint with the plant's ``ctrl`` at 0), and engine plugins.

The plant applies the torques itself (``qfrc_applied``); the file's motors stay at ``ctrl`` 0
and bound the torque: a joint's effort limit is the smaller of its ``actuatorfrcrange`` and its
motor's ``ctrlrange`` times ``gear`` (``rnea_identify --mjcf`` writes both equal), none when
neither is given.
"""
from __future__ import annotations

from pathlib import Path
import warnings

import numpy as np

from rnea_ros.description import mjcf_paths
from rnea_ros.description.mjcf import load_mjcf, route_mujoco_warnings
from rnea_ros.description.mjcf_paths import local_name
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import MJCFError, ModelWarning

# Elements refused before MuJoCo reads the file: an engine plugin's configuration can name a
# file the plugin opens (and the plant refuses plugins, once compiled, anyway).
PLUGINS = ('extension', 'plugin', 'instance')


def check_paths(path: Path) -> None:
    """
    Raise ``MJCFError`` for a file that is no MJCF, a plugin or a path MuJoCo must not open.

    The root must be ``<mujoco>``; no plugin element in the file or one it includes or
    attaches; their paths as ``mjcf_paths.check_paths`` checks them.
    """
    found = mjcf_paths.documents(path)
    root = found[0][0]
    if local_name(root.tag) != 'mujoco':
        raise MJCFError(f'the root element is <{local_name(root.tag)}>: expected <mujoco> (an '
                        'MJCF file; a URDF goes to --urdf)')
    for root, _ in found:
        for element in root.iter():
            if local_name(element.tag) in PLUGINS:
                raise MJCFError(f'<{local_name(element.tag)}>: engine plugins are not '
                                'supported (they add forces the model has no counterpart for)')
    mjcf_paths.check_paths(path, found)


def _refuse_for_the_plant(mj) -> None:
    """Raise ``MJCFError`` for a free or ball joint, an actuator that is not a motor, a plugin."""
    import mujoco
    kinds = {int(mujoco.mjtJoint.mjJNT_FREE): 'free', int(mujoco.mjtJoint.mjJNT_BALL): 'ball'}
    for j in range(mj.njnt):
        if int(mj.jnt_type[j]) in kinds:
            raise MJCFError(f'joint {mj.joint(j).name!r} (body {mj.body(mj.jnt_bodyid[j]).name!r}'
                            f') is a {kinds[int(mj.jnt_type[j])]} joint: rnea_sim --mjcf takes '
                            'fixed-base robots (hinge and slide joints)')
    for a in range(mj.nu):
        motor = (mj.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT
                 and mj.actuator_dyntype[a] == mujoco.mjtDyn.mjDYN_NONE
                 and mj.actuator_gaintype[a] == mujoco.mjtGain.mjGAIN_FIXED
                 and mj.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_NONE)
        if not motor:
            raise MJCFError(f'actuator {mj.actuator(a).name or f"#{a}"!r} is not a motor on a '
                            'joint: rnea_sim applies the joint torques itself (expected '
                            '<motor joint=...> actuators, or none)')
    if mj.nplugin:
        raise MJCFError(f'{mj.nplugin} engine plugin(s): not supported (they add forces the '
                        'model has no counterpart for)')


def effort_limits(mj, joint_names) -> np.ndarray:
    """Return each joint's effort limit: ``actuatorfrcrange`` and motor ``ctrlrange`` x gear."""
    limits = []
    for name in joint_names:
        j = mj.joint(name).id
        limit = float(np.abs(mj.jnt_actfrcrange[j]).max()) if mj.jnt_actfrclimited[j] \
            else np.inf
        for a in np.flatnonzero(mj.actuator_trnid[:, 0] == j):
            if mj.actuator_ctrllimited[a]:
                limit = min(limit, abs(float(mj.actuator_gear[a, 0]))
                            * float(np.abs(mj.actuator_ctrlrange[a]).max()))
        limits.append(limit)
    return np.array(limits)


def compile_mjcf(path, *, timestep: float, gravity) -> tuple[object, RobotModel]:
    """
    Return (the plant's ``mujoco.MjModel``, the nominal ``RobotModel``) of the MJCF ``path``.

    See the module docstring; raises ``MJCFError`` naming the file and what is wrong.
    """
    import mujoco
    route_mujoco_warnings()
    where = f'MJCF {str(path)!r}'
    path = Path(path)
    if not path.is_file():
        raise MJCFError(f'{where}: no such file')
    try:
        check_paths(path)
        try:
            spec = mujoco.MjSpec.from_file(str(path))
            spec.option.timestep = timestep
            spec.option.gravity = list(gravity)
            spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
            mj = spec.compile()
        except ValueError as error:  # MuJoCo's compiler error, over several lines
            raise MJCFError(f'MuJoCo cannot compile it: {" ".join(str(error).split())}') \
                from None
        _refuse_for_the_plant(mj)
        with warnings.catch_warnings():  # MuJoCo judges the inertias (it refuses bad ones)
            warnings.simplefilter('ignore', ModelWarning)
            nominal = load_mjcf(mj, inertia_check='warn').model
    except MJCFError as error:
        raise MJCFError(f'{where}: {str(error).removeprefix("MJCF: ")}') from None
    return mj, nominal
