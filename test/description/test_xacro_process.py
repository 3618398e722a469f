"""
Each xacro expansion in a process of its own (``xacro_process.py``): nothing outlives it, limits.

A trusted arm whose shoulder is turned by ``${math.pi/2}`` is loaded before and after hostile
files that change what xacro keeps in its module (the ``math`` namespace, the global symbol
table, the substitution arguments, the file stack, ``all_includes``): its URDF text and gravity
torques must not change by a bit. Expressions that run for ever or take all memory are refused
within the limits, with one line naming the file and the limit.
"""
from __future__ import annotations

from pathlib import Path
import re
import subprocess
import sys

import numpy as np
import pytest

from rnea_ros import RobotModel, URDFError
from rnea_ros.description.robot_file import read_robot_description
from rnea_ros.description.xacro_process import (failure_reason, LIMITS, WARNING_CHARS,
                                                XacroLimits)

ROOT = Path(__file__).resolve().parents[2]
HEAD = ('<?xml version="1.0"?>\n<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">\n'
        '  <link name="base"/>\n')
TRUSTED = HEAD + """  <xacro:arg name="prefix" default=""/>
  <xacro:include filename="segment.xacro"/>
  <xacro:segment name="$(arg prefix)upper" parent="base" rpy="0 ${math.pi/2} 0"/>
  <xacro:segment name="$(arg prefix)fore" parent="$(arg prefix)upper" rpy="0 ${pi/4} 0"/>
</robot>
"""
SEGMENT = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:macro name="segment" params="name parent rpy">
    <joint name="${name}_joint" type="revolute"><parent link="${parent}"/>
      <child link="${name}"/><origin xyz="0 0 0.3" rpy="${rpy}"/><axis xyz="0 1 0"/>
      <limit lower="-2" upper="2" effort="50" velocity="2"/></joint>
    <link name="${name}"><inertial><origin xyz="${sqrt(0.04)} 0 0.15"/><mass value="2"/>
      <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  </xacro:macro>
</robot>
"""
# Each changes state that xacro keeps in its module, then fails (or loads: math.update alone).
HOSTILE = {
    'math_update': '${math.update(pi=0.0, sqrt=floor)}',
    'math_update_refused': '${math.update(pi=0.0)}${(1).__class__}',
    'math_clear': '${math.clear()}${1/0}',
    'math_pop': "${math.pop('pi')}${1/0}",
    'math_lazy': "${math.unevaluated.add('pi')}${math.recursive.append('pi')}${1/0}",
    'math_root': '${math.root.update(pi=0.0)}${math.parent.update(pi=0.0)}${1/0}',
    'global_property': ('<xacro:property name="pi" value="0.0" scope="global"/>'
                        '<xacro:property name="prefix" value="evil_" scope="global"/>${1/0}'),
    'include_then_fail': ('<xacro:include filename="segment.xacro"/>'
                          '<xacro:include filename="no_such.xacro"/>'),
}


def write_hostile(name: str, tmp_path: Path) -> Path:
    path = tmp_path / f'{name}.urdf.xacro'
    path.write_text(HEAD + f'<link name="x">{HOSTILE[name]}</link>\n</robot>\n')
    return path


def trusted_robot(path: Path) -> tuple[str, np.ndarray]:
    """Return the trusted file's URDF text and its gravity torques at three postures."""
    text = read_robot_description(path, {'prefix': 'left_'})
    model = RobotModel.from_urdf_file(path, xacro_args={'prefix': 'left_'})
    q = np.array([[0.0, 0.0], [0.3, -0.7], [1.2, 0.4]])
    return text, np.array([model.rnea(row, np.zeros(2), np.zeros(2)) for row in q])


def test_hostile_expansions_leave_a_trusted_robot_bit_identical(tmp_path):
    """One process: trusted, every hostile file (with arguments), trusted again: the same robot."""
    (tmp_path / 'segment.xacro').write_text(SEGMENT)
    trusted = tmp_path / 'arm.urdf.xacro'
    trusted.write_text(TRUSTED)
    text, torques = trusted_robot(trusted)
    assert 'rpy="0 1.5707963267948966 0"' in text
    assert abs(torques[0, 0]) > 1.0  # the turned shoulder carries the arm's weight
    for name in HOSTILE:
        path = write_hostile(name, tmp_path)
        try:
            read_robot_description(path, {'prefix': 'evil_', 'injected': '${1/0}'})
        except URDFError as exc:
            assert str(exc).startswith(f'xacro cannot expand {str(path)!r}: '), name
        else:
            assert name == 'math_update'
        again_text, again_torques = trusted_robot(trusted)
        assert again_text == text, name
        assert np.array_equal(again_torques, torques), name


