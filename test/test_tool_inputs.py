"""
Every tool's bad input is one line that names it, and exit status 2; nothing is written.

One table: the files a user gets wrong (missing, a directory, empty, binary, malformed, a URDF
without a moving joint, malformed YAML) and the numbers (NaN, infinite, negative, out of
range), each for the tools that take it, run in-process through each tool's ``main``.
"""
from __future__ import annotations

import os
from pathlib import Path
import subprocess
import sys

from harness.bagdata import PANDA, panda_bag, sample_times
import pytest

from rnea_ros.bag.cli import main as rnea_bag
from rnea_ros.demos import library as demo
from rnea_ros.excite.cli import main as rnea_excite
from rnea_ros.identify.cli import main as rnea_identify
from rnea_ros.tools.options import SPAN, TIME

FILES = {
    'empty.urdf': b'',
    'binary.urdf': b'\x00\x80\xff\xfe<robot',
    'malformed.urdf': b'<robot name="r"><link name="a"',
    'nojoints.urdf': b'<robot name="r"><link name="a"/></robot>',
    'malformed.yaml': b'/**:\n  ros__parameters: [1, 2\n',
    'binary.yaml': b'\x80\x81\x82',
    # 9**9 strings in about 300 bytes: the armature's repr in its error took hours, gigabytes
    'bomb.yaml': ('/**:\n  ros__parameters:\n    armature.panda_joint1: [&a [x, x, x, x, x, x, '
                  'x, x, x], ' + ', '.join(f'&{chr(98 + k)} [{", ".join([f"*{chr(97 + k)}"] * 9)}]'
                                           for k in range(8)) + ']\n').encode(),
}
NOT_UTF8 = 'not UTF-8 text (byte 0x80 at offset 1)'
URDF_CASES = [  # (file, the line after "--urdf 'PATH'" or "cannot read --urdf 'PATH'")
    ('missing.urdf', "cannot read --urdf '{path}': No such file or directory"),
    ('folder', "cannot read --urdf '{path}': Is a directory"),
    ('fifo.urdf', "cannot read --urdf '{path}': not a regular file (a FIFO)"),
    ('zero.urdf', "cannot read --urdf '{path}': not a regular file (a character device)"),
    ('binary.urdf', f"cannot read --urdf '{{path}}': {NOT_UTF8}"),
    ('empty.urdf', "--urdf '{path}': malformed XML: no element found: line 1, column 0"),
    ('malformed.urdf', "--urdf '{path}': malformed XML: unclosed token: line 1, column 16"),
    ('nojoints.urdf', "--urdf '{path}': the robot 'r' has no moving joint (revolute, "
     'continuous or prismatic)'),
]


@pytest.fixture(scope='module')
def inputs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp('inputs')
    for name, data in FILES.items():
        (folder / name).write_bytes(data)
    (folder / 'folder').mkdir()
    os.mkfifo(folder / 'fifo.urdf')  # no writer: reading it would wait for ever
    (folder / 'zero.urdf').symlink_to('/dev/zero')  # endless: reading it would exhaust memory
    panda_bag(folder / 'bag', sample_times(50))
    return folder


def run(tool, argv: list[str], capsys) -> tuple[int, str]:
    """Return a tool's exit status and stderr (a usage error exits through SystemExit)."""
    try:
        status = tool(argv)
    except SystemExit as exc:
        status = exc.code
    return status, capsys.readouterr().err


@pytest.mark.parametrize('name, line', URDF_CASES)
@pytest.mark.parametrize('tool', ['rnea_excite', 'rnea_bag', 'rnea_identify'])
def test_a_bad_urdf_is_one_line_naming_it(inputs, tmp_path, capsys, tool, name, line):
    path = inputs / name
    out = tmp_path / 'out'
    main, argv = {
        'rnea_excite': (rnea_excite, ['--urdf', str(path), '--output', str(out)]),
        'rnea_bag': (rnea_bag, [str(inputs / 'bag'), '--urdf', str(path), '--output', str(out),
                                '--no-plots']),
        'rnea_identify': (rnea_identify, [str(inputs / 'bag'), '--urdf', str(path), '--output',
                                          str(out), '--no-plots']),
    }[tool]
    assert run(main, argv, capsys) == (2, f'{tool}: error: {line.format(path=path)}\n')
    assert not out.exists()


