"""
Every tool's options declared once, as the fields of a frozen dataclass.

``option`` and ``positional`` declare a field: its default, its argparse group and keywords
(``help``, ``metavar``, ``type``, ``choices``...; the flag comes from the field's name), and
``file`` for an option naming a file (``rnea_fleet`` digests it by content). A number's
``bounds=(LOW, HIGH)`` are declared there once: the parser refuses a value beyond them (one
line naming the option and its bounds: ``Bounded``), ``--help`` states them, and
``check_bounds`` refuses them in options built without the parser. ``add_fields`` builds
the command line from the fields, ``from_namespace`` parses it back into the dataclass.
``rnea_bag``'s ``BagOptions``, ``rnea_identify``'s, ``rnea_excite``'s and ``rnea_fleet``'s
options are all declared this way.
"""
from __future__ import annotations

import argparse
from dataclasses import field, fields

from rnea_ros.errors import Bounded, InputError

__all__ = ['add_fields', 'Bounded', 'check_bounds', 'from_namespace', 'MAIN', 'option',
           'positional', 'SPAN', 'THREADS', 'TIME']

MAIN = ''  # the group title of the main options: the parser itself
# The bounds several tools' options share.
SPAN = (1e-9, 1e9)  # s: a length of time, a nanosecond (a bag's resolution) to ~31 years
TIME = (-1e9, 1e9)  # s: a time from a bag's start, either way
THREADS = (1, 1024)  # threads or worker processes of a run


def option(default, group: str, *, file: bool = False, exclusive: str | None = None,
           numbers: bool = True, bounds: tuple | None = None, words: tuple = (),
           **argparse_keywords):
    """
    Declare a field: its default, argparse group and keywords (the flag from its name).

    ``file``: the option names a file; ``exclusive``: the name of its mutually exclusive set;
    ``numbers``: False for an option that changes where or how the results are written, never
    the results (left out of the fleet's settings digest and its per-bag options);
    ``bounds``: (LOW, HIGH) of a number (its ``type``, int or float, checked by ``Bounded``),
    stated at the end of its help; ``words``: texts it takes besides the numbers (``auto``).
    """
    if bounds is not None:
        bounded = Bounded(argparse_keywords['type'], *bounds, words=words)
        argparse_keywords['type'] = bounded
        argparse_keywords['help'] = f'{argparse_keywords["help"]}; {bounded.expected}'
    return field(default=default, metadata={'group': group, 'file': file,
                                            'exclusive': exclusive, 'numbers': numbers,
                                            'argparse': argparse_keywords})


def check_bounds(options) -> None:
    """Refuse a bounded field of ``options`` beyond its bounds (options built by code)."""
    for item in fields(options):
        bounded = item.metadata.get('argparse', {}).get('type')
        value = getattr(options, item.name)
        if not isinstance(bounded, Bounded) or value is None:
            continue
        for number in value if isinstance(value, (list, tuple)) else [value]:
            if not bounded.within(number):
                flag = '--' + item.name.replace('_', '-')
                raise InputError(f'{flag} {number!r}: expected {bounded.expected}')


def positional(group: str, *, numbers: bool = True, **argparse_keywords):
    """Declare a field without a default: a positional argument, or ``required=True``."""
    return field(metadata={'group': group, 'file': False, 'exclusive': None,
                           'numbers': numbers,
                           'positional': 'required' not in argparse_keywords,
                           'argparse': argparse_keywords})


def add_fields(parser: argparse.ArgumentParser, options_class, groups: dict,
               exclude=frozenset(), main_title: str | None = None) -> list[str]:
    """
    Add the fields of a dataclass declared with ``option`` to ``parser``; return their names.

    ``groups``: title -> description of the argument groups, in the order of --help (title
    ``MAIN``: the parser itself, or a group titled ``main_title``); the fields are added in
    their declaration order.
    """
    chosen = [f for f in fields(options_class) if f.name not in exclude]
    used = {f.metadata['group'] for f in chosen}
    targets = {}
    for title, description in groups.items():
        if title not in used:
            continue
        if title == MAIN:
            targets[title] = parser if main_title is None else \
                parser.add_argument_group(main_title)
        else:
            targets[title] = parser.add_argument_group(title, description)
    exclusive = {}
    for item in chosen:
        target = targets[item.metadata['group']]
        name = item.metadata['exclusive']
        if name:
            if name not in exclusive:
                exclusive[name] = target.add_mutually_exclusive_group()
            target = exclusive[name]
        _add(target, item)
    return [item.name for item in chosen]


def _add(target, item) -> None:
    keywords = dict(item.metadata['argparse'])
    if item.metadata.get('positional'):
        target.add_argument(item.name, **keywords)
        return
    if item.default is not None and keywords.get('action') != 'store_true' \
            and not keywords.get('required'):
        keywords['default'] = item.default
    target.add_argument('--' + item.name.replace('_', '-'), **keywords)


def from_namespace(namespace: argparse.Namespace, options_class, **given):
    """Return the ``options_class`` of a parsed namespace (its fields), with ``given``."""
    names = {f.name for f in fields(options_class)}
    values = {key: value for key, value in vars(namespace).items() if key in names}
    return options_class(**{**values, **given})
