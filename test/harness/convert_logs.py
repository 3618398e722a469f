"""The logs and bags of rnea_convert's tests: a kinova-style CSV, matrices, the refusal check."""
from __future__ import annotations

from pathlib import Path
import zlib

from harness.bagdata import fourier_excitation
import numpy as np

from rnea_ros import RobotModel
from rnea_ros.convert.cli import main as rnea_convert


JOINTS = [f'joint{k}' for k in range(1, 8)]
MAPPING = ['--joints', ','.join(JOINTS), '--time', 'Time', '--time-unit', 'ms',
           '--position', 'Position{n}', '--velocity', 'Velocity{n}', '--effort', 'TorqueSm{n}']


RATE = 1000.0  # Hz, as the Kinova logs
FIELDS = ('Position', 'Velocity', 'TorqueSm', 'Torque')


def kinova_style_log(model: RobotModel, seconds: float, seed: int):
    """Return (time in ms, {column: values}) of a Fourier motion of ``model``'s 7 joints."""
    lower = np.array([model.joint(n).lower for n in JOINTS])
    upper = np.array([model.joint(n).upper for n in JOINTS])
    ms = np.arange(round(seconds * RATE)) * (1000.0 / RATE)
    q, v, a = fourier_excitation(lower, upper, ms * 1e-3, base_frequency=0.5, seed=seed)
    tau = model.rnea_batch(q, v, a)
    tau += np.random.default_rng(seed).normal(0.0, 0.05, tau.shape)
    columns = {'Time': ms}
    for name, values in zip(FIELDS, (q, v, tau, np.zeros_like(tau))):
        columns.update({f'{name}{k}': values[:, k - 1] for k in range(1, 8)})
    return columns


def write_csv(path: Path, columns: dict) -> Path:
    """Write ``columns`` as a CSV with a header line (values as round-trip decimals)."""
    names = list(columns)
    rows = np.column_stack([columns[n] for n in names])
    lines = [','.join(names)] + [','.join(repr(float(x)) for x in row) for row in rows]
    path.write_text('\n'.join(lines) + '\n')
    return path


def messages(bag: Path):
    """Return (stamps, position, velocity, effort) of a bag's /joint_states, by rosbags."""
    from rosbags.highlevel import AnyReader
    rows = []
    with AnyReader([bag]) as reader:
        assert [c.topic for c in reader.connections] == ['/joint_states']
        for connection, time, raw in reader.messages():
            msg = reader.deserialize(raw, connection.msgtype)
            stamp = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
            assert stamp == time and list(msg.name) == JOINTS
            rows.append((stamp, msg.position, msg.velocity, msg.effort))
    return [np.array([row[k] for row in rows]) for k in range(4)]


def assert_refused(capsys, log: Path, options: list[str], message: str) -> None:
    """Check that converting ``log`` prints ``message``, exits with 2 and writes nothing."""
    before = sorted(log.parent.rglob('*'))
    code = rnea_convert([str(log), '--output', str(log.parent / 'bag'), *options])
    captured = capsys.readouterr()
    assert (code, captured.out) == (2, '')
    assert captured.err == f'rnea_convert: error: {message}\n'
    assert sorted(log.parent.rglob('*')) == before


ROWS = 200
MATRICES = ['--joints', ','.join(JOINTS), '--time', 'Time', '--time-unit', 'ms',
            '--position', 'q[{n}]', '--velocity', 'dq[{n}]', '--effort', 'tau[{n}]']


TWO = ['--joints', 'a,b', '--time', 'Time', '--position', 'q[{n}]']


def motion(rows: int = ROWS) -> dict[str, np.ndarray]:
    """Return ``Time`` (int64 ms) and ``q``, ``dq``, ``tau`` (rows, 7) of random float64s."""
    rng = np.random.default_rng(7)
    return {'Time': np.arange(rows, dtype=np.int64) * 2, 'q': rng.normal(0.0, 1.0, (rows, 7)),
            'dq': rng.normal(0.0, 2.0, (rows, 7)), 'tau': rng.normal(0.0, 30.0, (rows, 7))}


def csv_columns(data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Return the Kinova-style columns (``Time``, ``Position1`` ..) of ``motion()``'s data."""
    columns = {'Time': data['Time'].astype(np.float64)}
    for field, name in (('Position', 'q'), ('Velocity', 'dq'), ('TorqueSm', 'tau')):
        columns.update({f'{field}{k}': data[name][:, k - 1] for k in range(1, 8)})
    return columns


def bag_of(capsys, log: Path, mapping: list[str]) -> dict[str, bytes]:
    """Convert ``log`` into the bag ``bag`` beside it; return its files' bytes by name."""
    bag = log.parent / 'bag'
    code = rnea_convert([str(log), '--output', str(bag), *mapping])
    assert (code, capsys.readouterr().err) == (0, '')
    return {path.name: path.read_bytes() for path in sorted(bag.iterdir())}


def csv_bag(tmp_path: Path, capsys) -> dict[str, bytes]:
    """Return the files of the bag written from the CSV of ``motion()`` (and check its data)."""
    (tmp_path / 'csv').mkdir()
    log = write_csv(tmp_path / 'csv' / 'log.csv', csv_columns(motion()))
    files = bag_of(capsys, log, MAPPING)
    stamps, position, _, effort = messages(tmp_path / 'csv' / 'bag')
    np.testing.assert_array_equal(stamps, motion()['Time'] * 1_000_000)
    np.testing.assert_array_equal(position, motion()['q'])
    np.testing.assert_array_equal(effort, motion()['tau'])
    return files


GOOD = {'Time': np.arange(4.0), 'q': np.arange(8.0).reshape(4, 2)}
MIB = 1 << 20


def deflated_zeros(head: bytes, mebibytes: int) -> tuple[bytes, int, int]:
    """
    Return (raw deflate of ``head`` + ``mebibytes`` MiB of zeros, its CRC-32, its Adler-32).

    The stream is built from one compressed MiB (a block after a full flush: the same bytes
    each time), repeated: a bomb of any size costs a MiB of compression, none of memory.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    start = compressor.compress(head) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(bytes(MIB)) + compressor.flush(zlib.Z_FULL_FLUSH)
    assert compressor.compress(bytes(MIB)) + compressor.flush(zlib.Z_FULL_FLUSH) == block
    crc, adler = zlib.crc32(head), zlib.adler32(head)
    zeros = bytes(MIB)
    for _ in range(mebibytes):
        crc, adler = zlib.crc32(zeros, crc), zlib.adler32(zeros, adler)
    return start + block * mebibytes + compressor.flush(), crc, adler
