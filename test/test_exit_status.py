"""
Every tool's exit status, one rule (``rnea_ros.tools.run``): 2 input, 1 the machine, 130 Ctrl-C.

Each tool's ``main`` runs in-process with its work replaced by one that raises: the status and
the one line it prints are the same for every tool (rnea_fleet's Ctrl-C line says what it
keeps).
"""
from __future__ import annotations

import pytest

from rnea_ros.bag import cli as bag_cli
from rnea_ros.errors import InputError, MachineError
from rnea_ros.excite import cli as excite_cli
from rnea_ros.fleet import cli as fleet_cli
from rnea_ros.identify import cli as identify_cli
from rnea_ros.tools.staging import OutputError

RAISED = [  # (exception, status, the line after "<prog>: ")
    (KeyboardInterrupt(), 130, 'interrupted'),
    (InputError('--urdf: bad'), 2, 'error: --urdf: bad'),
    (OutputError("cannot write 'x': No space left on device"), 1,
     "error: cannot write 'x': No space left on device"),
    (MachineError('no scheduler at tcp://127.0.0.1:1'), 1,
     'error: no scheduler at tcp://127.0.0.1:1'),
    (OSError('Input/output error'), 1, 'error: Input/output error'),
]


# prog -> (its cli module, its arguments but --output, the attribute of the module doing the
# work: 'pipeline' for rnea_identify's pipeline.identify).
TOOLS = {
    'rnea_bag': (bag_cli, ['b.mcap', '--urdf', 'r.urdf'], 'run'),
    'rnea_identify': (identify_cli, ['b.mcap', '--urdf', 'r.urdf'], 'pipeline'),
    'rnea_excite': (excite_cli, ['--urdf', 'r.urdf'], 'run'),
    'rnea_fleet': (fleet_cli, ['bags', '--urdf', 'r.urdf'], '_run'),
}


@pytest.mark.parametrize('exc, status, line', RAISED, ids=lambda v: type(v).__name__
                         if isinstance(v, BaseException) else None)
@pytest.mark.parametrize('prog', list(TOOLS))
def test_every_tool_maps_what_its_work_raised_to_the_same_status(prog, exc, status, line,
                                                                 tmp_path, monkeypatch,
                                                                 capsys):
    module, argv, attribute = TOOLS[prog]

    def raising(*args, **kwargs):
        raise exc

    if attribute == 'pipeline':
        monkeypatch.setattr(module.pipeline, 'identify', raising)
    else:
        monkeypatch.setattr(module, attribute, raising)
    assert module.main([*argv, '--output', str(tmp_path / 'out')]) == status
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f'{prog}: {line}'), err
