"""
A file a user names (an option, a parameter, a manifest entry), read as a regular file, bounded.

``read_bytes(path, what)`` and ``read_text(path, what)`` open the file without blocking (a FIFO
would wait for a writer), refuse anything but a regular file (a FIFO, a device such as
``/dev/zero``, a socket, a directory) and a file of more than ``limit`` bytes before reading
it, and read at most ``limit`` bytes (a file that grows while it is read is refused too).
``check_regular(path, what)`` refuses the same files for a reader that opens the path itself
(xacro, NumPy, MuJoCo); ``open_regular(path, what)`` opens one for a reader that takes a file
object (pyarrow's CSV and Parquet readers), read no further than ``limit``. Every refusal is
one ``FileError``: ``cannot read WHAT 'PATH': REASON``.

``load_yaml(text)`` is the one YAML reader of the package (PyYAML's safe loader, imported by the
function only): aliases may repeat at most ``MAX_ALIAS_NODES`` nodes beyond the document's own
(a 300-byte alias bomb expands to billions), and a node holding an alias of itself is refused,
both before anything is built; nesting too deep for the parser, malformed YAML and a value
PyYAML cannot build (an integer of more than 4300 digits) raise ``YamlError``, one line.
``brief(value)`` is the text of a value an error shows: bounded in length and depth, however
large the value (``reprlib``); ``finite_number(value)`` tells a number a float holds, finite
(an integer of 400 digits is not one).

Every package may import this module (as ``errors``): the tools, the node's loaders, the sim.
"""
from __future__ import annotations

import io
import math
import os
import reprlib
import stat

from rnea_ros.errors import InputError, not_utf8

__all__ = ['brief', 'check_regular', 'FileError', 'finite_number', 'load_yaml',
           'MAX_ALIAS_NODES', 'MAX_BYTES', 'open_regular', 'read_bytes', 'read_text',
           'YamlError']

MAX_BYTES = 64 * 1024 * 1024  # a robot description, a parameters or trajectory file: far less
MAX_ALIAS_NODES = 100_000  # nodes YAML aliases may repeat: a few anchors reused, not a bomb
_BRIEF = reprlib.Repr()  # Python 3.11's takes no keywords
_BRIEF.maxlevel, _BRIEF.maxdict, _BRIEF.maxlist, _BRIEF.maxtuple, _BRIEF.maxset = 2, 4, 6, 6, 4
_BRIEF.maxstring, _BRIEF.maxlong, _BRIEF.maxother = 60, 40, 60
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


def _descriptor(path, what: str, limit: int) -> int:
    """Open ``path`` without blocking: its descriptor, a regular file within ``limit``."""
    try:  # O_NONBLOCK: opening a FIFO does not wait for a writer
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise FileError(path, what, exc.strerror or str(exc)) from None
    try:
        _check(os.fstat(descriptor), path, what, limit)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def read_bytes(path, what: str, limit: int = MAX_BYTES) -> bytes:
    """
    Return the bytes of the regular file ``path``, at most ``limit`` of them.

    ``what`` names the file in the error (``--urdf``, ``trajectory file``). Raises
    ``FileError`` for a missing or unreadable file, anything but a regular file, and a file of
    more than ``limit`` bytes.
    """
    with os.fdopen(_descriptor(path, what, limit), 'rb') as file:
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


class _Capped(io.RawIOBase):
    """A regular file read at most ``limit`` bytes far: past it (it grew), ``FileError``."""

    def __init__(self, file, path, what: str, limit: int):
        super().__init__()
        self.file, self.path, self.what, self.limit = file, path, what, limit

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self.file.seek(offset, whence)

    def tell(self) -> int:
        return self.file.tell()

    def readinto(self, buffer) -> int:
        try:
            count = self.file.readinto(buffer)
        except OSError as exc:
            raise FileError(self.path, self.what, exc.strerror or str(exc)) from None
        if self.file.tell() > self.limit:
            raise FileError(self.path, self.what,
                            f'more than {self.limit} bytes: expected at most {self.limit}')
        return count

    def close(self) -> None:
        self.file.close()
        super().close()


def open_regular(path, what: str, limit: int = MAX_BYTES) -> io.BufferedReader:
    """
    Open the regular file ``path`` for reading in binary, at most ``limit`` bytes of it.

    For a reader that takes a file object (pyarrow, ``csv``): opened without blocking, refused
    as ``read_bytes`` refuses (``FileError``) before anything is read, and read no further
    than ``limit`` bytes (a file that grows past it while it is read raises ``FileError``).
    Seekable; the caller closes it (a context manager).
    """
    descriptor = _descriptor(path, what, limit)
    return io.BufferedReader(_Capped(os.fdopen(descriptor, 'rb', buffering=0), path, what,
                                     limit))


class YamlError(InputError):
    """Text that is no YAML document the package reads; the message is one line."""


def finite_number(value) -> bool:
    """Tell whether a value read from a file is a number (no bool) a float holds, finite."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond a float's range (10**400)
        return False


def brief(value) -> str:
    """Return a bounded repr of ``value`` (a value from a file: any size, any depth)."""
    return _BRIEF.repr(value)


def load_yaml(text: str):
    """
    Return the document of YAML ``text``, built by PyYAML's safe loader, bounded.

    Raises ``YamlError`` (one line: the problem and where) for malformed YAML, nesting too
    deep for the parser, aliases repeating more than ``MAX_ALIAS_NODES`` nodes or a node
    holding an alias of itself (both refused before anything is built), and a value the loader
    cannot build (an integer of more than 4300 digits).
    """
    import yaml  # PyYAML, for the files only: importing the dynamics needs numpy and numba
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _check_aliases(root)
        return loader.construct_document(root)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = f' at line {mark.line + 1}, column {mark.column + 1}' if mark else ''
        problem = ' '.join(str(getattr(exc, 'problem', None) or exc).split())
        raise YamlError(f'malformed YAML: {problem}{where}') from None
    except RecursionError:
        raise YamlError('nested too deeply for the parser') from None
    except YamlError:
        raise
    except ValueError as exc:  # int('9' * 5000): Python's bound on the digits of an integer
        why = str(exc).split(':')[0][:80]
        raise YamlError(f'a value that cannot be built ({why})') from None
    finally:
        loader.dispose()


def _check_aliases(root) -> None:
    """Refuse a node graph whose aliases expand it by more than ``MAX_ALIAS_NODES`` nodes."""
    size: dict[int, int] = {}  # id(node) -> the number of nodes it expands to
    distinct = 0
    pending = [(root, False)]
    open_nodes: set[int] = set()
    while pending:  # a post-order walk without recursion: nesting is only bounded by memory
        node, done = pending.pop()
        key = id(node)
        children = _children(node)
        if done:
            open_nodes.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in children)
            if size[key] - distinct > MAX_ALIAS_NODES:
                raise YamlError(f'YAML aliases repeat more than {MAX_ALIAS_NODES} nodes '
                                '(expected a document without alias bombs)')
            continue
        if key in size:
            continue
        if key in open_nodes:
            mark = node.start_mark
            raise YamlError(f'a node holding an alias of itself at line {mark.line + 1}, column '
                            f'{mark.column + 1} (expected a finite document)')
        open_nodes.add(key)
        distinct += 1
        pending.append((node, True))
        pending.extend((child, False) for child in children if id(child) not in size)


def _children(node) -> list:
    """Return the nodes a YAML node holds (a mapping's keys and values)."""
    if isinstance(node.value, list):
        return [item for entry in node.value
                for item in (entry if isinstance(entry, tuple) else (entry,))]
    return []
