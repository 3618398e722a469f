"""
The files an MJCF file makes MuJoCo read, checked before MuJoCo opens any (``check_paths``).

MuJoCo follows ``<include file>`` (its paths relative to the file that includes it, as the main
file's) and ``<asset><model file>`` (a model for ``<attach>``, its paths relative to its own
folder), and opens every asset's ``file`` (a mesh, a texture's ``fileup``, a flexcomp's...)
joined to a ``<compiler meshdir texturedir assetdir>`` folder; it takes ``../`` and absolute
paths, and ignores XML namespaces (``<include xmlns="urn:x" file=...>`` is an include to it).
Every such path, of the file and of each file it includes or attaches, whatever the element's
namespace, must stay within the main file's folder once joined and resolved (a symlink that
leads out is refused as a ``../`` is), and every file MuJoCo would open there must be a
regular file (not a FIFO, a device, a directory) of at most ``rnea_ros.files.MAX_BYTES``: the
files it parses are read through ``rnea_ros.files.read_bytes`` (bounded, without blocking),
the assets checked with ``check_regular``. A refusal is one ``MJCFError`` naming the element
and the path. ``RobotModel.from_mjcf`` and ``rnea_sim --mjcf`` both check a file this way.
"""
from __future__ import annotations

from pathlib import Path
import xml.etree.ElementTree as ET

from rnea_ros.errors import MJCFError
from rnea_ros.files import check_regular, FileError, read_bytes

__all__ = ['check_paths', 'local_name', 'MAX_DOCUMENTS']

# <compiler> attributes naming folders that MuJoCo joins to the file's folder.
DIRECTORIES = ('meshdir', 'texturedir', 'assetdir')
# Elements whose file MuJoCo reads as MJCF: an include, an <asset><model> for <attach>.
FOLLOWED = ('include', 'model')
MAX_DOCUMENTS = 1000  # files one MJCF may include or attach, all told


def local_name(name) -> str:
    """Return a tag's or attribute's name without its XML namespace ('{urn:x}include')."""
    return name.rsplit('}', 1)[-1] if isinstance(name, str) else ''


def _inside(folder: Path, base: Path, value: str) -> bool:
    """Whether ``value`` (a path from the file), joined to ``base``, is within ``folder``."""
    if Path(value).is_absolute():
        return False
    return (base / value).resolve().is_relative_to(folder)


def _check_inside(folder: Path, bases, element, attribute: str, value: str,
                  directories) -> None:
    """Raise ``MJCFError`` unless ``value`` joined to each base and directory stays inside."""
    if not all(_inside(folder, base, str(Path(d) / value))
               for base in bases for d in ['', *directories]):
        raise MJCFError(f'<{local_name(element.tag)} {local_name(attribute)}={value!r}> leads '
                        f"outside the file's folder {str(folder)!r}: expected a relative path "
                        'within it')


def _parse(current: Path, main: Path, what: str):
    """Return the root element of ``current``, read bounded as a regular file."""
    try:
        return ET.fromstring(read_bytes(current, what))
    except FileError as error:
        raise MJCFError(str(error)) from None
    except ET.ParseError as error:
        which = '' if current == main else f'included {str(current)!r}: '
        raise MJCFError(f'{which}not XML: {error}') from None


def documents(path) -> list:
    """
    Return (root element, base folder) of ``path`` and of every file it includes or attaches.

    Only files within the main file's folder are read (a path outside is refused first), each
    a regular file read bounded; at most ``MAX_DOCUMENTS`` of them.
    """
    main = Path(path).resolve()
    folder, pending, found, seen = main.parent, [(main, main.parent, 'MJCF')], [], set()
    while pending:
        current, base, what = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        if len(seen) > MAX_DOCUMENTS:
            raise MJCFError(f'more than {MAX_DOCUMENTS} files included or attached')
        root = _parse(current, main, what)
        found.append((root, base))
        for element in root.iter():
            kind, value = local_name(element.tag), element.get('file')
            if kind in FOLLOWED and value is not None:
                _check_inside(folder, [base], element, 'file', value, [])
                target = (base / value).resolve()
                pending.append((target, target.parent if kind == 'model' else base,
                                f'<{kind} file={value!r}>'))
    return found


def check_paths(path, found: list | None = None) -> list:
    """
    Raise ``MJCFError`` when the file or one it reads names a path MuJoCo must not open.

    Every attribute named ``file*`` (an include's, a model's, a mesh's, a texture's
    ``fileup``, a flexcomp's, ...) of every element, whatever its XML namespace, of the file
    and of the files it includes or attaches: inside the folder, and a regular file of at most
    ``MAX_BYTES`` where it exists (MuJoCo says what is missing); the compiler's folders inside.
    ``found``: ``documents(path)``, when the caller has read them. Returns them.
    """
    folder = Path(path).resolve().parent
    found = documents(path) if found is None else found
    # MuJoCo joins an asset's file to a compiler folder (of any file) and to the folder of the
    # file it reads it from (a model's own, or the main file's): every join stays inside.
    directories = [value for root, _ in found for element in root.iter()
                   if local_name(element.tag) == 'compiler'
                   for name, value in element.attrib.items() if local_name(name) in DIRECTORIES]
    bases = list(dict.fromkeys(base for _, base in found))
    for root, _ in found:
        for element in root.iter():
            for attribute, value in element.attrib.items():
                name = local_name(attribute)
                if name.startswith('file'):  # file, a cube texture's fileup, ...
                    _check_inside(folder, bases, element, attribute, value, directories)
                    _check_files(bases, directories, element, name, value)
                elif local_name(element.tag) == 'compiler' and name in DIRECTORIES:
                    _check_inside(folder, bases, element, attribute, value, [])
    return found


def _check_files(bases, directories, element, attribute: str, value: str) -> None:
    """Refuse a file MuJoCo may open for ``value`` that is no regular file within the bound."""
    for base in bases:
        for directory in ['', *directories]:
            candidate = base / directory / value
            if candidate.exists() or candidate.is_symlink():
                try:
                    check_regular(candidate, f'<{local_name(element.tag)} {attribute}>')
                except FileError as error:
                    raise MJCFError(str(error)) from None
