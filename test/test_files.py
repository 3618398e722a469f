"""A file a user names is read as a regular file, bounded: every other is one line naming it."""
from __future__ import annotations

import os

import pytest

from rnea_ros.files import (brief, check_regular, FileError, load_yaml, MAX_ALIAS_NODES,
                            open_regular, read_bytes, read_text, YamlError)


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


@pytest.mark.parametrize('call', [read_bytes, read_text, check_regular, open_regular])
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


def test_an_opened_file_reads_whole_within_its_bound_and_not_past_it(tmp_path):
    path = tmp_path / 'log.csv'
    path.write_bytes(b'a,b\n1,2\n')
    with open_regular(path, '--thing', limit=8) as file:
        assert file.read() == b'a,b\n1,2\n'
        file.seek(0)
        assert file.readline() == b'a,b\n'
    with pytest.raises(FileError, match=r'8 bytes: expected at most 7$'):
        open_regular(path, '--thing', limit=7)
    with open_regular(path, '--thing', limit=8) as file:
        with open(path, 'ab') as grow:  # it grows past the bound after the check
            grow.write(b'3,4\n')
        with pytest.raises(FileError) as error:
            file.read()
    assert str(error.value) == f"cannot read --thing '{path}': more than 8 bytes: expected at " \
        'most 8'


def test_aliases_within_the_bound_are_read():
    assert load_yaml('a: &a [1, 2]\nb: *a\n') == {'a': [1, 2], 'b': [1, 2]}
    repeated = 'a: &a [' + ', '.join(['x'] * 999) + ']\nb: [' + ', '.join(['*a'] * 100) + ']\n'
    assert len(load_yaml(repeated)['b']) == 100  # 100 000 nodes repeated: the bound
    assert load_yaml('') is None


@pytest.mark.parametrize('text, line', [
    ('a: &a [x, x, x, x, x, x, x, x, x]\n' + ''.join(
        f'{chr(98 + k)}: &{chr(98 + k)} [{", ".join([f"*{chr(97 + k)}"] * 9)}]\n'
        for k in range(8)),
     f'YAML aliases repeat more than {MAX_ALIAS_NODES} nodes (expected a document without '
     'alias bombs)'),
    ('a: &a [1, *a]\n', 'a node holding an alias of itself at line 1, column 4 (expected a '
     'finite document)'),
    ('[' * 100_000, 'nested too deeply for the parser'),
    ('a: ' + '9' * 5000, 'a value that cannot be built (Exceeds the limit (4300 digits) for '
     'integer string conversion)'),
    ('a: [1', "malformed YAML: expected ',' or ']', but got '<stream end>' at line 1, column 6"),
], ids=['bomb', 'recursive', 'deep', 'huge integer', 'malformed'])
def test_yaml_built_to_exhaust_the_reader_is_refused_before_it_is_built(text, line):
    with pytest.raises(YamlError) as error:
        load_yaml(text)
    assert str(error.value) == line


def test_brief_bounds_any_value():
    assert brief(10 ** 400) == '100000000000000000...0000000000000000000'
    assert brief('x' * 1000) == "'" + 'x' * 27 + '...' + 'x' * 28 + "'"
    assert len(brief([[[[1]]]] * 10 ** 6)) < 80
