"""The exceptions of rnea_ros (one base class, one per kind of fault), and the tools' parser."""
from __future__ import annotations

import argparse


class RneaError(Exception):
    """Base class of every error raised by rnea_ros."""


class MachineError(RneaError):
    """The machine or the network failed, not the input: a full disk, a cluster (exit status 1)."""


class URDFError(RneaError, ValueError):
    """The URDF text cannot give a correct dynamics model; the message names the element."""


class MJCFError(URDFError):
    """The MJCF file cannot give a correct dynamics model; the message names the element."""


class InputError(RneaError, ValueError):
    """An argument of a dynamics call has the wrong size or a non-finite value."""


def not_utf8(exc: UnicodeDecodeError) -> str:
    """Say where a file's bytes stop being UTF-8 text, for an error naming the file."""
    return f'not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})'


class ModelWarning(UserWarning):
    """The model loads, but something in it is probably not what the author meant."""


class UsageParser(argparse.ArgumentParser):
    """
    The command-line parser of every tool: a usage error is one line and exit status 2.

    argparse prints the whole usage before its error line; a tool's bad input is the one line
    ``PROG: error: MESSAGE`` naming it, as every other bad input (``--help`` shows the usage).
    """

    def error(self, message: str):
        """Print ``PROG: error: MESSAGE`` on stderr and exit with status 2."""
        self.exit(2, f'{self.prog}: error: {message}\n')


def reason(exc: BaseException) -> str:
    """
    Return the message of ``exc`` on one line, or its type when it has none (a MemoryError).

    A message over several lines (a YAML parser's, with the line it points at) is joined with
    spaces: a tool's error is one line.
    """
    return ' '.join(line.strip() for line in str(exc).splitlines() if line.strip()) \
        or type(exc).__name__
