"""
Run a long computation in a forked process that a Ctrl-C ends at once.

SciPy's SLSQP solves each step's least-squares subproblem in compiled code that does not
return to Python for seconds on a large design (tens of thousands of sampled limits), and
Python runs a signal handler only between bytecodes: in the process itself a Ctrl-C would wait
for the step to end. Here the process waits for the result in a blocking read, which a signal
interrupts (``KeyboardInterrupt`` at once), and then kills the worker. The worker is forked
(it inherits the model, the compiled kernels and the problem: nothing is pickled on the way
in), ignores SIGINT (a terminal's Ctrl-C reaches the whole process group: the parent decides)
and sends back its result or its exception, pickled. It dies with its parent: a parent killed
by SIGKILL runs no clean-up, so the kernel kills the worker (Linux's ``PR_SET_PDEATHSIG``,
asked by the worker first thing; it fires when the thread that forked it ends, so ``call`` is
made from the thread that waits for it); a parent that died before the worker asked is seen
by its pid having changed.
"""
from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def call(function, *args):
    """Return ``function(*args)`` computed in a forked process; its exception is raised here."""
    context = multiprocessing.get_context('fork')
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_work, args=(sender, os.getpid(), function, args),
                              daemon=True)
    process.start()
    sender.close()  # else the read below would never see the worker's end close
    try:
        kind, value = receiver.recv()
    except EOFError:
        process.join()
        raise ChildProcessError(f'the optimiser process ended without a result (exit code '
                                f'{process.exitcode}: out of memory?)') from None
    finally:
        if process.is_alive():
            process.kill()  # a Ctrl-C (KeyboardInterrupt) or an error: its work is not needed
        process.join()
        receiver.close()
    if kind == 'error':
        raise value
    return value


def _die_with(parent: int) -> None:
    """Have the kernel SIGKILL this process when its parent ends; end now if it has."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), 'prctl(PR_SET_PDEATHSIG)')
    if os.getppid() != parent:  # the parent died before the request: nobody waits for us
        os._exit(1)


def _work(sender, parent: int, function, args) -> None:
    _die_with(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        message = ('result', function(*args))
    except Exception as exc:  # noqa: B902 - every failure is the parent's to report
        message = ('error', exc)
    try:
        sender.send(message)
    except Exception as exc:  # noqa: B902 - an exception that does not pickle
        sender.send(('error', RuntimeError(f'{type(exc).__name__}: {exc}')))
    sender.close()
