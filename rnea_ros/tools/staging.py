"""
The output directory of a tool: refuse to mix with other files, stage, then commit.

``rnea_bag``, ``rnea_identify`` and ``rnea_fleet`` never delete or half-write a file they do
not own, and never write through a name planted in the output directory (a symlink):

- a directory that already holds anything is refused (``OutputExistsError``, exit status 2)
  unless ``overwrite`` is given (``rnea_fleet`` reuses its directory: it always overwrites);
- every output is first written into a staging directory created afresh (``mkdtemp``) inside
  the output directory (``.<tool>-staging-*``: same file system, so moving is a rename), and
  only when the whole run has succeeded are the files renamed into place, a directory output
  swapped likewise; a failure or a Ctrl-C before that removes the staging directory and leaves
  the output directory as it was (and removes it again if this run created it), and a Ctrl-C
  during the renames is held until they are done;
- an error writing a staged file (a full disk) names the output file (``OutputError``);
- with ``overwrite``, only the names this run writes are replaced, and the outputs a previous
  run listed in its manifest (``Tool.manifest``: ``summary.json`` of ``rnea_bag``, key
  ``outputs``) that this run does not write again (a ``residual`` table of a bag with measured
  effort, plots of other joints) are removed; every other file stays as it was. The manifest
  is removed first and written last, so an interrupted commit never looks like a complete
  result.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
import json
import os
from pathlib import Path
import re
import shutil
import signal
import tempfile
import threading

from rnea_ros.errors import MachineError, RneaError


@dataclass(frozen=True)
class Tool:
    """
    What a tool writes into its output directory.

    ``name``: in messages and in the staging directory's name; ``manifest``: the output that
    lists the run's outputs (key ``outputs``), or None; ``own_names``: the names the tool
    writes (a full match): only these are ever removed, even when a manifest lists others.
    """

    name: str
    manifest: str | None
    own_names: re.Pattern

    @property
    def staging_prefix(self) -> str:
        """Return the name prefix of this tool's staging directories."""
        return f'.{self.name}-staging-'


class OutputExistsError(RneaError):
    """The output directory holds files already and ``--overwrite`` was not given."""


class OutputError(MachineError):
    """An output file could not be written (a full disk, no permission): names the file."""


def check(directory: Path, overwrite: bool, tool: Tool) -> None:
    """Refuse an output path that is a file, or a directory with files without ``overwrite``."""
    if directory.exists() and not directory.is_dir():
        raise OutputExistsError(f'output {str(directory)!r} is a file, not a directory: '
                                'choose another --output')
    if not overwrite and directory.is_dir() and any(directory.iterdir()):
        raise OutputExistsError(f'output directory {str(directory)!r} already holds files: '
                                f'pass --overwrite to replace the outputs of {tool.name} in '
                                'it (other files are kept), or choose another --output')


class Staging:
    """
    Write outputs into ``directory`` all at once, or not at all.

    Use as a context manager: write every output under ``path`` (the staging directory; or
    through ``writing(name)``, which names the output file in an error), then call
    ``commit(names)``. Leaving the block without a commit (an exception, a Ctrl-C) removes
    what was staged and leaves ``directory`` as it was.
    """

    def __init__(self, directory: Path, overwrite: bool, tool: Tool):
        self.directory = Path(directory)
        self.overwrite = overwrite
        self.tool = tool
        self.path: Path | None = None
        self._created = False

    def __enter__(self) -> Staging:
        check(self.directory, self.overwrite, self.tool)
        if not self.directory.exists():
            self.directory.mkdir(parents=True)
            self._created = True
        self.path = Path(tempfile.mkdtemp(prefix=self.tool.staging_prefix,
                                          dir=self.directory))
        return self

    def __exit__(self, kind, value, traceback) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        if kind is not None and self._created:
            try:
                self.directory.rmdir()  # only if still empty
            except OSError:
                pass

    @contextmanager
    def writing(self, name: str) -> Iterator[Path]:
        """Yield the staged path of the output ``name``; an ``OSError`` becomes ``OutputError``."""
        try:
            yield self.path / name
        except OSError as exc:
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise OutputError(f'cannot write {str(self.directory / name)!r}: {reason}') \
                from exc

    def write_text(self, name: str, text: str) -> Path:
        """Stage the UTF-8 text file ``name``; return its staged path."""
        with self.writing(name) as path:
            path.write_text(text, encoding='utf-8')
        return path

    def commit(self, names: list[str]) -> list[Path]:
        """Move the staged ``names`` into place; remove this tool's stale earlier outputs."""
        previous = previous_outputs(self.directory, self.tool)
        bare = [name.rstrip('/') for name in names]
        manifest = self.tool.manifest
        with _interrupt_held():
            old_manifest = self.directory / manifest if manifest else None
            if manifest in bare and (old_manifest.exists() or old_manifest.is_symlink()):
                old_manifest.unlink()  # first: a partly committed directory has no manifest
            for name in sorted(bare, key=lambda n: n == manifest):  # the manifest last
                staged, target = self.path / name, self.directory / name
                if target.is_dir() and not target.is_symlink():
                    target.rename(self.path / f'.replaced-{name}')  # removed with the staging
                elif staged.is_dir() and (target.exists() or target.is_symlink()):
                    target.unlink()
                os.replace(staged, target)  # a symlink at target is replaced, not followed
            for name in previous - set(bare):
                _remove(self.directory / name)
        return [self.directory / name for name in bare]


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


@contextmanager
def _interrupt_held() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) until the block has run, then raise ``KeyboardInterrupt``."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    received = []
    signal.signal(signal.SIGINT, lambda number, frame: received.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if received:
        raise KeyboardInterrupt


def previous_outputs(directory: Path, tool: Tool) -> set[str]:
    """Return the names a previous run listed in its manifest in ``directory`` (ours only)."""
    if tool.manifest is None:
        return set()
    try:
        listed = json.loads((directory / tool.manifest).read_text()).get('outputs', [])
    except (OSError, ValueError, AttributeError):
        return set()
    if not isinstance(listed, list):
        return set()
    return {name.rstrip('/') for name in listed
            if isinstance(name, str) and '/' not in name.rstrip('/')
            and tool.own_names.fullmatch(name)}
