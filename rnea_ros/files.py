"""
A file a user names (an option, a parameter, a manifest entry), read as a regular file, bounded.

``read_bytes(path, what)`` and ``read_text(path, what)`` open the file without blocking (a FIFO
would wait for a writer), refuse anything but a regular file (a FIFO, a device such as
``/dev/zero``, a socket, a directory) and a file of more than ``limit`` bytes before reading
it, and read at most ``limit`` bytes (a file that grows while it is read is refused too).
``check_regular(path, what)`` refuses the same files for a reader that opens the path itself
(xacro, NumPy, MuJoCo). Every refusal is one ``FileError``: ``cannot read WHAT 'PATH': REASON``.

Every package may import this module (as ``errors``): the tools, the node's loaders, the sim.
"""
from __future__ import annotations

import os
import stat

from rnea_ros.errors import InputError, not_utf8

__all__ = ['check_regular', 'FileError', 'MAX_BYTES', 'read_bytes', 'read_text']

MAX_BYTES = 64 * 1024 * 1024  # a robot description, a parameters or trajectory file: far less
_KINDS = ((stat.S_ISDIR, 'Is a directory'), (stat.S_ISFIFO, 'a FIFO'),
          (stat.S_ISCHR, 'a character device'), (stat.S_ISBLK, 'a block device'),
          (stat.S_ISSOCK, 'a socket'))


class FileError(InputError):
    """A file a user named cannot be read: ``cannot read WHAT 'PATH': REASON``."""

    def __init__(self, path, what: str, why: str):
        super().__init__(f'cannot read {what} {str(path)!r}: {why}')
        self.path, self.what, self.why = path, what, why


def _refusal(mode: int) -> str | None:
    """Say why a file of ``mode`` is not read (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    for test, kind in _KINDS:
        if test(mode):
            return kind if kind.startswith('Is ') else f'not a regular file ({kind})'
    return 'not a regular file'


def check_regular(path, what: str, limit: int = MAX_BYTES) -> None:
    """Raise ``FileError`` unless ``path`` is a regular file of at most ``limit`` bytes."""
    try:
        status = os.stat(path)
    except OSError as exc:
        raise FileError(path, what, exc.strerror or str(exc)) from None
    _check(status, path, what, limit)


def _check(status: os.stat_result, path, what: str, limit: int) -> None:
    why = _refusal(status.st_mode)
    if why is None and status.st_size > limit:
        why = f'{status.st_size} bytes: expected at most {limit}'
    if why is not None:
        raise FileError(path, what, why)


def read_bytes(path, what: str, limit: int = MAX_BYTES) -> bytes:
    """
    Return the bytes of the regular file ``path``, at most ``limit`` of them.

    ``what`` names the file in the error (``--urdf``, ``trajectory file``). Raises
    ``FileError`` for a missing or unreadable file, anything but a regular file, and a file of
    more than ``limit`` bytes.
    """
    try:  # O_NONBLOCK: opening a FIFO does not wait for a writer
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise FileError(path, what, exc.strerror or str(exc)) from None
    try:
        _check(os.fstat(descriptor), path, what, limit)
    except BaseException:
        os.close(descriptor)
        raise
    with os.fdopen(descriptor, 'rb') as file:
        try:
            data = file.read(limit + 1)
        except OSError as exc:
            raise FileError(path, what, exc.strerror or str(exc)) from None
    if len(data) > limit:  # it grew since fstat
        raise FileError(path, what, f'more than {limit} bytes: expected at most {limit}')
    return data


def read_text(path, what: str, limit: int = MAX_BYTES) -> str:
    """Return the UTF-8 text of the regular file ``path`` (``read_bytes``; not UTF-8 refused)."""
    try:
        return read_bytes(path, what, limit).decode('utf-8')
    except UnicodeDecodeError as exc:
        raise FileError(path, what, not_utf8(exc)) from None
