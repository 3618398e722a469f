"""
Crafted MCAP files: offsets and lengths that do not fit the file are refused at once, named.

The files are sparse (``os.truncate``): a gigabyte of zeros costs no disk. Each must be refused
by ``rnea_bag`` and ``rnea_identify`` with one line naming the file and what is wrong, exit
status 2, within the timeout (rosbags alone walks the zeros for minutes).
"""
from __future__ import annotations

import os
from pathlib import Path
import struct

from harness import bagdata
from harness.oracle import robot_path
import pytest

from rnea_ros.bag.cli import main as rnea_bag
from rnea_ros.identify.cli import main as rnea_identify

MAGIC = b'\x89MCAP0\r\n'
GIGABYTE = 10**9
HEADER_END = 8 + 9 + 8 + 4  # magic, header record (profile 'ros2', library '')


def crafted(path: Path, size: int, summary: int, summary_offsets: int = 0,
            header_length: int | None = None, records: dict[int, bytes] | None = None) -> Path:
    """Write a ``size``-byte MCAP file of zeros: magic, header, ``records``, footer."""
    body = struct.pack('<I', 4) + b'ros2' + struct.pack('<I', 0)
    with path.open('wb') as file:
        file.write(MAGIC + b'\x01' + struct.pack('<Q', header_length or len(body)) + body)
    os.truncate(path, size)
    with path.open('r+b') as file:
        for at, record in (records or {}).items():
            file.seek(at)
            file.write(record)
        file.seek(size - 37)
        file.write(b'\x02' + struct.pack('<QQQI', 20, summary, summary_offsets, 0) + MAGIC)
    return path


def record(opcode: int, length: int, body: bytes = b'') -> bytes:
    return bytes([opcode]) + struct.pack('<Q', length) + body


CASES = {
    'summary_in_zeros': (
        {'size': GIGABYTE, 'summary': GIGABYTE // 2},
        f'the record at byte {GIGABYTE // 2} of the summary section has opcode 0x00, not a '
        'record that belongs there (zeros: a file not completely written?)'),
    'no_summary_zeros': (
        {'size': GIGABYTE, 'summary': 0},
        f'the record at byte {HEADER_END} of the data section has opcode 0x00, not a record '
        'that belongs there (zeros: a file not completely written?)'),
    'summary_past_the_end': (
        {'size': 4096, 'summary': 2**40},
        f'the footer puts the summary section at byte {2**40}, outside bytes {HEADER_END} to '
        f'{4096 - 37} of the file'),
    'summary_offsets_before_summary': (
        {'size': 4096, 'summary': 2000, 'summary_offsets': 1000,
         'records': {2000: record(0x0E, 0)}},
        f'the footer puts the summary offset section at byte 1000, outside bytes 2000 to '
        f'{4096 - 37} of the file'),
    'header_length_past_eof': (
        {'size': 4096, 'summary': 0, 'header_length': 2**62},
        f'the header record at byte 8 (opcode 0x01, length {2**62}) does not fit before the '
        f'footer at byte {4096 - 37}'),
    'record_length_past_eof': (
        {'size': GIGABYTE, 'summary': GIGABYTE - 1000, 'records': {GIGABYTE - 1000: record(
            0x03, 2**63 + 5)}},
        f'the record at byte {GIGABYTE - 1000} of the summary section (opcode 0x03, length '
        f'{2**63 + 5}) runs past the end of the section at byte {GIGABYTE - 37}'),
    'chunk_outside_the_data': (
        {'size': 4096, 'summary': 3000, 'records': {3000: record(
            0x08, 40, struct.pack('<QQQQ', 0, 0, 3500, 100) + bytes(8))}},
        'the chunk index at byte 3000 points to a chunk at byte 3500 of length 100, outside '
        f'the data section (bytes {HEADER_END} to 3000)'),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize('case', list(CASES))
def test_crafted_mcap_is_refused_at_once_by_both_tools(tmp_path, capsys, case):
    settings, what = CASES[case]
    bag = crafted(tmp_path / f'{case}.mcap', **settings)
    assert bag.stat().st_blocks * 512 < 1 << 20  # sparse: the zeros are not on disk
    line = f"error: invalid MCAP file '{bag}': {what}\n"
    code = rnea_bag([str(bag), '--urdf', str(bagdata.PANDA), '--output', str(tmp_path / 'o')])
    assert (code, capsys.readouterr().err) == (2, f'rnea_bag: {line}')
    code = rnea_identify([str(bag), '--urdf', str(robot_path('ur5')), '--output',
                          str(tmp_path / 'i')])
    assert (code, capsys.readouterr().err) == (2, f'rnea_identify: {line}')
    assert not (tmp_path / 'o').exists() and not (tmp_path / 'i').exists()


@pytest.mark.timeout(60)
def test_a_bag_directory_with_a_crafted_file_is_refused(tmp_path, capsys):
    bag = bagdata.panda_bag(tmp_path / 'bag', bagdata.sample_times(50), storage='mcap')
    data = next(bag.glob('*.mcap'))
    crafted(data, GIGABYTE, GIGABYTE // 2)
    code = rnea_bag([str(bag), '--urdf', str(bagdata.PANDA), '--output', str(tmp_path / 'o')])
    assert code == 2
    assert capsys.readouterr().err == (
        f"rnea_bag: error: invalid MCAP file '{data}': the record at byte {GIGABYTE // 2} of "
        'the summary section has opcode 0x00, not a record that belongs there (zeros: a file '
        'not completely written?)\n')


def test_an_error_without_a_message_is_named_by_its_type(tmp_path, capsys, monkeypatch):
    from rosbags.rosbag2 import Reader
    bag = bagdata.panda_bag(tmp_path / 'bag', bagdata.sample_times(50), storage='mcap')

    def out_of_memory(self):
        raise MemoryError()  # what a huge length read as an allocation gives: no message
    monkeypatch.setattr(Reader, 'open', out_of_memory)
    code = rnea_bag([str(bag), '--urdf', str(bagdata.PANDA), '--output', str(tmp_path / 'o')])
    assert (code, capsys.readouterr().err) == (
        2, f"rnea_bag: error: cannot read bag '{bag}' (corrupt or not a rosbag2 sqlite3/mcap "
        'bag?): MemoryError\n')
