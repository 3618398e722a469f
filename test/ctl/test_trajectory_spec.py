"""rnea_ctl's trajectory input: rnea_excite's YAML as it writes it, the inline spec, bad files."""
from __future__ import annotations

import os

import numpy as np
import pytest
import yaml

from rnea_ros.ctl.trajectory_spec import from_inline, load_file, MAX_SECONDS
from rnea_ros.errors import InputError
from rnea_ros.excite.outputs import trajectory_message


def _excite_file(tmp_path, **changes):
    times = np.array([0.0, 0.5, 1.25])
    q = np.array([[0.0, 0.1], [0.2, 0.3], [0.4, 0.5]])
    message = trajectory_message(['a', 'b'], times, q, q * 2, q * 3)
    message.update(changes)
    path = tmp_path / 'trajectory.yaml'
    path.write_text(yaml.safe_dump(message, sort_keys=False))  # as rnea_excite writes it
    return path


def test_reads_what_rnea_excite_writes(tmp_path):
    spec = load_file(str(_excite_file(tmp_path)))
    assert spec.joint_names == ('a', 'b')
    assert [p.time_from_start for p in spec.points] == [0, 500_000_000, 1_250_000_000]
    assert spec.points[2].positions == (0.4, 0.5)
    assert spec.points[2].velocities == (0.8, 1.0)
    assert spec.points[2].accelerations == pytest.approx((1.2, 1.5), abs=1e-12)
    assert spec.points[2].effort == () and spec.stamp == (0, 0)


def test_inline_points_rest_at_each_point():
    spec = from_inline([['1.0', 'a=0.5', 'b=-0.25'], ['2.5', 'a=0', 'b=0']])
    assert spec.joint_names == ('a', 'b')
    assert spec.points[0].positions == (0.5, -0.25)
    assert spec.points[1].time_from_start == 2_500_000_000
    assert all(point.velocities == (0.0, 0.0) for point in spec.points)


@pytest.mark.parametrize('points, line', [
    ([['1.0']], '--point #1: expected SECONDS NAME=POSITION [NAME=POSITION ...]'),
    ([['soon', 'a=1']], "--point #1 SECONDS: 'soon': expected a finite number"),
    ([['1', 'a=nan']], "--point #1 a: 'nan': expected a finite number"),
    ([['1', 'a']], "--point #1: 'a': expected NAME=POSITION"),
    ([['1', 'a=1', 'a=2']], '--point #1: a joint is named twice: expected each joint once'),
    ([['-1', 'a=1']], f"--point #1 SECONDS: '-1': expected a time from start from 0 to "
                      f'{MAX_SECONDS} s'),
    ([['1', 'a=1'], ['2', 'b=1']], '--point #2: names b: expected the joints of the first '
                                   'point, in its order: a'),
    ([['1', 'a=1'], ['1', 'a=2']], 'the --point options: points[1].time_from_start: expected '
                                   "a time after the previous point's (1 s)"),
])
def test_bad_inline_points_name_the_option(points, line):
    with pytest.raises(InputError) as error:
        from_inline(points)
    assert str(error.value) == line


