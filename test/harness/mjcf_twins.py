"""
The UR5 with armature, viscous and Coulomb friction on every joint, written two ways.

``identified_xml``: as ``rnea_identify --mjcf`` writes identified.xml (``mjcf_out``), for
``rnea_sim --mjcf``; ``joint_terms_gap``: the gap file of the same joint terms, for the URDF.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from harness.oracle import robot_path
import numpy as np

from rnea_ros import RobotModel
from rnea_ros.dynamics.actuation import Actuation
from rnea_ros.identify import mjcf_out

UR5 = robot_path('ur5')


def joint_terms(model: RobotModel) -> Actuation:
    """Return armature, viscous and Coulomb friction for every joint of ``model``."""
    n = model.nv
    return dataclasses.replace(Actuation.zeros(model), armature=np.linspace(0.05, 0.2, n),
                               viscous=np.linspace(0.1, 0.6, n), coulomb=np.linspace(0.2, 0.7, n))


def identified_xml(folder: Path) -> Path:
    """Write the UR5 with joint terms as ``rnea_identify --mjcf`` does; return its path."""
    ur5 = RobotModel.from_urdf_file(UR5)
    path = folder / mjcf_out.FILE_NAME
    path.write_text(mjcf_out.mjcf_text(ur5, joint_terms(ur5)))
    return path


def joint_terms_gap(model: RobotModel, terms: Actuation) -> str:
    """Return the gap YAML of the same joint terms (and nothing else) for the URDF plant."""
    return 'joints:\n' + ''.join(
        f'  {name}: {{armature: {float(terms.armature[k])!r}, '
        f'coulomb: {float(terms.coulomb[k])!r}, viscous: {float(terms.viscous[k])!r}}}\n'
        for k, name in enumerate(model.joint_names))
