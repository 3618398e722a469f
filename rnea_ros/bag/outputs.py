"""
The output directory of a bag analysis: refuse to mix with other files, stage, then commit.

``rnea_bag`` must never delete or half-write a file it does not own:

- a directory that already holds anything is refused (``OutputExistsError``, exit status 2)
  unless ``overwrite`` is given;
- every output is first written into a staging directory inside the output directory
  (``.rnea_bag-staging-*``: same file system, so moving is a rename), and only when the whole
  analysis has succeeded are the files renamed into place, the bag directory swapped likewise;
  a failure before that removes the staging directory and leaves the output directory as it
  was (and removes it again if this run created it);
- with ``overwrite``, only the names this run writes are replaced, and the outputs a previous
  run listed in its ``summary.json`` (``outputs``) that this run does not write again (a
  ``residual`` table of a bag with measured effort, plots of other joints) are removed; every
  other file stays as it was. ``summary.json`` is removed first and written last, so an
  interrupted commit never looks like a complete result.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import re
import shutil
import tempfile

from rnea_ros.errors import RneaError

STAGING_PREFIX = '.rnea_bag-staging-'
SUMMARY = 'summary.json'
# The names rnea_bag writes: only these are ever removed, even when a summary lists others.
OWN_NAMES = re.compile(r'(torques\.csv|(decomposition|residual|contact_wrenches)\.(csv|parquet)'
                       r'|summary\.(json|md)|report\.html|(effort|decomposition)_[\w.-]+\.png'
                       r'|bag/?)')


class OutputExistsError(RneaError):
    """The output directory holds files already and ``--overwrite`` was not given."""


def check(directory: Path, overwrite: bool) -> None:
    """Refuse an output path that is a file, or a directory with files without ``overwrite``."""
    if directory.exists() and not directory.is_dir():
        raise OutputExistsError(f'output {str(directory)!r} is a file, not a directory: '
                                'choose another --output')
    if not overwrite and directory.is_dir() and any(directory.iterdir()):
        raise OutputExistsError(f'output directory {str(directory)!r} already holds files: '
                                'pass --overwrite to replace the outputs of rnea_bag in it '
                                '(other files are kept), or choose another --output')


class Staging:
    """
    Write outputs into ``directory`` all at once, or not at all.

    Use as a context manager: write every output under ``path`` (the staging directory), then
    call ``commit(names)``. Leaving the block without a commit (an exception) removes what was
    staged and leaves ``directory`` as it was.
    """

    def __init__(self, directory: Path, overwrite: bool = False):
        self.directory = Path(directory)
        self.overwrite = overwrite
        self.path: Path | None = None
        self._created = False

    def __enter__(self) -> Staging:
        check(self.directory, self.overwrite)
        if not self.directory.exists():
            self.directory.mkdir(parents=True)
            self._created = True
        self.path = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.directory))
        return self

    def __exit__(self, kind, value, traceback) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        if kind is not None and self._created:
            try:
                self.directory.rmdir()  # only if still empty
            except OSError:
                pass

    def commit(self, names: list[str]) -> list[Path]:
        """Move the staged ``names`` into place; remove this tool's stale earlier outputs."""
        previous = previous_outputs(self.directory)
        bare = [name.rstrip('/') for name in names]
        old_summary = self.directory / SUMMARY
        if SUMMARY in bare and old_summary.exists():
            old_summary.unlink()  # first: a partly committed directory has no summary
        for name in sorted(bare, key=lambda n: n == SUMMARY):  # the summary last
            staged, target = self.path / name, self.directory / name
            if staged.is_dir():
                if target.is_dir() and not target.is_symlink():
                    target.rename(self.path / f'.replaced-{name}')  # removed with the staging
                elif target.exists() or target.is_symlink():
                    target.unlink()
                staged.rename(target)
            else:
                if target.is_dir() and not target.is_symlink():
                    target.rename(self.path / f'.replaced-{name}')
                os.replace(staged, target)
        for name in previous - set(bare):
            stale = self.directory / name
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale)
            elif stale.exists() or stale.is_symlink():
                stale.unlink()
        return [self.directory / name for name in bare]


def previous_outputs(directory: Path) -> set[str]:
    """Return the names a previous run listed in ``directory/summary.json`` (ours only)."""
    try:
        listed = json.loads((directory / SUMMARY).read_text()).get('outputs', [])
    except (OSError, ValueError, AttributeError):
        return set()
    if not isinstance(listed, list):
        return set()
    return {name.rstrip('/') for name in listed
            if isinstance(name, str) and '/' not in name.rstrip('/')
            and OWN_NAMES.fullmatch(name)}
