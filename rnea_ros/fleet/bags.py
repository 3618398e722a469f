"""
The bags of a fleet run: found under the arguments, each with its robot and output name.

A bag is what ``rnea_bag`` accepts: a rosbag2 directory (it holds ``metadata.yaml``) or a
single ``.mcap``/``.db3`` file outside such a directory. An argument that is a bag is taken as
is; any other directory is searched recursively for bags (a bag directory is not searched
further). The robot of a bag found under a directory argument is the name of the folder that
holds it (fleets are usually stored as ``<robot>/<bag>``); of a bag given directly, the robot
name of its URDF (known once the bag is analysed); ``--robot-pattern REGEX`` takes it instead
from the first group of the pattern searched in the bag's path.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
import os
from pathlib import Path
import re

from rnea_ros.errors import InputError

BAG_FILE_SUFFIXES = ('.mcap', '.db3')
METADATA = 'metadata.yaml'
NAME_CHARACTERS = re.compile(r'[^\w.+-]')  # anything else (separators, controls) becomes _
MAX_NAME = 100  # UTF-8 bytes of an output folder name: room for the suffixes of partial folders


@dataclass(frozen=True)
class Bag:
    """
    One bag of the fleet.

    ``path``: the bag directory or file; ``robot``: its robot, or None when it is the robot
    name of the URDF (a bag given directly); ``robot_error``: why the robot could not be named
    (``--robot-pattern`` does not match), which fails this bag alone; ``name``: its output
    folder ``DIR/bags/<name>``, unique in the run.
    """

    path: Path
    robot: str | None
    name: str
    robot_error: str | None = None


def is_bag(path: Path) -> bool:
    """Tell whether ``path`` is a rosbag2 directory (with metadata.yaml) or .mcap/.db3 file."""
    if path.is_dir():
        return (path / METADATA).is_file()
    return path.suffix in BAG_FILE_SUFFIXES and path.is_file()


def bag_name(path: Path) -> str:
    """Return the name of a bag: its directory name, or its file name without the suffix."""
    return path.name if path.is_dir() else path.stem


def safe_name(text: str) -> str:
    """
    Return ``text`` as one plain folder name: never ``.``, ``..``, hidden, or a path.

    Letters, digits, ``_``, ``.``, ``+`` and ``-`` are kept, any other character (slashes,
    backslashes, control characters, spaces) becomes ``_``, as does each leading dot; at most
    ``MAX_NAME`` bytes (UTF-8); ``bag`` for an empty text.
    """
    name = NAME_CHARACTERS.sub('_', text)
    stripped = name.lstrip('.')
    name = '_' * (len(name) - len(stripped)) + stripped
    return name.encode()[:MAX_NAME].decode(errors='ignore') or 'bag'


def find_bags(root: Path, exclude: Path | None = None) -> list[Path]:
    """
    Find every bag under the directory ``root``, in sorted path order (symlinks not followed).

    The folder ``exclude`` (the output directory, whose ``--write-bag`` bags are results, not
    inputs) is not searched.
    """
    skip = exclude.resolve() if exclude is not None else None
    found = []
    for folder, subfolders, files in os.walk(root):
        here = Path(folder)
        if skip is not None and here.resolve() == skip:
            subfolders[:] = []
            continue
        if METADATA in files:
            found.append(here)
            subfolders[:] = []  # the storage files of a bag are not bags of their own
            continue
        subfolders.sort()
        found += [here / f for f in sorted(files) if Path(f).suffix in BAG_FILE_SUFFIXES]
    return sorted(found)


def discover(arguments: list[str], robot_pattern: str | None = None,
             exclude: Path | None = None) -> list[Bag]:
    """
    Return the bags of ``arguments`` (bags or directories), each once, with robots and names.

    Bag paths are made absolute (the workers of a cluster do not share the working
    directory); ``exclude``: a folder not to search (see ``find_bags``).

    Raises ``InputError`` for an argument that does not exist, a directory without bags, or a
    pattern that is not a regular expression with exactly one group.
    """
    pattern = _pattern(robot_pattern)
    found: dict[Path, str | None] = {}
    for argument in arguments:
        path = Path(os.path.abspath(argument))
        if not path.exists():
            raise InputError(f'{argument!r} does not exist (expected a bag or a directory '
                             'of bags)')
        if is_bag(path):
            found.setdefault(path, None)
        elif path.is_dir():
            bags = find_bags(path, exclude)
            if not bags:
                raise InputError(f'no rosbag2 bag under {argument!r} (a directory with '
                                 f'{METADATA}, or {"/".join(BAG_FILE_SUFFIXES)} files)')
            for bag in bags:
                found.setdefault(bag, bag.parent.name)
        else:
            raise InputError(f'{argument!r} is not a rosbag2 bag (a directory with '
                             f'{METADATA}, or a {"/".join(BAG_FILE_SUFFIXES)} file) nor a '
                             'directory of bags')
    paths = list(found)
    robots: list[str | None] = list(found.values())
    errors: list[str | None] = [None] * len(paths)
    if pattern is not None:
        for k, path in enumerate(paths):
            match = pattern.search(str(path))
            if match is None or not match.group(1):
                robots[k] = None
                errors[k] = (f'--robot-pattern {pattern.pattern!r} does not match the bag '
                             f'path {str(path)!r} (its group must capture the robot name)')
            else:
                robots[k] = match.group(1)
    names = output_names(paths, robots)
    return [Bag(path, robot, name, error)
            for path, robot, name, error in zip(paths, robots, names, errors)]


def output_names(paths: list[Path], robots: list[str | None]) -> list[str]:
    """
    Name the output folders uniquely: the bag name, else ``<robot>.<bag name>``, else ``.2``.

    Every name is a ``safe_name`` (a bag named ``...mcap`` is ``__``, not the parent folder),
    unique even where case is ignored. A bag given directly has no robot yet: the folder that
    holds it stands in for it. Names depend only on the set of bags, so a re-run over the same
    bags finds its results again.
    """
    plain = [safe_name(bag_name(p)) for p in paths]
    counts = Counter(name.casefold() for name in plain)
    names = [name if counts[name.casefold()] == 1 else
             safe_name(f'{robot or path.parent.name or "bag"}.{name}')
             for name, robot, path in zip(plain, robots, paths)]
    taken = set()
    unique = []
    for name in names:
        candidate, k = name, 1
        while candidate.casefold() in taken:
            k += 1
            candidate = f'{name}.{k}'
        taken.add(candidate.casefold())
        unique.append(candidate)
    return unique


def _pattern(text: str | None) -> re.Pattern | None:
    if text is None:
        return None
    try:
        pattern = re.compile(text)
    except re.error as exc:
        raise InputError(f'--robot-pattern {text!r} is not a regular expression: {exc}') \
            from None
    if pattern.groups != 1:
        raise InputError(f'--robot-pattern {text!r} must have exactly one group (the robot '
                         f'name), it has {pattern.groups}')
    return pattern
