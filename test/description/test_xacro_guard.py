"""
Hostile robot files: a ``.urdf`` is never expanded, and a xacro expansion runs no escape.

Each attack is the one an adversarial campaign used: a property whose value is a comprehension
walking ``type(...).__subclasses__()`` to ``os.system``, ``__import__``, dunder access,
``$(env)``/``$(optenv)``/``$(eval)``, ``xacro.load_yaml``. The command would ``touch`` a
file; the secret files hold a marker. After each: the file is not created, the marker appears
nowhere, and the error is the exact line.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from rnea_ros import RobotModel, URDFError
from rnea_ros.description.robot_file import HOW_TO_EXPAND
from rnea_ros.description.xacro_guard import check_expression, check_guardable, XacroRefused

MARKER = 'SECRET-MARKER-7f3a'
HEAD = ('<?xml version="1.0"?>\n<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">\n'
        '  <link name="base"/>\n')
TAIL = ('  <joint name="j" type="revolute"><parent link="base"/><child link="{child}"/>\n'
        '    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>\n'
        '  <link name="{child}"><inertial><mass value="1"/>\n'
        '    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>\n'
        '</robot>\n')


def escape_to_system(command: str) -> str:
    """Return the sandbox escape: dunders only inside the comprehension (xacro checks none)."""
    return (f"[s.__init__.__globals__['system']('{command}') for t in [python.type(0)] "
            "for s in t.__base__.__subclasses__() if s.__name__ == '_wrap_close']")


def hostile(attack: str, tmp_path) -> tuple[str, str]:
    """Return (xacro text, expected refusal) for ``attack``; its files are under tmp_path."""
    touched = tmp_path / 'pwned'
    secret = tmp_path / 'secret.yaml'
    secret.write_text(f'name: {MARKER}\n')
    expression, refusal = {
        'comprehension': (escape_to_system(f'touch {touched}'), "'__'"),
        'import': (f"__import__('os').system('touch {touched}')", "'__'"),
        'dunder': ('(1).__class__.__base__', "'__'"),
        'load_yaml': (f"xacro.load_yaml('{secret}')['name']", "the name 'xacro'"),
        'load_yaml_direct': (f"load_yaml('{secret}')['name']", "the name 'load_yaml'"),
        'python_type': ('python.type(0)', "the name 'python'"),
        'generator': ("list(c for c in 'ab')", 'a GeneratorExp'),
        'lambda': ('(lambda: 1)()', 'a Lambda'),
        'format': ("'x'.format(1)", "the attribute 'format'"),
    }.get(attack, (None, None))
    if expression is not None:
        text = (f'  <xacro:property name="p" value="${{{expression}}}"/>\n'
                + TAIL.format(child='${p}'))
        return HEAD + text, f'refused {refusal} in the expression {expression!r}'
    substitution = {'env': 'env HOME', 'optenv': 'optenv HOME none',
                    'eval': f"eval open('{secret}').read()", 'cwd': 'cwd'}[attack]
    command = substitution.split()[0]
    return (HEAD + TAIL.format(child=f'$({substitution})'),
            f'refused the substitution $({command} ...): allowed are $(arg), $(dirname), '
            '$(find)')


ATTACKS = ['comprehension', 'import', 'dunder', 'load_yaml', 'load_yaml_direct', 'python_type',
           'generator', 'lambda', 'format', 'env', 'optenv', 'eval', 'cwd']


def load_refused(attack: str, tmp_path, name: str) -> tuple[Path, str, str]:
    """
    Load the hostile ``attack`` from tmp_path / name, which must be refused and run nothing.

    Return the file, the refusal ``hostile`` expects and the URDFError's message.
    """
    text, refusal = hostile(attack, tmp_path)
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(URDFError) as raised:
        RobotModel.from_urdf_file(path)
    assert not (tmp_path / 'pwned').exists()
    return path, refusal, str(raised.value)


@pytest.mark.parametrize('attack', ATTACKS)
def test_a_xacro_file_runs_no_escape(attack, tmp_path):
    path, refusal, message = load_refused(attack, tmp_path, 'robot.urdf.xacro')
    assert message == f'xacro cannot expand {str(path)!r}: {refusal}'
    assert MARKER not in message


@pytest.mark.parametrize('attack, evidence', [
    ('comprehension', 'element <xacro:property>'),
    ('load_yaml', 'element <xacro:property>'),
    ('env', """link '$(env HOME)': <link name="$(env HOME)">"""),
])
def test_a_urdf_named_file_is_never_expanded(attack, evidence, tmp_path):
    """A downloaded "URDF" holding xacro is refused as xacro text is: nothing is evaluated."""
    _, _, message = load_refused(attack, tmp_path, 'robot.urdf')
    assert message == f'this is unexpanded xacro, not URDF ({evidence}): {HOW_TO_EXPAND}'


def test_the_escape_is_real_without_the_guard(tmp_path):
    """The comprehension escape runs a command in plain xacro: the guard is what stops it."""
    import xacro
    touched = tmp_path / 'pwned'
    path = tmp_path / 'robot.urdf.xacro'
    path.write_text(hostile('comprehension', tmp_path)[0])
    xacro.process_file(str(path))
    assert touched.exists()


def test_ordinary_xacro_expressions_are_allowed(tmp_path):
    path = tmp_path / 'robot.urdf.xacro'
    path.write_text(HEAD + '  <xacro:property name="l" value="0.25"/>\n'
                    '  <xacro:property name="names" value="${dict(a=1, b=[2, 3])}"/>\n'
                    + TAIL.format(child="link_${'%d' % (len(names['b']) * int(l * 4))}"
                                        '_${max(1, round(sqrt(4)))}_${math.floor(pi)}'
                                        "_${'X'.lower() if l &lt; 1 else 'y'}"))
    assert RobotModel.from_urdf_file(path).link_names == ('base', 'link_2_2_3_x')


@pytest.mark.parametrize('expression', ['a.b', '-x ** 2 + y[1:3]', "s.upper().replace('a', 'b')",
                                        'x if a and not b else {1: 2}', 'radians(90)'])
def test_check_expression_lets_through_plain_expressions(expression):
    check_expression(expression)  # raises nothing


def test_check_expression_refuses_a_walrus():
    with pytest.raises(XacroRefused,
                       match=r"^refused a NamedExpr in the expression '\(x := 1\)'$"):
        check_expression('(x := 1)')


UNGUARDABLE = """
def safe_eval(expr, globals, locals=None):
    return eval(expr, globals, locals)

def eval_extension(text):
    return text

def eval_text(text, symbols):
    if text.startswith('$('):
        return eval_extension(text)
    return safe_eval(text, symbols)

def grab_property(elt, table):
    return eval(elt, table)
"""


def test_a_xacro_version_that_evaluates_elsewhere_is_refused():
    """Another xacro whose eval is outside the two checked points is not run at all."""
    import types
    module = types.ModuleType('fake_xacro')
    module.__file__ = 'fake_xacro.py'
    exec(UNGUARDABLE, vars(module))
    with pytest.raises(XacroRefused, match=r'^this xacro package \(fake_xacro.py\) evaluates '
                                           r'expressions where they cannot be checked: expand '
                                           r'the file with the xacro command if you trust it$'):
        check_guardable(module)
    exec(UNGUARDABLE.split('def grab_property')[0], vars(module))
    del module.grab_property
    check_guardable(module)  # eval only in safe_eval: guardable
