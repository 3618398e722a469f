"""
The node's payload: its four parameters read, checked together and applied to a model.

``payload.link``, ``payload.mass``, ``payload.com`` and ``payload.inertia`` (declared in
``declaration``) make one ``dynamics.payload.Payload``: a change to some of them is merged with
the current values of the others and checked as a whole (``check_payload``: finite, mass >= 0,
physically consistent inertia, within the bounds of ``dynamics.payload``; and, with a model,
a link of it not fixed to the world and a mass within the bound of the robot's), so a refused
set leaves the running payload as it was. ``payload.link`` set to '' removes the payload:
``removal`` gives the other three their defaults in the same set, so that no field of a
removed payload comes back with a later ``payload.link``. ``model_with`` gives the robot model
carrying the payload (``RobotModel.with_payload``). ROS-free: the node calls these from its
parameter callbacks, off the control path, and installs the model between two cycles.
"""
from __future__ import annotations

from rnea_ros.control.declaration import BY_NAME, PAYLOAD
from rnea_ros.control.settings import ParameterRejected
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.payload import check_payload, NO_PAYLOAD, Payload
from rnea_ros.errors import InputError
from rnea_ros.params.parameter import check

FIELDS = {name: name.split('.', 1)[1] for name in PAYLOAD}  # payload.mass -> mass


def merged(current: Payload, values: dict) -> Payload:
    """
    Return ``current`` with the payload parameters ``values`` (name -> value) set, checked.

    ValueError with one line naming the parameter: the declaration's words for a value of the
    wrong type, size or range, ``check_payload``'s for an inconsistent payload.
    """
    fields = {field: getattr(current, field) for field in FIELDS.values()}
    for name, value in values.items():
        fields[FIELDS[name]] = check(BY_NAME[name], value)
    return check_payload(Payload(**fields))


def removal(values: dict) -> dict:
    """
    Return the payload parameters a set of ``values`` (name -> value) resets: name -> default.

    ``payload.link`` set to '' removes the payload: ``payload.mass``, ``payload.com`` and
    ``payload.inertia`` go back to their defaults with it (whatever the set gave them).
    """
    if values.get('payload.link') != '':
        return {}
    return {name: BY_NAME[name].default for name in PAYLOAD if name != 'payload.link'}


def from_parameters(get) -> Payload:
    """Read the payload from ``get(name)`` (the node's parameter values), checked."""
    return merged(NO_PAYLOAD, {name: get(name) for name in PAYLOAD})


def model_with(model: RobotModel, payload: Payload) -> RobotModel:
    """
    Return ``model`` carrying ``payload`` (``model`` itself without one).

    ``ParameterRejected`` naming ``payload.link`` for a link the model lacks or fixes to the
    world, ``payload.mass`` for a mass beyond the bound of this robot's.
    """
    if not payload.link:
        return model
    try:
        return model.with_payload(payload.link, payload.mass, payload.com, payload.inertia)
    except InputError as exc:  # 'payload.link: unknown link ...': name it as a parameter
        raise ParameterRejected(str(exc).replace('payload.link:', "parameter 'payload.link':",
                                                 1)) from None


def describe(payload: Payload) -> str:
    """Say what the payload is, for the diagnostics and the log."""
    if not payload.link:
        return 'none'
    com = ', '.join(f'{x:g}' for x in payload.com)
    inertia = ', '.join(f'{x:g}' for x in payload.inertia)
    return (f'{payload.mass:g} kg on {payload.link!r}, com [{com}] m, inertia [{inertia}] '
            'kg m^2')
