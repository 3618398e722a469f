"""
Every field of MuJoCo's compiled model is placed (``rnea_ros.description.mjcf_fields``).

The fields are the installed MuJoCo's own list: ``mujoco.MjModel``'s attributes, ``MjOption``'s
and the bits of its disable and enable flags (``mjcf_fields.model_fields``). Each is used by
the loader, refused when not 0, part of a refused element, or on a documented list of fields
that do not change the dynamics the model computes: a MuJoCo release that adds a field fails
here until it is placed. Each refused field, set on a compiled model, is refused naming it.
"""
from __future__ import annotations

from fnmatch import fnmatchcase
import warnings

import mujoco
import numpy as np
import pytest

from rnea_ros import ModelWarning
from rnea_ros.description import mjcf_fields
from rnea_ros.description.mjcf import load_mjcf, route_mujoco_warnings
from rnea_ros.description.mjcf_fields import (COUNTED, group_of, INERT, model_fields,
                                              REFUSED, USED)
from rnea_ros.errors import MJCFError

ROBOT = """<mujoco model="robot">
  <worldbody>
    <body name="b"><joint name="j" axis="0 1 0"/><geom type="capsule" size=".05 .2"/>
      <body name="c" pos="0 0 .4"><joint name="k" type="slide"/><geom size=".1"/>{body}</body>
    </body>{world}
  </worldbody>
  <actuator><motor name="m" joint="j" gear="2"/></actuator>{extra}
</mujoco>"""
# A file with one of each element refused by its count.
COUNTS = {
    'ntendon': ROBOT.format(body='<site name="s1"/>', world='<site name="s2" pos="0 0 1"/>',
                            extra='<tendon><spatial name="t"><site site="s1"/><site site="s2"/>'
                                  '</spatial></tendon>'),
    'nflex': ROBOT.format(body='', world='<flexcomp name="f" type="grid" count="2 2 1" '
                          'spacing=".1 .1 .1" dim="2"/>',
                          extra=''),
    'nplugin': ROBOT.format(body='', world='', extra='<extension><plugin plugin="mujoco.pid">'
                            '<instance name="pid"><config key="kp" value="10"/></instance>'
                            '</plugin></extension><actuator><plugin joint="k" '
                            'plugin="mujoco.pid" instance="pid"/></actuator>'),
    'nmocap': ROBOT.format(body='', world='<body name="target" mocap="true"><geom size=".1"/>'
                           '</body>', extra=''),
}
PLAIN = ROBOT.format(body='', world='', extra='')


@pytest.fixture(scope='module')
def plain():
    return mujoco.MjModel.from_xml_string(PLAIN)


def test_every_field_of_mujocos_model_is_used_refused_or_listed_as_inert(plain):
    fields = model_fields(plain)
    assert len(fields) > 600 and 'jnt_stiffness' in fields and 'opt.density' in fields \
        and 'flag.CONSTRAINT' in fields and 'enable.SLEEP' in fields
    unplaced = [field for field in fields if not group_of(field)]
    assert not unplaced, f'MjModel fields neither used, refused nor listed as inert: {unplaced}'
    # Nothing listed that this MuJoCo does not have (a renamed field would hide there).
    patterns = [*USED, *REFUSED, *COUNTED, *(p for group in INERT.values() for p in group)]
    stale = [p for p in patterns if not any(fnmatchcase(field, p) for field in fields)]
    assert not stale, f'listed, but not a field of this MuJoCo: {stale}'
    # A refused element's parts (its count refused) are refused with it.
    assert {'ntendon', 'nflex', 'nplugin', 'nmocap'} <= set(REFUSED)


def test_every_refused_field_is_0_by_default(plain):
    """The default of each refused field is 0 in MuJoCo: what the refusal expects."""
    for field in REFUSED:
        value = getattr(plain.opt, field[4:]) if field.startswith('opt.') \
            else getattr(plain, field)
        assert not np.any(value), (field, value)


@pytest.mark.parametrize('field', [field for field in REFUSED if not field.startswith('n')])
def test_a_refused_field_set_on_a_compiled_model_is_refused_naming_it(plain, field):
    mj = mujoco.MjModel.from_xml_string(PLAIN)
    if field.startswith('opt.'):
        setattr(mj.opt, field[4:], 0.5)
        expected = f'option {field[4:]}=0.5: '
    else:
        values = getattr(mj, field)
        values[-1] = 0.5
        owner = REFUSED[field][0]
        name = {'body': 'c', 'actuator': 'm'}.get(owner, 'k')
        kind = 'joint' if owner == 'dof' else owner
        expected = f'{kind} {name!r} has {REFUSED[field][1]}: not supported ({field} '
    with pytest.raises(MJCFError) as caught:
        load_mjcf(mj)
    assert str(caught.value).startswith(f'MJCF: {expected}'), caught.value
    load_mjcf(mujoco.MjModel.from_xml_string(PLAIN))  # the same model with 0 loads


@pytest.mark.parametrize('field', [field for field in REFUSED if field.startswith('n')])
def test_a_refused_element_is_refused_naming_it(field, tmp_path):
    path = tmp_path / 'robot.xml'
    path.write_text(COUNTS[field])
    route_mujoco_warnings()  # MuJoCo's own handler would write MUJOCO_LOG.TXT here
    with warnings.catch_warnings():  # its warning on the flex: not what is tested
        warnings.simplefilter('ignore', RuntimeWarning)
        assert getattr(mujoco.MjModel.from_xml_path(str(path)), field) == 1
        with pytest.raises(MJCFError) as caught:
            load_mjcf(path)
    what = REFUSED[field][1]
    message = {'ntendon': f"tendon 't' (1 in all): {what} are not supported",
               'nflex': f"flex 'f' (1 in all): {what} are not supported",
               'nplugin': f"plugin 'pid' (1 in all): {what} are not supported",
               'nmocap': "body 'target' is a mocap body: not supported"}[field]
    assert str(caught.value).startswith(f'MJCF {str(path)!r}: {message}'), caught.value


def test_a_set_field_this_package_does_not_place_is_a_warning_naming_it(monkeypatch):
    """
    A field in no group (a MuJoCo other than the one tested) and set: a ``ModelWarning``.

    Played here by taking ``jnt_group`` and the joints' ``opt.sdf_*`` options off the lists
    (a group 2 joint sets the one; the SDF options are set by default).
    """
    mj = mujoco.MjModel.from_xml_string(PLAIN.replace('<joint name="j"',
                                                      '<joint name="j" group="2"'))
    inert = {reason: tuple(p for p in patterns if p not in ('jnt_group', 'opt.sdf_*'))
             for reason, patterns in INERT.items()}
    monkeypatch.setattr(mjcf_fields, 'INERT', inert)
    with pytest.warns(ModelWarning) as caught:
        load_mjcf(mj)
    message = str(caught[0].message)
    assert message.startswith(f'MJCF: MuJoCo {mujoco.__version__} has fields this package '
                              'does not know, set in this model: jnt_group, opt.sdf_initpoints, '
                              'opt.sdf_iterations; '), message
    monkeypatch.undo()
    with warnings.catch_warnings():
        warnings.simplefilter('error', ModelWarning)
        load_mjcf(mj)  # every field placed: no warning
