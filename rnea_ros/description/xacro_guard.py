"""
What a xacro expansion may evaluate: ``guarded(xacro)`` refuses the rest before xacro runs it.

xacro evaluates each ``${...}`` expression with Python's ``eval`` in a sandbox that can be
escaped (a comprehension walking ``type(...).__subclasses__()`` reaches ``os.system``), and its
``$(...)`` substitutions read the environment (``$(env)``, ``$(optenv)``) or run Python with
every builtin (``$(eval)``); ``xacro.load_yaml`` reads any file. While ``guarded`` is active,
xacro's two evaluation points (``xacro.safe_eval`` and ``xacro.eval_extension``) check their
text first and raise ``XacroRefused`` naming what is refused (and remember it: xacro wraps or
may swallow the exception, the caller raises the first refusal):

- ``${...}``: literals, property names, arithmetic, comparisons, ``and``/``or``/``not``,
  ``x if c else y``, lists/tuples/dicts/sets, indexing and slicing, calls, and attributes of
  values (``math.sqrt(2)``, ``'a'.upper()``). Refused: any ``__`` in the text, names and
  attributes starting with ``_``, the names in ``REFUSED_NAMES`` (xacro's ``python`` and
  ``xacro`` namespaces: ``type``, ``vars``, ``load_yaml``, ...), the attributes ``format``,
  ``format_map`` and ``mro``, comprehensions, generators, lambdas, ``:=`` and f-strings.
- ``$(...)``: only ``SUBSTITUTIONS`` (``arg``, ``find``, ``dirname``).

A xacro version that evaluates anywhere else is refused (``check_guardable``).
``<xacro:include>`` still reads the files it names (they are checked the same way): expand only
xacro files that you trust. The guard is the second wall: ``xacro_process`` runs it inside the
process of one expansion, which bounds the time and memory an expression may take and which
nothing of the expansion outlives (an allowed ``${math.update(pi=0.0)}`` changes that
expansion only).
"""
from __future__ import annotations

import ast
from contextlib import contextmanager
import re
import threading
import types

# Substitutions $(NAME ...) allowed: a xacro argument, a ROS package's path, the file's folder.
SUBSTITUTIONS = frozenset({'arg', 'find', 'dirname'})
# Names of xacro's global symbols that reach types, the file system or xacro itself.
REFUSED_NAMES = frozenset({'python', 'xacro', 'load_yaml', 'abs_filename', 'dotify', 'type',
                           'vars', 'getattr', 'eval', 'exec', 'open', 'compile', 'globals',
                           'locals', 'object'})
REFUSED_ATTRIBUTES = frozenset({'format', 'format_map', 'mro'})
_ALLOWED_NODES = (ast.Expression, ast.Constant, ast.Name, ast.Attribute, ast.Subscript,
                  ast.Slice, ast.Call, ast.keyword, ast.BinOp, ast.UnaryOp, ast.BoolOp,
                  ast.Compare, ast.IfExp, ast.Tuple, ast.List, ast.Dict, ast.Set,
                  ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.expr_context)
_SUBSTITUTION = re.compile(r'\$\(\s*([^\s)]*)')
# xacro's module globals are patched: one expansion at a time.
_LOCK = threading.Lock()


class XacroRefused(Exception):
    """A xacro expression or substitution that the expansion does not evaluate."""


def check_expression(expression: str) -> None:
    """Raise ``XacroRefused`` unless the ``${...}`` expression is in the allowed subset."""
    def refuse(what: str):
        raise XacroRefused(f'refused {what} in the expression {expression.strip()!r}')

    if '__' in expression:
        refuse("'__'")
    try:
        tree = ast.parse(expression.strip(), mode='eval')
    except SyntaxError:
        return  # xacro's own compile reports it
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            refuse(f'a {type(node).__name__}')
        if isinstance(node, ast.Name) and (node.id.startswith('_') or node.id in REFUSED_NAMES):
            refuse(f'the name {node.id!r}')
        if isinstance(node, ast.Attribute) and (node.attr.startswith('_')
                                                or node.attr in REFUSED_ATTRIBUTES):
            refuse(f'the attribute {node.attr!r}')


def check_substitution(text: str) -> None:
    """Raise ``XacroRefused`` unless every ``$(NAME ...)`` in ``text`` is in SUBSTITUTIONS."""
    for match in _SUBSTITUTION.finditer(text):
        if match.group(1) not in SUBSTITUTIONS:
            raise XacroRefused(f'refused the substitution $({match.group(1)} ...): allowed are '
                               + ', '.join(f'$({name})' for name in sorted(SUBSTITUTIONS)))


def _code_objects(xacro):
    """Yield (name, code) of every function and method of the xacro module, nested ones too."""
    stack = []
    for name, value in vars(xacro).items():
        for item in (value, *vars(value).values()) if isinstance(value, type) else (value,):
            code = getattr(item, '__code__', None)
            if isinstance(code, types.CodeType) and item.__module__ == xacro.__name__:
                stack.append((name, code))
    while stack:
        name, code = stack.pop()
        yield name, code
        stack.extend((name, const) for const in code.co_consts
                     if isinstance(const, types.CodeType))


def check_guardable(xacro) -> None:
    """
    Raise ``XacroRefused`` unless xacro evaluates only through the two points patched here.

    ``eval`` may appear only in ``safe_eval``, substitutions (``resolve_args``) only in
    ``eval_extension``, and ``eval_text`` must call both by their module names: another xacro
    version that evaluates elsewhere is refused rather than run unguarded.
    """
    calls = {'eval': set(), 'exec': set(), 'resolve_args': set(), 'safe_eval': set(),
             'eval_extension': set()}
    for name, code in _code_objects(xacro):
        for called in calls.keys() & set(code.co_names):
            calls[called].add(name)
    if not (calls['eval'] <= {'safe_eval'} and not calls['exec']
            and calls['resolve_args'] <= {'eval_extension'}
            and 'eval_text' in calls['safe_eval'] & calls['eval_extension']):
        raise XacroRefused(f'this xacro package ({getattr(xacro, "__file__", "?")}) evaluates '
                           'expressions where they cannot be checked: expand the file with '
                           'the xacro command if you trust it')


@contextmanager
def guarded(xacro):
    """
    Within the block, the ``xacro`` module checks what it evaluates (see the module doc).

    Yields the list of ``XacroRefused`` raised in the block, first first.
    """
    refusals: list[XacroRefused] = []

    def checking(check, evaluate):
        def checked(text, *args):
            try:
                check(text)
            except XacroRefused as exc:
                refusals.append(exc)
                raise
            return evaluate(text, *args)
        return checked

    check_guardable(xacro)
    with _LOCK:
        safe_eval, eval_extension = xacro.safe_eval, xacro.eval_extension
        xacro.safe_eval = checking(check_expression, safe_eval)
        xacro.eval_extension = checking(check_substitution, eval_extension)
        try:
            yield refusals
        finally:
            xacro.safe_eval, xacro.eval_extension = safe_eval, eval_extension
