"""
Robot description files: a URDF, or a xacro file expanded into one.

Most ROS 2 robots describe themselves in ``.urdf.xacro`` files: XML with macros, properties and
arguments that the ``xacro`` tool expands into URDF. ``read_robot_description`` reads either
kind; ``unexpanded_xacro`` tells why a text handed over as URDF is in fact unexpanded xacro, so
that the parser can say so instead of failing on an undefined link or a ``${...}`` number.

The ``xacro`` package (PyPI, or the ROS ``xacro`` package) is imported only to expand a file,
and only in the child process that expands it (``xacro_process``): ``import rnea_ros`` does not
need it. A file is expanded only when the caller asks for it (a ``.xacro`` name, or xacro
arguments): a ``.urdf`` file whose text is xacro is refused like xacro text handed over as URDF.
xacro evaluates its ``${...}`` expressions with Python's ``eval`` (a sandbox that can be
escaped) and reads the environment and files; the expansion here lets through only what
``xacro_guard`` allows, and runs within the limits of ``xacro_process.LIMITS``.
"""
from __future__ import annotations

import argparse
from collections.abc import Mapping
import os
from pathlib import Path
import re
import xml.etree.ElementTree as ET

from rnea_ros.description.xacro_process import expand_in_process, LIMITS, XacroLimits
from rnea_ros.errors import InputError, URDFError
from rnea_ros.files import check_regular, read_text

XACRO_SUFFIX = '.xacro'
# xacro substitutions: ${expression} (properties, math) and $(arg x), $(find pkg), ...
_SUBSTITUTION = re.compile(r'\$[{(]')
HOW_TO_EXPAND = ('expand it first: `xacro robot.urdf.xacro name:=value > robot.urdf` (in a '
                 'launch file: Command(["xacro ", path])), or name the file robot.urdf.xacro '
                 'and load it with RobotModel.from_urdf_file(path, xacro_args={...})')


def parse_xacro_arg(text: str) -> tuple[str, str]:
    """
    Split one ``name:=value`` xacro argument, as the xacro command takes them.

    For command lines (argparse ``type=``, with ``action='append'``: ``dict()`` of the list is
    the ``xacro_args`` mapping). Raises ``argparse.ArgumentTypeError`` naming the text when it
    has no ``:=`` or no name.
    """
    name, separator, value = text.partition(':=')
    if not separator or not name.strip():
        raise argparse.ArgumentTypeError(f'expected a xacro argument name:=value, got {text!r}')
    return name.strip(), value


def is_xacro_file(path: str | os.PathLike) -> bool:
    """Tell whether a file name ends in ``.xacro`` (``robot.urdf.xacro``, ``robot.xacro``)."""
    return Path(path).name.endswith(XACRO_SUFFIX)


def expand_xacro(path: str | os.PathLike, xacro_args: Mapping[str, str] | None = None, *,
                 limits: XacroLimits = LIMITS) -> str:
    """
    Expand a xacro file into URDF text with the ``xacro`` package, in a process of its own.

    ``xacro_args``: the file's ``<xacro:arg>`` values by name, as ``name:=value`` on the xacro
    command line (values are text; numbers are turned into text). Any xacro failure (missing
    include, undefined argument or property, bad XML), any expression or substitution that
    ``xacro_guard`` refuses, and an expansion past ``limits`` (CPU time, memory, wall time; see
    ``xacro_process``) raise ``URDFError`` naming the file and the reason; a missing file, or
    anything but a regular file, raises ``FileError``. Nothing an expansion does outlives it:
    the next one starts afresh.
    """
    if xacro_args is not None and not isinstance(xacro_args, Mapping):
        raise InputError('xacro_args: expected a mapping name -> value, got '
                         f'{type(xacro_args).__name__}')
    check_regular(path, 'the robot description')  # a FIFO would hold the child until killed
    # xacro takes text, as from its command line: 0.5 and True become '0.5' and 'True'.
    mappings = {str(name): str(value) for name, value in (xacro_args or {}).items()}
    return expand_in_process(str(path), mappings, limits)


def read_robot_description(path: str | os.PathLike,
                           xacro_args: Mapping[str, str] | None = None) -> str:
    """
    Read the URDF text of a file, expanded with xacro when the caller asks for it.

    A file is expanded when its name ends in ``.xacro`` or when ``xacro_args`` is given; any
    other file is returned as it is, whatever its text: the URDF parser refuses unexpanded xacro
    (``refuse_xacro``), so a downloaded "URDF" never runs xacro. A missing or unreadable file,
    anything but a regular file (a FIFO, ``/dev/zero``) and one of more than
    ``files.MAX_BYTES`` raise ``FileError``.
    """
    if is_xacro_file(path) or xacro_args:
        return expand_xacro(path, xacro_args)
    return read_text(path, 'the robot description')


def unexpanded_xacro(xml: str, robot: ET.Element | None = None) -> str | None:
    """
    Say what shows that URDF text is unexpanded xacro (None if nothing does).

    Evidence: a ``xacro:`` element (declared or not), or a ``${...}``/``$(...)`` substitution
    in an attribute of a link or joint. ``robot`` is the parsed root when the caller has it.
    """
    if robot is None:
        try:
            robot = ET.fromstring(xml)
        except ET.ParseError as exc:
            match = re.search(r'<(xacro:[\w.-]+)', xml)
            if 'unbound prefix' in str(exc) and match:
                return f'element <{match.group(1)}> (xacro namespace not declared)'
            return None
    for element in robot.iter():
        namespace, _, tag = element.tag.rpartition('}')
        if 'xacro' in namespace:
            return f'element <xacro:{tag}>'
    for kind in ('link', 'joint'):
        for element in robot.findall(kind):
            for sub in element.iter():
                for attribute, value in sub.attrib.items():
                    if _SUBSTITUTION.search(value):
                        return (f'{kind} {element.get("name")!r}: <{sub.tag} {attribute}='
                                f'"{value}">')
    return None


def refuse_xacro(xml: str, robot: ET.Element | None = None) -> None:
    """Raise ``URDFError`` saying how to expand ``xml`` if it is unexpanded xacro."""
    evidence = unexpanded_xacro(xml, robot)
    if evidence is not None:
        raise URDFError(f'this is unexpanded xacro, not URDF ({evidence}): {HOW_TO_EXPAND}')