@pytest.mark.parametrize('change, line', [
    ({'joint_names': ['a', 'a']}, "joint_names: 'a' is named twice: expected each joint once"),
    ({'joint_names': 'a'}, 'joint_names: expected a list of joint names (non-empty texts)'),
    ({'points': []}, 'points: expected a list of at least one point'),
    ({'point': []}, "the document: unknown field 'point': expected header, joint_names, "
                    'points'),
    ({'points': [{'positions': [1.0], 'time_from_start': 0}]},
     'points[0].positions: expected 2 finite numbers (one per joint_names) or none'),
    ({'points': [{'positions': [1.0, '.nan'], 'time_from_start': 0}]},
     'points[0].positions: expected 2 finite numbers (one per joint_names) or none'),
    ({'points': [{'positions': [1.0, 2.0]}]},
     'points[0].time_from_start: missing: expected {sec: S, nanosec: N} or seconds'),
    ({'points': [{'positions': [1.0, 2.0], 'time_from_start': {'sec': 1, 'nanosec': 2e9}}]},
     f'points[0].time_from_start: expected {{sec: S, nanosec: N}} (integers, S from 0 to '
     f'{MAX_SECONDS}, N below 1e9) or a number of seconds in that range'),
    ({'points': [{'positions': [1.0, 2.0], 'time_from_start': 1, 'effort': 'x'}]},
     'points[0].effort: expected 2 finite numbers (one per joint_names) or none'),
])
def test_bad_file_names_the_file_and_the_field(tmp_path, change, line):
    path = _excite_file(tmp_path, **change)
    with pytest.raises(InputError) as error:
        load_file(str(path))
    assert str(error.value) == f"trajectory file '{path}': {line}"


def test_a_file_that_is_no_yaml_or_no_text_is_one_line(tmp_path):
    path = tmp_path / 'bad.yaml'
    path.write_text('points: [1, 2\n')
    with pytest.raises(InputError, match=r"^trajectory file '.*bad.yaml': malformed YAML: "):
        load_file(str(path))
    path.write_text('!!python/object/apply:os.system ["true"]\n')  # never run
    with pytest.raises(InputError, match="': malformed YAML: could not determine a constructor"):
        load_file(str(path))
    path.write_bytes(b'\xff\xfe')
    with pytest.raises(InputError, match=r'cannot read .*: not UTF-8 text \(byte 0xff'):
        load_file(str(path))
    with pytest.raises(InputError, match=r"cannot read trajectory file '/no/such': No such"):
        load_file('/no/such')


def test_a_fifo_or_a_device_is_refused_unread(tmp_path):
    fifo = tmp_path / 'fifo.yaml'
    os.mkfifo(fifo)  # no writer: reading it would wait for ever
    with pytest.raises(InputError) as error:
        load_file(str(fifo))
    assert str(error.value) == f"cannot read trajectory file '{fifo}': not a regular file (a FIFO)"
    with pytest.raises(InputError) as error:
        load_file('/dev/zero')  # endless: reading it would exhaust memory
    assert str(error.value) == \
        "cannot read trajectory file '/dev/zero': not a regular file (a character device)"


def test_a_file_built_to_break_the_reader_is_one_line(tmp_path):
    path = tmp_path / 'hostile.yaml'
    where = f"trajectory file '{path}'"
    names = [f'j{k}' for k in range(100_000)]  # counted twice each (quadratic): hours
    path.write_text(yaml.safe_dump({'joint_names': names, 'points': []}))
    with pytest.raises(InputError) as error:
        load_file(str(path))
    assert str(error.value) == f'{where}: joint_names: 100000 names: expected at most 10000'
    path.write_text(yaml.safe_dump({'joint_names': [f'j{k}' for k in range(10_000)],
                                    'points': []}))
    with pytest.raises(InputError, match=r'points: expected a list of at least one point$'):
        load_file(str(path))  # 10 000 names: checked in linear time
    path.write_text('joint_names: [a]\npoints:\n- {positions: [' + '9' * 400 + '], '
                    'time_from_start: 1}\n')
    with pytest.raises(InputError) as error:
        load_file(str(path))
    assert str(error.value) == (f'{where}: points[0].positions: expected 1 finite numbers (one '
                                'per joint_names) or none')
    path.write_text('joint_names: [a]\npoints:\n- {positions: [0], time_from_start: {sec: '
                    + '9' * 400 + '}}\n')
    with pytest.raises(InputError) as error:
        load_file(str(path))
    assert str(error.value) == (f'{where}: points[0].time_from_start: expected {{sec: S, '
                                'nanosec: N} (integers, S from 0 to 2147483647, N below 1e9) or '
                                'a number of seconds in that range')
