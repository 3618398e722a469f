"""
What every tool does with a file option and with a URDF: each failure one line naming the file.

``read_file_option`` reads the file of an option (``--urdf``, ``--actuation``...): a missing
or unreadable file, anything but a regular file (a directory, a FIFO, ``/dev/zero``), one over
``files.MAX_BYTES`` or bytes that are not UTF-8 text raise ``FileError``
``cannot read FLAG 'PATH': REASON``. ``urdf_model`` builds the model of URDF text, its errors
prefixed with where the text came from, and refuses a robot without a moving joint.
"""
from __future__ import annotations

from rnea_ros.dynamics.model import RobotModel
from rnea_ros.errors import InputError, not_utf8, URDFError
from rnea_ros.files import FileError, read_text


def read_file_option(flag: str, path, read=None):
    """
    Return ``read(path)`` (default: the file's UTF-8 text), the file of the option ``flag``.

    A missing or unreadable file, anything but a regular file, or bytes that are not UTF-8 text
    raise ``FileError``: ``cannot read FLAG 'PATH': REASON``.
    """
    try:
        return read(path) if read else read_text(path, flag)
    except FileError as exc:  # a reader's own name for the file: the option's instead
        why = exc.why
    except OSError as exc:
        why = exc.strerror or str(exc)
    except UnicodeDecodeError as exc:
        why = not_utf8(exc)
    raise FileError(path, flag, why)


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
