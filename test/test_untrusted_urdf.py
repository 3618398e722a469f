"""
A downloaded ``.urdf`` that is xacro with a sandbox escape, given to every tool that loads one.

``rnea_bag --urdf``, ``rnea_fleet --urdf`` and ``rnea_demo --urdf`` refuse it as unexpanded
xacro: the escape's ``touch`` does not run. (The library path and every escape are in
``test/dynamics/test_xacro_guard.py``.)
"""
from __future__ import annotations

from bagdata import PANDA, panda_bag, sample_times
import pytest

from rnea_ros import demo
from rnea_ros.bag.cli import main as rnea_bag
from rnea_ros.dynamics.description import HOW_TO_EXPAND

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
    assert capsys.readouterr().err == f'rnea_bag: error: {REFUSAL}\n'


def test_rnea_demo_refuses_it(hostile_urdf, capsys):
    assert demo.main(['--urdf', str(hostile_urdf)]) != 0
    assert capsys.readouterr().err == f'rnea_demo: cannot load {hostile_urdf}: {REFUSAL}\n'


def test_rnea_fleet_refuses_it(hostile_urdf, tmp_path, capsys):
    from rnea_ros.fleet.cli import main as rnea_fleet
    bag = panda_bag(tmp_path / 'bag', sample_times(50))
    code = rnea_fleet([str(bag), '--urdf', str(hostile_urdf), '--output', str(tmp_path / 'out'),
                       '--no-plots', '--workers', '1'])
    assert code != 0
    assert f'rnea_fleet: error: bag: {REFUSAL}\n' in capsys.readouterr().err
