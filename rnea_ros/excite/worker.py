"""
Run a long computation in a forked process that a Ctrl-C ends at once.

SciPy's SLSQP solves each step's least-squares subproblem in compiled code that does not
return to Python for seconds on a large design (tens of thousands of sampled limits), and
Python runs a signal handler only between bytecodes: in the process itself a Ctrl-C would wait
for the step to end. Here the process waits for the result in a blocking read, which a signal
interrupts (``KeyboardInterrupt`` at once), and then kills the worker. The worker is forked
(it inherits the model, the compiled kernels and the problem: nothing is pickled on the way
in), ignores SIGINT (a terminal's Ctrl-C reaches the whole process group: the parent decides)
and sends back its result or its exception, pickled.
"""
from __future__ import annotations

import multiprocessing
import signal


def call(function, *args):
    """Return ``function(*args)`` computed in a forked process; its exception is raised here."""
    context = multiprocessing.get_context('fork')
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_work, args=(sender, function, args), daemon=True)
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


def _work(sender, function, args) -> None:
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
