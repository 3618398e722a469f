"""
Helpers of the tests of what the tools write: a directory's content, a full disk, a Ctrl-C.

``snapshot`` maps every file and symlink under a directory to its bytes or target;
``disk_full(name)`` is a ``Path.write_text`` that writes half of the file ``name`` and then
fails as a full disk does (``monkeypatch.setattr(Path, 'write_text', disk_full(name))``);
``interrupt`` starts a command in its own process group, waits for its first line on stderr
and sends SIGINT to the group, as a terminal's Ctrl-C does.
"""
from __future__ import annotations

import errno
import os
from pathlib import Path
import signal
import subprocess

WRITE_TEXT = Path.write_text


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Return every file (bytes) and symlink (its target) under ``root`` by relative path."""
    return {p.relative_to(root).as_posix(): os.readlink(p) if p.is_symlink() else p.read_bytes()
            for p in sorted(root.rglob('*')) if p.is_symlink() or p.is_file()}


def disk_full(name: str):
    """Return a ``Path.write_text`` that fails with ENOSPC half-way through files ``name``."""
    def write_text(path: Path, text: str, *args, **kwargs):
        if path.name != name:
            return WRITE_TEXT(path, text, *args, **kwargs)
        WRITE_TEXT(path, text[:len(text) // 2], *args, **kwargs)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return write_text


def interrupt(command: list[str]) -> tuple[str, int, str, str]:
    """
    Run ``command``, Ctrl-C it once it has written its first stderr line.

    Returns that first line, the exit status, and the rest of stdout and stderr.
    """
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        first = process.stderr.readline()
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return first, process.returncode, out, err