def test_an_expansion_leaves_xacro_unimported_in_the_caller(tmp_path):
    """The caller never imports xacro (nothing of it to change); the child imports no numpy."""
    (tmp_path / 'segment.xacro').write_text(SEGMENT)
    trusted = tmp_path / 'arm.urdf.xacro'
    trusted.write_text(TRUSTED)
    script = ('import sys\n'
              'from rnea_ros.description.robot_file import expand_xacro\n'
              f'urdf = expand_xacro({str(trusted)!r}, {{"prefix": "left_"}})\n'
              'assert "left_upper_joint" in urdf\n'
              'print(sorted(name for name in ("xacro", "numpy") if name in sys.modules))\n')
    done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                          cwd=ROOT, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "['numpy']\n"  # the caller's numpy; xacro only in the child


def test_the_child_imports_xacro_only():
    """The child's start-up: this module and xacro, not numpy or numba (0.2 s, not 1-2 s)."""
    from rnea_ros.description import xacro_process
    script = (xacro_process._PACKAGES_AS_FOLDERS
              + 'import rnea_ros.description.xacro_process, rnea_ros.description.xacro_guard\n'
              'import xacro\n'
              'print(sorted(name for name in ("numpy", "numba", "rnea_ros.dynamics.model") '
              'if name in sys.modules))\n')
    done = subprocess.run([sys.executable, '-c', script, str(ROOT / 'rnea_ros'),
                           str(ROOT / 'rnea_ros' / 'description')],
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == '[]\n'


def test_the_child_resolves_find_and_relative_paths_as_the_caller(tmp_path, monkeypatch):
    """$(find) through the caller's AMENT_PREFIX_PATH; a relative file from its directory."""
    prefix = tmp_path / 'install'
    (prefix / 'share' / 'ament_index' / 'resource_index' / 'packages').mkdir(parents=True)
    (prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' / 'arm_description'
     ).write_text('')
    (prefix / 'share' / 'arm_description').mkdir()
    (prefix / 'share' / 'arm_description' / 'segment.xacro').write_text(SEGMENT)
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(prefix))
    work = tmp_path / 'work'
    work.mkdir()
    (work / 'arm.urdf.xacro').write_text(TRUSTED.replace(
        '"segment.xacro"', '"$(find arm_description)/segment.xacro"'))
    monkeypatch.chdir(work)
    text = read_robot_description('arm.urdf.xacro', {'prefix': 'left_'})
    assert 'name="left_upper_joint"' in text
    assert 'autogenerated by xacro from arm.urdf.xacro ' in text


def test_xacro_warnings_reach_the_callers_stderr(tmp_path, capsys):
    path = tmp_path / 'warns.urdf.xacro'
    path.write_text(HEAD + '<xacro:property name="pi" value="3"/><link name="l_${pi}"/></robot>')
    assert '<link name="l_3"/>' in read_robot_description(path)
    assert 'warning: redefining global symbol: pi\n' in capsys.readouterr().err


def test_without_xacro_the_child_says_how_to_install_it(tmp_path, monkeypatch):
    """The child imports xacro from the caller's sys.path: here one without site-packages."""
    path = tmp_path / 'arm.urdf.xacro'
    path.write_text(HEAD + '</robot>')
    monkeypatch.setattr(sys, 'path', [entry for entry in sys.path
                                      if 'site-packages' not in entry])
    with pytest.raises(URDFError, match=f'^{re.escape(repr(str(path)))} is a xacro file and the '
                                        r'xacro package is not installed: pip install xacro '
                                        r'\(or install ROS xacro\)$'):
        read_robot_description(path)


