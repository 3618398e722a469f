"""
The structure of an MCAP file checked before rosbags reads it: offsets and lengths in the file.

rosbags trusts the footer: a summary offset that points into zeros (a file cut short, or made
to hurt) sends it through every zero byte as an empty record, minutes for a gigabyte, and a
length past the end of the file can end in an error without a message. ``check_file`` reads
the parts of the file rosbags will trust and raises ``McapLayoutError`` naming the file and
what is wrong, in time proportional to the number of records walked, before any of it:

- the magic at both ends, the header record and the footer (opcode 0x02, length 20);
- the footer's summary and summary-offset positions inside the file, after the header;
- every record of the summary section (or of the data section, when the file has no summary
  and rosbags would scan it): a known opcode (0x00 is reserved, and what zeros read as; the
  header and footer opcodes belong at the ends) and a length inside its section;
- every chunk index: its chunk inside the data section.

Record layout (MCAP spec): opcode u8, body length u64 little-endian, body.
"""
from __future__ import annotations

import mmap
from pathlib import Path

from numba import njit
import numpy as np

MAGIC = b'\x89MCAP0\r\n'
FOOTER_SIZE = 9 + 20 + 8  # footer record (opcode, length, 8 + 8 + 4 bytes body), end magic
# The MCAP spec's record opcodes, here rather than from the ``mcap`` package: compile-time ints
# of the numba kernels (a record scan and a chunk writer), the only parts of MCAP used.
HEADER, FOOTER, MESSAGE, CHUNK, MESSAGE_INDEX, CHUNK_INDEX = 0x01, 0x02, 0x05, 0x06, 0x07, 0x08
# ``_walk`` outcomes: -1 every record fine, else a code for the record at ``position``.
BAD_OPCODE, PAST_END, CHUNK_OUTSIDE = 1, 2, 3


class McapLayoutError(Exception):
    """An MCAP file whose offsets or record lengths do not fit the file."""


@njit(cache=True, nogil=True)
def _walk(data, start, end, chunks_from, chunks_to):
    """
    Walk the records of ``data[start:end]``: (outcome, position) of the first bad one.

    (-1, end) when every record has a known opcode and ends inside the section and every
    chunk index points into [chunks_from, chunks_to).
    """
    position = start
    while position < end:
        if end - position < 9:
            return PAST_END, position
        opcode = data[position]
        length = np.uint64(0)
        for k in range(8):
            length |= np.uint64(data[position + 1 + k]) << np.uint64(8 * k)
        body = position + 9
        if opcode == 0 or opcode == HEADER or opcode == FOOTER:
            return BAD_OPCODE, position
        if length > np.uint64(end - body):
            return PAST_END, position
        if opcode == CHUNK_INDEX and length >= np.uint64(32):
            chunk = np.uint64(0)
            size = np.uint64(0)
            for k in range(8):
                chunk |= np.uint64(data[body + 16 + k]) << np.uint64(8 * k)
                size |= np.uint64(data[body + 24 + k]) << np.uint64(8 * k)
            if chunk < np.uint64(chunks_from) or chunk > np.uint64(chunks_to) \
                    or size > np.uint64(chunks_to) - chunk:
                return CHUNK_OUTSIDE, position
        position = body + np.int64(length)
    return -1, end


def _u64(data: np.ndarray, at: int) -> int:
    return int.from_bytes(data[at:at + 8].tobytes(), 'little')


def check_file(path: Path) -> None:
    """Raise ``McapLayoutError`` for an MCAP file rosbags must not be trusted with (above)."""
    size = path.stat().st_size
    if size < 8 + 9 + FOOTER_SIZE:
        raise McapLayoutError(f'{size} bytes, too short for an MCAP file (header and footer '
                              f'need {8 + 9 + FOOTER_SIZE})')
    with path.open('rb') as file:
        data = np.frombuffer(mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ),
                             dtype=np.uint8)
    if data[:8].tobytes() != MAGIC or data[-8:].tobytes() != MAGIC:
        raise McapLayoutError('no MCAP magic at its start and end (not an MCAP file, or not '
                              'completely written)')
    footer = size - FOOTER_SIZE
    if data[8] != HEADER or _u64(data, 9) > footer - 17:
        raise McapLayoutError(f'the header record at byte 8 (opcode 0x{data[8]:02x}, length '
                              f'{_u64(data, 9)}) does not fit before the footer at byte '
                              f'{footer}')
    data_start = 17 + _u64(data, 9)
    if data[footer] != FOOTER or _u64(data, footer + 1) != 20:
        raise McapLayoutError(f'no footer record at byte {footer} (opcode '
                              f'0x{data[footer]:02x}, length {_u64(data, footer + 1)}; '
                              'expected 0x02 and 20)')
    summary, summary_offsets = _u64(data, footer + 9), _u64(data, footer + 17)
    for name, at, low in (('summary', summary, data_start),
                          ('summary offset', summary_offsets, max(summary, data_start))):
        if at and not low <= at <= footer:
            raise McapLayoutError(f'the footer puts the {name} section at byte {at}, outside '
                                  f'bytes {low} to {footer} of the file')
    section, start, end = ('summary', summary, footer) if summary else \
        ('data', data_start, footer)
    outcome, at = _walk(data, start, end, data_start, summary or footer)
    if outcome == -1:
        return
    opcode, length = int(data[at]), _u64(data, at + 1) if end - at >= 9 else None
    if outcome == BAD_OPCODE:
        zeros = ' (zeros: a file not completely written?)' if opcode == 0 else ''
        raise McapLayoutError(f'the record at byte {at} of the {section} section has opcode '
                              f'0x{opcode:02x}, not a record that belongs there{zeros}')
    if outcome == PAST_END:
        raise McapLayoutError(f'the record at byte {at} of the {section} section (opcode '
                              f'0x{opcode:02x}, length {length}) runs past the end of the '
                              f'section at byte {end}')
    raise McapLayoutError(f'the chunk index at byte {at} points to a chunk at byte '
                          f'{_u64(data, at + 9 + 16)} of length {_u64(data, at + 9 + 24)}, '
                          f'outside the data section (bytes {data_start} to {summary})')


def mcap_files(path: Path) -> list[Path]:
    """Return the MCAP files of a bag: the file itself, or the .mcap files of a directory."""
    if path.is_dir():
        return sorted(p for p in path.glob('*.mcap') if p.is_file())
    return [path] if path.suffix == '.mcap' and path.is_file() else []
