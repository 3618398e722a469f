"""A file a user names is read as a regular file, bounded: every other is one line naming it."""
from __future__ import annotations

import os

import pytest

from rnea_ros.files import check_regular, FileError, read_bytes, read_text


def _refused(call, path, line: str) -> None:
    with pytest.raises(FileError) as error:
        call(path, '--thing')
    assert str(error.value) == f"cannot read --thing '{path}': {line}"


def test_a_regular_file_is_read(tmp_path):
    path = tmp_path / 'a.yaml'
    path.write_text('a: 1\n')
    assert read_text(path, '--thing') == 'a: 1\n'
    assert read_bytes(path, '--thing', limit=5) == b'a: 1\n'
    check_regular(path, '--thing')


@pytest.mark.parametrize('call', [read_bytes, read_text, check_regular])
def test_anything_but_a_regular_file_is_refused_unread(tmp_path, call):
    fifo = tmp_path / 'fifo'
    os.mkfifo(fifo)  # no writer: reading it would wait for ever
    _refused(call, fifo, 'not a regular file (a FIFO)')
    _refused(call, '/dev/zero', 'not a regular file (a character device)')
    _refused(call, tmp_path, 'Is a directory')
    _refused(call, tmp_path / 'absent', 'No such file or directory')


def test_a_file_over_the_bound_or_not_text_is_refused(tmp_path):
    path = tmp_path / 'big'
    path.write_bytes(b'\x80' * 6)
    with pytest.raises(FileError) as error:
        read_bytes(path, '--thing', limit=5)
    assert str(error.value) == f"cannot read --thing '{path}': 6 bytes: expected at most 5"
    with pytest.raises(FileError) as error:
        read_text(path, '--thing')
    assert str(error.value) == \
        f"cannot read --thing '{path}': not UTF-8 text (byte 0x80 at offset 0)"
