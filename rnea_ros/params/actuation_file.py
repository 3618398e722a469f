"""
The actuation model's file: an ``Actuation`` as a node parameters file, and back.

``read_actuation(path, model)`` reads a node parameters file (``/**:`` -> ``ros__parameters:``)
into the model's ``Actuation`` (``Actuation.from_parameters``); ``actuation_yaml(actuation)``
writes one, its header saying the model's terms and units. The numbers are the model's
(``rnea_ros.dynamics.actuation``); the file is ROS parameters, read and written by
``params_file``.
"""
from __future__ import annotations

import os

import numpy as np

from rnea_ros.dynamics.actuation import Actuation, FRICTION_FIELDS
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import InputError
from rnea_ros.params import params_file


def read_actuation(path: str | os.PathLike, model: RobotModel) -> Actuation:
    """
    Read a node parameters file (``/**:`` -> ``ros__parameters:``, see ``actuation_yaml``).

    Every node section's ``ros__parameters`` is read, in file order; nested keys are joined
    with '.' as ROS does. Raises ``InputError`` naming the file for a malformed one.
    """
    params = params_file.read(path, 'the actuation model')
    try:
        return Actuation.from_parameters(model, params)
    except InputError as exc:
        raise InputError(f'{path}: {exc}') from None


def actuation_yaml(actuation: Actuation) -> str:
    """Write the model as a node parameters file (``/**:`` -> ``ros__parameters:``)."""
    rows = {name: row for row, name in enumerate(actuation.joint_names) if name}
    params = {'friction_model': actuation.friction_model,
              'friction_velocity_threshold': actuation.velocity_threshold,
              'friction': {joint: {term: float(getattr(actuation, term)[row])
                                   for term in FRICTION_FIELDS}
                           for joint, row in rows.items()},
              'armature': {joint: float(actuation.armature[row]) for joint, row in rows.items()},
              'effort_bias': {joint: float(actuation.effort_bias[row])
                              for joint, row in rows.items()}}
    if np.any(actuation.effort_gain != 1.0):  # a torque sensor's model stays as it was
        params['effort_gain'] = {joint: float(actuation.effort_gain[row])
                                 for joint, row in rows.items()}
    header = ('# Actuation model of rnea_ros (rnea_ros/dynamics/actuation.py): per joint\n'
              '# tau += armature*a + coulomb*tanh(v/friction_velocity_threshold)'
              ' + viscous*v + offset\n'
              '# (N m, N m s/rad, N m, kg m^2; N, N s/m, N, kg for prismatic joints);\n'
              "# effort_bias (N m; N): the effort sensor's bias, taken out of the measured "
              'effort, never applied\n')
    if 'effort_gain' in params:
        header += ('# effort_gain (N m or N per unit of the effort, e.g. per A): measured '
                   'torque = effort_gain * effort - effort_bias\n')
    return params_file.write(params, header)
