"""
What an MJCF makes MuJoCo read, checked before MuJoCo opens any of it (``mjcf_paths``).

A hostile include — an absolute path, a ``../`` out of the folder, a symlink that leads out, a
FIFO (reading it would wait for a writer forever), a file larger than ``MAX_BYTES`` (sparse:
no disk used) — and a mesh that is a FIFO are each refused in one ``MJCFError`` line naming
the element and the path, by ``RobotModel.from_mjcf`` (which let MuJoCo open all of them) and
by ``rnea_sim --mjcf``'s check; MuJoCo itself is shown to follow the include outside. A file
whose includes stay inside, regular and small, loads as before.
"""
from __future__ import annotations

import os
from pathlib import Path

import mujoco
import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.errors import MJCFError
from rnea_ros.files import MAX_BYTES
from rnea_ros.sim.mjcf_robot import check_paths as sim_check

BODY = ('<worldbody><body name="b"><joint name="k" axis="0 1 0"/>'
        '<geom type="sphere" size="0.1" mass="1" pos="0.2 0 0"/></body></worldbody>')
INNER = f'<mujoco>{BODY}</mujoco>'


@pytest.fixture
def robot(tmp_path) -> Path:
    """Return the folder of a robot: outside/ beside it holds a valid inner.xml too."""
    folder, outside = tmp_path / 'robot', tmp_path / 'outside'
    folder.mkdir()
    outside.mkdir()
    (outside / 'inner.xml').write_text(INNER)
    return folder


def _main(folder: Path, include: str) -> Path:
    path = folder / 'robot.xml'
    path.write_text(f'<mujoco><include file="{include}"/></mujoco>')
    return path


def _refusals(path: Path) -> list[str]:
    """Return the messages of from_mjcf and of the sim's check (without its prefix)."""
    messages = []
    with pytest.raises(MJCFError) as caught:
        RobotModel.from_mjcf(path)
    messages.append(str(caught.value).removeprefix(f'MJCF {str(path)!r}: '))
    with pytest.raises(MJCFError) as caught:
        sim_check(path)
    messages.append(str(caught.value))
    return messages


def test_an_include_within_the_folder_loads(robot):
    (robot / 'inner.xml').write_text(INNER)
    model = RobotModel.from_mjcf(_main(robot, 'inner.xml'))
    mj = mujoco.MjModel.from_xml_string(INNER)
    assert list(model.joint_names) == ['k']
    np.testing.assert_allclose(model.mass_matrix(np.zeros(1)), [[mj.body_mass[1] * 0.2 ** 2
                                                                 + mj.body_inertia[1][1]]],
                               rtol=0, atol=1e-12)
    sim_check(_main(robot, 'inner.xml'))


@pytest.mark.parametrize('include', ['ABSOLUTE', '../outside/inner.xml', 'link.xml'],
                         ids=['absolute', 'dotdot', 'symlink out'])
def test_an_include_out_of_the_folder_is_refused_before_mujoco_opens_it(robot, include):
    outside = robot.parent / 'outside' / 'inner.xml'
    (robot / 'link.xml').symlink_to(outside)
    include = str(outside) if include == 'ABSOLUTE' else include
    path = _main(robot, include)
    mujoco.MjModel.from_xml_path(str(path))  # MuJoCo follows it: the file outside is read
    line = (f"<include file={include!r}> leads outside the file's folder {str(robot)!r}: "
            'expected a relative path within it')
    assert _refusals(path) == [line, line]


def test_an_include_that_is_a_fifo_is_refused_without_waiting_for_a_writer(robot):
    os.mkfifo(robot / 'pipe.xml')
    path = _main(robot, 'pipe.xml')
    line = (f"cannot read <include file='pipe.xml'> {str(robot / 'pipe.xml')!r}: not a "
            'regular file (a FIFO)')
    assert _refusals(path) == [line, line]


def test_an_include_beyond_the_bound_is_refused_before_it_is_read(robot):
    huge = robot / 'huge.xml'
    with open(huge, 'wb') as file:
        file.truncate(MAX_BYTES + 1)  # sparse: no disk, and never read
    path = _main(robot, 'huge.xml')
    line = (f"cannot read <include file='huge.xml'> {str(huge)!r}: {MAX_BYTES + 1} bytes: "
            f'expected at most {MAX_BYTES}')
    assert _refusals(path) == [line, line]


def test_a_mesh_that_is_a_fifo_is_refused(robot):
    os.mkfifo(robot / 'arm.stl')
    path = robot / 'robot.xml'
    path.write_text('<mujoco><asset><mesh name="m" file="arm.stl"/></asset>'
                    f'{BODY}</mujoco>')
    line = (f"cannot read <mesh file> {str(robot / 'arm.stl')!r}: not a regular file "
            '(a FIFO)')
    assert _refusals(path) == [line, line]


def test_the_docs_state_the_bound():
    root = Path(__file__).resolve().parents[2] / 'docs'
    for page in ('library.md', 'sim.md'):
        text = ' '.join((root / page).read_text().split())
        assert f'larger than {MAX_BYTES >> 20} MiB' in text or \
            f'at most {MAX_BYTES >> 20} MiB' in text, page
