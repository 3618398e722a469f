"""The exceptions of rnea_ros: one base class, one subclass per kind of fault."""
from __future__ import annotations


class RneaError(Exception):
    """Base class of every error raised by rnea_ros."""


class URDFError(RneaError, ValueError):
    """The URDF text cannot give a correct dynamics model; the message names the element."""


class InputError(RneaError, ValueError):
    """An argument of a dynamics call has the wrong size or a non-finite value."""


class ModelWarning(UserWarning):
    """The model loads, but something in it is probably not what the author meant."""
