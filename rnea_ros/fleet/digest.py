"""
Fingerprints that decide whether a bag's stored result is still valid.

A result is reused when both digests stored in its ``summary.json`` (key ``fleet``) equal
those of the current run:

- the **bag digest**: SHA-256 over the bag's files - for a bag directory every file in it
  (``metadata.yaml`` and the storage files; anything but a regular file, such as a FIFO, fails
  the bag), for a single-file bag that file - each as its
  name, size and full content. The content, not the modification time: a bag copied, restored
  or touched keeps its digest, a bag rewritten in place does not. Hashing reads the bag once
  (a few hundred MB/s to GB/s per core), a small fraction of the analysis itself.
- the **settings digest**: SHA-256 of the per-bag analysis settings (the ``BagOptions``
  fields, the output-only ones left out), each option naming a file (``--urdf FILE``)
  replaced by the SHA-256 of the file's content, and the installed ``rnea_ros`` version.
  Another rnea_ros version is another setting; a change of the code within one version is
  not seen: use ``--overwrite`` after changing the analysis code.
"""
from __future__ import annotations

from collections.abc import Iterable
import hashlib
from importlib import metadata
import json
from pathlib import Path

from rnea_ros.bag.options import RUN_OPTIONS
from rnea_ros.errors import InputError
from rnea_ros.recording.bagio.storage import regular_files

HASH = 'sha256'
CHUNK = 1 << 20


def bag_digest(path: Path) -> str:
    """Return the SHA-256 hex digest of the bag's files: names, sizes, contents, by name."""
    digest = hashlib.new(HASH)
    for file in regular_files(path):  # a FIFO or a device is refused, not read forever
        with file.open('rb') as src:
            size = src.seek(0, 2)
            src.seek(0)
            digest.update(f'{file.name}\0{size}\0'.encode())
            digest.update(hashlib.file_digest(src, HASH).digest())
    return digest.hexdigest()


def settings(options: dict, files: Iterable[str] = ('urdf',)) -> dict:
    """
    Return the settings that make a result.

    ``options`` (``asdict`` of the ``BagOptions``) without the output-only ones, the
    options named in ``files`` by their file's content, and the rnea_ros version. Raises
    ``InputError`` naming the option when a file cannot be read.
    """
    kept = {key: value for key, value in sorted(options.items()) if key not in RUN_OPTIONS}
    for key in files:
        if kept.get(key):
            try:
                with open(kept[key], 'rb') as src:
                    kept[key] = f'{HASH}:{hashlib.file_digest(src, HASH).hexdigest()}'
            except OSError as exc:
                option = '--' + key.replace('_', '-')
                raise InputError(f'cannot read {option} {kept[key]!r}: {exc.strerror}') \
                    from None
    try:
        kept['rnea_ros'] = metadata.version('rnea_ros')
    except metadata.PackageNotFoundError:  # run from a source tree
        kept['rnea_ros'] = 'source'
    return kept


def settings_digest(chosen: dict) -> str:
    """Return the SHA-256 hex digest of ``settings(...)``."""
    text = json.dumps(chosen, sort_keys=True, default=str)
    return hashlib.new(HASH, text.encode()).hexdigest()