def test_no_python_to_run_the_child_is_a_urdf_error(tmp_path, monkeypatch):
    path = tmp_path / 'arm.urdf.xacro'
    path.write_text(HEAD + '</robot>')
    missing = str(tmp_path / 'no_python')
    monkeypatch.setattr(sys, 'executable', missing)
    with pytest.raises(URDFError, match=f'^xacro cannot expand {re.escape(repr(str(path)))}: '
                                        f'cannot start {re.escape(repr(missing))} to expand '
                                        'it: No such file or directory$'):
        read_robot_description(path)


BOMBS = {
    'power': '${10**10**10}',
    'factorial': '${factorial(10**7)}',
    'list': '${[[0]*10**5]*10**5}',
    'macro_calls': ''.join(f'<xacro:macro name="m{i}"><xacro:m{i + 1}/><xacro:m{i + 1}/>'
                           '</xacro:macro>' for i in range(30))
    + '<xacro:macro name="m30"></xacro:macro><xacro:m0/>',  # 2**30 calls
}
SMALL = XacroLimits(cpu_seconds=1, memory_bytes=128 << 20, wall_seconds=120)


def write_bomb(name: str, tmp_path: Path, bomb: str) -> Path:
    path = tmp_path / f'{name}.urdf.xacro'
    path.write_text(HEAD + f'<link name="x">{bomb}</link>\n</robot>\n')
    return path


@pytest.mark.timeout(180)
@pytest.mark.parametrize('name', BOMBS)
def test_an_expansion_past_its_limits_is_refused_naming_the_limit(name, tmp_path):
    """Each runs for ever (or fills memory) in plain xacro: refused by CPU time or memory."""
    from rnea_ros.description.robot_file import expand_xacro
    path = write_bomb(name, tmp_path, BOMBS[name])
    with pytest.raises(URDFError) as raised:
        expand_xacro(path, limits=SMALL)
    assert re.fullmatch(f'xacro cannot expand {re.escape(repr(str(path)))}: the expansion went '
                        r'past its (CPU-time limit of 1 s|memory limit of 128 MiB)',
                        str(raised.value)), str(raised.value)


@pytest.mark.timeout(180)
@pytest.mark.parametrize('limits, bomb, limit', [
    (SMALL, '${factorial(10**7)}', 'CPU-time limit of 1 s'),
    (XacroLimits(cpu_seconds=60, memory_bytes=128 << 20, wall_seconds=120),
     "${'x' * 10**9}", 'memory limit of 128 MiB'),
    (XacroLimits(cpu_seconds=60, memory_bytes=128 << 20, wall_seconds=0.5),
     '${factorial(10**7)}', 'wall-time limit of 0.5 s'),
], ids=['cpu', 'memory', 'wall'])
def test_each_limit_is_named(limits, bomb, limit, tmp_path):
    from rnea_ros.description.robot_file import expand_xacro
    path = write_bomb('bomb', tmp_path, bomb)
    with pytest.raises(URDFError, match=f'^xacro cannot expand {re.escape(repr(str(path)))}: '
                                        f'the expansion went past its {limit}$'):
        expand_xacro(path, limits=limits)


def test_a_memory_bomb_is_refused_by_the_default_limit_with_a_reason(tmp_path):
    """A MemoryError in xacro gave 'XacroException: ' (no reason): it names the limit now."""
    path = write_bomb('bomb', tmp_path, "${'x' * 10**12}")
    with pytest.raises(URDFError) as raised:
        RobotModel.from_urdf_file(path)
    assert str(raised.value) == (f'xacro cannot expand {str(path)!r}: the expansion went past '
                                 f'its memory limit of {LIMITS.memory_bytes >> 20} MiB')


def test_a_failure_without_text_is_named_by_what_it_wraps():
    class XacroException(Exception):

        def __init__(self, exc):
            super().__init__('')
            self.exc = exc

    assert failure_reason(XacroException(exc=ValueError())) == 'XacroException: ValueError'
    assert failure_reason(KeyError()) == 'KeyError'
    assert failure_reason(ValueError('a\n  b')) == 'ValueError: a b'


def test_the_docs_state_the_limits():
    text = ' '.join((ROOT / 'docs' / 'library.md').read_text().split())
    for words in (f'{LIMITS.cpu_seconds} s of CPU time', f'{LIMITS.memory_bytes >> 20} MiB of '
                  'memory', f'{LIMITS.wall_seconds:g} s of wall time',
                  f'warnings (up to {WARNING_CHARS} characters)'):
        assert words in text, words
