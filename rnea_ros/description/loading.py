"""
What every tool does with a file option and with a URDF: each failure one line naming the file.

``read_file_option`` reads the file of an option (``--urdf``, ``--actuation``...): a missing
or unreadable file, a directory or bytes that are not UTF-8 text raise ``InputError``
``cannot read FLAG 'PATH': REASON``. ``urdf_model`` builds the model of URDF text, its errors
prefixed with where the text came from, and refuses a robot without a moving joint.
"""
from __future__ import annotations

from pathlib import Path

from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import InputError, not_utf8, URDFError


def read_file_option(flag: str, path, read=None):
    """
    Return ``read(path)`` (default: the file's UTF-8 text), the file of the option ``flag``.

    A missing or unreadable file, a directory, or bytes that are not UTF-8 text raise
    ``InputError``: ``cannot read FLAG 'PATH': REASON``.
    """
    try:
        return read(path) if read else Path(path).read_text(encoding='utf-8')
    except OSError as exc:
        why = exc.strerror or str(exc)
    except UnicodeDecodeError as exc:
        why = not_utf8(exc)
    raise InputError(f'cannot read {flag} {str(path)!r}: {why}')


def urdf_model(xml: str, source: str, **keywords) -> RobotModel:
    """
    Return the model of URDF text from ``source`` (``RobotModel.from_urdf_string`` keywords).

    A URDF error is prefixed with ``source`` (``--urdf 'PATH'``); a robot without a one-DoF
    joint (revolute, continuous, prismatic) is refused: a tool has nothing to compute for it.
    """
    try:
        model = RobotModel.from_urdf_string(xml, **keywords)
    except URDFError as exc:
        raise URDFError(f'{source}: {exc}') from None
    if not any(joint.nv == 1 for joint in model.joints):
        raise InputError(f'{source}: the robot {model.name!r} has no moving joint (revolute, '
                         'continuous or prismatic)')
    return model