@pytest.mark.parametrize('name, line', [
    ('missing.urdf', "cannot read --urdf '{path}': No such file or directory"),
    ('binary.urdf', f"cannot read --urdf '{{path}}': {NOT_UTF8}"),
    ('zero.urdf', "cannot read --urdf '{path}': not a regular file (a character device)"),
])
def test_rnea_demo_a_bad_urdf_is_one_line_naming_it(inputs, capsys, name, line):
    path = str(inputs / name)
    assert run(demo.main, ['--urdf', path], capsys) == \
        (2, f'rnea_demo: {line.format(path=path)}\n')


BAG_CASES = [
    (['--start', 'nan'], "argument --start: 'nan': expected a number from -1e+09 to 1e+09"),
    (['--window', '1e300'], "argument --window: '1e300': expected 'auto' or a number from 1e-09 "
     'to 1e+09'),
    (['--acceleration-timeout', '-1'], "argument --acceleration-timeout: '-1': expected a number "
     'from 1e-09 to 1e+09'),
    (['--order', '1000000'],  # the differentiator's fits: hours
     "argument --order: '1000000': expected an integer from 2 to 12"),
    (['--gravity', '0', '0', '1e300'], "argument --gravity: '1e300': expected a number from -100 "
     'to 100'),
    (['--actuation', '{inputs}/malformed.yaml'], '{inputs}/malformed.yaml: cannot read the '
     "actuation model: malformed YAML: expected ',' or ']', but got '<stream end>' at line 3, "
     'column 1'),
    (['--actuation', '{inputs}/binary.yaml'], '{inputs}/binary.yaml: cannot read the actuation '
     'model: not UTF-8 text (byte 0x80 at offset 0)'),
    (['--actuation', '{inputs}/bomb.yaml'], '{inputs}/bomb.yaml: cannot read the actuation '
     'model: YAML aliases repeat more than 100000 nodes (expected a document without alias '
     'bombs)'),
    (['--actuation', '{inputs}/fifo.urdf'], '{inputs}/fifo.urdf: cannot read the actuation '
     'model: not a regular file (a FIFO)'),
]


@pytest.mark.parametrize('argv, line', BAG_CASES)
def test_rnea_bag_a_bad_option_is_one_line_naming_it(inputs, tmp_path, capsys, argv, line):
    out = tmp_path / 'out'
    argv = [arg.format(inputs=inputs) for arg in argv]
    status, err = run(rnea_bag, [str(inputs / 'bag'), '--urdf', str(PANDA), '--output', str(out),
                                 '--no-plots'] + argv, capsys)
    assert (status, err) == (2, f'rnea_bag: error: {line.format(inputs=inputs)}\n')
    assert not out.exists()


@pytest.mark.parametrize('argv, line', [
    (['--acceleration-limit', '1e300'], "argument --acceleration-limit: '1e300': expected a "
     'number from 0.001 to 10000'),
    (['--acceleration-limit', 'nan'], "argument --acceleration-limit: 'nan': expected a number "
     'from 0.001 to 10000'),
])
def test_rnea_excite_a_bad_option_is_one_line_naming_it(tmp_path, capsys, argv, line):
    out = tmp_path / 'out'
    status, err = run(rnea_excite, ['--urdf', str(PANDA), '--output', str(out)] + argv, capsys)
    assert (status, err) == (2, f'rnea_excite: error: {line}\n')
    assert not out.exists()


def test_a_bounded_option_states_its_bounds_in_its_help():
    text = ' '.join(subprocess.run([sys.executable, '-m', 'rnea_ros.bag', '--help'],
                                   capture_output=True, text=True, check=True).stdout.split())
    assert 'polynomial degree (default: 3); an integer from 2 to 12' in text


def test_the_docs_state_the_bound_of_the_times():
    text = ' '.join((Path(__file__).parents[1] / 'docs' / 'bag.md').read_text().split())
    assert f'numbers of seconds of magnitude at most {TIME[1]:g} (about 31 years)' in text
    assert f'all but `--start` and `--end` at least {SPAN[0]:g} s' in text
    assert SPAN[1] == TIME[1]


@pytest.mark.parametrize('tool, argv', [
    ('rnea_bag', ['x']), ('rnea_identify', ['x', '--urdf', 'u']),
    ('rnea_excite', ['--urdf', 'u', '--output', 'o']), ('rnea_fleet', ['x', '--output', 'o']),
    ('rnea_sim', []), ('rnea_node', []), ('rnea_demo', [])])
def test_a_usage_error_is_one_line(tool, argv, tmp_path):
    script = Path(sys.executable).with_name(tool)
    done = subprocess.run([str(script), *argv, '--bogus'], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert (done.returncode, done.stderr) == \
        (2, f'{tool}: error: unrecognized arguments: --bogus\n')
    assert not list(tmp_path.iterdir())
