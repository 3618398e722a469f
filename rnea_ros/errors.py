"""
The exceptions of rnea_ros (one base class, one per kind of fault), and the tools' parser.

``UsageParser`` makes a usage error one line; ``Bounded`` is the argparse ``type`` of every
numeric command-line option: its bounds declared once, a value beyond them one line naming
the option and the bounds (every tool's parser, ``rnea_ros.tools.options`` among them).
"""
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


class Bounded:
    """
    An argparse ``type``: a number of ``kind`` (int or float) from ``low`` to ``high``.

    ``words``: texts taken as they are besides the numbers (``auto``); ``exact``: return the
    text of a number within the bounds, not the number (a decimal the caller converts exactly).
    A value beyond the bounds, NaN or not a number raises ``ArgumentTypeError``:
    ``'TEXT': expected an integer from LOW to HIGH`` (argparse adds ``argument --FLAG: ``).
    """

    def __init__(self, kind: type, low: float, high: float, words: tuple = (),
                 exact: bool = False):
        self.kind, self.low, self.high, self.words, self.exact = kind, low, high, words, exact
        self.__name__ = kind.__name__  # argparse's name of the type

    @property
    def expected(self) -> str:
        """Say what the option takes: ``an integer from 2 to 12``."""
        what = 'an integer' if self.kind is int else 'a number'
        words = ''.join(f'{word!r} or ' for word in self.words)
        return f'{words}{what} from {self.low:g} to {self.high:g}'

    def within(self, value) -> bool:
        """Tell whether ``value`` is one of the words or a number within the bounds (not NaN)."""
        if isinstance(value, str):
            return value in self.words
        kinds = int if self.kind is int else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds):
            return False
        try:
            return self.low <= float(value) <= self.high
        except OverflowError:  # an integer beyond a float's range
            return False

    def __call__(self, text: str):
        """Return the number of ``text``; ``ArgumentTypeError`` naming it when out of bounds."""
        if text in self.words:
            return text
        try:
            value = self.kind(text)
        except (ValueError, OverflowError):
            value = None
        if value is None or not self.within(value):
            shown = text if len(text) <= 40 else text[:37] + '...'
            raise argparse.ArgumentTypeError(f'{shown!r}: expected {self.expected}')
        return text if self.exact else value


def reason(exc: BaseException) -> str:
    """
    Return the message of ``exc`` on one line, or its type when it has none (a MemoryError).

    A message over several lines (a YAML parser's, with the line it points at) is joined with
    spaces: a tool's error is one line.
    """
    return ' '.join(line.strip() for line in str(exc).splitlines() if line.strip()) \
        or type(exc).__name__
