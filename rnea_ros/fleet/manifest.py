"""
A fleet manifest (``rnea_fleet --manifest FILE``): each robot with its URDF, actuation model, bags.

The file is YAML::

    robots:
      arm_a:                       # the robot's name
        urdf: urdf/panda.urdf      # optional: else the robot_description of each bag
        actuation: arm_a.yaml      # optional: as --actuation
        bags: [bags/arm_a/*]       # paths or glob patterns: bags or directories of bags
      ur_1:
        urdf: /opt/robots/ur5.urdf
        bags: [bags/ur_1/**/*.mcap]

Relative paths are relative to the folder of the manifest; absolute ones are taken as the
user wrote them. A pattern (``*``, ``?``, ``[...]``, ``**`` for any depth) names what it
matches, in sorted order; each match, or a plain path, is a bag or a directory searched for
bags as ``rnea_fleet`` searches its arguments, or a file that is no bag (passed over: a pattern
may match a folder's other files); whatever lies in the output directory is left out (its
``--write-bag`` bags are results). Every bag is analysed with its robot's URDF and
actuation model: robots of different models run together.

A manifest that cannot be used is refused before anything is written, with one
``InputError`` line naming the file and the field (``robots.arm_a.bags[1]``) and what was
expected: not UTF-8, not YAML, not ``robots:`` with a mapping of names, an unknown field, a
field of the wrong type, a URDF or actuation model that cannot be read (or a URDF that is not
XML), a pattern that matches nothing or a FIFO, a device or a socket (named: reading one would
block or never end), a bag listed under two robots, a robot (or any field) given twice.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
import glob
import math
import os
from pathlib import Path
import xml.etree.ElementTree as ET

import yaml

from rnea_ros.description.loading import read_file_option
from rnea_ros.description.robot_file import read_robot_description
from rnea_ros.errors import InputError
from rnea_ros.files import check_regular, FileError, load_yaml, YamlError
from rnea_ros.fleet import bags as fleet_bags

FIELDS = ('urdf', 'actuation', 'bags')
EXAMPLE = 'robots: {NAME: {urdf: FILE, actuation: FILE, bags: [PATTERN, ...]}}'


@dataclass(frozen=True)
class Robot:
    """One robot of a manifest: its name, URDF and actuation model files (absolute), its bags."""

    name: str
    urdf: str | None
    actuation: str | None
    bags: tuple[Path, ...]


def load(path: str, xacro_args: dict | None = None, exclude: Path | None = None) -> list[Robot]:
    """
    Read the manifest at ``path``; return its robots in file order, their bags found.

    ``xacro_args``: the arguments a xacro URDF is expanded with (``--xacro-arg``);
    ``exclude``: the output directory, left out of the bags. Raises ``InputError`` (module
    docstring).
    """
    text = read_file_option('--manifest', path)
    where = f'--manifest {str(path)!r}'
    try:
        document = load_yaml(text)
    except YamlError as exc:
        raise InputError(f'{where}: {exc}') from None
    # Read above within the YAML reader's bounds; composed again for its keys, not expanded.
    _refuse_duplicates(where, yaml.compose(text, Loader=yaml.SafeLoader))
    if not isinstance(document, dict) or set(document) != {'robots'} \
            or not isinstance(document['robots'], dict) or not document['robots']:
        raise InputError(f'{where}: expected {EXAMPLE}')
    folder = Path(os.path.abspath(path)).parent
    robots = []
    owner: dict[Path, str] = {}
    for name, entry in document['robots'].items():
        if not isinstance(name, str) or not name.strip():
            raise InputError(f'{where}: robots: the robot name {name!r} must be a non-empty '
                             'string')
        robot = _robot(where, folder, name, entry, xacro_args or {}, exclude)
        for bag in robot.bags:
            if owner.setdefault(bag, name) != name:
                raise InputError(f'{where}: robots.{name}.bags: {str(bag)!r} is also a bag '
                                 f'of robots.{owner[bag]} (a bag belongs to one robot)')
        robots.append(robot)
    return robots


def _refuse_duplicates(where: str, root) -> None:
    """
    Refuse a name given twice in one mapping of the composed document ``root``.

    YAML keeps the last of two equal keys without a word: a robot named twice would lose the
    bags of its first entry. Each node is visited once (aliases are not expanded).
    """
    seen: set[int] = set()
    stack = [(root, '')]
    while stack:
        node, path = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack += [(item, f'{path}[{k}]') for k, item in enumerate(node.value)]
        if not isinstance(node, yaml.MappingNode):
            continue
        lines: dict[str, int] = {}
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else None
            field = f'{path}.{name}' if path else str(name)
            if name is not None and name in lines:
                what = 'the robot' if path == 'robots' else 'the field'
                raise InputError(f'{where}: {what} {field} is given twice (lines {lines[name]} '
                                 f'and {key.start_mark.line + 1}): expected each once (YAML '
                                 'would keep the last entry only)')
            if name is not None:
                lines[name] = key.start_mark.line + 1
            stack.append((value, field))


def _robot(where: str, folder: Path, name: str, entry, xacro_args: dict,
           exclude: Path | None) -> Robot:
    field = f'robots.{name}'
    if not isinstance(entry, dict):
        raise InputError(f'{where}: {field}: expected a mapping of {", ".join(FIELDS)}')
    unknown = [key for key in entry if key not in FIELDS]
    if unknown:
        raise InputError(f'{where}: {field}: unknown field {unknown[0]!r} (expected '
                         f'{", ".join(FIELDS)})')
    files = {}
    for key in ('urdf', 'actuation'):
        value = entry.get(key)
        if value is None:
            files[key] = None
            continue
        if not isinstance(value, str) or not value:
            raise InputError(f'{where}: {field}.{key}: expected a file path, got {value!r}')
        files[key] = str(folder / value)  # an absolute value stays as it is
        read = (lambda p: read_robot_description(p, xacro_args)) if key == 'urdf' else None
        try:
            text = read_file_option(f'{field}.{key}', files[key], read)
        except InputError as exc:
            raise InputError(f'{where}: {exc}') from None
        if key == 'urdf':
            try:
                ET.fromstring(text)
            except ET.ParseError as exc:
                raise InputError(f'{where}: {field}.urdf {files[key]!r}: malformed XML: '
                                 f'{exc}') from None
    patterns = entry.get('bags')
    if not isinstance(patterns, list) or not patterns:
        raise InputError(f'{where}: {field}.bags: expected a list of bag paths or patterns, '
                         f'got {patterns!r}')
    found: list[Path] = []
    for k, pattern in enumerate(patterns):
        if not isinstance(pattern, str) or not pattern:
            raise InputError(f'{where}: {field}.bags[{k}]: expected a path or pattern, got '
                             f'{pattern!r}')
        found += _bags(where, f'{field}.bags[{k}]', str(folder / pattern), pattern, exclude)
    return Robot(name, files['urdf'], files['actuation'], tuple(dict.fromkeys(found)))


def _bags(where: str, field: str, pattern: str, written: str,
          exclude: Path | None) -> list[Path]:
    """Return the bags the path or ``pattern`` names (sorted matches, each searched)."""
    skip = exclude.resolve() if exclude is not None else None
    matches = [Path(m) for m in sorted(glob.glob(pattern, recursive=True))]
    if skip is not None:
        matches = [m for m in matches if not m.resolve().is_relative_to(skip)]
    if not matches:
        raise InputError(f'{where}: {field} {written!r}: matches no file (expected bags or '
                         'directories of bags)')
    found = []
    for match in matches:
        if fleet_bags.is_bag(match):
            found.append(match)
        elif match.is_dir():
            found += fleet_bags.find_bags(match, exclude)
        else:  # a file that is no bag is passed over; a FIFO or a device is named
            _refuse_special(where, field, written, match)
    if not found:
        raise InputError(f'{where}: {field} {written!r}: no rosbag2 bag there (a directory '
                         f'with {fleet_bags.METADATA}, or '
                         f'{"/".join(fleet_bags.BAG_FILE_SUFFIXES)} files)')
    return found


def _refuse_special(where: str, field: str, written: str, match: Path) -> None:
    """Refuse a match that is no regular file (a FIFO, a device, a socket, a broken link)."""
    try:
        check_regular(match, 'match', limit=math.inf)
    except FileError as exc:
        raise InputError(f'{where}: {field} {written!r}: {str(match)!r}: {exc.why}; expected '
                         'bags or directories of bags') from None


def jobs(robots: list[Robot], per_bag, dests: list[str], output: Path,
         overwrite: bool) -> tuple[list, dict]:
    """
    Return the jobs of every robot's bags and the settings to show (fleet.md).

    ``per_bag``: the ``BagOptions`` template; each robot's bags get its ``urdf`` and
    ``actuation`` (and their own settings digest); ``dests``: the per-bag option names
    passed on. Output names are unique over the whole fleet (``bags.output_names``).
    """
    from rnea_ros.bag.options import FILE_OPTIONS
    from rnea_ros.fleet import digest, run
    paths = [bag for robot in robots for bag in robot.bags]
    names = iter(fleet_bags.output_names(paths, [robot.name for robot in robots
                                                 for _ in robot.bags]))
    work, shown = [], {}
    for robot in robots:
        chosen = asdict(replace(per_bag, urdf=robot.urdf, actuation=robot.actuation))
        settings = digest.settings(chosen, FILE_OPTIONS)
        options = {name: chosen[name] for name in [*dests, 'threads']}
        bags = [fleet_bags.Bag(path, robot.name, next(names)) for path in robot.bags]
        work += run.jobs(bags, output, options, digest.settings_digest(settings), overwrite)
        shown[f'robots.{robot.name}'] = (
            f'urdf {robot.urdf or "(the robot_description of each bag)"}, actuation '
            f'{robot.actuation or "(none)"}, {len(bags)} bag{"s" if len(bags) != 1 else ""}')
    general = digest.settings(asdict(per_bag), FILE_OPTIONS)
    return work, {**{k: v for k, v in general.items() if k not in ('urdf', 'actuation')},
                  **shown}
