"""Finding the bags of a fleet: directories, single-file bags, robot names, output names."""
from __future__ import annotations

from pathlib import Path

import pytest

from rnea_ros.errors import InputError
from rnea_ros.fleet.bags import discover, output_names


def bag_dir(path: Path) -> Path:
    """Make a stand-in rosbag2 directory (discovery only looks at the names)."""
    path.mkdir(parents=True)
    (path / 'metadata.yaml').write_text('rosbag2_bagfile_information: {}\n')
    (path / f'{path.name}_0.mcap').write_bytes(b'')
    return path


def bag_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'')
    return path


@pytest.fixture
def fleet(tmp_path) -> Path:
    root = tmp_path / 'fleet'
    bag_dir(root / 'arm_a' / '2026_11_01')
    bag_dir(root / 'arm_a' / '2026_11_08')
    bag_dir(root / 'arm_b' / 'site' / '2026_11_01')  # equal name, other robot
    bag_file(root / 'arm_c' / 'rec.db3')
    bag_file(root / 'arm_c' / 'notes.txt')
    bag_dir(root / 'out' / 'bags' / 'x' / 'bag')  # a --write-bag result, not an input
    return root


def test_directories_are_searched_and_the_holding_folder_is_the_robot(fleet):
    found = discover([str(fleet)], exclude=fleet / 'out')
    assert [(b.path.relative_to(fleet).as_posix(), b.robot, b.name) for b in found] == [
        ('arm_a/2026_11_01', 'arm_a', 'arm_a.2026_11_01'),
        ('arm_a/2026_11_08', 'arm_a', '2026_11_08'),
        ('arm_b/site/2026_11_01', 'site', 'site.2026_11_01'),
        ('arm_c/rec.db3', 'arm_c', 'rec'),
    ]
    # A bag directory's storage files are not bags of their own; bag paths are absolute.
    assert all(b.path.is_absolute() and b.robot_error is None for b in found)


def test_a_bag_given_directly_has_no_robot_yet_and_is_taken_once(fleet):
    found = discover([str(fleet / 'arm_a' / '2026_11_01'), str(fleet / 'arm_c' / 'rec.db3'),
                      str(fleet / 'arm_a')])
    assert [(b.path.name, b.robot) for b in found] == [
        ('2026_11_01', None), ('rec.db3', None), ('2026_11_08', 'arm_a')]


def test_robot_pattern_names_the_robot_from_the_path(fleet):
    found = discover([str(fleet)], robot_pattern=r'fleet/(arm_[ab])/', exclude=fleet / 'out')
    assert [(b.robot, b.name) for b in found] == [
        ('arm_a', 'arm_a.2026_11_01'), ('arm_a', '2026_11_08'), ('arm_b', 'arm_b.2026_11_01'),
        (None, 'rec')]
    assert found[-1].robot_error == (
        rf"--robot-pattern 'fleet/(arm_[ab])/' does not match the bag path "
        f"'{fleet / 'arm_c' / 'rec.db3'}' (its group must capture the robot name)")


def test_output_names_stay_unique():
    paths = [Path('/f/a/run'), Path('/f/b/run'), Path('/g/a/run'), Path('/f/a.run.mcap')]
    assert output_names(paths, ['a', 'b', 'a', None]) == ['a.run', 'b.run', 'a.run.2', 'a.run.3']


@pytest.mark.parametrize('pattern, message', [
    ('(', "--robot-pattern '(' is not a regular expression: missing ), unterminated subpattern "
     'at position 0'),
    ('arm', "--robot-pattern 'arm' must have exactly one group (the robot name), it has 0"),
])
def test_bad_robot_pattern(fleet, pattern, message):
    with pytest.raises(InputError) as error:
        discover([str(fleet)], robot_pattern=pattern)
    assert str(error.value) == message


def test_a_file_that_is_no_bag_is_refused(fleet):
    with pytest.raises(InputError) as error:
        discover([str(fleet / 'arm_c' / 'notes.txt')])
    assert str(error.value) == (
        f"'{fleet / 'arm_c' / 'notes.txt'}' is not a rosbag2 bag (a directory with "
        'metadata.yaml, or a .mcap/.db3 file) nor a directory of bags')
