"""Finding the bags of a fleet: directories, single-file bags, robot names, output names."""
from __future__ import annotations

from pathlib import Path

import pytest

from rnea_ros.errors import InputError
from rnea_ros.fleet.bags import discover, MAX_NAME, output_names, safe_name


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


def test_hostile_bag_names_give_plain_unique_folder_names(tmp_path):
    """Regression: the stem of '...mcap' is '..' (DIR/bags/.. is DIR), of '..mcap' '.'."""
    root = tmp_path / 'fleet'
    for name in ('...mcap', '..mcap', 'a\\b.mcap', 'new\nline.db3', 'Run.mcap', 'run.mcap',
                 'ä' * 80 + '.mcap'):
        bag_file(root / 'arm' / name)
    bag_dir(root / 'arm' / '.hidden')
    bag_file(root / 'other' / 'run.mcap')  # the same stem in another folder
    names = {bag.path.relative_to(root).as_posix(): bag.name for bag in discover([str(root)])}
    assert names == {
        'arm/...mcap': '__', 'arm/..mcap': '_', 'arm/a\\b.mcap': 'a_b',
        'arm/new\nline.db3': 'new_line', 'arm/Run.mcap': 'arm.Run', 'arm/run.mcap': 'arm.run.2',
        'arm/' + 'ä' * 80 + '.mcap': 'ä' * 50, 'arm/.hidden': '_hidden',
        'other/run.mcap': 'other.run'}
    assert len(('ä' * 50).encode()) == MAX_NAME


@pytest.mark.parametrize('text, name', [
    ('..', '__'), ('.', '_'), ('', 'bag'), ('a/b', 'a_b'), ('../../etc', '___.._etc'),
    ('x\x00y', 'x_y'), ('run 1', 'run_1'), ('panda+gripper-2', 'panda+gripper-2')])
def test_safe_name(text, name):
    assert safe_name(text) == name


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
