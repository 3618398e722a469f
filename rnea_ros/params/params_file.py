"""
Node parameter files (``/**:`` -> ``ros__parameters:``): every tool reads and writes them here.

``read(path, what)`` returns the parameters of a file, flat names -> values: every node
section's ``ros__parameters``, in file order, nested keys joined with '.' as ROS does. A file
that is no parameters file, or one built to exhaust the reader, is refused with one line
naming the file (``InputError``): not readable, not a regular file (a FIFO, a device),
larger than ``files.MAX_BYTES``, not UTF-8, malformed YAML (the problem and where, on one
line), nested too deeply for the parser, names nested deeper than ``MAX_DEPTH``
levels, more than ``MAX_PARAMETERS`` parameters (YAML aliases repeating a mapping).

``write(params, header)`` returns the text of a file of ``params`` (flat names or nested
mappings, in their order) under ``/**:`` (every node given the file), after ``header`` (comment
lines). Numbers are written so that they read back exactly (PyYAML's float: the shortest
repr, with a '.' so that a YAML 1.1 reader takes it for a float); lists on one line
(``[0.1, 0.2]``); a non-finite number is refused.

The node reads its ``--params-file`` through rclpy; the tools (``rnea_bag``,
``rnea_identify``, the actuation model) read and write through this module. ROS-free; PyYAML is
imported by the functions only (importing the library needs numpy and numba alone).
"""
from __future__ import annotations

from collections.abc import Mapping
import functools
import math
import os

from rnea_ros.errors import InputError
from rnea_ros.files import FileError, load_yaml, read_text, YamlError

__all__ = ['MAX_DEPTH', 'MAX_PARAMETERS', 'read', 'write']

MAX_PARAMETERS = 100_000  # in one parameters file: more is a file built to exhaust the reader
MAX_DEPTH = 100  # levels of nested names (a.b.c: 3)
FILE_FORM = '/**: ros__parameters: {...}'
# Lines are never folded: a list of numbers stays on its line, as ROS users write it.
UNFOLDED = 1 << 30


def read(path: str | os.PathLike, what: str = 'the parameters') -> dict:
    """
    Return the parameters of a node parameters file, flat names -> values.

    Every node section's ``ros__parameters`` is read, in file order; nested keys are joined
    with '.' as ROS does. Raises ``InputError`` naming the file (and ``what`` it should hold)
    for a malformed one.
    """
    try:
        document = load_yaml(read_text(path, what))
    except FileError as exc:
        raise InputError(f'{path}: cannot read {what}: {exc.why}') from None
    except YamlError as exc:
        raise InputError(f'{path}: cannot read {what}: {exc}') from None
    sections = [section.get('ros__parameters') for section in document.values()
                if isinstance(section, dict)] if isinstance(document, dict) else []
    sections = [section for section in sections if isinstance(section, dict)]
    if not sections:
        raise InputError(f'{path}: expected a ROS 2 parameters file: {FILE_FORM}')
    params: dict = {}
    for section in sections:
        _flatten(section, '', params, path)
    return params


def _flatten(section: Mapping, prefix: str, flat: dict, path, depth: int = 1) -> None:
    """Add the parameters of ``section`` to ``flat``, nested keys joined with '.'."""
    if depth > MAX_DEPTH:
        raise InputError(f'{path}: parameter names nested deeper than {MAX_DEPTH} levels under '
                         f'{prefix[:80]!r}...')
    for key, value in section.items():
        name = f'{prefix}{key}'
        if isinstance(value, Mapping):
            _flatten(value, name + '.', flat, path, depth + 1)
        else:
            flat[name] = value
            if len(flat) > MAX_PARAMETERS:
                raise InputError(f'{path}: more than {MAX_PARAMETERS} parameters (YAML '
                                 'aliases repeating a mapping?)')


def write(params: Mapping, header: str = '', *, quoted_strings: bool = False) -> str:
    """
    Return the node parameters file of ``params``, keyed ``/**`` (any node name), as text.

    ``params``: names -> values (bool, int, float, str, lists of them), flat (``a.b``) or
    nested mappings, written in their order. ``header``: comment lines ('#' each, every one
    ending with a newline), written first. ``quoted_strings``: every string in double quotes
    (``payload.link: "tool0"``); otherwise quoted only where YAML needs it. Raises ValueError
    for a non-finite number or a header line that is not a comment.
    """
    import yaml
    if header and (not header.endswith('\n')
                   or any(not line.startswith('#') for line in header.splitlines())):
        raise ValueError(f'a parameters file header is comment lines, got {header!r}')
    _check_finite(params, '')
    if quoted_strings:
        params = _quoted(params)
    return header + yaml.dump({'/**': {'ros__parameters': params}}, Dumper=_dumper(),
                              sort_keys=False, default_flow_style=False, width=UNFOLDED)


class _Quoted(str):
    """A string value written in double quotes."""


def _quoted(value):
    """Return ``value`` with every string value (not the names) a ``_Quoted``."""
    if isinstance(value, Mapping):
        return {key: _quoted(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_quoted(item) for item in value]
    return _Quoted(value) if isinstance(value, str) else value


def _check_finite(value, name: str) -> None:
    """Refuse NaN and infinities: they read back as other values, or none a node takes."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            _check_finite(item, f'{name}.{key}' if name else str(key))
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_finite(item, name)
    elif isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f'parameter {name!r} is {value!r}: a parameters file holds finite '
                         'numbers')


@functools.cache
def _dumper():
    """Return PyYAML's safe dumper, with lists on one line and ``_Quoted`` in double quotes."""
    import yaml

    class Dumper(yaml.SafeDumper):
        """Lists in flow style; NumPy's floats as floats; no anchors (``&id001``)."""

        def ignore_aliases(self, data) -> bool:
            return True

    def sequence(dumper, data):
        return dumper.represent_sequence('tag:yaml.org,2002:seq', data, flow_style=True)

    def number(dumper, data):
        return dumper.represent_float(float(data))

    Dumper.add_representer(list, sequence)
    Dumper.add_representer(tuple, sequence)
    Dumper.add_multi_representer(float, number)  # a float subclass (numpy.float64)
    Dumper.add_representer(_Quoted, lambda dumper, data: dumper.represent_scalar(
        'tag:yaml.org,2002:str', str(data), style='"'))
    return Dumper
