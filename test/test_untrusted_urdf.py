"""
A downloaded ``.urdf`` that is xacro with a sandbox escape, given to every tool that loads one.

``rnea_bag --urdf``, ``rnea_fleet --urdf`` and ``rnea_demo --urdf`` refuse it as unexpanded
xacro: the escape's ``touch`` does not run. (The library path and every escape are in
``test/description/test_xacro_guard.py``.)
"""
from __future__ import annotations

from harness.bagdata import PANDA, panda_bag, sample_times
import pytest

from rnea_ros.bag.cli import main as rnea_bag
from rnea_ros.demos import library as demo
from rnea_ros.description.robot_file import HOW_TO_EXPAND

REFUSAL = f'this is unexpanded xacro, not URDF (element <xacro:property>): {HOW_TO_EXPAND}'


@pytest.fixture
def hostile_urdf(tmp_path):
    """panda.urdf with a property whose value escapes xacro's sandbox to ``os.system``."""
    touched = tmp_path / 'pwned'
    escape = (f"[s.__init__.__globals__['system']('touch {touched}') for t in [python.type(0)] "
              "for s in t.__base__.__subclasses__() if s.__name__ == '_wrap_close']")
    text = PANDA.read_text()
    head = '<robot name="panda" xmlns:xacro="http://www.ros.org/wiki/xacro">'
    assert head in text
    path = tmp_path / 'panda.urdf'
    path.write_text(text.replace(
        head, f'{head}<xacro:property name="p" value="${{{escape}}}"/>'
        '<link name="tool_${p}"/>'))
    yield path
    assert not touched.exists()


def test_rnea_bag_refuses_it(hostile_urdf, tmp_path, capsys):
    bag = panda_bag(tmp_path / 'bag', sample_times(50))
    code = rnea_bag([str(bag), '--urdf', str(hostile_urdf), '--output', str(tmp_path / 'out'),
                     '--no-plots'])
    assert code != 0
    assert capsys.readouterr().err == \
        f'rnea_bag: error: --urdf {str(hostile_urdf)!r}: {REFUSAL}\n'


def test_rnea_demo_refuses_it(hostile_urdf, capsys):
    assert demo.main(['--urdf', str(hostile_urdf)]) != 0
    assert capsys.readouterr().err == f'rnea_demo: cannot load {hostile_urdf}: {REFUSAL}\n'


def test_rnea_fleet_refuses_it(hostile_urdf, tmp_path, capsys):
    from rnea_ros.fleet.cli import main as rnea_fleet
    bag = panda_bag(tmp_path / 'bag', sample_times(50))
    code = rnea_fleet([str(bag), '--urdf', str(hostile_urdf), '--output', str(tmp_path / 'out'),
                       '--no-plots', '--workers', '1'])
    assert code != 0
    assert f'rnea_fleet: error: bag: --urdf {str(hostile_urdf)!r}: {REFUSAL}\n' in \
        capsys.readouterr().err


class _Configuration:
    """Stand-in of launch's LaunchConfiguration: ``perform`` reads the context mapping."""

    def __init__(self, name):
        self.name = name

    def perform(self, context):
        return context[self.name]


def _launch_description_function(monkeypatch):
    """Load launch/rnea.launch.py with stand-ins of launch and launch_ros (no wheels here)."""
    import importlib.util
    from pathlib import Path
    import sys
    import types
    modules = {'launch': {'LaunchDescription': object},
               'launch.actions': {'DeclareLaunchArgument': object, 'OpaqueFunction': object},
               'launch.substitutions': {'Command': lambda parts: ('xacro command', parts),
                                        'LaunchConfiguration': _Configuration},
               'launch_ros.actions': {'Node': object},
               'launch_ros.parameter_descriptions': {'ParameterValue': object}}
    for name, attributes in {**modules, 'launch_ros': {}}.items():
        monkeypatch.setitem(sys.modules, name, types.SimpleNamespace(**attributes))
    path = Path(__file__).resolve().parents[1] / 'launch' / 'rnea.launch.py'
    spec = importlib.util.spec_from_file_location('rnea_launch', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._description


def test_the_launch_file_passes_a_urdf_as_it_is(hostile_urdf, tmp_path, monkeypatch):
    """``urdf:=robot.urdf`` is never given to the xacro command; a .xacro file or args are."""
    description = _launch_description_function(monkeypatch)
    text = description({'urdf': str(hostile_urdf), 'xacro_args': ''})
    assert text == hostile_urdf.read_text()  # the node refuses it as unexpanded xacro
    xacro_file = tmp_path / 'panda.urdf.xacro'
    for urdf, args in ((xacro_file, ''), (hostile_urdf, 'prefix:=left_')):
        kind, parts = description({'urdf': str(urdf), 'xacro_args': args})
        assert kind == 'xacro command'
        assert [getattr(part, 'name', part) for part in parts] == ['xacro ', 'urdf', ' ',
                                                                   'xacro_args']
