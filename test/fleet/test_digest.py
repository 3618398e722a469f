"""Result digests: a bag's content (not its mtime) and the settings that change the numbers."""
from __future__ import annotations

import os
import shutil

from rnea_ros.fleet.digest import bag_digest, settings, settings_digest


def test_bag_digest_follows_the_content_not_the_modification_time(tmp_path):
    bag = tmp_path / 'bag'
    bag.mkdir()
    (bag / 'metadata.yaml').write_text('a: 1\n')
    (bag / 'bag_0.db3').write_bytes(b'\x00' * 5000 + b'x')
    digest = bag_digest(bag)
    os.utime(bag / 'bag_0.db3', (0, 0))
    copy = shutil.copytree(bag, tmp_path / 'copy')
    assert bag_digest(bag) == bag_digest(copy) == digest
    (bag / 'bag_0.db3').write_bytes(b'\x00' * 5000 + b'y')  # same size, one byte changed
    assert bag_digest(bag) != digest
    single = tmp_path / 'one.mcap'
    single.write_bytes(b'abc')
    assert bag_digest(single) != bag_digest(tmp_path / 'copy')


def test_settings_digest_follows_the_numbers_not_the_output_options(tmp_path):
    urdf = tmp_path / 'robot.urdf'
    urdf.write_text('<robot name="r"/>')
    base = {'urdf': str(urdf), 'window': 0.05, 'order': 3, 'threads': 1, 'progress': None}
    digest = settings_digest(settings(base))
    assert settings(base)['urdf'].startswith('sha256:')
    assert settings_digest(settings({**base, 'threads': 4, 'timings': True})) == digest
    assert settings_digest(settings({**base, 'window': 0.1})) != digest
    moved = tmp_path / 'moved.urdf'
    shutil.copy(urdf, moved)
    assert settings_digest(settings({**base, 'urdf': str(moved)})) == digest
    urdf.write_text('<robot name="r2"/>')
    assert settings_digest(settings(base)) != digest
