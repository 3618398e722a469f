"""
``rnea_ctl`` interrupted: Ctrl-C is exit 130 wherever it lands.

Regression: a SIGINT landing while rclpy converts a message (pybind11, C++) came out of the
session as pybind11's ``TypeError: Unable to convert call argument '0' to Python object``, not
as KeyboardInterrupt; ``rnea_ctl status --follow`` then exited 1 with a traceback. Here the
session is a stand-in (no DDS): what is judged is ``main``'s handling of the interrupt.
"""
from __future__ import annotations

import signal

import pytest

from rnea_ros.ctl import cli
from rnea_ros.ctl import session as session_module

CONVERSION = "Unable to convert call argument '0' to Python object"


class _Session:
    closed = 0

    def __init__(self, timeout: float):
        self.timeout = timeout

    def close(self) -> None:
        type(self).closed += 1


@pytest.fixture
def stand_in(monkeypatch):
    """``rnea_ctl status`` runs ``run(session)`` of a stand-in session."""
    _Session.closed = 0
    monkeypatch.setattr(session_module, 'Session', _Session)

    def use(run):
        monkeypatch.setattr(cli, 'prepare', lambda options: run)
    return use


def _interrupt_inside_cpp(session) -> int:
    """As pybind11 does: the KeyboardInterrupt raised by the handler becomes a TypeError."""
    try:
        signal.raise_signal(signal.SIGINT)  # to this thread: its handler runs before the next line
    except KeyboardInterrupt:
        raise TypeError(CONVERSION) from None
    raise AssertionError('SIGINT did not interrupt')


def _interrupt(session) -> int:
    signal.raise_signal(signal.SIGINT)
    raise AssertionError('SIGINT did not interrupt')


@pytest.mark.parametrize('run', [_interrupt_inside_cpp, _interrupt])
def test_ctrl_c_is_exit_130_even_when_rclpy_turned_it_into_another_error(stand_in, run):
    stand_in(run)
    before = signal.getsignal(signal.SIGINT)
    assert cli.main(['status', '--follow']) == 130
    assert _Session.closed == 1  # the session was closed on the way out
    assert signal.getsignal(signal.SIGINT) is before  # the caller's handler is back


def test_the_same_error_without_ctrl_c_is_not_taken_for_it(stand_in):
    def broken(session) -> int:
        raise TypeError(CONVERSION)
    stand_in(broken)
    with pytest.raises(TypeError, match='Unable to convert'):
        cli.main(['status'])
    assert _Session.closed == 1
