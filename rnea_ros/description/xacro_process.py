"""
A xacro file expanded in a process of its own, within limits of CPU time, memory and wall time.

xacro keeps state in its module from one expansion to the next: the ``math`` namespace that an
expression changes with ``${math.update(pi=0.0)}`` or ``${math.clear()}``, the global symbol
table, ``all_includes``, the substitution arguments, the file stack. And an expression can run
for ever (``${factorial(10**7)}``) or take every byte of memory (``${[[0]*10**5]*10**5}``).
So each expansion runs in a new Python process (``expand_in_process``), and nothing it changes
outlives it:

- the child sets its own limits (``resource.setrlimit``: ``LIMITS.cpu_seconds`` of CPU time,
  ``LIMITS.memory_bytes`` of address space, no core file) before it imports xacro, then expands
  the file under ``xacro_guard`` (the second wall: what an expression may evaluate) and writes
  one JSON reply on its standard output: ``{"urdf": text}`` or ``{"error": line}``, with xacro's
  warnings (the first ``WARNING_CHARS`` characters), which the caller prints on its stderr;
- the caller waits ``LIMITS.wall_seconds`` at most, then kills it. Past a limit, the expansion
  is refused with a ``URDFError`` naming the file and the limit.

The child gets what the caller's xacro would get: the file name as given (relative to the same
working directory), the arguments, the caller's environment (``$(find)`` reads the ament index
of ``AMENT_PREFIX_PATH``) and ``sys.path`` (the same xacro package). It starts with
``_BOOTSTRAP``, which imports this module without running the packages' ``__init__`` (numpy,
numba): the child imports xacro only, about 0.2 s of start-up.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
import json
import os
from pathlib import Path
import re
import signal
import subprocess
import sys

from rnea_ros.errors import URDFError

# Characters of xacro's warnings (its stderr) passed on to the caller's stderr.
WARNING_CHARS = 65536
XACRO_MISSING = ('is a xacro file and the xacro package is not installed: pip install xacro '
                 '(or install ROS xacro)')
_DESCRIPTION = Path(__file__).resolve().parent
# The child runs `python -c _BOOTSTRAP ROOT DESCRIPTION`. _PACKAGES_AS_FOLDERS makes the two
# packages empty modules searched in their folders, so that importing this module runs neither
# rnea_ros/__init__ (numpy, numba) nor description/__init__; the working directory ('' first on
# sys.path) is dropped at once.
_PACKAGES_AS_FOLDERS = '\n'.join((
    'import sys, types',
    "if sys.path and sys.path[0] == '':",
    '    del sys.path[0]',
    "for name, folder in zip(('rnea_ros', 'rnea_ros.description'), sys.argv[1:3]):",
    '    sys.modules[name] = types.ModuleType(name)',
    '    sys.modules[name].__path__ = [folder]', ''))
_BOOTSTRAP = (_PACKAGES_AS_FOLDERS + 'from rnea_ros.description.xacro_process import child_main\n'
              'sys.exit(child_main())\n')


@dataclass(frozen=True)
class XacroLimits:
    """
    What one xacro expansion may use; past a limit it is refused.

    ``cpu_seconds``: CPU time of the expanding process (whole seconds, ``RLIMIT_CPU``);
    ``memory_bytes``: its address space (``RLIMIT_AS``); ``wall_seconds``: the time the caller
    waits for it, start-up included (on a loaded machine CPU time runs slower than the clock).
    """

    cpu_seconds: int = 10
    memory_bytes: int = 1 << 30
    wall_seconds: float = 30.0

    def refusal(self, limit: str) -> str:
        """Say that ``limit``, the name of a field (``'cpu_seconds'``), ran out."""
        what = {'cpu_seconds': f'CPU-time limit of {self.cpu_seconds} s',
                'memory_bytes': f'memory limit of {self.memory_bytes >> 20} MiB',
                'wall_seconds': f'wall-time limit of {self.wall_seconds:g} s'}[limit]
        return f'the expansion went past its {what}'


# The limits of every expansion: robots' xacro files expand in well under a second and 100 MB.
LIMITS = XacroLimits()


def cannot_expand(path: str, reason: str) -> str:
    """Return the one line refusing the expansion of ``path`` for ``reason``."""
    return f'xacro cannot expand {path!r}: {reason}'


def failure_reason(exc: BaseException) -> str:
    """
    Say on one line why xacro failed: the exception's type and text.

    xacro wraps what its evaluations raise (``XacroException(exc=...)``) and may add lines
    (``when evaluating expression ...``): the lines are joined. An exception without text is
    named with what it wraps (``XacroException: MemoryError``), so the reason is never empty.
    """
    text = re.sub(r'\s*\n\s*', ' ', str(exc)).strip()
    if text:
        return f'{type(exc).__name__}: {text}'
    return ': '.join(type(item).__name__ for item in _chain(exc))


def _chain(exc: BaseException) -> list[BaseException]:
    """Return ``exc`` and what it wraps (xacro's ``exc``, the cause, the context), outer first."""
    chain = [exc]
    while len(chain) < 20:
        inner = (getattr(chain[-1], 'exc', None) or chain[-1].__cause__
                 or chain[-1].__context__)
        if not isinstance(inner, BaseException) or inner in chain:
            break
        chain.append(inner)
    return chain


def expand_in_process(path: str, mappings: Mapping[str, str],
                      limits: XacroLimits = LIMITS) -> str:
    """
    Expand the xacro file ``path`` in a child process; return the URDF text.

    ``mappings``: the ``<xacro:arg>`` values by name (text). Raises ``URDFError`` naming the
    file and the reason: xacro's failure, the guard's refusal, the limit that ran out, or how
    the child ended.
    """
    request = json.dumps({'path': path, 'mappings': dict(mappings), 'sys_path': sys.path,
                          'limits': asdict(limits)})
    command = [sys.executable, '-c', _BOOTSTRAP, str(_DESCRIPTION.parent), str(_DESCRIPTION)]
    try:
        done = subprocess.run(command, input=request.encode(), capture_output=True,
                              timeout=limits.wall_seconds, check=False)
    except subprocess.TimeoutExpired:  # run() has killed the child and waited for it
        raise URDFError(cannot_expand(path, limits.refusal('wall_seconds'))) from None
    except OSError as exc:  # no Python to run (an embedding program's sys.executable)
        raise URDFError(cannot_expand(path, f'cannot start {sys.executable!r} to expand it: '
                                            f'{exc.strerror or exc}')) from None
    try:
        reply = json.loads(done.stdout)
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        raise URDFError(cannot_expand(path, _how_it_ended(done, limits)))
    sys.stderr.write(reply.get('warnings', ''))
    if 'error' in reply:
        raise URDFError(reply['error'])
    return reply['urdf']


def _how_it_ended(done: subprocess.CompletedProcess, limits: XacroLimits) -> str:
    """Say why a child that gave no reply ended: a limit, a signal, or its last stderr line."""
    lines = done.stderr.decode(errors='replace').strip().splitlines()
    last = lines[-1].strip() if lines else ''
    if done.returncode == -signal.SIGXCPU:
        return limits.refusal('cpu_seconds')
    if last.startswith('MemoryError'):
        return limits.refusal('memory_bytes')
    if done.returncode < 0:
        how = f'ended by signal {signal.Signals(-done.returncode).name}'
    else:
        how = f'exited with code {done.returncode}'
    return f'the expanding process {how} without a reply' + (f': {last}' if last else '')


def _set_limit(kind: int, soft: int, extra: int = 0) -> None:
    """Lower the resource limit ``kind`` to ``soft`` (and its hard limit to ``soft + extra``)."""
    import resource
    _, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
        extra = min(extra, hard - soft)
    resource.setrlimit(kind, (soft, soft + extra))


class _Bounded:
    """A text stream keeping the first ``limit`` characters written to it."""

    def __init__(self, limit: int):
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0

    def write(self, text: str) -> int:
        if self.size < self.limit:
            self.parts.append(text[:self.limit - self.size])
            self.size += len(self.parts[-1])
        return len(text)

    def flush(self) -> None:
        """Nothing to flush: the text is kept."""

    def isatty(self) -> bool:
        return False

    def getvalue(self) -> str:
        return ''.join(self.parts)


def child_main() -> int:
    """Expand the file the caller asks for (JSON on stdin) and reply on stdout (JSON)."""
    import resource
    request = json.loads(sys.stdin.read())
    limits = XacroLimits(**request['limits'])
    _set_limit(resource.RLIMIT_CORE, 0)
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)  # an ignored SIGXCPU is inherited
    _set_limit(resource.RLIMIT_CPU, limits.cpu_seconds, 1)  # SIGXCPU, a second later KILL
    _set_limit(resource.RLIMIT_AS, limits.memory_bytes)
    reply_stream = os.fdopen(os.dup(1), 'w', encoding='ascii')
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing else reaches the reply's pipe
    warnings = _Bounded(WARNING_CHARS)
    sys.stdout, sys.stderr = _Bounded(0), warnings
    sys.path[:] = request['sys_path']
    reply = _expand(request['path'], request['mappings'], limits)
    try:
        text = json.dumps({**reply, 'warnings': warnings.getvalue()})
    except MemoryError:
        text = json.dumps({'error': cannot_expand(request['path'],
                                                  limits.refusal('memory_bytes'))})
    reply_stream.write(text)
    reply_stream.close()
    return 0


def _expand(path: str, mappings: dict[str, str], limits: XacroLimits) -> dict[str, str]:
    """Expand ``path`` here, guarded: ``{'urdf': text}`` or ``{'error': line}``."""
    try:
        import xacro
    except ImportError:
        return {'error': f'{path!r} {XACRO_MISSING}'}
    from rnea_ros.description.xacro_guard import check_guardable, guarded, XacroRefused
    try:
        check_guardable(xacro)
    except XacroRefused as exc:
        return {'error': cannot_expand(path, str(exc))}
    failure = None
    with guarded(xacro) as refusals:
        try:
            urdf = xacro.process_file(path, mappings=mappings).toxml()
        except Exception as exc:  # xacro raises anything its Python evaluations raise
            failure = exc
    if refusals:
        return {'error': cannot_expand(path, str(refusals[0]))}
    if failure is None:
        return {'urdf': urdf}
    if any(isinstance(item, MemoryError) for item in _chain(failure)):
        return {'error': cannot_expand(path, limits.refusal('memory_bytes'))}
    return {'error': cannot_expand(path, failure_reason(failure))}
